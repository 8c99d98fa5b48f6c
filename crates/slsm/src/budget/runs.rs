//! The memory runs' share of the budget (see the [budget's module
//! docs](super)): the reserve per run, raised before a run outgrows it and
//! only when the block cache can give it; its loan to the cache while
//! writes are quiet; what a write bigger than a run is given beside it.
//!
//! * **Owns**: nothing of its own: these are [`MemoryBudget`]'s methods
//!   for the memory runs, changing the split under its lock.
//! * **Thread safety**: as [`MemoryBudget`].

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::{MemoryBudget, Split, IDLE_FLUSH, QUIET};
use crate::memtable::MemRun;
use crate::version::Version;

impl MemoryBudget {
    /// Bytes the memory runs may hold together now: the reserve of every
    /// run there may be, or, while it is lent, of the runs there are.
    pub(super) fn memory_runs_limit(&self) -> usize {
        let runs = match self.lending.load(Ordering::Relaxed) {
            true => self
                .live_runs
                .load(Ordering::Relaxed)
                .clamp(1, self.memory_runs),
            false => self.memory_runs,
        };
        self.run_reserve.load(Ordering::Relaxed) * runs
    }

    /// A memory run was sealed and a new one started (`version` has it):
    /// the reserve lent to the cache comes back now, before the new run
    /// takes its first write.
    pub fn note_seal(&self, version: &Version) {
        let was_lending = {
            let mut last_seal = self.last_seal.lock();
            *last_seal = Instant::now();
            self.live_runs.store(version.mems.len(), Ordering::Relaxed);
            self.lending.swap(false, Ordering::Relaxed)
        };
        if was_lending {
            self.resize_cache(&self.split.lock());
        }
    }

    /// Called now and then by the background threads with the current
    /// version: lends the reserve of the runs that do not exist to the
    /// cache once no run was sealed for [`QUIET`]. (Under the seal's lock:
    /// a seal after `version` was loaded either makes it not quiet or
    /// comes after, and takes the loan back.) True if the loan started
    /// now: the cache has new room.
    pub fn tick(&self, version: &Version) -> bool {
        if self.fixed_cache.is_some() || self.lending.load(Ordering::Relaxed) {
            return false;
        }
        {
            let last_seal = self.last_seal.lock();
            if last_seal.elapsed() < QUIET {
                return false;
            }
            self.live_runs.store(version.mems.len(), Ordering::Relaxed);
            self.lending.store(true, Ordering::Relaxed);
        }
        self.resize_cache(&self.split.lock());
        true
    }

    /// Whether the sealed memory runs are due for a flush even if fewer
    /// than a flush takes: the reserve is lent and no run was sealed for
    /// [`IDLE_FLUSH`] (see `Background::flush_loop`).
    pub fn idle_flush_due(&self) -> bool {
        self.lending.load(Ordering::Relaxed) && self.last_seal.lock().elapsed() >= IDLE_FLUSH
    }

    /// Called before a write that leaves the active memory run holding
    /// `bytes`: raises the reserve per run (shrinking the block cache
    /// first) if the run would outgrow it. False if the budget has no room
    /// for that: the caller seals the run instead.
    #[inline]
    pub fn make_room_in_run(&self, bytes: usize) -> bool {
        bytes <= self.run_reserve.load(Ordering::Relaxed) || self.raise_run_reserve(bytes)
    }

    #[cold]
    fn raise_run_reserve(&self, bytes: usize) -> bool {
        if bytes > self.run_ceiling {
            return false;
        }
        let wanted = with_margin(bytes).min(self.run_ceiling);
        let split = self.split.lock();
        let before = self.run_reserve.load(Ordering::Relaxed);
        if wanted <= before {
            return true;
        }
        if (wanted - before) * self.memory_runs > self.room(&split) {
            return false;
        }
        self.run_reserve.store(wanted, Ordering::Relaxed);
        self.resize_cache(&split);
        true
    }

    /// The reserve of one memory run.
    pub fn run_reserve(&self) -> usize {
        self.run_reserve.load(Ordering::Relaxed)
    }

    /// Gives the empty memory run `run` `extra` bytes past its reserve, for
    /// one write bigger than a run (recorded in the run, in the same step:
    /// `rebalance_releasing` gives it back once the run is flushed). Waits
    /// up to `patience` for room; false if there was none. An error if no
    /// room could ever come: not even an empty cache would hold it.
    pub fn take_oversize(
        &self,
        run: &MemRun,
        extra: usize,
        patience: Duration,
    ) -> crate::error::Result<bool> {
        let deadline = Instant::now() + patience;
        let mut split = self.split.lock();
        loop {
            if extra <= self.room(&split) {
                split.oversize += extra;
                run.add_oversize(extra);
                self.resize_cache(&split);
                return Ok(true);
            }
            if extra > self.room_without_jobs(&split) {
                return Err(crate::error::Error::InvalidArgument(format!(
                    "a write needing {extra} bytes of memory past its memory run does not \
                     fit the memory budget ({} bytes) beside what the engine holds; raise \
                     Options::memory_budget",
                    self.total()
                )));
            }
            if self.room.wait_until(&mut split, deadline).timed_out() {
                return Ok(false);
            }
        }
    }

    /// [`room`](Self::room) once every running job has given back what it
    /// holds past its floor and every other write bigger than a run has
    /// been flushed: the most a writer waiting for room can get.
    fn room_without_jobs(&self, split: &Split) -> usize {
        let idle = Split {
            held: [0; 2],
            oversize: 0,
            ..*split
        };
        self.room(&idle)
    }

    /// A memory run was sealed because it was full: the first time, the
    /// reserve per run drops from the whole share to what the memory runs
    /// of `version` hold at most (the runs' sizes are now measured).
    pub fn note_full_run(&self, version: &Version) {
        if self.run_reserve_measured.swap(true, Ordering::Relaxed) {
            return;
        }
        let largest = version
            .mems
            .iter()
            .filter(|m| m.oversize() == 0)
            .map(|m| m.usage_after(0))
            .max()
            .unwrap_or(0);
        let measured = with_margin(largest).min(self.run_ceiling);
        // Only ever lowers it: `largest` covers every run there is.
        let split = self.split.lock();
        self.run_reserve.fetch_min(measured, Ordering::Relaxed);
        self.resize_cache(&split);
        drop(split);
        self.room.notify_all();
    }
}

/// `bytes` and a sixteenth more: runs sealed at the same entry count differ
/// a little in size with their keys and values.
fn with_margin(bytes: usize) -> usize {
    bytes.saturating_add(bytes / 16)
}
