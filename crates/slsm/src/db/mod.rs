//! [`Db`]: the facade over the engine's components. It wires them at open
//! and hands each call to the one component that serves it; it holds no
//! logic of its own.
//!
//! | call | component |
//! | --- | --- |
//! | `put`, `delete`, `delete_range`, `write` | the commit pipeline (`commit`) |
//! | `get`, `multi_get`, `range`, `prefix`, `iter`, `snapshot` | the read path (`read`) over the current version (`version`) |
//! | `flush`, `compact`, `wait_for_compaction` | the commit pipeline (sealing), the jobs (`jobs`), the background threads (`background`) |
//! | `check`, `stats` | the current version's run files, the counters (`stats`) |
//!
//! Data flows one way: write -> commit -> WAL -> memory run -> flush -> run
//! file -> merge; reads go newest to oldest.

mod default_space;
mod dir;
mod inspect;
mod keyspace;
mod keyspaces;
mod open;
mod snapshot;
mod transaction;
mod tx_iter;

pub use inspect::CheckReport;
pub use keyspace::Keyspace;
pub use snapshot::Snapshot;
pub use transaction::{Transaction, TxIter};

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;

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
    dir: PathBuf,
    opts: Arc<Options>,
    /// `None` when read-only.
    _lock: Option<FsLock>,
    versions: Arc<VersionSet>,
    snapshots: Arc<SnapshotList>,
    counters: Arc<Counters>,
    budget: Arc<MemoryBudget>,
    jobs: Arc<Jobs>,
    background: Arc<Background>,
    commit: CommitPipeline,
    /// The state of every keyspace a handle was opened on, by name; the
    /// lock also serialises creating and dropping keyspaces.
    keyspaces: Mutex<HashMap<String, Arc<KeyspaceState>>>,
    /// The default keyspace's state (also in `keyspaces`), for reads that
    /// name no keyspace without taking that lock.
    default_space: Arc<KeyspaceState>,
    /// Open transactions and the writes they must be checked against.
    txns: Transactions,
    /// TTLs and compaction filters, by keyspace (the jobs apply them).
    rules: Arc<RuleBook>,
    /// Set when the `Db` is dropped: handles that outlive it (keyspaces,
    /// transactions) may still read, but not write.
    closed: std::sync::atomic::AtomicBool,
}

impl Components {
    /// A view of the current version at `snapshot` (or what is visible now),
    /// for one read: the sequence number is read after the version.
    fn read<T>(&self, snapshot: Option<u64>, f: impl FnOnce(&ReadView<'_>) -> T) -> T {
        let version = self.versions.current();
        let view = ReadView {
            version: &version,
            snapshot: snapshot.unwrap_or_else(|| self.commit.visible()),
            counters: &self.counters,
        };
        f(&view)
    }

    /// Every write outside a transaction comes through here.
    fn write(&self, batch: WriteBatch, opts: &WriteOptions) -> Result<()> {
        self.refuse_if_closed()?;
        self.txns
            .plain_write(batch, |b| self.commit_and_see(b, opts))
    }

    /// Commits `batch`; returns the visible sequence number after it (at
    /// least the batch's own).
    fn commit_and_see(&self, batch: WriteBatch, opts: &WriteOptions) -> Result<u64> {
        self.commit_in_order(batch, opts, &mut || {})
    }

    /// [`commit_and_see`](Self::commit_and_see), calling `placed` once the
    /// batch's place in the commit order is fixed (a transaction's commit).
    fn commit_in_order(
        &self,
        batch: WriteBatch,
        opts: &WriteOptions,
        placed: &mut dyn FnMut(),
    ) -> Result<u64> {
        self.commit.commit(batch, opts, placed)?;
        Ok(self.commit.visible())
    }

    /// The default keyspace's state.
    fn default_space(&self) -> &Arc<KeyspaceState> {
        &self.default_space
    }

    fn refuse_if_closed(&self) -> Result<()> {
        match self.closed.load(std::sync::atomic::Ordering::Acquire) {
            true => Err(crate::error::Error::Closed(self.dir.clone())),
            false => Ok(()),
        }
    }

    fn refuse_if_read_only(&self) -> Result<()> {
        match self.opts.read_only {
            true => Err(crate::error::Error::ReadOnly(self.dir.clone())),
            false => Ok(()),
        }
    }

    /// Seals the active run and flushes every memory run.
    fn flush(&self) -> Result<()> {
        self.refuse_if_read_only()?;
        self.commit.take_unlogged();
        self.commit.seal_active()?;
        self.jobs.flush_all()?;
        self.background.work_may_be_due()
    }
}

/// An open slsm database.
///
/// `Db` is `Send + Sync`: share it between threads with `&Db` or `Arc<Db>`;
/// every operation takes `&self`. Writers never block readers and readers
/// never wait for a merge. Dropping the `Db` stops the background threads,
/// flushes memory runs that are not in the WAL, syncs the WAL and releases
/// the directory lock once the last [`Snapshot`] is gone.
///
/// Durability is described on [`Options`]: by default an acknowledged write
/// survives a process crash; with `sync` it also survives a power loss.
pub struct Db {
    inner: Arc<Components>,
    /// The default keyspace, which `Db`'s own reads and writes use.
    default: Keyspace,
    threads: Vec<JoinHandle<()>>,
}

impl Db {
    /// Opens (or creates) the database in directory `path`.
    ///
    /// Errors: [`Error::Locked`](crate::error::Error::Locked) if another `Db` has it
    /// open, [`Error::NotADatabase`](crate::error::Error::NotADatabase) for a
    /// non-empty directory that is not an slsm database,
    /// [`Error::Corruption`](crate::error::Error::Corruption) if recovery finds
    /// damaged data, [`Error::InvalidArgument`](crate::error::Error::InvalidArgument)
    /// for invalid options.
    pub fn open(path: impl AsRef<Path>, opts: Options) -> Result<Db> {
        let (inner, threads) = open::open(path.as_ref(), opts)?;
        Ok(Db::wire(inner, threads))
    }

    /// Opens the database in `path` for reading only: see
    /// [`Options::read_only`]. `opts` tunes the reads (memory budget,
    /// recovery mode); its `read_only` is set.
    pub fn open_read_only(path: impl AsRef<Path>, mut opts: Options) -> Result<Db> {
        opts.read_only = true;
        Db::open(path, opts)
    }

    /// True if `dir` holds an slsm database (a MANIFEST carrying slsm's
    /// magic number). Reads one file; changes nothing.
    pub fn is_database(dir: impl AsRef<Path>) -> bool {
        let path = dir.as_ref().join(crate::files::MANIFEST_FILE);
        let mut magic = [0u8; 8];
        std::fs::File::open(path)
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic))
            .is_ok_and(|()| magic == crate::manifest::MANIFEST_MAGIC)
    }

    /// The database directory.
    pub fn path(&self) -> &Path {
        &self.inner.dir
    }

    /// The options the database was opened with.
    pub fn options(&self) -> &Options {
        &self.inner.opts
    }

    /// The jobs and the version set, for tests that drive jobs by hand.
    #[cfg(test)]
    pub(crate) fn jobs_and_versions(&self) -> (&Arc<Jobs>, &Arc<VersionSet>) {
        (&self.inner.jobs, &self.inner.versions)
    }

    fn wire(inner: Arc<Components>, threads: Vec<JoinHandle<()>>) -> Db {
        let state = Arc::clone(&inner.default_space);
        let default = Keyspace::new(Arc::clone(&inner), state);
        Db {
            inner,
            default,
            threads,
        }
    }

    /// Seals the active memory run and writes every memory run to level 0;
    /// returns when they are durable in run files.
    pub fn flush(&self) -> Result<()> {
        self.inner.flush()
    }

    /// Flushes, then merges every disk run into a single run on the deepest
    /// level, dropping overwritten versions and tombstones that no snapshot
    /// needs. When it returns, the replaced run files are deleted (unless a
    /// snapshot or iterator still reads them).
    pub fn compact(&self) -> Result<()> {
        self.inner.flush()?;
        self.inner.jobs.compact_all()?;
        crate::reaper::drain();
        Ok(())
    }

    /// Returns once no flush or merge is due: the background work the
    /// writes so far made necessary has finished (RocksDB's
    /// `WaitForCompact`), and the run files it replaced are deleted (unless
    /// a snapshot or iterator still reads them), so the disk usage seen
    /// after it is the database's. Fails with the background error if one
    /// occurred.
    pub fn wait_for_compaction(&self) -> Result<()> {
        if self.inner.opts.read_only {
            return Ok(()); // nothing runs, nothing is due
        }
        self.inner.background.wait_until_idle()?;
        crate::reaper::drain();
        Ok(())
    }

    /// Writes a consistent copy of the database, every keyspace as of one
    /// point in time, to the directory `dest` (which must not exist or be
    /// empty), while the database stays open for reads and writes. Run
    /// files are hard-linked where the file system allows (they are never
    /// changed), copied otherwise; the memory runs are flushed first, so no
    /// log is needed. The copy opens with [`Db::open`] like any database.
    ///
    /// Errors: [`Error::InvalidArgument`](crate::error::Error::InvalidArgument) if
    /// `dest` is not empty, [`Error::ReadOnly`](crate::error::Error::ReadOnly) for
    /// a read-only database, I/O errors (a partial copy is removed).
    pub fn checkpoint(&self, dest: impl AsRef<Path>) -> Result<()> {
        self.inner.flush()?;
        let (version, manifest) = self.inner.versions.disk_state();
        let fs = &*self.inner.opts.fs;
        crate::checkpoint::write(fs, &self.inner.dir, dest.as_ref(), &version, &manifest)
    }

    /// Makes every acknowledged write durable against a machine crash
    /// (a sync of the WAL).
    pub fn sync(&self) -> Result<()> {
        self.inner.commit.sync_log()
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        self.inner
            .closed
            .store(true, std::sync::atomic::Ordering::Release);
        self.inner.background.shutdown();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        // Writes that skipped the WAL exist only in memory: persist them.
        // Errors cannot be returned from drop; call `flush` first to see them.
        if self.inner.commit.take_unlogged() {
            let _ = self.inner.flush();
        }
        let _ = self.inner.commit.close_log();
        // Obsolete run files released so far are deleted before `drop`
        // returns (files a live snapshot or iterator holds go when it does).
        crate::reaper::drain();
    }
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db").field("path", &self.inner.dir).finish()
    }
}
