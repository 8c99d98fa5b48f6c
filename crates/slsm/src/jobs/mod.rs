//! Jobs that write run files: a flush of memory runs to level 0, a merge of
//! a full level into the next (the sLSM paper's k-way heap merge, "The
//! Skiplist-Based LSM Tree" section 2.5), a manual compaction of everything
//! into the deepest level, and the flush of what recovery replayed from the
//! logs (a flush of memory runs, like any other). They differ only in their inputs and where the output goes, so they
//! share one skeleton, [`Jobs::run`]: merge the inputs into one new run file,
//! make it durable, and change the version through
//! [`VersionSet::apply`](crate::version::VersionSet::apply).
//!
//! * **Owns**: the locks that serialise flushes (memory runs to level 0)
//!   and merges (level to level); nothing else.
//! * **Calls**: the run builder, the merge rules (`merge`), the version set,
//!   the snapshot list (what a merge must keep), the file system.
//! * **Thread safety**: any thread may run a job; flushes are serialised
//!   among themselves and merges among themselves, a flush and a merge may
//!   run at once (they touch disjoint runs).
//! * **Durability**: a run file and the directory entry naming it are synced
//!   before the edit that adds it is applied; logs are deleted only after
//!   the flush of every memory run they hold is in the manifest.

mod build;
mod ingest;
mod pick;

pub(crate) use pick::{Merge, Picker};

use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::budget::{JobKind, MemoryBudget};
use crate::error::Result;
use crate::files;
use crate::iter::{run_cursor_sequential, InternalIter};
use crate::keyspace::rules::{now_millis, RuleBook};
use crate::memtable::MemRun;
use crate::merge::MergePolicy;
use crate::options::Options;
use crate::os_memory;
use crate::rangedel::RangeTombstone;
use crate::snapshot::list::SnapshotList;
use crate::sst::RunFile;
use crate::stats::Counters;
use crate::version::{DiskRun, Version, VersionEdit, VersionSet};

/// What a job merges.
enum Inputs {
    /// Memory runs, oldest first (a flush).
    Memory(Vec<Arc<MemRun>>),
    /// Run files (a merge or a compaction).
    Disk(Vec<Arc<DiskRun>>),
}

/// One job: its inputs, the level its output joins, and whether nothing
/// older than the inputs lies at or below that level (tombstones no
/// snapshot needs may then go).
///
/// A job holds its inputs, not the version they were picked from: a merge
/// takes seconds, and a version held that long would keep alive every
/// memory run flushed meanwhile (measured: up to 33 MB of skiplist arenas
/// past the memory runs' share during a load at the default budget).
struct Job {
    inputs: Inputs,
    target: usize,
    bottommost: bool,
}

impl Job {
    /// A job over `inputs` into `target`, judged against `version`.
    fn new(version: &Version, inputs: Inputs, target: usize) -> Job {
        let bottommost = match &inputs {
            Inputs::Memory(_) => version.levels_empty_from(0),
            Inputs::Disk(inputs) => version
                .levels
                .iter()
                .skip(target)
                .all(|l| l.iter().all(|r| inputs.iter().any(|i| Arc::ptr_eq(i, r)))),
        };
        Job {
            inputs,
            target,
            bottommost,
        }
    }
}

/// Runs jobs. See the [module docs](self).
pub(crate) struct Jobs {
    dir: PathBuf,
    opts: Arc<Options>,
    versions: Arc<VersionSet>,
    snapshots: Arc<SnapshotList>,
    counters: Arc<Counters>,
    budget: Arc<MemoryBudget>,
    rules: Arc<RuleBook>,
    picker: Picker,
    flush_lock: Mutex<()>,
    merge_lock: Mutex<()>,
    /// Merges given up in a row for want of memory (see `build::take_waiting`).
    give_ups: AtomicU32,
}

impl Jobs {
    pub fn new(
        dir: PathBuf,
        opts: Arc<Options>,
        versions: Arc<VersionSet>,
        snapshots: Arc<SnapshotList>,
        counters: Arc<Counters>,
        budget: Arc<MemoryBudget>,
        rules: Arc<RuleBook>,
    ) -> Jobs {
        Jobs {
            picker: Picker::new(&opts),
            dir,
            opts,
            versions,
            snapshots,
            counters,
            budget,
            rules,
            flush_lock: Mutex::new(()),
            merge_lock: Mutex::new(()),
            give_ups: AtomicU32::new(0),
        }
    }

    /// What decides when work is due.
    /// Now-and-then upkeep of the background threads: the memory budget
    /// may lend the memory runs' unused reserve to the cache, whose new
    /// room is then warmed with the run files' blocks (newest first): a
    /// database that was written and is now read finds them there (1M
    /// keys right after their load, default budget: a first pass of
    /// random `get`s missed the cache 23K times in 200K, ~0.4 us a lookup).
    pub fn tick(&self) {
        let version = self.versions.current();
        if self.budget.tick(&version) {
            let files: Vec<Arc<RunFile>> = version
                .disk_runs_newest_first()
                .map(|r| Arc::clone(&r.file))
                .collect();
            drop(version);
            crate::cache::warm_room(&files);
        }
    }

    /// The memory budget the jobs charge.
    pub fn budget(&self) -> &MemoryBudget {
        &self.budget
    }

    pub fn picker(&self) -> &Picker {
        &self.picker
    }

    /// Flushes up to `max` of the oldest sealed memory runs into one level-0
    /// run. Returns false if there was nothing to flush.
    pub fn flush_oldest(&self, max: usize) -> Result<bool> {
        let _flush = self.flush_lock.lock();
        let (runs, job) = {
            let version = self.versions.current();
            let runs: Vec<Arc<MemRun>> = version
                .immutables_oldest_first()
                .take(max)
                .cloned()
                .collect();
            if runs.is_empty() {
                return Ok(false);
            }
            let job = Job::new(&version, Inputs::Memory(runs.clone()), 0);
            (runs, job)
        };
        self.run(job)?;
        self.counters.flushes.fetch_add(1, Ordering::Relaxed);
        self.remove_flushed_logs(&runs);
        Ok(true)
    }

    /// Flushes every sealed memory run.
    pub fn flush_all(&self) -> Result<()> {
        while self.flush_oldest(usize::MAX)? {}
        Ok(())
    }

    /// Runs due merges (full levels, then a whole merge when space
    /// amplification crossed its bound) until none is due.
    pub fn merge_levels(&self) -> Result<()> {
        loop {
            let _merge = self.merge_lock.lock();
            let (job, whole) = {
                let version = self.versions.current();
                match self.picker.merge_due(&version) {
                    None => return Ok(()),
                    Some(Merge::Level(level)) => {
                        let inputs = Inputs::Disk(version.levels[level].clone());
                        (Job::new(&version, inputs, level + 1), false)
                    }
                    Some(Merge::Whole) => match whole_merge(&version) {
                        Some(job) => (job, true),
                        None => return Ok(()),
                    },
                }
            };
            if !self.run(job)? {
                return Ok(());
            }
            self.counters.merges.fetch_add(1, Ordering::Relaxed);
            if whole {
                self.counters.space_merges.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Merges every run file into one run on the deepest level (the caller
    /// flushed the memory runs first).
    pub fn compact_all(&self) -> Result<()> {
        let _merge = self.merge_lock.lock();
        let Some(job) = whole_merge(&self.versions.current()) else {
            return Ok(());
        };
        if self.run(job)? {
            self.counters.merges.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// The skeleton every job follows: merge the inputs into new run files
    /// (none if nothing survives; several with disjoint key ranges if the
    /// memory budget had no room for one file's filter), make them
    /// durable, and apply the edit that swaps the inputs for them. False if
    /// a merge gave up for want of memory: nothing changed, and it is
    /// retried later (see `budget`).
    fn run(&self, job: Job) -> Result<bool> {
        let policy = MergePolicy {
            snapshots: self.snapshots.list(),
            bottommost: job.bottommost,
            catalog: self.versions.catalog(),
            rules: self.rules.current(),
            now: now_millis(),
        };
        let (kind, inputs) = match &job.inputs {
            Inputs::Memory(_) => (JobKind::Flush, 0),
            Inputs::Disk(runs) => (JobKind::Merge, runs.len()),
        };
        let mut charge = self.budget.job_charge(kind);
        let insist = self.give_ups.load(Ordering::Relaxed) >= build::MERGE_GIVE_UPS;
        let Some(buffers) = build::buffers(&mut charge, &self.opts, inputs, insist) else {
            return Ok(self.deferred());
        };
        let (children, range_dels, flushed) = sources(&job.inputs, buffers.read_chunk);
        let numbers = || self.versions.new_file_number();
        let plan = build::RunPlan {
            dir: &self.dir,
            numbers: &numbers,
            opts: &self.opts,
            policy,
            level: job.target,
            db_id: self.versions.db_id(),
            budget: &self.budget,
            buffers,
            kind,
            insist,
        };
        let Some(built) = build::build_runs(plan, charge, children, range_dels)? else {
            return Ok(self.deferred());
        };
        let replaced: Vec<Arc<RunFile>> = match &job.inputs {
            Inputs::Disk(runs) => runs.iter().map(|r| Arc::clone(&r.file)).collect(),
            Inputs::Memory(_) => Vec::new(),
        };
        let mut edit = VersionEdit {
            flushed_sequence: flushed,
            ..VersionEdit::default()
        };
        let flushed_mems = match job.inputs {
            Inputs::Memory(runs) => {
                edit.flushed_mems = runs.clone();
                runs
            }
            Inputs::Disk(runs) => {
                edit.removed = runs;
                Vec::new()
            }
        };
        for (run, _) in &built.runs {
            edit.added.push((job.target, Arc::clone(run)));
        }
        let next = self.versions.apply(edit)?;
        built.charge.end(&next, &flushed_mems);
        for (run, _) in &built.runs {
            crate::cache::warm_after(&*run.file, replaced.clone());
        }
        os_memory::release_free_heap();
        if kind == JobKind::Merge {
            self.give_ups.store(0, Ordering::Relaxed);
        }
        let bytes: u64 = built.runs.iter().map(|(_, b)| *b).sum();
        self.counters
            .merge_bytes_written
            .fetch_add(bytes, Ordering::Relaxed);
        Ok(true)
    }

    /// Counts a merge that gave up for want of memory; false.
    fn deferred(&self) -> bool {
        self.give_ups.fetch_add(1, Ordering::Relaxed);
        self.counters
            .merges_deferred
            .fetch_add(1, Ordering::Relaxed);
        false
    }

    /// Deletes the logs that held only flushed runs. A log can span several
    /// runs: it goes when no memory run still in the buffer writes to it.
    /// Newer runs only get newer logs.
    fn remove_flushed_logs(&self, flushed: &[Arc<MemRun>]) {
        let oldest_needed = self
            .versions
            .current()
            .oldest_log_needed()
            .unwrap_or(u64::MAX);
        let mut numbers: Vec<u64> = flushed
            .iter()
            .map(|r| r.wal_number)
            .filter(|&n| n != 0 && n < oldest_needed)
            .collect();
        numbers.dedup();
        for n in numbers {
            let _ = self
                .opts
                .fs
                .remove_file(&self.dir.join(files::wal_file_name(n)));
        }
    }
}

/// A merge of every run file of `version` into one run on its deepest
/// level (level 1 at least: level 0 takes flushes while the merge runs,
/// and they are newer than its output). None if there are no run files.
fn whole_merge(version: &Version) -> Option<Job> {
    let inputs: Vec<Arc<DiskRun>> = version.disk_runs_newest_first().cloned().collect();
    if inputs.is_empty() {
        return None;
    }
    let target = version.levels.len().max(2) - 1;
    Some(Job::new(version, Inputs::Disk(inputs), target))
}

/// The cursors, range tombstones and (for memory runs) highest sequence
/// number of a job's inputs.
fn sources(
    inputs: &Inputs,
    chunk: usize,
) -> (Vec<Box<dyn InternalIter>>, Vec<RangeTombstone>, Option<u64>) {
    match inputs {
        Inputs::Memory(runs) => (
            runs.iter()
                .map(|m| Box::new(m.cursor()) as Box<dyn InternalIter>)
                .collect(),
            runs.iter().flat_map(|m| m.range_tombstones()).collect(),
            runs.iter().map(|r| r.max_seq()).max(),
        ),
        Inputs::Disk(runs) => (
            runs.iter()
                .map(|r| run_cursor_sequential(&r.file, chunk))
                .collect(),
            runs.iter()
                .flat_map(|r| r.file.range_tombstones().iter().cloned())
                .collect(),
            None,
        ),
    }
}

#[cfg(test)]
mod tests;
