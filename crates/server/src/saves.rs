//! `SAVE`, `BGSAVE` and `LASTSAVE`'s state: when the last save finished,
//! and whether a background one runs.
//!
//! * **Owns**: those two facts. **Thread safety**: atomics.
//! * **Durability**: a save is a flush of the memory runs and a sync.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Seconds since the Unix epoch.
pub fn unix_seconds() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// When the last save finished, and whether a background one runs.
pub struct Saves {
    /// Unix time (seconds) of the last `SAVE`/`BGSAVE` that finished, or
    /// of the start: `LASTSAVE`.
    pub last: AtomicU64,
    running: AtomicBool,
}

impl Saves {
    pub fn new() -> Saves {
        Saves {
            last: AtomicU64::new(unix_seconds()),
            running: AtomicBool::new(false),
        }
    }
}

impl Default for Saves {
    fn default() -> Self {
        Saves::new()
    }
}

impl Saves {
    /// Flushes the memory runs to run files and syncs, which makes the
    /// next start replay no log; `LASTSAVE` moves once it is done.
    pub fn flush_and_sync(&self, db: &slsm::Db) -> slsm::Result<()> {
        db.flush()?;
        db.sync()?;
        self.last.store(unix_seconds(), Ordering::Relaxed);
        Ok(())
    }

    /// Claims the one background save; false if one runs.
    pub fn start_background(&self) -> bool {
        !self.running.swap(true, Ordering::AcqRel)
    }

    pub fn finish_background(&self) {
        self.running.store(false, Ordering::Release);
    }
}
