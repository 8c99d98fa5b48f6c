//! `CLIENT PAUSE` and `CLIENT UNPAUSE`, as Redis 7.0 holds clients
//! (`pauseClients`, `processCommand`): for a time, every command of every
//! client (`ALL`), or every command that writes or may replicate (`WRITE`:
//! the writes, `EVAL`/`EVALSHA`/`FCALL`, `PUBLISH`, `PFCOUNT`, and an
//! `EXEC` of a transaction holding one), waits before it runs; the client
//! that paused waits like the others, so under `ALL` even its `CLIENT
//! UNPAUSE` waits for the end. A second pause extends the first: the later
//! end and the stronger mode. Unlike Redis, keys keep expiring during a
//! `WRITE` pause (expiry is a property of reads in the engine here, not a
//! write the server makes).
//!
//! Owns: the pause in force. Thread-safety: a mutex and a notifier; the
//! check on every command is one atomic load while nothing is paused.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use tokio::sync::Notify;

#[derive(Default)]
pub struct Pause {
    /// Until when, and whether every command waits (else only writes).
    state: Mutex<Option<(Instant, bool)>>,
    /// A pause may be in force (cleared once one is seen to be over).
    active: AtomicBool,
    /// Told of every change, so waiters see an `UNPAUSE` at once.
    changed: Notify,
}

impl Pause {
    fn state(&self) -> std::sync::MutexGuard<'_, Option<(Instant, bool)>> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `CLIENT PAUSE`: until `until`, every command (`all`) or the writes.
    pub fn start(&self, until: Instant, all: bool) {
        let mut state = self.state();
        *state = Some(match *state {
            Some((end, was_all)) => (end.max(until), was_all || all),
            None => (until, all),
        });
        self.active.store(true, Ordering::Release);
        self.changed.notify_waiters();
    }

    /// `CLIENT UNPAUSE`.
    pub fn stop(&self) {
        *self.state() = None;
        self.active.store(false, Ordering::Release);
        self.changed.notify_waiters();
    }

    /// The pause in force: whether every command waits (`None` if none).
    fn current(&self) -> Option<bool> {
        if !self.active.load(Ordering::Acquire) {
            return None;
        }
        let mut state = self.state();
        match *state {
            Some((end, all)) if Instant::now() < end => Some(all),
            _ => {
                *state = None;
                self.active.store(false, Ordering::Release);
                None
            }
        }
    }

    /// Whether a command must wait before it runs: every command under
    /// `ALL`; under `WRITE`, if `writes()` (asked only then) says it
    /// writes or may replicate (`dispatch::may_replicate`).
    pub fn holds(&self, writes: impl FnOnce() -> bool) -> bool {
        match self.current() {
            None => false,
            Some(true) => true,
            Some(false) => writes(),
        }
    }

    /// Waits until no pause is in force.
    pub async fn wait(&self) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let end = match *self.state() {
                Some((end, _)) if Instant::now() < end => end,
                _ => return,
            };
            tokio::select! {
                _ = changed => {}
                _ = tokio::time::sleep_until(end.into()) => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_pause_ends_at_its_time_or_at_unpause_and_extends_to_the_later_end() {
        let pause = Pause::default();
        assert_eq!(pause.current(), None);
        let now = Instant::now();
        pause.start(now + Duration::from_millis(50), false);
        pause.start(now + Duration::from_millis(10), true);
        assert_eq!(pause.current(), Some(true), "the stronger mode");
        let waited = Instant::now();
        pause.wait().await;
        assert!(
            waited.elapsed() >= Duration::from_millis(40),
            "the later end"
        );
        assert_eq!(pause.current(), None);
        pause.start(Instant::now() + Duration::from_secs(60), true);
        let unpaused = std::sync::Arc::new(pause);
        let waiter = {
            let p = std::sync::Arc::clone(&unpaused);
            tokio::spawn(async move { p.wait().await })
        };
        tokio::time::sleep(Duration::from_millis(10)).await;
        unpaused.stop();
        tokio::time::timeout(Duration::from_secs(5), waiter)
            .await
            .expect("UNPAUSE wakes the waiters")
            .unwrap();
    }
}
