//! When work is due: the sLSM paper's policies ("The Skiplist-Based LSM
//! Tree", section 2.5). A flush merges the oldest fraction `m` of the `R`
//! memory runs once that many are sealed; a level is merged into the next
//! once some key falls in `D` of its runs.

use std::sync::Arc;

use crate::options::Options;
use crate::version::{DiskRun, Version};

/// Runs a level may hold however disjoint they are: bounds the runs a
/// lookup checks and an iterator merges.
const MAX_LEVEL_RUNS: usize = 64;

/// Decides which flush or merge is due.
pub(crate) struct Picker {
    runs_per_flush: usize,
    level_runs: usize,
}

impl Picker {
    pub fn new(opts: &Options) -> Picker {
        Picker {
            runs_per_flush: opts.runs_per_flush(),
            level_runs: opts.level_runs,
        }
    }

    /// Sealed memory runs one flush takes.
    pub fn runs_per_flush(&self) -> usize {
        self.runs_per_flush
    }

    /// True once enough memory runs are sealed for a flush.
    pub fn flush_due(&self, v: &Version) -> bool {
        v.mems.len() > self.runs_per_flush
    }

    /// The shallowest level due for a merge: some user key falls in `D` of
    /// its runs, or it holds [`MAX_LEVEL_RUNS`] runs.
    ///
    /// Runs with disjoint key ranges do not count against `D`: together
    /// they are one sorted run, and rewriting them would only copy bytes
    /// (a sequential load is written once, not once per level, as a
    /// trivial move does elsewhere). Reads skip a run whose key range
    /// misses the key before touching its filter.
    pub fn level_to_merge(&self, v: &Version) -> Option<usize> {
        v.levels.iter().position(|l| {
            l.len() >= MAX_LEVEL_RUNS
                || (l.len() >= self.level_runs && overlap_depth(l) >= self.level_runs)
        })
    }

    /// True if a flush or a merge is due.
    pub fn work_due(&self, v: &Version) -> bool {
        self.flush_due(v) || self.level_to_merge(v).is_some()
    }
}

/// The most runs of `level` any one user key falls in (runs holding range
/// tombstones count as covering every key: a tombstone may reach far
/// beyond the run's point keys and must meet merges to be dropped).
pub(crate) fn overlap_depth(level: &[Arc<DiskRun>]) -> usize {
    const START: u8 = 0; // sorts before END at an equal key: ranges are inclusive
    const END: u8 = 1;
    let mut everywhere = 0;
    let mut events: Vec<(&[u8], u8)> = Vec::with_capacity(level.len() * 2);
    for run in level {
        let p = run.file.properties();
        if p.range_tombstones > 0 {
            everywhere += 1;
        } else if p.entries > 0 {
            events.push((p.min_user_key.as_slice(), START));
            events.push((p.max_user_key.as_slice(), END));
        }
    }
    events.sort_unstable();
    let (mut depth, mut most) = (0usize, 0usize);
    for (_, kind) in events {
        if kind == START {
            depth += 1;
            most = most.max(depth);
        } else {
            depth -= 1;
        }
    }
    everywhere + most
}
