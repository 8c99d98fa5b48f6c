//! [`WalWriter::sync`] and its two halves, [`WalWriter::begin_sync`] and
//! [`WalWriter::end_sync`], for an owner that runs the device flush
//! without its lock (the commit pipeline: see `commit::sync_unlocked`).

use std::sync::Arc;

use super::WalWriter;
use crate::error::{Error, Result};
use crate::fs::LogSync;

impl WalWriter {
    /// [`flush`](Self::flush), then a sync of the log. After `Ok`, every
    /// record appended so far survives a machine crash. Skips the sync when
    /// nothing was written since the last successful one.
    pub fn sync(&mut self) -> Result<()> {
        match self.begin_sync()? {
            Some(pending) => {
                let outcome = pending.run();
                self.end_sync(pending, outcome)
            }
            None => Ok(()),
        }
    }

    /// [`sync`](Self::sync) in two halves, so that its owner can run the
    /// device flush without its lock: flushes, and returns the sync still to
    /// run, or `None` when nothing is left to do (nothing new, or a file
    /// without [`detached_sync`](crate::fs::LogFile::detached_sync), synced here).
    /// Run it with [`PendingSync::run`] and hand its result to
    /// [`end_sync`](Self::end_sync) before anything else is appended: the
    /// owner must keep other writers from this log meanwhile (concurrent
    /// `sync`s are harmless).
    pub fn begin_sync(&mut self) -> Result<Option<PendingSync>> {
        // The records of this call: written by the flush, but acknowledged
        // only once the sync succeeds.
        let call_start = self.pending_from;
        self.flush()?;
        if self.synced == self.flushed {
            return Ok(None);
        }
        match self.file.detached_sync() {
            Some(handle) => Ok(Some(PendingSync {
                handle,
                log_number: self.log_number,
                upto: self.flushed,
                call_start: (call_start < self.flushed).then_some(call_start),
            })),
            None => {
                if let Err(e) = self.file.sync(self.flushed) {
                    return Err(self.poison(e, call_start));
                }
                self.synced = self.flushed;
                Ok(None)
            }
        }
    }

    /// Records the outcome of a [`begin_sync`](Self::begin_sync): after
    /// `Ok`, the records before it survive a machine crash; a failed sync
    /// poisons the writer as a failed [`sync`](Self::sync) does.
    ///
    /// Another call may have synced or failed meanwhile (a `Db::sync` runs
    /// beside a leader's sync); the log's syncs run one at a time and a
    /// failure is remembered by the file ([`LogSync`]), so a success here
    /// means these records are durable. A failure cuts the log, when it is
    /// retired, where the records of the call began (the earliest such
    /// start wins), or, for a call that flushed none of its own, nowhere
    /// before what was flushed so far: acknowledged records stay.
    pub fn end_sync(&mut self, pending: PendingSync, outcome: std::io::Result<()>) -> Result<()> {
        if pending.log_number != self.log_number {
            // The log was retired meanwhile (retiring syncs it whole).
            return outcome.map_err(|e| Error::io(&self.path, e));
        }
        match outcome {
            Ok(()) => {
                self.synced = self.synced.max(pending.upto);
                Ok(())
            }
            Err(e) => {
                let cut = pending.call_start.unwrap_or(self.flushed);
                Err(self.poison(e, cut))
            }
        }
    }
}

/// A sync of a log begun by [`WalWriter::begin_sync`], to be run without the
/// writer.
#[derive(Debug)]
pub struct PendingSync {
    handle: Arc<dyn LogSync>,
    log_number: u64,
    upto: u64,
    /// Where the records this call flushed begin, if it flushed any.
    call_start: Option<u64>,
}

impl PendingSync {
    /// Makes the log durable up to where it was when the sync began.
    pub fn run(&self) -> std::io::Result<()> {
        self.handle.sync(self.upto)
    }
}
