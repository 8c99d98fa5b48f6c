//! Background work: flushing the oldest fraction `m` of the memory runs into
//! one level-0 run, and merging a level that holds `D` runs into one run of
//! the next level (seed 002, 2.5). Two threads do it, one for flushes and
//! one for level merges, so a long merge never holds up the flush that
//! writers may be waiting for. With `background_merges: false` the same
//! functions run inline on the writing thread.
//!
//! Every change is installed the same way: build the new run file, fsync it
//! and the directory, write the manifest atomically, then publish the new
//! [`Version`]. Files replaced by a merge are deleted only when the last
//! reader holding them lets go.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use super::Shared;
use crate::error::{Error, Result};
use crate::fsutil;
use crate::iter::{run_cursor_sequential, InternalIter, MergingIter};
use crate::manifest::{self, Manifest};
use crate::memtable::MemRun;
use crate::merge::{merge_into, MergePolicy};
use crate::options::Options;
use crate::rangedel::RangeTombstone;
use crate::run::{RunBuilder, RunFile, RunOptions};
use crate::version::{DiskRun, Version};

/// Runs a level may hold however disjoint they are: bounds the runs a
/// lookup checks and an iterator merges.
const MAX_LEVEL_RUNS: usize = 64;

/// The most runs of `level` any one user key falls in (runs holding range
/// tombstones count as covering every key: a tombstone may reach far
/// beyond the run's point keys and must meet merges to be dropped).
pub(super) fn overlap_depth(level: &[Arc<DiskRun>]) -> usize {
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

/// Where and how to write one new run.
pub(super) struct RunPlan<'a> {
    pub dir: &'a Path,
    pub number: u64,
    pub opts: &'a Options,
    pub policy: MergePolicy,
}

/// Merges `children` and their range tombstones into a new run file;
/// `None` if nothing survived the merge. Returns the run and the bytes
/// written.
pub(super) fn build_run(
    plan: RunPlan<'_>,
    children: Vec<Box<dyn InternalIter>>,
    range_dels: Vec<RangeTombstone>,
) -> Result<Option<(Arc<DiskRun>, u64)>> {
    let path = plan.dir.join(manifest::run_file_name(plan.number));
    let run_opts = RunOptions {
        fence_entries: plan.opts.fence_entries,
        bloom_fp_rate: plan.opts.bloom_fp_rate,
        ..RunOptions::default()
    };
    let fs = &plan.opts.fs;
    let mut builder = RunBuilder::create_with(fs.clone(), &path, run_opts)?;
    let mut input = MergingIter::new(children);
    let totals = merge_into(&mut input, &range_dels, &mut builder, &plan.policy)?;
    if totals.entries_written == 0 && totals.range_dels_written == 0 {
        return Ok(None); // dropping the builder removes the partial file
    }
    let props = builder.finish()?;
    fsutil::sync_dir_with(&**fs, plan.dir)?;
    let file = RunFile::open_with(fs.clone(), &path)?;
    Ok(Some((
        Arc::new(DiskRun::new(plan.number, Arc::new(file))),
        props.file_size,
    )))
}

pub(super) fn start(shared: &Arc<Shared>) -> Result<Vec<JoinHandle<()>>> {
    if !shared.opts.background_merges {
        return Ok(Vec::new());
    }
    let spawn = |name: &str, body: fn(&Shared)| {
        let s = Arc::clone(shared);
        std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || body(&s))
            .map_err(|e| Error::io(&shared.dir, e))
    };
    Ok(vec![
        spawn("slsm-flush", flush_thread)?,
        spawn("slsm-merge", merge_thread)?,
    ])
}

fn flush_thread(s: &Shared) {
    while s.wait_for_work(|v| v.mems.len() > s.opts.runs_per_flush()) {
        let r = s.flush_oldest(s.opts.runs_per_flush()).map(|_| ());
        s.finish_work(r);
    }
}

fn merge_thread(s: &Shared) {
    while s.wait_for_work(|v| s.level_to_merge(v).is_some()) {
        let r = s.merge_levels();
        s.finish_work(r);
    }
}

impl Shared {
    /// Blocks until `due` holds for the current version (true) or the
    /// database shuts down or failed (false).
    fn wait_for_work(&self, due: impl Fn(&Version) -> bool) -> bool {
        let mut bg = self.bg.lock();
        loop {
            if bg.shutdown || bg.error.is_some() {
                return false;
            }
            if due(&self.current.load()) {
                return true;
            }
            // The timeout is a safety net only; work is signalled.
            self.bg_work.wait_for(&mut bg, Duration::from_millis(500));
        }
    }

    fn finish_work(&self, result: Result<()>) {
        let mut bg = self.bg.lock();
        if let Err(e) = result {
            bg.error.get_or_insert(e);
            self.bg_failed.store(true, Ordering::Release);
        }
        bg.progress += 1;
        self.bg_done.notify_all();
        self.bg_work.notify_all();
    }

    /// Wakes the background threads.
    pub(super) fn signal_work(&self) {
        let _bg = self.bg.lock();
        self.bg_work.notify_all();
    }

    /// The shallowest level due for a merge: some user key falls in `D` of
    /// its runs, or it holds [`MAX_LEVEL_RUNS`] runs.
    ///
    /// Runs with disjoint key ranges do not count against `D`: together
    /// they are one sorted run, and rewriting them would only copy bytes
    /// (a sequential load is written once, not once per level, as a
    /// trivial move does elsewhere). Reads skip a run whose key range
    /// misses the key before touching its filter.
    fn level_to_merge(&self, v: &Version) -> Option<usize> {
        v.levels.iter().position(|l| {
            l.len() >= MAX_LEVEL_RUNS
                || (l.len() >= self.opts.level_runs && overlap_depth(l) >= self.opts.level_runs)
        })
    }

    /// Flushes the oldest immutable runs if at least `runs_per_flush` exist
    /// (inline mode).
    pub(super) fn flush_immutables(&self) -> Result<()> {
        while self.current.load().mems.len() > self.opts.runs_per_flush() {
            self.flush_oldest(self.opts.runs_per_flush())?;
        }
        Ok(())
    }

    /// Seals the active run and flushes every memory run.
    pub(crate) fn flush_all(&self) -> Result<()> {
        self.check_bg_error()?;
        self.unlogged.store(false, Ordering::Release);
        self.rotate_active()?;
        while self.flush_oldest(usize::MAX)? {}
        if self.opts.background_merges {
            self.signal_work();
            Ok(())
        } else {
            self.merge_levels()
        }
    }

    /// Merges up to `max` of the oldest immutable runs into one level-0 run.
    /// Returns false if there was nothing to flush.
    fn flush_oldest(&self, max: usize) -> Result<bool> {
        let _flush = self.flush_lock.lock();
        let version = self.current.load_full();
        let runs: Vec<Arc<MemRun>> = version
            .immutables_oldest_first()
            .take(max)
            .cloned()
            .collect();
        if runs.is_empty() {
            return Ok(false);
        }
        let plan = RunPlan {
            dir: &self.dir,
            number: self.new_file_number(),
            opts: &self.opts,
            policy: MergePolicy {
                snapshots: self.snapshot_list(),
                bottommost: version.levels_empty_from(0),
            },
        };
        let children = runs
            .iter()
            .map(|m| Box::new(m.cursor()) as Box<dyn InternalIter>)
            .collect();
        let range_dels = runs.iter().flat_map(|m| m.range_tombstones()).collect();
        let built = build_run(plan, children, range_dels)?;
        let flushed_max = runs.iter().map(|r| r.max_seq()).max().unwrap_or(0);
        self.install(
            |next| {
                next.mems
                    .retain(|m| !runs.iter().any(|f| Arc::ptr_eq(f, m)));
                if let Some((run, _)) = &built {
                    if next.levels.is_empty() {
                        next.levels.push(Vec::new());
                    }
                    next.levels[0].push(Arc::clone(run));
                }
            },
            Some(flushed_max),
        )?;
        let bytes = built.map_or(0, |(_, b)| b);
        self.counters.flushes.fetch_add(1, Ordering::Relaxed);
        self.counters
            .merge_bytes_written
            .fetch_add(bytes, Ordering::Relaxed);
        self.remove_flushed_logs(&runs);
        Ok(true)
    }

    /// Deletes the WAL files that held only flushed runs. A log can span
    /// several runs (see `seal_active`): it goes when no memory run still
    /// in the buffer writes to it. Newer runs only get newer logs.
    fn remove_flushed_logs(&self, flushed: &[Arc<MemRun>]) {
        let oldest_needed = self
            .current
            .load()
            .mems
            .iter()
            .map(|m| m.wal_number)
            .filter(|&n| n != 0)
            .min()
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
                .remove_file(&self.path_of(&manifest::wal_file_name(n)));
        }
    }

    /// Merges full levels until none holds `D` runs.
    pub(super) fn merge_levels(&self) -> Result<()> {
        loop {
            let _merge = self.merge_lock.lock();
            let version = self.current.load_full();
            let Some(level) = self.level_to_merge(&version) else {
                return Ok(());
            };
            let inputs = version.levels[level].clone();
            self.merge_runs(&version, inputs, level + 1)?;
        }
    }

    /// Flushes, then merges every disk run into one run on the deepest level.
    pub(crate) fn compact_all(&self) -> Result<()> {
        self.flush_all()?;
        let _merge = self.merge_lock.lock();
        let version = self.current.load_full();
        let inputs: Vec<Arc<DiskRun>> = version.disk_runs_newest_first().cloned().collect();
        if inputs.is_empty() {
            return Ok(());
        }
        let target = version.levels.len().max(2) - 1;
        self.merge_runs(&version, inputs, target)
    }

    /// K-way merges `inputs` into one run appended to level `target`. The
    /// caller holds `merge_lock`.
    fn merge_runs(
        &self,
        version: &Version,
        inputs: Vec<Arc<DiskRun>>,
        target: usize,
    ) -> Result<()> {
        let is_input = |r: &Arc<DiskRun>| inputs.iter().any(|i| Arc::ptr_eq(i, r));
        // Tombstones may go if nothing older than the inputs exists: every
        // run at or below the target level is an input.
        let bottommost = version
            .levels
            .iter()
            .skip(target)
            .all(|l| l.iter().all(is_input));
        let plan = RunPlan {
            dir: &self.dir,
            number: self.new_file_number(),
            opts: &self.opts,
            policy: MergePolicy {
                snapshots: self.snapshot_list(),
                bottommost,
            },
        };
        let children = inputs
            .iter()
            .map(|r| run_cursor_sequential(&r.file))
            .collect();
        let range_dels = inputs
            .iter()
            .flat_map(|r| r.file.range_tombstones().iter().cloned())
            .collect();
        let built = build_run(plan, children, range_dels)?;
        self.install(
            |next| {
                for level in &mut next.levels {
                    level.retain(|r| !is_input(r));
                }
                if let Some((run, _)) = &built {
                    while next.levels.len() <= target {
                        next.levels.push(Vec::new());
                    }
                    next.levels[target].push(Arc::clone(run));
                }
                while next.levels.len() > 1 && next.levels.last().is_some_and(|l| l.is_empty()) {
                    next.levels.pop();
                }
            },
            None,
        )?;
        for r in &inputs {
            r.file.mark_obsolete();
        }
        self.counters.merges.fetch_add(1, Ordering::Relaxed);
        self.counters
            .merge_bytes_written
            .fetch_add(built.map_or(0, |(_, b)| b), Ordering::Relaxed);
        Ok(())
    }

    /// Applies `edit` to a copy of the current version, records it in the
    /// manifest (atomically, fsynced) and publishes it.
    fn install(&self, edit: impl FnOnce(&mut Version), flushed: Option<u64>) -> Result<()> {
        let mut state = self.version_lock.lock();
        let mut next = (*self.current.load_full()).clone();
        edit(&mut next);
        let flushed_sequence = state.flushed_sequence.max(flushed.unwrap_or(0));
        let next_file = self.next_file.load(Ordering::Relaxed);
        let min_wal = next
            .mems
            .iter()
            .map(|m| m.wal_number)
            .filter(|&n| n != 0)
            .min()
            .unwrap_or(next_file);
        let manifest = Manifest {
            next_file_number: next_file,
            last_sequence: flushed_sequence,
            min_wal_number: min_wal,
            levels: next.manifest_levels(),
            ..Manifest::new()
        };
        manifest.store_with(&*self.opts.fs, &self.dir)?;
        state.flushed_sequence = flushed_sequence;
        self.current.store(Arc::new(next));
        Ok(())
    }
}
