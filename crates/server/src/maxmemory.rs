//! `maxmemory` at run time, and Redis's `noeviction` stop under it.
//!
//! At start `maxmemory` is the engine's memory budget (`slsm serve
//! --maxmemory`): the engine holds itself within it and keeps the data
//! past it on disk, so nothing is out of memory and no write is refused.
//! `CONFIG SET maxmemory N` at run time, as a Redis user expects:
//! - N becomes the engine's budget (`Db::set_memory_budget`, at least
//!   1 MiB): its block cache shrinks or grows at once;
//! - as Redis with its default policy, `noeviction`, the commands that may
//!   grow the data (flagged `denyoom`; an `EXEC` holding one; a script
//!   whose shebang does not say `allow-oom` or `no-writes`, or the first
//!   write of one without a shebang) are refused with Redis's `OOM` error
//!   while the engine's accounted memory is above N. What the engine
//!   cannot give back (its memory runs, buffers, and the indexes and
//!   filters of its files, sized at open) is its floor: an N below it
//!   stops writes until N is raised, which is what Redis's own suite asks
//!   with `maxmemory 1`.
//! - `CONFIG SET maxmemory 0` (Redis: no limit) puts back the budget the
//!   server started with, and lifts the stop.
//!
//! slsm evicts nothing (`maxmemory-policy` is `noeviction` only): data
//! past memory lives on disk, not in the way of new writes.
//!
//! * **Owns**: the value `CONFIG GET maxmemory` reports and whether the
//!   stop is on.
//! * **Thread safety**: atomics; a check reads the engine's accounting
//!   (one lock), and only while the stop is on.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Redis's refusal.
pub const OOM: &str = "OOM command not allowed when used memory > 'maxmemory'.";

pub struct MaxMemory {
    /// What `CONFIG GET` shows: the start-up budget until a `CONFIG SET`.
    shown: AtomicU64,
    /// A `CONFIG SET` made it a stop (above 0).
    enforced: AtomicBool,
    startup: u64,
}

impl MaxMemory {
    pub fn new(startup_budget: usize) -> MaxMemory {
        MaxMemory {
            shown: AtomicU64::new(startup_budget as u64),
            enforced: AtomicBool::new(false),
            startup: startup_budget as u64,
        }
    }

    pub fn shown(&self) -> u64 {
        self.shown.load(Ordering::Relaxed)
    }

    /// `CONFIG SET maxmemory bytes` on `db`.
    pub fn set(&self, db: &slsm::Db, bytes: u64) -> Result<(), String> {
        let budget = match bytes {
            0 => self.startup,
            n => n.max(slsm::MIN_MEMORY_BUDGET as u64),
        };
        let budget = usize::try_from(budget).unwrap_or(usize::MAX);
        db.set_memory_budget(budget).map_err(|e| e.to_string())?;
        self.shown.store(bytes, Ordering::Relaxed);
        self.enforced.store(bytes > 0, Ordering::Relaxed);
        Ok(())
    }

    /// True once a `CONFIG SET` made `maxmemory` a stop (writes then go
    /// through the check one by one).
    pub fn is_on(&self) -> bool {
        self.enforced.load(Ordering::Relaxed)
    }

    /// True while the stop is on and `db` holds more than it allows.
    pub fn over(&self, db: &slsm::Db) -> bool {
        self.enforced.load(Ordering::Relaxed) && db.memory_usage().total() > self.shown()
    }
}
