//! A client blocked in `BLPOP`, `BRPOP`, `BLMOVE`, `BRPOPLPUSH`,
//! `BZPOPMIN` or `BZPOPMAX`: its connection waits (asynchronously; no
//! thread is held) and runs the command's attempt again each time a
//! command that can add elements commits (`Waiters::wake`), until the
//! attempt pops something or the timeout passes. The attempt itself is the
//! command's (`collections/blocking.rs`).
//!
//! Differences from Redis, decided here: the clients blocked on one key
//! are woken together and the first whose attempt commits is served, not
//! the one that blocked first (a queue's consumers get its elements, in
//! its order, but not in the order they asked); and a blocked client that
//! sends more commands has them run once it is served or times out, as in
//! Redis, its input counted against the same limits as any other's.
//!
//! Owns the count of blocked clients and their wake-up signal (`Shared`).
//! Wake-ups cannot be lost: a waiter registers for the signal and counts
//! itself before its attempt reads, and a writer looks at the count after
//! its commit (both sequentially consistent), so either the attempt sees
//! the write or the writer sees the waiter. A waiter also tries again every
//! [`RECHECK`] on its own, which keeps it right if that reasoning ever
//! stops holding.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use crate::resp::Request;

/// How often a blocked client tries again without a wake-up.
const RECHECK: Duration = Duration::from_millis(500);

/// The blocked clients: how many, and the signal that wakes them.
#[derive(Default)]
pub struct Waiters {
    count: AtomicUsize,
    pushed: Notify,
}

impl Waiters {
    /// Clients blocked now (`INFO clients`' `blocked_clients`).
    pub fn count(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }

    /// Called after a command that may have added elements committed.
    pub fn wake(&self) {
        if self.count.load(Ordering::SeqCst) > 0 {
            self.pushed.notify_waiters();
        }
    }
}

/// What a blocked client waits to run again.
pub struct Blocked {
    pub name: String,
    pub req: Request,
    /// `None`: no timeout.
    pub deadline: Option<Instant>,
}

/// Counts a waiter while it lives.
struct Counted<'a>(&'a AtomicUsize);

impl<'a> Counted<'a> {
    fn new(count: &'a AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        Counted(count)
    }
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Waiters {
    /// Counts a waiter until the returned guard drops.
    pub fn enter(&self) -> impl Drop + '_ {
        Counted::new(&self.count)
    }

    /// The wake-up signal, registered at once: a wake after this call and
    /// before the wait is not lost.
    pub fn notified(&self) -> std::pin::Pin<Box<tokio::sync::futures::Notified<'_>>> {
        let mut notified = Box::pin(self.pushed.notified());
        notified.as_mut().enable();
        notified
    }
}

impl Blocked {
    /// How long to wait before trying again; `None` once the timeout has
    /// passed.
    pub fn pause(&self) -> Option<Duration> {
        let now = Instant::now();
        match self.deadline {
            Some(d) if d <= now => None,
            Some(d) => Some((d - now).min(RECHECK)),
            None => Some(RECHECK),
        }
    }
}
