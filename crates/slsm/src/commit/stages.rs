//! What the commit protocol (`queue.rs`) asks of its environment: the
//! stages a group goes through, Pebble's `commitEnv`. The engine's are the
//! memory buffer, the write-ahead log, the memory run and the visible
//! sequence number (`mod.rs`); the protocol's tests give it a fake one.
//!
//! A leaf of `commit/`: the protocol and the engine's stages both build on
//! it, and neither names the other.

use std::sync::Arc;

use crate::batch::WriteBatch;
use crate::error::Result;
use crate::memtable::Inserters;

/// How one write wants to be logged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Durability {
    /// Sync the log before acknowledging.
    pub sync: bool,
    /// Skip the log.
    pub no_wal: bool,
}

/// The stages of a commit. Every method but [`run_sync`](Self::run_sync)
/// and [`apply`](Self::apply) is called with the queue locked, by the one
/// writer leading (so the log is never touched by two at once);
/// `run_sync` runs with the queue unlocked while no record is appended,
/// and `apply` by every member of a group at once.
pub(crate) trait Stages: Sync {
    /// The active log. The queue owns it: only the holder of its lock
    /// touches it, and every change of log (a new one started, a damaged
    /// one retired, the last one closed) happens through these stages or
    /// under that lock.
    type Log: Send;
    /// A memory run batches are inserted into.
    type Run: Send + Sync;
    /// A sync begun with the queue locked, to be run without it.
    type PendingSync: Send;

    /// Room for `bytes` more in the active run (sealing it first when it
    /// is full, or when `seal` and it holds anything; a log may be started
    /// or retired): the run the group inserts into.
    fn make_room(&self, log: &mut Self::Log, seal: bool, bytes: usize) -> Result<Arc<Self::Run>>;

    /// Stamps `batch` with sequence numbers from `first_seq` and appends it
    /// to the log, unless `no_wal`: the bytes logged.
    fn log_batch(
        &self,
        log: &mut Self::Log,
        batch: &mut WriteBatch,
        first_seq: u64,
        no_wal: bool,
    ) -> Result<u64>;

    /// Hands the records appended since the last call to the file system.
    fn flush_log(&self, log: &mut Self::Log) -> Result<()>;

    /// Hands the records to the file system and begins a sync of them:
    /// `None` when nothing is left to sync.
    fn begin_sync(&self, log: &mut Self::Log) -> Result<Option<Self::PendingSync>>;

    /// The device flush of a begun sync.
    fn run_sync(&self, pending: &Self::PendingSync) -> std::io::Result<()>;

    /// Records a sync's outcome in the log.
    fn end_sync(
        &self,
        log: &mut Self::Log,
        pending: Self::PendingSync,
        outcome: std::io::Result<()>,
    ) -> Result<()>;

    /// Counts `bytes` of a group's records as written to the log.
    fn count_logged(&self, bytes: u64);

    /// Inserts `batch`'s operations into `run` from `first_seq` on.
    fn apply(&self, run: &Self::Run, batch: &WriteBatch, first_seq: u64, inserters: Inserters);

    /// Makes every write up to `last_seq` visible to readers.
    fn publish(&self, last_seq: u64);
}
