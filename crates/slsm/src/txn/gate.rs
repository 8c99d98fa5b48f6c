//! The gate between plain writes and transaction commits, and the
//! validation of a transaction's reads against the writes since its
//! snapshot (the protocol is in the module docs of `txn/`).

use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::{Mutex, RwLock};

use super::range::KeyRange;
use super::tracker::Tracker;
use crate::batch::WriteBatch;
use crate::error::{Error, Result};

/// What one transaction read.
#[derive(Default)]
pub(crate) struct ReadSet {
    pub keys: Vec<Vec<u8>>,
    pub ranges: Vec<KeyRange>,
}

/// See the [module docs](self).
#[derive(Default)]
pub(crate) struct Transactions {
    gate: RwLock<()>,
    open: AtomicUsize,
    tracker: Mutex<Tracker>,
}

impl Transactions {
    /// Runs a plain write (`commit` returns the sequence number visible
    /// after it), recording its keys if a transaction is open.
    pub fn plain_write(
        &self,
        batch: WriteBatch,
        commit: impl FnOnce(WriteBatch) -> Result<u64>,
    ) -> Result<()> {
        let _shared = self.gate.read();
        if self.open.load(Ordering::Acquire) == 0 {
            return commit(batch).map(drop);
        }
        let keys = batch.clone();
        let seq = commit(batch)?;
        self.tracker.lock().record(&keys, seq);
        Ok(())
    }

    /// Runs a write of every key in `[start, end)` that is not a batch (a
    /// bulk load; `write` returns the sequence number visible after it),
    /// recording the range if a transaction is open.
    pub fn range_write<T>(
        &self,
        start: &[u8],
        end: &[u8],
        write: impl FnOnce() -> Result<(T, u64)>,
    ) -> Result<T> {
        let _shared = self.gate.read();
        let (out, seq) = write()?;
        if self.open.load(Ordering::Acquire) > 0 {
            self.tracker.lock().record_range(start, end, seq);
        }
        Ok(out)
    }

    /// Opens a transaction: `snapshot` takes its snapshot once no plain
    /// write is in flight, so every later write is recorded.
    pub fn begin<S>(&self, snapshot: impl FnOnce() -> (S, u64)) -> S {
        let _alone = self.gate.write();
        // The tracker stays locked from the snapshot to the registration:
        // a transaction whose commit ends meanwhile (outside the gate)
        // prunes only once this one counts as open, so it keeps its own
        // record if this snapshot predates it.
        let mut tracker = self.tracker.lock();
        let (s, seq) = snapshot();
        self.open.fetch_add(1, Ordering::AcqRel);
        tracker.register(seq);
        s
    }

    /// Validates `reads` against writes after `snapshot` and, if none
    /// conflicts, commits `batch`; either way the transaction is closed.
    /// `commit` commits the batch (returning the sequence number visible
    /// after it) and calls its second argument once the batch's place in
    /// the commit order is fixed, which lets the gate go (see the [module
    /// docs](self)).
    pub fn commit(
        &self,
        snapshot: u64,
        reads: &ReadSet,
        batch: WriteBatch,
        commit: impl FnOnce(WriteBatch, &mut dyn FnMut()) -> Result<u64>,
    ) -> Result<()> {
        let mut gate = Some(self.gate.write());
        if self.conflicts(snapshot, reads) {
            self.close(snapshot);
            return Err(Error::Conflict);
        }
        if batch.is_empty() {
            self.close(snapshot);
            return Ok(());
        }
        let keys = batch.clone();
        self.tracker.lock().mark_pending(&keys);
        let result = commit(batch, &mut || drop(gate.take()));
        // Not let go early (refused, or committed alone): still held here.
        drop(gate);
        let mut tracker = self.tracker.lock();
        tracker.land(&keys, result.as_ref().ok().copied());
        self.close_in(&mut tracker, snapshot);
        result.map(drop)
    }

    /// True if a key or range of `reads` was written after `snapshot`.
    fn conflicts(&self, snapshot: u64, reads: &ReadSet) -> bool {
        let tracker = self.tracker.lock();
        reads
            .keys
            .iter()
            .any(|k| tracker.written_after(k, snapshot))
            || reads
                .ranges
                .iter()
                .any(|r| tracker.range_written_after(r, snapshot))
    }

    /// Closes a transaction that did not commit.
    pub fn rollback(&self, snapshot: u64) {
        self.close(snapshot);
    }

    /// Closes a transaction. No gate: `open` only ever drops here, and a
    /// plain write that still sees it above zero records its keys, which
    /// costs only the recording.
    fn close(&self, snapshot: u64) {
        self.close_in(&mut self.tracker.lock(), snapshot);
    }

    /// [`close`](Self::close) with the tracker already locked.
    fn close_in(&self, tracker: &mut Tracker, snapshot: u64) {
        tracker.unregister(snapshot);
        self.open.fetch_sub(1, Ordering::AcqRel);
    }
}
