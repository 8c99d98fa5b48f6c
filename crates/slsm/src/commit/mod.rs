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
//! * **Owns**: the queue, the last sequence number handed out, the
//!   published (visible) sequence number, the active write-ahead log.
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

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};

use crate::batch::WriteBatch;
use crate::buffer::{ActiveLog, MemoryBuffer};
use crate::error::Result;
use crate::memtable::{Inserters, MemRun};
use crate::options::WriteOptions;
use crate::stats::Counters;
use queue::Queue;

/// The commit pipeline held by [`CommitPipeline::exclusive`].
pub(crate) struct Exclusive<'a> {
    pipeline: &'a CommitPipeline,
    q: MutexGuard<'a, Queue>,
    taken: Option<u64>,
}

impl Exclusive<'_> {
    /// Seals the active memory run if it holds anything (its writes can
    /// then be flushed).
    pub fn seal_active(&mut self) -> Result<()> {
        self.pipeline
            .buffer
            .make_room(&mut self.q.log, true, 0)
            .map(drop)
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

/// Largest spent batch a thread keeps for its next `put` or `delete`.
const SPARE_BATCH_MAX: usize = 4096;

thread_local! {
    /// A spent batch kept for the thread's next one-key write, so that the
    /// common `put` allocates nothing.
    static SPARE_BATCH: Cell<Option<WriteBatch>> = const { Cell::new(None) };
}

/// An empty batch: the thread's spare one if it has it. (`try_with`: a
/// write from another thread-local's destructor still works.)
pub(crate) fn take_batch() -> WriteBatch {
    SPARE_BATCH
        .try_with(Cell::take)
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// Keeps a spent batch for the thread's next write, unless it is large.
fn recycle_batch(mut batch: WriteBatch) {
    if batch.capacity() <= SPARE_BATCH_MAX {
        batch.clear();
        let _ = SPARE_BATCH.try_with(|spare| spare.set(Some(batch)));
    }
}

/// How one write wants to be logged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Durability {
    /// Sync the log before acknowledging.
    pub sync: bool,
    /// Skip the log.
    pub no_wal: bool,
}

/// The write path. See the [module docs](self).
pub(crate) struct CommitPipeline {
    buffer: MemoryBuffer,
    counters: Arc<Counters>,
    sync_writes: bool,
    disable_wal: bool,
    queue: Mutex<Queue>,
    /// Highest sequence number whose batch is fully applied: what reads see.
    visible_seq: AtomicU64,
    /// Some write skipped the log since the last flush.
    unlogged: AtomicBool,
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
        CommitPipeline {
            read_only,
            buffer,
            counters,
            sync_writes: opts.sync_writes,
            disable_wal: opts.disable_wal,
            queue: Mutex::new(Queue::new(last_seq, log)),
            visible_seq: AtomicU64::new(last_seq),
            unlogged: AtomicBool::new(false),
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
        mut batch: WriteBatch,
        opts: &WriteOptions,
        placed: &mut dyn FnMut(),
    ) -> Result<()> {
        if let Some(dir) = &self.read_only {
            return Err(crate::error::Error::ReadOnly(dir.clone()));
        }
        batch.validate()?;
        if batch.is_empty() {
            return Ok(());
        }
        let durability = Durability {
            sync: opts.sync || self.sync_writes,
            no_wal: opts.disable_wal || self.disable_wal,
        };
        let mut q = self.queue.lock();
        // Whoever takes the queue lock after us commits after us: an idle
        // queue is marked busy (later writers queue behind) before the lock
        // is released, and a busy one gets `batch` at its back first. The
        // place is announced only when others could share the commit: when
        // it syncs, or when others are committing already. An unsynced
        // batch on an idle queue commits in microseconds, and a caller
        // let go on so short a commit (a transaction releasing its gate)
        // only queues behind it alone: measured on `slsm serve` with 50
        // clients, `INCR -P 1` (one transaction each) fell ~10% when every
        // transaction let its gate go here.
        if durability.sync || !q.is_idle() {
            placed();
        }
        if q.is_idle() {
            let result = self.commit_uncontended(&mut q, &mut batch, durability);
            drop(q);
            recycle_batch(batch);
            return result;
        }
        queue::wait_in_line(self, q, batch, durability, false)
    }

    /// Seals the active run if it holds anything, through the queue so that
    /// no group is inserting into it (a flush starts this way).
    pub fn seal_active(&self) -> Result<()> {
        let q = self.queue.lock();
        let durability = Durability {
            sync: false,
            no_wal: false,
        };
        queue::wait_in_line(self, q, WriteBatch::new(), durability, true)
    }

    /// Runs `f` while no write commits: it waits until nobody is queued or
    /// committing, then holds the queue, so writers arriving meanwhile wait
    /// for `f` to return. `f` may seal the active run and take a sequence
    /// number of its own ([`Exclusive`]); the number is published when `f`
    /// succeeds. For work that must see the database still (a bulk load).
    pub fn exclusive<T>(&self, f: impl FnOnce(&mut Exclusive<'_>) -> Result<T>) -> Result<T> {
        if let Some(dir) = &self.read_only {
            return Err(crate::error::Error::ReadOnly(dir.clone()));
        }
        let mut q = self.queue.lock();
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
            self.publish(seq);
        }
        ex.q.wake_front();
        result
    }

    /// The highest sequence number readers may see.
    pub fn visible(&self) -> u64 {
        self.visible_seq.load(Ordering::Acquire)
    }

    /// True if a write skipped the log since the last call (and clears it):
    /// such writes live only in memory until flushed.
    pub fn take_unlogged(&self) -> bool {
        self.unlogged.swap(false, Ordering::AcqRel)
    }

    /// Syncs the log (`Db::sync`).
    pub fn sync_log(&self) -> Result<()> {
        let mut q = self.queue.lock();
        sync_unlocked(&mut q)
    }

    /// Syncs and trims the log for a clean close; later writes fail.
    pub fn close_log(&self) -> Result<()> {
        let mut q = self.queue.lock();
        match std::mem::replace(&mut q.log, ActiveLog::Closed) {
            ActiveLog::Open(log) => log.close(),
            ActiveLog::Off => {
                q.log = ActiveLog::Off;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Commits `batch` in place while nobody else commits.
    fn commit_uncontended(
        &self,
        q: &mut MutexGuard<'_, Queue>,
        batch: &mut WriteBatch,
        d: Durability,
    ) -> Result<()> {
        q.busy = true;
        let result = self
            .buffer
            .make_room(&mut q.log, false, batch.encoded_size())
            .and_then(|run| self.commit_single(q, &run, batch, d));
        q.busy = false;
        q.wake_front();
        result
    }

    /// Stamps, logs and applies one batch whose writer is the only one
    /// inserting into `run`, then publishes it. The queue lock is released
    /// during the insert.
    fn commit_single(
        &self,
        q: &mut MutexGuard<'_, Queue>,
        run: &MemRun,
        batch: &mut WriteBatch,
        d: Durability,
    ) -> Result<()> {
        let (first_seq, last_seq) = q.sequences_for(batch.len() as u64)?;
        let logged = self.log_batch(q, batch, first_seq, d.no_wal)?;
        self.finish_log(q, logged, d.sync && logged > 0)?;
        q.last_seq = last_seq;
        MutexGuard::unlocked(q, || run.apply(batch.ops(), first_seq, Inserters::Alone));
        self.publish(last_seq);
        Ok(())
    }

    /// Makes every write up to `last_seq` visible to readers.
    fn publish(&self, last_seq: u64) {
        self.visible_seq.store(last_seq, Ordering::Release);
    }

    /// Appends one stamped batch to the log unless `no_wal`; returns the
    /// bytes logged.
    fn log_batch(
        &self,
        q: &mut Queue,
        batch: &mut WriteBatch,
        first_seq: u64,
        no_wal: bool,
    ) -> Result<u64> {
        self.counters
            .user_bytes_written
            .add(batch.encoded_size() as u64);
        let payload = batch.seal(first_seq);
        match (q.log.writer(), no_wal) {
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

    /// Hands the records just appended to the file system, or makes them
    /// durable if `sync` (the device flush runs with the queue unlocked:
    /// the caller leads, so no other writer touches the log meanwhile).
    fn finish_log(&self, q: &mut MutexGuard<'_, Queue>, logged: u64, sync: bool) -> Result<()> {
        if sync {
            sync_unlocked(q)?;
        } else if let (Some(log), true) = (q.log.writer(), logged > 0) {
            log.flush()?;
        }
        self.counters
            .wal_bytes_written
            .fetch_add(logged, Ordering::Relaxed);
        Ok(())
    }
}

/// Syncs the active log, running the device flush with `q` unlocked: the
/// records are handed to the file system first (so nothing is buffered
/// while unlocked), and only the queue's leader (or a `Db::sync`, which
/// appends nothing) syncs, so no record is appended to the log until the
/// sync's outcome is recorded. Writers arriving meanwhile queue up and
/// share the next group's sync instead of blocking on the lock.
fn sync_unlocked(q: &mut MutexGuard<'_, Queue>) -> Result<()> {
    let pending = match q.log.writer() {
        Some(log) => log.begin_sync()?,
        None => None,
    };
    let Some(pending) = pending else {
        return Ok(());
    };
    let outcome = MutexGuard::unlocked(q, || pending.run());
    match q.log.writer() {
        Some(log) => log.end_sync(pending, outcome),
        // Closed meanwhile (closing syncs the log whole).
        None => outcome
            .map_err(|e| crate::error::Error::io(std::path::Path::new("the write-ahead log"), e)),
    }
}
