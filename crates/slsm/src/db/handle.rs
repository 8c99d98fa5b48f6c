//! [`Db`]: the handle of an open database, what opening and closing it
//! does, and its default keyspace.

use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;

use crate::error::Result;
use crate::options::Options;

use super::components::Components;
use super::open;
use crate::keyspace::handle::Keyspace;

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
    pub(crate) inner: Arc<Components>,
    /// The default keyspace, which `Db`'s own reads and writes use.
    pub(crate) default: Keyspace,
    pub(crate) threads: Vec<JoinHandle<()>>,
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

    /// Makes the memory budget `bytes` from now on (at least
    /// [`MIN_MEMORY_BUDGET`](crate::options::MIN_MEMORY_BUDGET)), as a
    /// running RocksDB's block cache `SetCapacity`: the block cache shrinks
    /// or grows at once to what the new budget leaves. The memory runs'
    /// size, the buffers and the jobs' floors stay as the budget given at
    /// open made them (and [`options`](Self::options) still shows that
    /// one), so a budget below what they hold leaves the cache empty and
    /// [`memory_usage`](Self::memory_usage) above the budget until it is
    /// raised again. With `Options::block_cache_size` set, the cache keeps
    /// that size.
    pub fn set_memory_budget(&self, bytes: usize) -> Result<()> {
        if bytes < crate::options::MIN_MEMORY_BUDGET {
            return Err(crate::error::Error::InvalidArgument(format!(
                "memory_budget must be at least 1 MiB, got {bytes}"
            )));
        }
        self.inner.budget.set_total(bytes);
        Ok(())
    }

    /// The jobs and the version set, for tests that drive jobs by hand.
    #[cfg(test)]
    pub(crate) fn jobs_and_versions(
        &self,
    ) -> (&Arc<crate::jobs::Jobs>, &Arc<crate::version::VersionSet>) {
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
