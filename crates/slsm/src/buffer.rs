//! The memory buffer: the sLSM paper's `R` memory runs ("The Skiplist-Based
//! LSM Tree", section 2.1): one active run taking writes, the others sealed
//! and waiting for a flush. A run is sealed when it reaches `run_size`
//! bytes or `run_entries` entries; once the fraction `m` of the runs is
//! sealed, the background flush merges them into one level-0 run file.
//!
//! * **Owns**: the policy of sealing and of starting write-ahead logs; the
//!   runs themselves live in the current version, so that readers see the
//!   runs and the run files change together.
//! * **Calls**: the version set (to seal: a new active run), the background
//!   threads (the hand-off to flush, and waiting for it when every run is
//!   full), the WAL writer it is lent, the memory budget (whose reserve
//!   for the runs follows their sizes).
//! * **Thread safety**: [`MemoryBuffer::make_room`] is called by the commit
//!   pipeline's leader only (with the log it owns), so no group is inserting
//!   into a run while it is sealed.
//! * **Durability**: a log is retired (synced, trimmed) before a newer one
//!   takes writes, so a power loss never leaves a gap in the middle of the
//!   history.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use crate::background::Background;
use crate::budget::MemoryBudget;
use crate::error::{Error, Result};
use crate::files;
use crate::memtable::MemRun;
use crate::options::Options;
use crate::stats::Counters;
use crate::version::{VersionEdit, VersionSet};
use crate::wal::WalWriter;

/// The write-ahead log the commit pipeline writes to.
#[derive(Debug)]
pub(crate) enum ActiveLog {
    /// The database runs without one (`disable_wal`).
    Off,
    /// Writes go here. A writer poisoned by a failed write or sync is
    /// retired by the next write, which continues in a new log.
    Open(WalWriter),
    /// None yet: starting one failed (a full disk, say); the next write
    /// tries again, so writes resume by themselves once space is back.
    Missing,
    /// The database was closed.
    Closed,
}

impl ActiveLog {
    /// The writer, if a log is open.
    pub fn writer(&mut self) -> Option<&mut WalWriter> {
        match self {
            ActiveLog::Open(w) => Some(w),
            _ => None,
        }
    }
}

/// How long a write bigger than a run waits for room at a time, between
/// looks at the buffer (which a flush may have changed meanwhile).
const OVERSIZE_PATIENCE: std::time::Duration = std::time::Duration::from_millis(100);

/// How long a write bigger than a run waits for room in all before it
/// fails (room comes back as flushes and merges end: seconds at most).
const OVERSIZE_WAIT_LIMIT: std::time::Duration = std::time::Duration::from_secs(30);

/// The memory runs' policy. See the [module docs](self).
pub(crate) struct MemoryBuffer {
    dir: PathBuf,
    opts: Arc<Options>,
    versions: Arc<VersionSet>,
    background: Arc<Background>,
    counters: Arc<Counters>,
    /// The memory runs' reserve within it follows the runs' sizes.
    budget: Arc<MemoryBudget>,
}

impl MemoryBuffer {
    pub fn new(
        dir: PathBuf,
        opts: Arc<Options>,
        versions: Arc<VersionSet>,
        background: Arc<Background>,
        counters: Arc<Counters>,
        budget: Arc<MemoryBudget>,
    ) -> MemoryBuffer {
        MemoryBuffer {
            dir,
            opts,
            versions,
            background,
            counters,
            budget,
        }
    }

    /// The database directory.
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// The run the next write (`incoming` encoded bytes) goes to: the
    /// active run, sealed first if that write would not fit (or, with
    /// `force`, if it holds anything), so memory runs never grow past their
    /// share of the budget. Stalls, counted, while every memory run is full
    /// and the flush is behind.
    pub fn make_room(
        &self,
        log: &mut ActiveLog,
        force: bool,
        incoming: usize,
    ) -> Result<Arc<MemRun>> {
        self.ensure_log(log)?;
        let mut stalled: Option<Instant> = None;
        let result = loop {
            let version = self.versions.current();
            let active = version.active();
            let must_seal = force && !active.is_empty();
            if let Some(after) = active.room_for(incoming).filter(|_| !must_seal) {
                if self.budget.make_room_in_run(after) {
                    break Ok(Arc::clone(active));
                }
                if active.is_empty() {
                    // One write bigger than a run may hold here: the run
                    // gets room past its reserve, or the writer waits for
                    // jobs to give some back.
                    let extra = after.saturating_sub(self.budget.run_reserve());
                    if self
                        .budget
                        .take_oversize(active, extra, OVERSIZE_PATIENCE)?
                    {
                        break Ok(Arc::clone(active));
                    }
                    let since = *stalled.get_or_insert_with(Instant::now);
                    if since.elapsed() > OVERSIZE_WAIT_LIMIT {
                        break Err(Error::InvalidArgument(format!(
                            "a write of {incoming} bytes found no room in the memory budget \
                             for {OVERSIZE_WAIT_LIMIT:?}; raise Options::memory_budget"
                        )));
                    }
                    drop(version);
                    self.background.work_may_be_due()?;
                    continue;
                }
            }
            if version.mems.len() < self.opts.memory_runs {
                self.seal(log, force)?;
                if force {
                    break Ok(Arc::clone(self.versions.current().active()));
                }
                self.budget.note_full_run(&self.versions.current());
                continue;
            }
            // Every run is full: wait for a flush.
            stalled.get_or_insert_with(Instant::now);
            let mems = version.mems.len();
            drop(version);
            self.background.wait_for_flush(mems)?;
        };
        if let Some(start) = stalled {
            self.counters.stall_count.fetch_add(1, Ordering::Relaxed);
            self.counters
                .stall_micros
                .fetch_add(start.elapsed().as_micros() as u64, Ordering::Relaxed);
        }
        result
    }

    /// Seals the active run and starts a new one.
    ///
    /// The new run keeps writing to the same log until the log holds as
    /// many bytes as the whole memory buffer (`memory_runs` runs, or
    /// `run_size` if larger; or on `force`, a flush): then a new log
    /// starts, as RocksDB starts one per write buffer. Starting a log
    /// stalls the writer for device flushes (the old log synced and
    /// trimmed, the new one created, its directory synced). A log is
    /// deleted once every run in it is flushed, so the logs hold at most
    /// about twice the memory buffer.
    fn seal(&self, log: &mut ActiveLog, force: bool) -> Result<()> {
        let buffer = self.opts.memory_runs * self.opts.effective_run_size();
        let span = buffer.max(self.opts.run_size) as u64;
        let wal_number = match log.writer() {
            Some(w) if !force && w.len() < span => w.log_number(),
            Some(old) => {
                // Sync the old log first: if it failed (poisoned, maybe with
                // a torn record), this fails too, and no newer log is
                // started until the damaged one is retired (`ensure_log`).
                old.sync()?;
                let (number, new_log) = self.create_log()?;
                if let ActiveLog::Open(old) = std::mem::replace(log, ActiveLog::Open(new_log)) {
                    // Durable (and trimmed) before newer writes can be.
                    old.close()?;
                }
                number
            }
            None => 0,
        };
        let shared = self.versions.current().active().key_prefix_shared();
        let edit = VersionEdit {
            new_active: Some(Arc::new(MemRun::new(&self.opts, wal_number, &shared))),
            ..VersionEdit::default()
        };
        let next = self.versions.apply(edit)?;
        self.budget.note_seal(&next);
        if next.mems.len() > self.opts.runs_per_flush() {
            self.background.work_may_be_due()?;
        }
        Ok(())
    }

    /// Makes sure writes have a healthy log: retires a poisoned one (its
    /// failed tail cut off, the rest synced) and starts a new one. The
    /// memory runs keep the number of the log they started in; every log
    /// from the oldest of those on is kept and replayed, so a run spanning
    /// the old log and the new one is recovered whole.
    fn ensure_log(&self, log: &mut ActiveLog) -> Result<()> {
        match log {
            ActiveLog::Off => return Ok(()),
            ActiveLog::Closed => return Err(Error::Closed(self.dir().to_path_buf())),
            ActiveLog::Open(w) if w.poisoned().is_none() => return Ok(()),
            ActiveLog::Open(w) => {
                w.retire_damaged()?;
                *log = ActiveLog::Missing;
            }
            ActiveLog::Missing => {}
        }
        let (_, writer) = self.create_log()?;
        *log = ActiveLog::Open(writer);
        Ok(())
    }

    /// A new log file, numbered from the version set.
    pub fn create_log(&self) -> Result<(u64, WalWriter)> {
        let number = self.versions.new_file_number();
        let path = self.dir.join(files::wal_file_name(number));
        let mut log =
            WalWriter::create_sized(&*self.opts.fs, &path, number, self.opts.run_size as u64)?;
        log.retain_at_most(self.opts.log_buffer_bytes());
        Ok((number, log))
    }
}
