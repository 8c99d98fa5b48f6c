//! [`Db`]: the engine. Data flows one way: write -> WAL -> memory run ->
//! flush -> run file on level 0 -> merges into deeper levels.
//!
//! The pieces live in submodules: `open` (locking, recovery), `write`
//! (group commit), `read` (get, multi_get, range, snapshots) and
//! `background` (flushes, level merges, compaction).

mod background;
mod log;
mod open;
mod read;
mod write;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use arc_swap::ArcSwap;
use parking_lot::{Condvar, Mutex};

use crate::error::{Error, Result};
use crate::options::Options;
use crate::stats::{Counters, LevelStats, Stats};
use crate::version::Version;

pub use read::Snapshot;
use write::WriteQueue;

/// State of the background threads, guarded by `Shared::bg`.
#[derive(Default)]
struct BgState {
    shutdown: bool,
    /// The first background failure; writes are refused after it.
    error: Option<Error>,
    /// Bumped on every completed flush or merge, so waiters see progress.
    progress: u64,
}

/// Persistent counters that go into the manifest, guarded by
/// `Shared::version_lock` together with installing new versions.
struct VersionState {
    /// Every write with a sequence number `<=` this is in run files.
    flushed_sequence: u64,
}

/// Everything the `Db` handle, snapshots and background threads share.
pub(crate) struct Shared {
    dir: PathBuf,
    opts: Options,
    _lock: crate::fs::FsLock,
    current: ArcSwap<Version>,
    version_lock: Mutex<VersionState>,
    next_file: AtomicU64,
    /// Highest sequence number whose batch is fully applied: what reads see.
    visible_seq: AtomicU64,
    writes: Mutex<WriteQueue>,
    snapshots: Mutex<BTreeMap<u64, usize>>,
    bg: Mutex<BgState>,
    /// Signalled when background work may be due.
    bg_work: Condvar,
    /// Signalled when background work completed (or failed).
    bg_done: Condvar,
    /// Serialises flushes (memory runs -> level 0).
    flush_lock: Mutex<()>,
    /// Serialises level merges and compactions.
    merge_lock: Mutex<()>,
    counters: Counters,
    /// Some write skipped the WAL since the last flush.
    unlogged: AtomicBool,
    /// Set with `BgState::error`, so writers can check it without a lock.
    bg_failed: AtomicBool,
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
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

/// What [`Db::check`] verified.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// Run files read.
    pub files: usize,
    /// Entries whose blocks were verified.
    pub entries: u64,
}

impl std::fmt::Display for CheckReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ok: {} run files, {} entries, every checksum verified",
            self.files, self.entries
        )
    }
}

impl Db {
    /// Opens (or creates) the database in directory `path`.
    ///
    /// Errors: [`Error::Locked`] if another `Db` has it open,
    /// [`Error::NotADatabase`] for a non-empty directory that is not an slsm
    /// database, [`Error::Corruption`] if recovery finds damaged data,
    /// [`Error::InvalidArgument`] for invalid options.
    pub fn open(path: impl AsRef<Path>, opts: Options) -> Result<Db> {
        let shared = Arc::new(open::open(path.as_ref(), opts)?);
        let threads = background::start(&shared)?;
        Ok(Db { shared, threads })
    }

    /// The database directory.
    pub fn path(&self) -> &Path {
        &self.shared.dir
    }

    /// The options the database was opened with.
    pub fn options(&self) -> &Options {
        &self.shared.opts
    }

    /// Seals the active memory run and writes every memory run to level 0;
    /// returns when they are durable in run files.
    pub fn flush(&self) -> Result<()> {
        self.shared.flush_all()
    }

    /// Flushes, then merges every disk run into a single run on the deepest
    /// level, dropping overwritten versions and tombstones that no snapshot
    /// needs. When it returns, the replaced run files are deleted (unless a
    /// snapshot or iterator still reads them).
    pub fn compact(&self) -> Result<()> {
        self.shared.compact_all()?;
        crate::reaper::drain();
        Ok(())
    }

    /// Makes every acknowledged write durable against a machine crash
    /// (`fdatasync` of the WAL).
    pub fn sync(&self) -> Result<()> {
        self.shared.sync_wal()
    }

    /// Reads every block of every run file and verifies every checksum.
    pub fn check(&self) -> Result<CheckReport> {
        let version = self.shared.current.load_full();
        let mut report = CheckReport::default();
        for run in version.disk_runs_newest_first() {
            report.entries += run.file.verify()?;
            report.files += 1;
        }
        Ok(report)
    }

    /// Counters and the shape of the tree.
    pub fn stats(&self) -> Stats {
        self.shared.stats()
    }
}

/// Hashes `stats` tests every run filter with to measure its false-positive
/// rate: pseudo-random (splitmix64 of a counter), so a stored key's hash is
/// among them only by chance (~1 in 2^64 / entries per probe).
fn filter_probe_hashes() -> Vec<u64> {
    const PROBES: u64 = 4096;
    (0..PROBES)
        .map(|i| {
            let mut z = i.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
        .collect()
}

impl Shared {
    fn stats(&self) -> Stats {
        let version = self.current.load_full();
        let probes = filter_probe_hashes();
        let c = &self.counters;
        Stats {
            levels: version
                .levels
                .iter()
                .map(|l| LevelStats {
                    runs: l.len(),
                    entries: l.iter().map(|r| r.file.properties().entries).sum(),
                    bytes: l.iter().map(|r| r.file.properties().file_size).sum(),
                    filter_bytes: l.iter().map(|r| r.file.filter_bytes() as u64).sum(),
                    filter_probes: (l.len() * probes.len()) as u64,
                    filter_passes: l.iter().map(|r| r.file.filter_passes(&probes) as u64).sum(),
                })
                .collect(),
            memory_runs: version.mems.len(),
            memory_entries: version.mems.iter().map(|m| m.len() as u64).sum(),
            memory_bytes: version.mems.iter().map(|m| m.memory_usage() as u64).sum(),
            bloom_checks: c.bloom_checks.get(),
            bloom_negatives: c.bloom_negatives.get(),
            bloom_false_positives: c.bloom_false_positives.get(),
            flushes: c.flushes.load(Ordering::Relaxed),
            merges: c.merges.load(Ordering::Relaxed),
            merge_bytes_written: c.merge_bytes_written.load(Ordering::Relaxed),
            user_bytes_written: c.user_bytes_written.get(),
            wal_bytes_written: c.wal_bytes_written.load(Ordering::Relaxed),
            stall_count: c.stall_count.load(Ordering::Relaxed),
            stall_micros: c.stall_micros.load(Ordering::Relaxed),
            last_sequence: self.visible_seq.load(Ordering::Acquire),
        }
    }

    fn path_of(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    fn new_file_number(&self) -> u64 {
        self.next_file.fetch_add(1, Ordering::Relaxed)
    }

    /// Fails if a background error stopped the engine.
    fn check_bg_error(&self) -> Result<()> {
        if !self.bg_failed.load(Ordering::Acquire) {
            return Ok(());
        }
        match &self.bg.lock().error {
            Some(e) => Err(Error::BackgroundFailed(e.to_string())),
            None => Ok(()),
        }
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        {
            let mut bg = self.shared.bg.lock();
            bg.shutdown = true;
            self.shared.bg_work.notify_all();
            self.shared.bg_done.notify_all();
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        // Writes that skipped the WAL exist only in memory: persist them.
        // Errors cannot be returned from drop; call `flush` first to see them.
        if self.shared.unlogged.load(Ordering::Acquire) {
            let _ = self.shared.flush_all();
        }
        let _ = self.shared.close_wal();
        // Obsolete run files released so far are deleted before `drop`
        // returns (files a live snapshot or iterator holds go when it does).
        crate::reaper::drain();
    }
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("path", &self.shared.dir)
            .finish()
    }
}
