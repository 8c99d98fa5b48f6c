//! [`Version`]: the runs that make up the database at one moment, and
//! [`DiskRun`], a run file on a level.
//!
//! A version is immutable; every change (a new memory run, a flush, a merge)
//! installs a new one. Readers load the current version without locking and
//! keep reading it for as long as they like: the memory runs and run files
//! it names stay alive (and on disk) until the last reader lets go.

use std::sync::Arc;

use crate::memtable::MemRun;
use crate::rangedel::Fragments;
use crate::sst::{RunFile, RunProperties};

/// A run file on a disk level.
pub(crate) struct DiskRun {
    pub number: u64,
    pub file: Arc<RunFile>,
    /// The file's range tombstones, fragmented for lookups.
    pub range_dels: Fragments,
}

impl DiskRun {
    pub fn new(number: u64, file: Arc<RunFile>) -> DiskRun {
        let range_dels = Fragments::build(file.range_tombstones());
        DiskRun {
            number,
            file,
            range_dels,
        }
    }

    /// The highest sequence number `<= snapshot` of a range tombstone of
    /// this run covering `user_key`.
    #[inline]
    pub fn covering_range_del(&self, user_key: &[u8], snapshot: u64) -> Option<u64> {
        if self.range_dels.is_empty() {
            return None;
        }
        self.range_dels.covering_seq(user_key, snapshot)
    }

    /// What the manifest records of this run.
    pub fn record(&self) -> RunProperties {
        RunProperties {
            file_number: self.number,
            ..self.file.properties().clone()
        }
    }
}

/// One source of data a read consults.
#[derive(Clone)]
pub(crate) enum Source {
    /// A memory run.
    Mem(Arc<MemRun>),
    /// A run file.
    Disk(Arc<DiskRun>),
}

/// The runs of the database, newest data first where it matters.
#[derive(Clone)]
pub(crate) struct Version {
    /// Memory runs, newest first: `mems[0]` is the active run.
    pub mems: Vec<Arc<MemRun>>,
    /// Disk levels, level 0 first; within a level, oldest run first.
    pub levels: Vec<Vec<Arc<DiskRun>>>,
    /// Every run in the order reads consult them, newest to oldest: memory
    /// runs, then level 0 newest first, then level 1, ... (derived from the
    /// two above by [`Version::new`]).
    sources: Vec<Source>,
}

impl Version {
    /// The version of these runs.
    pub fn new(mems: Vec<Arc<MemRun>>, levels: Vec<Vec<Arc<DiskRun>>>) -> Version {
        let mut v = Version {
            mems,
            levels,
            sources: Vec::new(),
        };
        v.sources = v.mems.iter().map(|m| Source::Mem(Arc::clone(m))).collect();
        let disk: Vec<Source> = v
            .disk_runs_newest_first()
            .map(|r| Source::Disk(Arc::clone(r)))
            .collect();
        v.sources.extend(disk);
        v
    }

    /// Every run, newest to oldest: the order of every read.
    pub fn sources(&self) -> &[Source] {
        &self.sources
    }

    pub fn active(&self) -> &Arc<MemRun> {
        &self.mems[0]
    }

    /// Immutable memory runs, oldest first.
    pub fn immutables_oldest_first(&self) -> impl Iterator<Item = &Arc<MemRun>> {
        self.mems[1..].iter().rev()
    }

    /// Every disk run, newest first (level 0 newest run first, then level 1...).
    pub fn disk_runs_newest_first(&self) -> impl Iterator<Item = &Arc<DiskRun>> {
        self.levels.iter().flat_map(|level| level.iter().rev())
    }

    /// True if levels `from..` hold no run.
    pub fn levels_empty_from(&self, from: usize) -> bool {
        self.levels.iter().skip(from).all(|l| l.is_empty())
    }

    pub fn manifest_levels(&self) -> Vec<Vec<RunProperties>> {
        self.levels
            .iter()
            .map(|l| l.iter().map(|r| r.record()).collect())
            .collect()
    }

    /// The oldest write-ahead log a memory run still needs, if any.
    pub fn oldest_log_needed(&self) -> Option<u64> {
        self.mems
            .iter()
            .map(|m| m.wal_number)
            .filter(|&n| n != 0)
            .min()
    }
}
