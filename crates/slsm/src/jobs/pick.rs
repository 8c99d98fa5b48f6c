//! When work is due: the sLSM paper's policies ("The Skiplist-Based LSM
//! Tree", section 2.5). A flush merges the oldest fraction `m` of the `R`
//! memory runs once that many are sealed; a level is merged into the next
//! once some key falls in `D` of its runs.
//!
//! One policy is ours, not the paper's: a bound on space amplification
//! (RocksDB's universal compaction has the same rule, its
//! `max_size_amplification_percent`, which counts only the excess). Tiered
//! levels keep every version a key was written with until its runs reach
//! the deepest level, so a workload that updates the same keys leaves
//! several copies of its data on disk (measured: 13M writes to 1.63M keys
//! through `slsm serve` left 5M versions in 7 runs), which costs disk space
//! and, as each lookup's newest version may sit in any run, makes the
//! blocks that reads need several times the live data. When the runs
//! overlapping the deepest level's data hold more bytes than
//! `max_space_amplification - 1` times that data, all runs are merged into
//! one on the deepest level.

use std::sync::Arc;

use crate::options::Options;
use crate::version::{DiskRun, Version};

/// Runs a level may hold however disjoint they are: bounds the runs a
/// lookup checks and an iterator merges.
const MAX_LEVEL_RUNS: usize = 64;

/// A merge that is due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Merge {
    /// Every run of this level into one run of the next.
    Level(usize),
    /// Every run file into one run on the deepest level (space
    /// amplification above its bound).
    Whole,
}

/// Decides which flush or merge is due.
pub(crate) struct Picker {
    runs_per_flush: usize,
    level_runs: usize,
    max_space_amplification: f64,
}

impl Picker {
    pub fn new(opts: &Options) -> Picker {
        Picker {
            runs_per_flush: opts.runs_per_flush(),
            level_runs: opts.level_runs,
            max_space_amplification: opts.max_space_amplification,
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

    /// The merge that is due, if any: a full level first (it bounds the
    /// runs a lookup checks), else a whole merge if the data on disk
    /// exceeds its space-amplification bound.
    pub fn merge_due(&self, v: &Version) -> Option<Merge> {
        match self.level_to_merge(v) {
            Some(level) => Some(Merge::Level(level)),
            None => self.space_merge_due(v).then_some(Merge::Whole),
        }
    }

    /// True if a flush or a merge is due.
    pub fn work_due(&self, v: &Version) -> bool {
        self.flush_due(v) || self.merge_due(v).is_some()
    }

    /// True if the runs overlapping the deepest level's data hold more than
    /// `max_space_amplification - 1` times its bytes (see the [module
    /// docs](self)). The deepest level's data is its largest run, or all
    /// its runs when their key ranges are disjoint (one sorted run, as a
    /// sequential load leaves them). Runs outside that key range do not
    /// count: they hold new keys, not old versions.
    fn space_merge_due(&self, v: &Version) -> bool {
        if !self.max_space_amplification.is_finite() {
            return false;
        }
        let Some(deepest) = v.levels.iter().rposition(|l| !l.is_empty()) else {
            return false;
        };
        let level = &v.levels[deepest];
        let base: Vec<&Arc<DiskRun>> = if overlap_depth(level) <= 1 {
            level.iter().collect()
        } else {
            level
                .iter()
                .max_by_key(|r| r.file.file_size())
                .into_iter()
                .collect()
        };
        let base_bytes: u64 = base.iter().map(|r| r.file.file_size()).sum();
        let Some(range) = key_range(&base) else {
            return false;
        };
        let others: u64 = v
            .disk_runs_newest_first()
            .filter(|r| !base.iter().any(|b| Arc::ptr_eq(b, r)) && overlaps(r, range))
            .map(|r| r.file.file_size())
            .sum();
        others > 0 && others as f64 > (self.max_space_amplification - 1.0) * base_bytes as f64
    }
}

/// The smallest and largest user keys of `runs` (None if they hold no
/// point keys).
fn key_range<'a>(runs: &[&'a Arc<DiskRun>]) -> Option<(&'a [u8], &'a [u8])> {
    let with_keys = runs
        .iter()
        .map(|r| r.file.properties())
        .filter(|p| p.entries > 0);
    with_keys.fold(None, |range, p| {
        let (lo, hi) = (p.min_user_key.as_slice(), p.max_user_key.as_slice());
        Some(match range {
            None => (lo, hi),
            Some((a, b)) => (lo.min(a), hi.max(b)),
        })
    })
}

/// True if `run` may hold keys in `range` (a run with range tombstones
/// may reach any key).
fn overlaps(run: &DiskRun, (lo, hi): (&[u8], &[u8])) -> bool {
    let p = run.file.properties();
    p.range_tombstones > 0
        || (p.entries > 0 && p.min_user_key.as_slice() <= hi && p.max_user_key.as_slice() >= lo)
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::fs::{FileSystem, MemFs};
    use crate::key::{encode, Kind};
    use crate::sst::{RunBuilder, RunFile, RunOptions};

    /// A run file holding keys `lo..hi` with `value` bytes each.
    fn run(fs: &Arc<dyn FileSystem>, number: u64, lo: u32, hi: u32, value: usize) -> Arc<DiskRun> {
        let path = Path::new("/db").join(crate::files::run_file_name(number));
        let opts = RunOptions::default();
        let mut b = RunBuilder::create_with(Arc::clone(fs), &path, opts).unwrap();
        for k in lo..hi {
            let v: Vec<u8> = (0..value)
                .map(|i| (i as u32 ^ k.wrapping_mul(2654435761)) as u8)
                .collect();
            b.add(&encode(&k.to_be_bytes(), number, Kind::Value), &v)
                .unwrap();
        }
        b.finish().unwrap();
        Arc::new(DiskRun::new(
            number,
            Arc::new(RunFile::open_with(Arc::clone(fs), &path).unwrap()),
        ))
    }

    fn fs() -> Arc<dyn FileSystem> {
        let fs: Arc<dyn FileSystem> = Arc::new(MemFs::new());
        fs.create_dir_all(Path::new("/db")).unwrap();
        fs
    }

    fn picker(max_space_amplification: f64) -> Picker {
        let opts = Options {
            max_space_amplification,
            ..Options::default()
        };
        Picker::new(&opts)
    }

    fn version(levels: Vec<Vec<Arc<DiskRun>>>) -> Version {
        Version::new(Vec::new(), levels)
    }

    #[test]
    fn overlapping_runs_past_the_bound_merge_everything() {
        let fs = fs();
        let base = run(&fs, 1, 0, 2000, 100);
        let newer = run(&fs, 2, 0, 2000, 100);
        let newest = run(&fs, 3, 500, 600, 100);
        let at_bound = version(vec![vec![Arc::clone(&newer)], vec![Arc::clone(&base)]]);
        assert_eq!(
            picker(2.0).merge_due(&at_bound),
            None,
            "others equal to the base"
        );
        let past = version(vec![vec![newer, newest], vec![base]]);
        assert_eq!(picker(2.0).merge_due(&past), Some(Merge::Whole));
        assert_eq!(picker(4.0).merge_due(&past), None);
        assert_eq!(picker(f64::INFINITY).merge_due(&past), None);
    }

    #[test]
    fn new_keys_beside_the_deepest_level_do_not_count() {
        let fs = fs();
        let base = run(&fs, 1, 0, 1000, 100);
        let beyond = run(&fs, 2, 1000, 5000, 100);
        let v = version(vec![vec![beyond], vec![base]]);
        assert_eq!(picker(1.1).merge_due(&v), None);
    }

    #[test]
    fn disjoint_runs_of_the_deepest_level_are_one_base() {
        let fs = fs();
        let (a, b) = (run(&fs, 1, 0, 1000, 100), run(&fs, 2, 1000, 2000, 100));
        // Larger than either run of the deepest level, smaller than both.
        let newer = run(&fs, 3, 0, 1500, 100);
        let v = version(vec![
            vec![Arc::clone(&newer)],
            vec![Arc::clone(&a), Arc::clone(&b)],
        ]);
        assert_eq!(picker(2.0).merge_due(&v), None);
        // Overlapping runs on the deepest level: the largest is the base.
        let v = version(vec![Vec::new(), vec![a, newer]]);
        assert_eq!(picker(1.5).merge_due(&v), Some(Merge::Whole));
    }

    #[test]
    fn a_full_level_merges_before_the_space_bound() {
        let fs = fs();
        let runs: Vec<_> = (1..=4).map(|n| run(&fs, n, 0, 100, 10)).collect();
        let v = version(vec![runs, vec![run(&fs, 9, 0, 10, 10)]]);
        assert_eq!(picker(2.0).merge_due(&v), Some(Merge::Level(0)));
    }
}
