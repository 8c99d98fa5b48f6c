//! Background work: two threads, one flushing sealed memory runs and one
//! merging full levels, so that a long merge never holds up the flush that
//! writers may be waiting for. With `background_merges: false` the same jobs
//! run inline on the writing thread instead.
//!
//! * **Owns**: the threads' shared state (shut down? failed? progress) and
//!   the condition variables writers and threads wait on.
//! * **Calls**: [`Jobs`] (what the threads do) and the version set (to see
//!   whether work is due).
//! * **Thread safety**: every method may be called from any thread.
//! * **Failure**: a job that fails (a full disk, an I/O error) is retried,
//!   after a pause that doubles up to [`MAX_BACKOFF`], until it succeeds:
//!   nothing is lost (the inputs stay where they were, their logs kept), and
//!   once the cause is gone the engine carries on by itself. Meanwhile
//!   writes go on while the memory runs have room; a writer that needs a
//!   flush that is failing gets its error at once instead of waiting, and
//!   [`Background::wait_until_idle`] reports it.
//!
//! Both threads run at the process's CPU priority. Merging at a lower one
//! (nice 10, as RocksDB's `LowerThreadPoolCPUPriority` allows) was
//! measured and dropped: with a writer and a reader busy on both cores,
//! the merge thread got so little CPU that level 0 grew to 106 runs during
//! `readwhilewriting` (3-14 at the normal priority) and lookups, which
//! check every one of them, took twice as long (5M keys, 2 cores). Nothing
//! here stalls writers on a merge backlog, so the merges' share of the CPU
//! is what bounds the runs a lookup checks.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::error::{Error, Result};
use crate::jobs::Jobs;
use crate::version::{Version, VersionSet};

/// First pause before a failed job is retried.
const FIRST_BACKOFF: Duration = Duration::from_millis(50);
/// How often a writer stalled for a flush rechecks the memory runs if no
/// flush signalled it (see [`Background::wait_for_flush`]).
const STALL_RECHECK: Duration = Duration::from_millis(10);
/// Longest pause between retries of a failing job.
pub(crate) const MAX_BACKOFF: Duration = Duration::from_secs(2);
/// How long an idle background thread sleeps between looks at its work
/// (and the budget's quiet clock: see `MemoryBudget::tick`).
const TICK: Duration = Duration::from_millis(50);

/// The two kinds of background job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Flush,
    Merge,
}

/// A job kind that is failing.
#[derive(Debug)]
struct Failure {
    error: Error,
    attempts: u32,
    retry_at: Instant,
}

#[derive(Default)]
struct State {
    shutdown: bool,
    flush_failure: Option<Failure>,
    merge_failure: Option<Failure>,
    /// Jobs finished (ok or not): waiters see progress by its change.
    finished: u64,
}

impl State {
    fn failure(&mut self, kind: Kind) -> &mut Option<Failure> {
        match kind {
            Kind::Flush => &mut self.flush_failure,
            Kind::Merge => &mut self.merge_failure,
        }
    }

    /// The error of a failing job kind, flushes first.
    fn first_error(&self) -> Option<Error> {
        self.flush_failure
            .as_ref()
            .or(self.merge_failure.as_ref())
            .map(|f| f.error.clone())
    }
}

/// The background threads and what they share. See the [module docs](self).
pub(crate) struct Background {
    jobs: Arc<Jobs>,
    versions: Arc<VersionSet>,
    /// False: jobs run inline on the thread that made them due.
    threaded: bool,
    state: Mutex<State>,
    /// Signalled when work may be due.
    work: Condvar,
    /// Signalled when a job completed (or failed).
    done: Condvar,
}

impl Background {
    pub fn new(jobs: Arc<Jobs>, versions: Arc<VersionSet>, threaded: bool) -> Background {
        Background {
            jobs,
            versions,
            threaded,
            state: Mutex::new(State::default()),
            work: Condvar::new(),
            done: Condvar::new(),
        }
    }

    /// Starts the flush and merge threads (none when jobs run inline).
    pub fn start(self: &Arc<Self>) -> std::io::Result<Vec<JoinHandle<()>>> {
        if !self.threaded {
            return Ok(Vec::new());
        }
        let spawn = |name: &str, body: fn(&Background)| {
            let me = Arc::clone(self);
            std::thread::Builder::new()
                .name(name.to_string())
                .spawn(move || body(&me))
        };
        Ok(vec![
            spawn("slsm-flush", Background::flush_loop)?,
            spawn("slsm-merge", Background::merge_loop)?,
        ])
    }

    /// Flushes once enough memory runs are sealed, and, once the database
    /// is idle (`MemoryBudget::idle_flush_due`), whatever is sealed:
    /// those runs would otherwise hold their memory, and cost every lookup
    /// a search, until writes resume (see `budget`).
    fn flush_loop(&self) {
        let picker = self.jobs.picker();
        let due = |v: &Version| {
            picker.flush_due(v) || (v.mems.len() > 1 && self.jobs.budget().idle_flush_due())
        };
        while self.wait_for_work(Kind::Flush, due) {
            let r = self.jobs.flush_oldest(picker.runs_per_flush()).map(|_| ());
            self.finish(Kind::Flush, r);
        }
    }

    fn merge_loop(&self) {
        let picker = self.jobs.picker();
        while self.wait_for_work(Kind::Merge, |v| picker.merge_due(v).is_some()) {
            let r = self.jobs.merge_levels();
            self.finish(Kind::Merge, r);
        }
    }

    /// Blocks until `due` holds for the current version and a failed job
    /// of this kind is due for its retry (true), or the database shuts
    /// down (false).
    fn wait_for_work(&self, kind: Kind, due: impl Fn(&Version) -> bool) -> bool {
        let mut state = self.state.lock();
        loop {
            if state.shutdown {
                return false;
            }
            if let Some(retry_at) = state.failure(kind).as_ref().map(|f| f.retry_at) {
                if Instant::now() < retry_at {
                    self.work.wait_until(&mut state, retry_at);
                    continue;
                }
            }
            if due(&self.versions.current()) {
                return true;
            }
            // Nothing to retry any more (another thread did the work).
            *state.failure(kind) = None;
            // The timeout is a safety net only; work is signalled. It is
            // also the budget's tick (see `MemoryBudget::tick`).
            if self.work.wait_for(&mut state, TICK).timed_out() {
                parking_lot::MutexGuard::unlocked(&mut state, || self.jobs.tick());
            }
        }
    }

    fn finish(&self, kind: Kind, result: Result<()>) {
        let mut state = self.state.lock();
        match result {
            Ok(()) => *state.failure(kind) = None,
            Err(error) => {
                let attempts = state.failure(kind).as_ref().map_or(0, |f| f.attempts) + 1;
                let pause = FIRST_BACKOFF
                    .saturating_mul(1 << (attempts - 1).min(16))
                    .min(MAX_BACKOFF);
                *state.failure(kind) = Some(Failure {
                    error,
                    attempts,
                    retry_at: Instant::now() + pause,
                });
            }
        }
        state.finished += 1;
        self.done.notify_all();
        self.work.notify_all();
    }

    /// The error of a background job that is failing (and being retried),
    /// if any.
    pub fn error(&self) -> Option<Error> {
        self.state.lock().first_error()
    }

    /// Says that work may be due: wakes the threads, or runs the due jobs
    /// inline.
    pub fn work_may_be_due(&self) -> Result<()> {
        if !self.threaded {
            return self.run_inline();
        }
        let _state = self.state.lock();
        self.work.notify_all();
        // A flush run inline may have made room for a stalled writer.
        self.done.notify_all();
        Ok(())
    }

    /// Runs every due flush and merge on this thread.
    fn run_inline(&self) -> Result<()> {
        let picker = self.jobs.picker();
        while picker.flush_due(&self.versions.current()) {
            self.jobs.flush_oldest(picker.runs_per_flush())?;
        }
        self.jobs.merge_levels()
    }

    /// A writer found every memory run full: waits until a flush removed one
    /// (there were `mems_before`); the flush's error if it is failing (at
    /// once: it is retried in the background, and a later write may
    /// succeed). Inline, or once the threads have stopped, runs the flush
    /// itself.
    ///
    /// After shutdown the caller is the closing `Db` flushing writes that
    /// skipped the log (or a write racing the close): no thread will flush
    /// for it, and a failure recorded before may be stale (the disk may
    /// have room again), so the flush is tried here, for real.
    pub fn wait_for_flush(&self, mems_before: usize) -> Result<()> {
        if !self.threaded {
            return self.run_inline();
        }
        let mut state = self.state.lock();
        self.work.notify_all();
        loop {
            if self.versions.current().mems.len() < mems_before {
                return Ok(());
            }
            if state.shutdown {
                drop(state);
                let picker = self.jobs.picker();
                return self.jobs.flush_oldest(picker.runs_per_flush()).map(|_| ());
            }
            if let Some(f) = &state.flush_failure {
                return Err(f.error.clone());
            }
            // Flushes run inline too (`Db::flush`, on the caller's thread)
            // and may free a run without this thread's `done` signal: the
            // timeout bounds the wait for such a one. (Without it, a
            // writer stalled while `Db::flush` ran hung for good: the
            // flush thread saw nothing due, so nothing signalled again.)
            self.done.wait_for(&mut state, STALL_RECHECK);
        }
    }

    /// Blocks until no flush or merge is due (`Db::wait_for_compaction`).
    pub fn wait_until_idle(&self) -> Result<()> {
        if !self.threaded {
            return self.run_inline();
        }
        let picker = self.jobs.picker();
        let mut state = self.state.lock();
        loop {
            if let Some(e) = state.first_error() {
                return Err(e);
            }
            if state.shutdown || !picker.work_due(&self.versions.current()) {
                return Ok(());
            }
            self.work.notify_all();
            self.done.wait_for(&mut state, Duration::from_millis(100));
        }
    }

    /// Stops the threads after the job they are running.
    pub fn shutdown(&self) {
        let mut state = self.state.lock();
        state.shutdown = true;
        self.work.notify_all();
        self.done.notify_all();
    }
}
