//! The commit pipeline: every write goes through [`CommitPipeline::commit`],
//! which gives its batch sequence numbers, logs it, inserts it into the
//! active memory run and publishes it to readers (Pebble's `commit.go`
//! plays this part there).
//!
//! # The protocol
//!
//! Writers queue up. The writer at the front of the queue becomes the
//! *leader* of a group:
//!
//! 1. it makes room in the memory buffer (sealing a full run, stalling only
//!    if all `R` runs are full) and takes the batches queued behind it as
//!    one group (up to 1 MiB, all with the same WAL setting);
//! 2. it stamps each batch with consecutive sequence numbers, appends one
//!    WAL record per batch and hands them to the file system with one write
//!    (and one sync if any member asked for it; the device flush runs with
//!    the queue unlocked, so writers arriving meanwhile queue up for the
//!    next group instead of blocking on the lock, and a `Db::sync` lets
//!    other writes go on; see `sync_unlocked`);
//! 3. the queue lock is released and every member inserts its own batch
//!    into the memory run, in parallel ([`MemRun::apply`]);
//! 4. when all have finished, the leader publishes the group's last
//!    sequence number: readers see the whole group at once, never half a
//!    batch, and the next writer in the queue leads the next group.
//!
//! A writer that finds nobody queued and nobody committing skips the queue:
//! it commits its own batch in place (steps 1 to 4 for a group of one),
//! marking the queue busy so that writers arriving meanwhile line up
//! behind it. That saves the hand-off (an allocation and a dozen atomic
//! operations) on every single-threaded write.
//!
//! The protocol is `queue.rs` (`Committer`), over the stages of
//! `stages.rs`; the engine's stages are [`EngineStages`] here, and the
//! protocol's tests (`tests.rs`) run it over a fake environment.
//!
//! * **Owns**: the published (visible) sequence number; through the
//!   protocol, the queue, the last sequence number handed out and the
//!   active write-ahead log (`ActiveLog`: started, retired and closed only
//!   with the queue locked).
//! * **Calls**: the memory buffer (room, sealing, log rotation) and the
//!   memory run's `apply`; the WAL writer.
//! * **Thread safety**: `commit` may be called from any number of threads.
//! * **Durability**: a write is acknowledged after its record reached the
//!   operating system (default; survives a process crash) or, with `sync`,
//!   after the log was synced (survives a machine crash). A failed log
//!   write or sync poisons the log and fails the writes of its group; the
//!   next write retires that log (the failed records cut off, the rest
//!   synced) and continues in a new one, so nothing acknowledged ever sits
//!   behind a torn record, a failed write is never applied once a later
//!   one succeeded, and writes resume by themselves once the cause (a full
//!   disk) is gone.

mod queue;
mod spare;
mod stages;
#[cfg(test)]
mod tests;
mod waiter;

pub(crate) use spare::take_batch;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::MutexGuard;

use crate::batch::WriteBatch;
use crate::buffer::{ActiveLog, MemoryBuffer};
use crate::error::{Error, Result};
use crate::memtable::{Inserters, MemRun};
use crate::options::WriteOptions;
use crate::stats::Counters;
use crate::wal::PendingSync;
use queue::{Committer, Queue};
use stages::{Durability, Stages};

/// The commit pipeline held by [`CommitPipeline::exclusive`].
pub(crate) struct Exclusive<'a> {
    pipeline: &'a CommitPipeline,
    q: MutexGuard<'a, Queue<EngineStages>>,
    taken: Option<u64>,
}

impl Exclusive<'_> {
    /// Seals the active memory run if it holds anything (its writes can
    /// then be flushed).
    pub fn seal_active(&mut self) -> Result<()> {
        let stages = self.pipeline.committer.env();
        stages.make_room(&mut self.q.log, true, 0).map(drop)
    }

    /// A sequence number above every write so far, published when the
    /// exclusive section ends well.
    pub fn take_sequence(&mut self) -> Result<u64> {
        let (seq, _) = self.q.sequences_for(1)?;
        self.q.last_seq = seq;
        self.taken = Some(seq);
        Ok(seq)
    }
}

/// The engine's stages: the memory buffer makes room (and rotates the
/// log), the WAL writer logs, the memory run applies, and the visible
/// sequence number publishes.
pub(crate) struct EngineStages {
    buffer: MemoryBuffer,
    counters: Arc<Counters>,
    /// Highest sequence number whose batch is fully applied: what reads see.
    visible_seq: AtomicU64,
    /// Some write skipped the log since the last flush.
    unlogged: AtomicBool,
}

impl Stages for EngineStages {
    type Log = ActiveLog;
    type Run = MemRun;
    type PendingSync = PendingSync;

    #[inline]
    fn make_room(&self, log: &mut ActiveLog, seal: bool, bytes: usize) -> Result<Arc<MemRun>> {
        self.buffer.make_room(log, seal, bytes)
    }

    #[inline]
    fn log_batch(
        &self,
        log: &mut ActiveLog,
        batch: &mut WriteBatch,
        first_seq: u64,
        no_wal: bool,
    ) -> Result<u64> {
        self.counters
            .user_bytes_written
            .add(batch.encoded_size() as u64);
        let payload = batch.seal(first_seq);
        match (log.writer(), no_wal) {
            (Some(log), false) => {
                log.append(payload)?;
                Ok(payload.len() as u64)
            }
            _ => {
                self.unlogged.store(true, Ordering::Release);
                Ok(0)
            }
        }
    }

    #[inline]
    fn flush_log(&self, log: &mut ActiveLog) -> Result<()> {
        match log.writer() {
            Some(log) => log.flush(),
            None => Ok(()),
        }
    }

    #[inline]
    fn begin_sync(&self, log: &mut ActiveLog) -> Result<Option<PendingSync>> {
        match log.writer() {
            Some(log) => log.begin_sync(),
            None => Ok(None),
        }
    }

    #[inline]
    fn run_sync(&self, pending: &PendingSync) -> std::io::Result<()> {
        pending.run()
    }

    #[inline]
    fn end_sync(
        &self,
        log: &mut ActiveLog,
        pending: PendingSync,
        outcome: std::io::Result<()>,
    ) -> Result<()> {
        match log.writer() {
            Some(log) => log.end_sync(pending, outcome),
            // Closed meanwhile (closing syncs the log whole).
            None => outcome.map_err(|e| Error::io(std::path::Path::new("the write-ahead log"), e)),
        }
    }

    #[inline]
    fn count_logged(&self, bytes: u64) {
        self.counters
            .wal_bytes_written
            .fetch_add(bytes, Ordering::Relaxed);
    }

    #[inline]
    fn apply(&self, run: &MemRun, batch: &WriteBatch, first_seq: u64, inserters: Inserters) {
        run.apply(batch.ops(), first_seq, inserters);
    }

    #[inline]
    fn publish(&self, last_seq: u64) {
        self.visible_seq.store(last_seq, Ordering::Release);
    }
}

/// The write path. See the [module docs](self).
pub(crate) struct CommitPipeline {
    committer: Committer<EngineStages>,
    sync_writes: bool,
    disable_wal: bool,
    /// The database directory, if it was opened read-only: writes fail.
    read_only: Option<std::path::PathBuf>,
}

impl CommitPipeline {
    /// A pipeline continuing after `last_seq`, writing to `log`.
    pub fn new(
        buffer: MemoryBuffer,
        counters: Arc<Counters>,
        opts: &crate::options::Options,
        last_seq: u64,
        log: ActiveLog,
    ) -> CommitPipeline {
        let read_only = opts.read_only.then(|| buffer.dir().to_path_buf());
        let stages = EngineStages {
            buffer,
            counters,
            visible_seq: AtomicU64::new(last_seq),
            unlogged: AtomicBool::new(false),
        };
        CommitPipeline {
            read_only,
            committer: Committer::new(stages, last_seq, log),
            sync_writes: opts.sync_writes,
            disable_wal: opts.disable_wal,
        }
    }

    /// Applies `batch` atomically with the durability `opts` asks for.
    ///
    /// Calls `placed` once the batch's place in the commit order is fixed,
    /// if others could share its commit (see below): every write that
    /// enters the pipeline after that call is ordered after this batch (it
    /// gets higher sequence numbers), though the batch is not yet logged or
    /// visible. A transaction validates, then releases its gate from
    /// `placed`, so that its log write, sync and insert run beside other
    /// writers' (in one group) instead of alone. Not called if the batch
    /// is refused before it enters (read-only database, invalid or empty
    /// batch), nor for an unsynced batch on an idle queue.
    pub fn commit(
        &self,
        batch: WriteBatch,
        opts: &WriteOptions,
        placed: &mut dyn FnMut(),
    ) -> Result<()> {
        if let Some(dir) = &self.read_only {
            return Err(Error::ReadOnly(dir.clone()));
        }
        batch.validate()?;
        if batch.is_empty() {
            return Ok(());
        }
        let durability = Durability {
            sync: opts.sync || self.sync_writes,
            no_wal: opts.disable_wal || self.disable_wal,
        };
        self.committer.commit(batch, durability, placed)
    }

    /// Seals the active run if it holds anything, through the queue so that
    /// no group is inserting into it (a flush starts this way).
    pub fn seal_active(&self) -> Result<()> {
        self.committer.seal_active()
    }

    /// Runs `f` while no write commits: it waits until nobody is queued or
    /// committing, then holds the queue, so writers arriving meanwhile wait
    /// for `f` to return. `f` may seal the active run and take a sequence
    /// number of its own ([`Exclusive`]); the number is published when `f`
    /// succeeds. For work that must see the database still (a bulk load).
    pub fn exclusive<T>(&self, f: impl FnOnce(&mut Exclusive<'_>) -> Result<T>) -> Result<T> {
        if let Some(dir) = &self.read_only {
            return Err(Error::ReadOnly(dir.clone()));
        }
        let mut q = self.committer.lock();
        while !q.is_idle() {
            // Leaders and uncontended writers finish within microseconds.
            MutexGuard::unlocked(&mut q, || {
                std::thread::sleep(std::time::Duration::from_micros(50))
            });
        }
        let mut ex = Exclusive {
            pipeline: self,
            q,
            taken: None,
        };
        let result = f(&mut ex);
        if let (Ok(_), Some(seq)) = (&result, ex.taken) {
            self.committer.env().publish(seq);
        }
        ex.q.wake_front();
        result
    }

    /// The highest sequence number readers may see.
    pub fn visible(&self) -> u64 {
        self.committer.env().visible_seq.load(Ordering::Acquire)
    }

    /// True if a write skipped the log since the last call (and clears it):
    /// such writes live only in memory until flushed.
    pub fn take_unlogged(&self) -> bool {
        self.committer.env().unlogged.swap(false, Ordering::AcqRel)
    }

    /// Syncs the log (`Db::sync`).
    pub fn sync_log(&self) -> Result<()> {
        let mut q = self.committer.lock();
        self.committer.sync_unlocked(&mut q)
    }

    /// Syncs and trims the log for a clean close; later writes fail.
    pub fn close_log(&self) -> Result<()> {
        let mut q = self.committer.lock();
        match std::mem::replace(&mut q.log, ActiveLog::Closed) {
            ActiveLog::Open(log) => log.close(),
            ActiveLog::Off => {
                q.log = ActiveLog::Off;
                Ok(())
            }
            _ => Ok(()),
        }
    }
}
