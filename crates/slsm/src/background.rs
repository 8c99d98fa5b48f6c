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
//! * **Failure**: the first error of a background job stops the engine's
//!   writes ([`Error::BackgroundFailed`]) until the database is reopened,
//!   so that nothing is lost silently.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

use crate::error::{Error, Result};
use crate::jobs::Jobs;
use crate::version::{Version, VersionSet};

#[derive(Default)]
struct State {
    shutdown: bool,
    /// The first background failure; writes are refused after it.
    error: Option<Error>,
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
    /// Set with `State::error`, so writers can check it without the lock.
    failed: AtomicBool,
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
            failed: AtomicBool::new(false),
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

    fn flush_loop(&self) {
        let picker = self.jobs.picker();
        while self.wait_for_work(|v| picker.flush_due(v)) {
            let r = self.jobs.flush_oldest(picker.runs_per_flush()).map(|_| ());
            self.finish(r);
        }
    }

    fn merge_loop(&self) {
        let picker = self.jobs.picker();
        while self.wait_for_work(|v| picker.level_to_merge(v).is_some()) {
            let r = self.jobs.merge_levels();
            self.finish(r);
        }
    }

    /// Blocks until `due` holds for the current version (true) or the
    /// database shuts down or failed (false).
    fn wait_for_work(&self, due: impl Fn(&Version) -> bool) -> bool {
        let mut state = self.state.lock();
        loop {
            if state.shutdown || state.error.is_some() {
                return false;
            }
            if due(&self.versions.current()) {
                return true;
            }
            // The timeout is a safety net only; work is signalled.
            self.work.wait_for(&mut state, Duration::from_millis(500));
        }
    }

    fn finish(&self, result: Result<()>) {
        let mut state = self.state.lock();
        if let Err(e) = result {
            state.error.get_or_insert(e);
            self.failed.store(true, Ordering::Release);
        }
        self.done.notify_all();
        self.work.notify_all();
    }

    /// Fails if a background job failed earlier.
    pub fn check(&self) -> Result<()> {
        if !self.failed.load(Ordering::Acquire) {
            return Ok(());
        }
        match &self.state.lock().error {
            Some(e) => Err(Error::BackgroundFailed(e.to_string())),
            None => Ok(()),
        }
    }

    /// Says that work may be due: wakes the threads, or runs the due jobs
    /// inline.
    pub fn work_may_be_due(&self) -> Result<()> {
        if !self.threaded {
            return self.run_inline();
        }
        let _state = self.state.lock();
        self.work.notify_all();
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
    /// (there were `mems_before`), the engine failed or shut down. Inline,
    /// runs the flush itself.
    pub fn wait_for_flush(&self, mems_before: usize) -> Result<()> {
        if !self.threaded {
            return self.run_inline();
        }
        let mut state = self.state.lock();
        self.work.notify_all();
        while state.error.is_none()
            && !state.shutdown
            && self.versions.current().mems.len() >= mems_before
        {
            self.done.wait(&mut state);
        }
        Ok(())
    }

    /// Blocks until no flush or merge is due (`Db::wait_for_compaction`).
    pub fn wait_until_idle(&self) -> Result<()> {
        if !self.threaded {
            return self.run_inline();
        }
        let picker = self.jobs.picker();
        let mut state = self.state.lock();
        loop {
            if let Some(e) = &state.error {
                return Err(Error::BackgroundFailed(e.to_string()));
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
