//! A writer waiting in the commit queue, what it is told to do, and the
//! group whose members insert together (the protocol's state, apart from
//! the protocol in `queue.rs`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex};

use super::stages::Durability;
use crate::batch::WriteBatch;
use crate::error::Result;

/// Polls of its wake-up flag a queued writer makes before it sleeps on its
/// condition variable (~10 us of `spin_loop`). The writer ahead usually
/// finishes within a microsecond or two, while a futex sleep and wake-up
/// costs several: with two threads writing single puts, sleeping at once
/// made every put pay a full wake-up.
const SPIN_POLLS: u32 = 512;

pub(super) enum State<R> {
    Waiting,
    /// Insert your batch into `run` starting at sequence `first_seq`.
    Insert {
        run: Arc<R>,
        first_seq: u64,
        group: Arc<Group>,
    },
    Done(Result<()>),
}

pub(super) struct Writer<R> {
    pub(super) batch: Mutex<WriteBatch>,
    pub(super) durability: Durability,
    /// Seal the active run (a flush); such a writer leads alone.
    pub(super) seal: bool,
    pub(super) state: Mutex<State<R>>,
    pub(super) cv: Condvar,
    /// Set (with the queue lock held) whenever `cv` is notified, so that a
    /// writer spinning before it sleeps notices without a system call.
    pub(super) signaled: AtomicBool,
}

impl<R> Writer<R> {
    /// Wakes the writer, spinning or sleeping.
    pub(super) fn wake(&self) {
        self.signaled.store(true, Ordering::Release);
        self.cv.notify_one();
    }

    /// Spins up to `SPIN_POLLS` times for a wake-up; true if one came.
    pub(super) fn spin_for_wake(&self) -> bool {
        for _ in 0..SPIN_POLLS {
            if self.signaled.swap(false, Ordering::Acquire) {
                return true;
            }
            std::hint::spin_loop();
        }
        false
    }
}

/// Members of one group still inserting.
pub(super) struct Group {
    pub(super) remaining: Mutex<usize>,
    pub(super) cv: Condvar,
}

impl Group {
    pub(super) fn finish_one(&self) {
        let mut left = self.remaining.lock();
        *left -= 1;
        if *left == 0 {
            self.cv.notify_all();
        }
    }

    pub(super) fn wait_all(&self) {
        let mut left = self.remaining.lock();
        while *left > 0 {
            self.cv.wait(&mut left);
        }
    }
}
