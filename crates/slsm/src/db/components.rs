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
use crate::keyspace::state::KeyspaceState;
use crate::options::{Options, WriteOptions};
use crate::read::ReadView;
use crate::snapshot::list::SnapshotList;
use crate::stats::Counters;
use crate::txn::gate::Transactions;
use crate::version::VersionSet;

/// The components of one open database, wired by `open`. A plain record:
/// the behaviour lives in the components, each behind its own entry points.
pub(crate) struct Components {
    pub(crate) dir: PathBuf,
    pub(crate) opts: Arc<Options>,
    /// `None` when read-only.
    pub(crate) _lock: Option<FsLock>,
    pub(crate) versions: Arc<VersionSet>,
    pub(crate) snapshots: Arc<SnapshotList>,
    pub(crate) counters: Arc<Counters>,
    pub(crate) budget: Arc<MemoryBudget>,
    pub(crate) jobs: Arc<Jobs>,
    pub(crate) background: Arc<Background>,
    pub(crate) commit: CommitPipeline,
    /// The state of every keyspace a handle was opened on, by name; the
    /// lock also serialises creating and dropping keyspaces.
    pub(crate) keyspaces: Mutex<HashMap<String, Arc<KeyspaceState>>>,
    /// The default keyspace's state (also in `keyspaces`), for reads that
    /// name no keyspace without taking that lock.
    pub(crate) default_space: Arc<KeyspaceState>,
    /// Open transactions and the writes they must be checked against.
    pub(crate) txns: Transactions,
    /// TTLs and compaction filters, by keyspace (the jobs apply them).
    pub(crate) rules: Arc<RuleBook>,
    /// Set when the `Db` is dropped: handles that outlive it (keyspaces,
    /// transactions) may still read, but not write.
    pub(crate) closed: std::sync::atomic::AtomicBool,
}

impl Components {
    /// A view of the current version at `snapshot` (or what is visible now),
    /// for one read: the sequence number is read after the version.
    #[inline]
    pub(crate) fn read<T>(&self, snapshot: Option<u64>, f: impl FnOnce(&ReadView<'_>) -> T) -> T {
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
    pub(crate) fn write(&self, batch: WriteBatch, opts: &WriteOptions) -> Result<()> {
        self.refuse_if_closed()?;
        self.txns
            .plain_write(batch, |b| self.commit_and_see(b, opts))
    }

    /// Commits `batch`; returns the visible sequence number after it (at
    /// least the batch's own).
    #[inline]
    pub(crate) fn commit_and_see(&self, batch: WriteBatch, opts: &WriteOptions) -> Result<u64> {
        self.commit_in_order(batch, opts, &mut || {})
    }

    /// [`commit_and_see`](Self::commit_and_see), calling `placed` once the
    /// batch's place in the commit order is fixed (a transaction's commit).
    pub(crate) fn commit_in_order(
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
    pub(crate) fn default_space(&self) -> &Arc<KeyspaceState> {
        &self.default_space
    }

    #[inline]
    pub(crate) fn refuse_if_closed(&self) -> Result<()> {
        match self.closed.load(std::sync::atomic::Ordering::Acquire) {
            true => Err(crate::error::Error::Closed(self.dir.clone())),
            false => Ok(()),
        }
    }

    #[inline]
    pub(crate) fn refuse_if_read_only(&self) -> Result<()> {
        match self.opts.read_only {
            true => Err(crate::error::Error::ReadOnly(self.dir.clone())),
            false => Ok(()),
        }
    }

    /// Seals the active run and flushes every memory run.
    pub(crate) fn flush(&self) -> Result<()> {
        self.refuse_if_read_only()?;
        self.commit.take_unlogged();
        self.commit.seal_active()?;
        self.jobs.flush_all()?;
        self.background.work_may_be_due()
    }
}
