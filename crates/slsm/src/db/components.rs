//! The components of one open database, the record every handle (the
//! `Db`, its keyspaces, snapshots and transactions) reaches them through.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::background::Background;
use crate::batch::WriteBatch;
use crate::budget::MemoryBudget;
use crate::commit::CommitPipeline;
use crate::error::Result;
use crate::fs::FsLock;
use crate::jobs::Jobs;
use crate::keyspace::rules::RuleBook;
use crate::keyspace::KeyspaceState;
use crate::options::{Options, WriteOptions};
use crate::read::ReadView;
use crate::snapshot::SnapshotList;
use crate::stats::Counters;
use crate::txn::Transactions;
use crate::version::VersionSet;

/// The components of one open database, wired by `open`. A plain record:
/// the behaviour lives in the components, each behind its own entry points.
pub(crate) struct Components {
    pub(super) dir: PathBuf,
    pub(super) opts: Arc<Options>,
    /// `None` when read-only.
    pub(super) _lock: Option<FsLock>,
    pub(super) versions: Arc<VersionSet>,
    pub(super) snapshots: Arc<SnapshotList>,
    pub(super) counters: Arc<Counters>,
    pub(super) budget: Arc<MemoryBudget>,
    pub(super) jobs: Arc<Jobs>,
    pub(super) background: Arc<Background>,
    pub(super) commit: CommitPipeline,
    /// The state of every keyspace a handle was opened on, by name; the
    /// lock also serialises creating and dropping keyspaces.
    pub(super) keyspaces: Mutex<HashMap<String, Arc<KeyspaceState>>>,
    /// The default keyspace's state (also in `keyspaces`), for reads that
    /// name no keyspace without taking that lock.
    pub(super) default_space: Arc<KeyspaceState>,
    /// Open transactions and the writes they must be checked against.
    pub(super) txns: Transactions,
    /// TTLs and compaction filters, by keyspace (the jobs apply them).
    pub(super) rules: Arc<RuleBook>,
    /// Set when the `Db` is dropped: handles that outlive it (keyspaces,
    /// transactions) may still read, but not write.
    pub(super) closed: std::sync::atomic::AtomicBool,
}

impl Components {
    /// A view of the current version at `snapshot` (or what is visible now),
    /// for one read: the sequence number is read after the version.
    #[inline]
    pub(super) fn read<T>(&self, snapshot: Option<u64>, f: impl FnOnce(&ReadView<'_>) -> T) -> T {
        let version = self.versions.current();
        let view = ReadView {
            version: &version,
            snapshot: snapshot.unwrap_or_else(|| self.commit.visible()),
            counters: &self.counters,
        };
        f(&view)
    }

    /// Every write outside a transaction comes through here.
    #[inline]
    pub(super) fn write(&self, batch: WriteBatch, opts: &WriteOptions) -> Result<()> {
        self.refuse_if_closed()?;
        self.txns
            .plain_write(batch, |b| self.commit_and_see(b, opts))
    }

    /// Commits `batch`; returns the visible sequence number after it (at
    /// least the batch's own).
    #[inline]
    pub(super) fn commit_and_see(&self, batch: WriteBatch, opts: &WriteOptions) -> Result<u64> {
        self.commit_in_order(batch, opts, &mut || {})
    }

    /// [`commit_and_see`](Self::commit_and_see), calling `placed` once the
    /// batch's place in the commit order is fixed (a transaction's commit).
    pub(super) fn commit_in_order(
        &self,
        batch: WriteBatch,
        opts: &WriteOptions,
        placed: &mut dyn FnMut(),
    ) -> Result<u64> {
        self.commit.commit(batch, opts, placed)?;
        Ok(self.commit.visible())
    }

    /// The default keyspace's state.
    #[inline]
    pub(super) fn default_space(&self) -> &Arc<KeyspaceState> {
        &self.default_space
    }

    #[inline]
    pub(super) fn refuse_if_closed(&self) -> Result<()> {
        match self.closed.load(std::sync::atomic::Ordering::Acquire) {
            true => Err(crate::error::Error::Closed(self.dir.clone())),
            false => Ok(()),
        }
    }

    #[inline]
    pub(super) fn refuse_if_read_only(&self) -> Result<()> {
        match self.opts.read_only {
            true => Err(crate::error::Error::ReadOnly(self.dir.clone())),
            false => Ok(()),
        }
    }

    /// Seals the active run and flushes every memory run.
    pub(super) fn flush(&self) -> Result<()> {
        self.refuse_if_read_only()?;
        self.commit.take_unlogged();
        self.commit.seal_active()?;
        self.jobs.flush_all()?;
        self.background.work_may_be_due()
    }
}
