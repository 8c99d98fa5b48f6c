//! Clients blocked in `BLPOP`, `BRPOP`, `BLMOVE`, `BRPOPLPUSH`,
//! `BZPOPMIN` or `BZPOPMAX`: who waits on which key, and waking them.
//!
//! A blocked connection waits asynchronously (no thread is held) and runs
//! its command's attempt (`collections/blocking.rs`) again when woken,
//! until the attempt pops something or the timeout passes (`conn.rs`).
//! Waiters are kept per key in the order they blocked, and served in that
//! order, as Redis serves them: a command that adds to a key wakes the
//! longest-waiting client of that key (`EXEC` wakes for each of its
//! commands), and a woken client, once its attempt is done (it popped, or
//! found nothing and waits again in its place), passes the wake on to the
//! client that blocked after it, so each client sees what the ones before
//! it left (one taking `COUNT 10` does not take elements an earlier
//! client was owed). While a wake is being passed along a key, further
//! pushes to the key wake nobody more: the wake in hand reaches every
//! waiter in turn.
//!
//! Wake-ups cannot be lost: a waiter registers before its first attempt,
//! and a wake stores a permit (`Notify::notify_one`) that a waiter not yet
//! waiting takes as soon as it waits. A writer looks for waiters after its
//! commit; the registry's lock orders a registration before or after that
//! look, and a registration after it is followed by an attempt that sees
//! the commit. A waiter also tries again every [`RECHECK`] regardless,
//! which serves a key whose wake went to a waiter that then left.
//!
//! `crate::blocked` runs a blocking command's attempts for the session
//! and the connection.
//!
//! Thread-safety: one mutex over the registry, taken only while some
//! client is blocked (writers check an atomic count first).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{fence, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use crate::resp::{Reply, Request};

/// How often a blocked client tries again without a wake-up.
pub(crate) const RECHECK: Duration = Duration::from_millis(500);

/// The blocked clients, by key, in the order they blocked.
#[derive(Default)]
pub struct Waiters {
    count: AtomicUsize,
    next_id: AtomicU64,
    by_key: Mutex<HashMap<Vec<u8>, VecDeque<Entry>>>,
}

struct Entry {
    id: u64,
    notify: Arc<Notify>,
    /// Woken and not yet waiting again: the next wake of the key goes to
    /// the waiter behind.
    woken: bool,
}

/// The waiters a command's commit may serve: up to `n` of each key `k`
/// (for the `n` elements it added there), as `(k, n)`.
pub type Wake = Vec<(Vec<u8>, usize)>;

impl Waiters {
    /// Clients blocked now (`INFO clients`' `blocked_clients`).
    pub fn count(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }

    /// Registers a waiter on `keys`, until the registration drops.
    pub fn register(&self, keys: &[Vec<u8>]) -> Registration<'_> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let notify = Arc::new(Notify::new());
        self.count.fetch_add(1, Ordering::SeqCst);
        // Pairs with the fence in `wake`: either that writer sees this
        // count, or this waiter's first attempt sees its commit.
        fence(Ordering::SeqCst);
        let mut by_key = self.lock();
        for key in keys {
            by_key.entry(key.clone()).or_default().push_back(Entry {
                id,
                notify: Arc::clone(&notify),
                woken: false,
            });
        }
        Registration {
            waiters: self,
            id,
            keys: keys.to_vec(),
            notify,
        }
    }

    /// Wakes every waiter (every key was dropped: `FLUSHALL`).
    pub fn wake_all(&self) {
        fence(Ordering::SeqCst);
        if self.count.load(Ordering::SeqCst) == 0 {
            return;
        }
        for queue in self.lock().values_mut() {
            queue.iter_mut().filter(|e| !e.woken).for_each(Entry::wake);
        }
    }

    /// Wakes the waiters `wake` names (call after the commit).
    pub fn wake(&self, wake: Wake) {
        fence(Ordering::SeqCst);
        if self.count.load(Ordering::SeqCst) == 0 {
            return;
        }
        let mut by_key = self.lock();
        for (key, n) in wake {
            let Some(queue) = by_key.get_mut(&key) else {
                continue;
            };
            if n > 0 && !queue.iter().any(|e| e.woken) {
                if let Some(first) = queue.front_mut() {
                    first.wake();
                }
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Vec<u8>, VecDeque<Entry>>> {
        self.by_key.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Entry {
    fn wake(&mut self) {
        self.woken = true;
        self.notify.notify_one();
    }
}

/// One blocked client's place in the registry.
pub struct Registration<'a> {
    waiters: &'a Waiters,
    id: u64,
    keys: Vec<Vec<u8>>,
    notify: Arc<Notify>,
}

impl Registration<'_> {
    /// Completes when woken (at once if woken since the last call).
    pub async fn woken(&self) {
        self.notify.notified().await
    }

    /// After an attempt that found nothing: the wake it had (if any) goes
    /// to the waiter behind, and it waits again in its place.
    pub fn rearm(&self) {
        let mut by_key = self.waiters.lock();
        self.pass_on(&mut by_key);
        for key in &self.keys {
            if let Some(queue) = by_key.get_mut(key) {
                queue
                    .iter_mut()
                    .filter(|e| e.id == self.id)
                    .for_each(|e| e.woken = false);
            }
        }
    }

    /// On each key where this waiter holds a wake, wakes the next waiter
    /// behind it that does not hold one.
    fn pass_on(&self, by_key: &mut HashMap<Vec<u8>, VecDeque<Entry>>) {
        for key in &self.keys {
            let Some(queue) = by_key.get_mut(key) else {
                continue;
            };
            let Some(at) = queue.iter().position(|e| e.id == self.id && e.woken) else {
                continue;
            };
            if let Some(next) = queue.iter_mut().skip(at + 1).find(|e| !e.woken) {
                next.wake();
            }
        }
    }
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        let mut by_key = self.waiters.lock();
        // Served, timed out or gone: a wake it holds is not lost.
        self.pass_on(&mut by_key);
        for key in &self.keys {
            if let Some(queue) = by_key.get_mut(key) {
                queue.retain(|e| e.id != self.id);
                if queue.is_empty() {
                    by_key.remove(key);
                }
            }
        }
        self.waiters.count.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What a blocked client waits to run again.
pub struct Blocked {
    pub name: String,
    pub req: Request,
    /// The keys it pops from.
    pub keys: Vec<Vec<u8>>,
    /// `None`: no timeout.
    pub deadline: Option<Instant>,
}

impl Blocked {
    /// The reply once the timeout has passed: a nil array for the pops,
    /// `WAIT`'s count of replicas that acknowledged (none: there are no
    /// replicas).
    pub fn timed_out(&self) -> Reply {
        match self.name.as_str() {
            "wait" => Reply::Int(0),
            _ => Reply::NullArray,
        }
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(names: &[&str]) -> Vec<Vec<u8>> {
        names.iter().map(|n| n.as_bytes().to_vec()).collect()
    }

    /// Whether `r` has a wake waiting (taken if so).
    fn was_woken(r: &Registration<'_>) -> bool {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(async {
            tokio::time::timeout(Duration::from_millis(1), r.woken())
                .await
                .is_ok()
        })
    }

    #[test]
    fn a_wake_goes_to_the_longest_waiting_and_is_passed_on_in_order() {
        let w = Waiters::default();
        let (a, b, c) = (
            w.register(&keys(&["q"])),
            w.register(&keys(&["other", "q"])),
            w.register(&keys(&["q"])),
        );
        assert_eq!(w.count(), 3);
        // A push wakes the first; more pushes while it holds the wake wake
        // nobody else.
        w.wake(vec![(b"q".to_vec(), 1)]);
        w.wake(vec![(b"q".to_vec(), 5)]);
        assert!(was_woken(&a) && !was_woken(&b) && !was_woken(&c));
        // `a` found nothing: its wake goes to `b`, then `b`'s to `c`.
        a.rearm();
        assert!(was_woken(&b) && !was_woken(&a) && !was_woken(&c));
        b.rearm();
        assert!(was_woken(&c) && !was_woken(&a));
        // The last passes to nobody; the next push starts at the front.
        c.rearm();
        assert!(!was_woken(&a) && !was_woken(&b));
        w.wake(vec![(b"none".to_vec(), 5)]);
        assert!(!was_woken(&a));
        w.wake(vec![(b"q".to_vec(), 1)]);
        assert!(was_woken(&a));
        // Served (dropped) while holding the wake: it is passed on.
        drop(a);
        assert!(was_woken(&b) && !was_woken(&c));
        drop(b);
        assert!(was_woken(&c));
        drop(c);
        assert_eq!(w.count(), 0);
        assert!(w.lock().is_empty());
    }
}
