//! Options: the sLSM paper's tuning knobs ("The Skiplist-Based LSM
//! Tree", table 1) and the
//! durability settings.

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::fs::FileSystem;
use crate::wal::RecoveryMode;

mod builder;
mod compression;

pub use compression::Compression;

/// The smallest `Options::memory_budget` accepted: below it the memory
/// runs' quarter, the buffers and the jobs' floors leave the block cache
/// nothing.
pub const MIN_MEMORY_BUDGET: usize = 1 << 20;

/// How a database is opened and tuned.
///
/// The knobs carry the sLSM paper's names ("The Skiplist-Based LSM Tree",
/// table 1):
///
/// | field | paper | meaning |
/// |---|---|---|
/// | [`memory_runs`](Self::memory_runs) | `R` | skiplist runs in the memory buffer (one active, the rest immutable) |
/// | [`run_size`](Self::run_size), [`run_entries`](Self::run_entries) | `Rn` | size of one memory run, in bytes and in entries (the paper counts entries; bytes bound memory): a run is sealed at whichever limit comes first |
/// | [`bloom_fp_rate`](Self::bloom_fp_rate) | `epsilon` | target false-positive rate of every Bloom filter |
/// | [`level_runs`](Self::level_runs) | `D` | runs a disk level holds before it is merged into the next |
/// | [`merge_fraction`](Self::merge_fraction) | `m` | fraction of the memory runs flushed together into one disk run |
/// | [`fence_entries`](Self::fence_entries) | `mu` | entries per fence pointer (per data block) in run files |
///
/// # Durability
///
/// * Default (`sync_writes: false`): every acknowledged write has been handed
///   to the operating system (one `write(2)` per commit group) before `put`
///   returns, so it survives a crash of the *process*. A power loss or
///   kernel crash may lose the most recent writes, never a part of a batch.
/// * `sync_writes: true` (or [`WriteOptions::sync`] per write): the WAL is
///   also `fdatasync`ed before the write is acknowledged, so it survives a
///   machine crash.
/// * `disable_wal: true`: writes live only in memory until they are flushed to
///   a run file; a crash loses them. A clean close (dropping the `Db`) flushes
///   them first.
#[derive(Clone, Debug)]
pub struct Options {
    /// Create the directory and an empty database if missing. Default `true`.
    pub create_if_missing: bool,
    /// Fail with [`Error::InvalidArgument`] if a database already exists.
    /// Default `false`.
    pub error_if_exists: bool,
    /// Open for reading only ([`Db::open_read_only`](crate::db::Db::open_read_only)):
    /// no lock is taken, nothing in the directory is created or changed
    /// (the logs are replayed in memory), no background thread runs, and
    /// every write fails with [`Error::ReadOnly`]. Works on a read-only file
    /// system and beside a process that has the database open for writing
    /// (it reads the state as of its open). Default `false`.
    pub read_only: bool,
    /// `Rn`: size in bytes of one memory run before it is sealed.
    /// Default 8 MiB (measured: see the README's parameter sweep).
    pub run_size: usize,
    /// `Rn` in entries, as the paper counts it: a memory run is also sealed
    /// when it holds this many entries, whatever their size. The cost of a
    /// skiplist insert or search grows with the entries it holds (one cache
    /// miss per level once they outgrow the CPU's cache), so small entries
    /// (`4`-byte keys and values) get runs that stay cache-resident, while
    /// entries of ~100 bytes reach `run_size` first. Default 24,576, about
    /// one core's L2 cache of small nodes (measured: see the README's
    /// parameter sweep).
    pub run_entries: usize,
    /// `R`: number of memory runs (active + immutable). Writers stall only
    /// when all `R` are full and the background merge is behind. Default 8.
    pub memory_runs: usize,
    /// `m`: fraction of the `R` memory runs merged together into one disk run
    /// by a flush (at least one run). Default 0.5.
    pub merge_fraction: f64,
    /// `D`: runs a disk level holds; when it has `D`, they are merged by a
    /// k-way heap merge into one run of the next level. Default 4.
    pub level_runs: usize,
    /// The most bytes the run files may hold for each byte of the data on
    /// the deepest level, before every run is merged into one there.
    /// Tiered levels keep old versions of updated keys until they reach
    /// the deepest level; the bound caps the disk they take and the runs a
    /// lookup may find a key in, at the price of rewriting the deepest
    /// level when it is crossed. RocksDB's universal compaction has the
    /// same rule as `max_size_amplification_percent`, counting only the
    /// excess: our 2.0 is its 100 (its default, 200, allows three times
    /// the data; leveled RocksDB holds about 1.1 times). Default 2.0:
    /// measured on 5M random 16/100-byte writes in 256 MiB, it cost 13%
    /// more bytes written by the load and made seeks 1.9x faster (fewer
    /// runs), and through `slsm serve` it took pipelined GETs after 13M
    /// updates of 1.6M keys from 0.56x to 0.68x Redis's (see
    /// `bench/RESULTS.md`). Must be greater than 1; `f64::INFINITY`
    /// turns the bound off (the sLSM paper's policy alone).
    pub max_space_amplification: f64,
    /// `epsilon`: Bloom filter false-positive rate for memory and disk runs.
    /// Default 0.01.
    pub bloom_fp_rate: f64,
    /// `mu`: the most entries per fence pointer (per data block) in run
    /// files. Default 64: data blocks are normally closed by
    /// [`block_size`](Self::block_size) first, unless entries are small.
    pub fence_entries: usize,
    /// Bytes of a data block in run files before compression: about one
    /// read from the device. Default 4 KiB (RocksDB's default too).
    pub block_size: usize,
    /// How run files compress their data blocks, level by level. Default
    /// LZ4 on every level ([`Compression::default`]).
    pub compression: Compression,
    /// The memory the engine may use, in bytes: memory runs, the block
    /// cache, the indexes and filters of open run files, merge and log
    /// buffers. Up to a quarter goes to the memory runs (each run is sealed
    /// at `min(run_size, budget / 4 / memory_runs)` bytes or `run_entries`
    /// entries; writers stall, counted, rather than let the runs grow past
    /// it; once a run is sealed full, only what full runs hold is kept for
    /// them), a sixty-fourth to iterators' readahead and up to 1 MiB to the
    /// log's buffer, running flushes and merges are charged what they hold, and
    /// the block cache gets the rest after the indexes and filters, unless [`block_cache_size`](Self::block_cache_size) says
    /// otherwise. Nothing is taken before the budget has room for it: see
    /// the README's "Memory budget". Default 128 MiB, about what RocksDB's
    /// and fjall's defaults use (their memtables and block caches); at
    /// least [`MIN_MEMORY_BUDGET`] (1 MiB).
    pub memory_budget: usize,
    /// Bytes of block cache, instead of what the budget leaves for it.
    /// Default `None`.
    pub block_cache_size: Option<usize>,
    /// Whether blocks read from run files stay in the operating system's
    /// page cache: `Some(true)` always (a second cache behind the block
    /// cache), `Some(false)` never (point reads with `O_DIRECT`, as
    /// RocksDB's `use_direct_reads`; scans and merges with Linux's
    /// `RWF_DONTCACHE`), `None` (default) never only when the
    /// process's memory limit (its cgroup's, else the machine's memory)
    /// less [`memory_budget`](Self::memory_budget) cannot hold the run
    /// files: pages kept there would only make the kernel reclaim.
    pub os_page_cache: Option<bool>,
    /// Bytes the MANIFEST may grow to by appending edits: a change that
    /// finds it larger than this and than three times the snapshot at its
    /// start writes a new one instead (RocksDB's `max_manifest_file_size`).
    /// Default 64 KiB.
    pub max_manifest_file_size: u64,
    /// `fdatasync` the WAL before acknowledging every write. Default `false`.
    pub sync_writes: bool,
    /// Do not write a WAL at all (see the durability notes). Default `false`.
    pub disable_wal: bool,
    /// What recovery does with a corrupt WAL record in the middle of a log:
    /// [`RecoveryMode::Strict`] (default) refuses to open with
    /// [`Error::Corruption`]; [`RecoveryMode::BestEffort`] recovers every
    /// write before the damage and drops the rest.
    pub recovery: RecoveryMode,
    /// Run merges on a background thread (default). When `false`, flushes and
    /// merges run inline on the writing thread (useful for tests).
    pub background_merges: bool,
    /// The file system every file operation goes through (tests swap in a
    /// fault-injecting one). Default: the operating system's.
    #[doc(hidden)]
    pub fs: Arc<dyn FileSystem>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            create_if_missing: true,
            error_if_exists: false,
            read_only: false,
            run_size: 8 << 20,
            run_entries: 24 << 10,
            memory_runs: 8,
            merge_fraction: 0.5,
            level_runs: 4,
            max_space_amplification: 2.0,
            bloom_fp_rate: 0.01,
            fence_entries: 64,
            block_size: 4 << 10,
            compression: Compression::default(),
            memory_budget: 128 << 20,
            block_cache_size: None,
            os_page_cache: None,
            max_manifest_file_size: 64 << 10,
            sync_writes: false,
            disable_wal: false,
            recovery: RecoveryMode::Strict,
            background_merges: true,
            fs: crate::fs::std_fs(),
        }
    }
}

impl Options {
    /// These options on a fresh in-memory file system ([`MemFs`](crate::fs::MemFs))
    /// and without a WAL: nothing touches the disk. The engine is otherwise
    /// the same (memory runs flushed into run images, merged in the
    /// background), so memory holds the data once, compactly, and lookups
    /// stay fast however much is written.
    ///
    /// The path given to [`Db::open`](crate::db::Db::open) names the database
    /// inside that file system. Data lives as long as the file system: a
    /// clone of these options reopens the same database after the `Db` is
    /// dropped; when the last clone is gone, so is the data.
    ///
    /// ```
    /// use slsm::{Db, Options};
    /// let opts = Options::default().in_memory();
    /// let db = Db::open("mem", opts.clone())?;
    /// db.put(b"k", b"v")?;
    /// drop(db);
    /// let db = Db::open("mem", opts)?;
    /// assert_eq!(db.get(b"k")?.as_deref(), Some(&b"v"[..]));
    /// # Ok::<(), slsm::Error>(())
    /// ```
    pub fn in_memory(mut self) -> Options {
        self.fs = Arc::new(crate::fs::MemFs::new());
        self.disable_wal = true;
        // The data already lives in memory: compressing it would only add
        // work to every read (and a cached copy of every block read).
        self.compression = Compression::none();
        self
    }

    /// Checks every knob; the error names the field and the accepted range.
    pub fn validate(&self) -> Result<()> {
        let bad = |msg: String| Err(Error::InvalidArgument(msg));
        if self.run_size < 4096 || self.run_size > (1 << 32) {
            return bad(format!(
                "run_size must be between 4 KiB and 4 GiB, got {}",
                self.run_size
            ));
        }
        if self.run_entries < 64 {
            return bad(format!(
                "run_entries (Rn) must be at least 64, got {}",
                self.run_entries
            ));
        }
        if !(2..=1024).contains(&self.memory_runs) {
            return bad(format!(
                "memory_runs (R) must be between 2 and 1024, got {}",
                self.memory_runs
            ));
        }
        if !(self.merge_fraction > 0.0 && self.merge_fraction <= 1.0) {
            return bad(format!(
                "merge_fraction (m) must be in (0, 1], got {}",
                self.merge_fraction
            ));
        }
        if !(2..=64).contains(&self.level_runs) {
            return bad(format!(
                "level_runs (D) must be between 2 and 64, got {}",
                self.level_runs
            ));
        }
        if self.max_space_amplification.is_nan() || self.max_space_amplification <= 1.0 {
            return bad(format!(
                "max_space_amplification must be greater than 1, got {}",
                self.max_space_amplification
            ));
        }
        if !(self.bloom_fp_rate > 0.0 && self.bloom_fp_rate < 1.0) {
            return bad(format!(
                "bloom_fp_rate (epsilon) must be in (0, 1), got {}",
                self.bloom_fp_rate
            ));
        }
        if !(1..=65536).contains(&self.fence_entries) {
            return bad(format!(
                "fence_entries (mu) must be between 1 and 65536, got {}",
                self.fence_entries
            ));
        }
        if !(256..=(4 << 20)).contains(&self.block_size) {
            return bad(format!(
                "block_size must be between 256 bytes and 4 MiB, got {}",
                self.block_size
            ));
        }
        if self.memory_budget < MIN_MEMORY_BUDGET {
            return bad(format!(
                "memory_budget must be at least 1 MiB, got {}",
                self.memory_budget
            ));
        }
        if let Err(e) = self.compression.validate() {
            return bad(e);
        }
        Ok(())
    }

    /// Bytes of one memory run: `run_size`, or less if `memory_runs` of
    /// them would not fit the memory runs' share of the budget.
    pub fn effective_run_size(&self) -> usize {
        let share = self.memory_budget / 4 / self.memory_runs;
        self.run_size.min(share.max(16 << 10))
    }

    /// Bytes set aside for a running flush (`budget::charge`): what it may
    /// hold without drawing on the block cache, so a flush never waits for
    /// memory (it cuts its output into smaller files instead).
    pub(crate) fn flush_floor(&self) -> usize {
        (self.memory_budget / 32).clamp(32 << 10, 2 << 20)
    }

    /// A flush's write buffer: a quarter of its floor at most, so the rest
    /// of the floor holds the key hashes of a flush of full memory runs
    /// (98K keys, 0.9 MiB, at the default budget) and its file stays whole.
    pub(crate) fn flush_write_buffer(&self) -> usize {
        self.job_write_buffer().min(self.flush_floor() / 4)
    }

    /// Bytes set aside for a running merge (`budget::charge`): past it a
    /// merge draws on the block cache, cuts its output or waits.
    pub(crate) fn merge_floor(&self) -> usize {
        (self.memory_budget / 256).clamp(16 << 10, 1 << 20)
    }

    /// Bytes set aside for scanning iterators' readahead windows, all
    /// together (a window grows to 256 KiB).
    pub(crate) fn readahead_bytes(&self) -> usize {
        self.memory_budget / 64
    }

    /// Bytes the write-ahead log's buffer keeps between writes (a bigger
    /// group is encoded in a buffer freed after its write).
    pub(crate) fn log_buffer_bytes(&self) -> usize {
        (self.memory_budget / 16).min(1 << 20)
    }

    /// The write buffer of a run file a flush or merge builds, when the
    /// budget has room for it (`budget::charge` shrinks it when not).
    pub(crate) fn job_write_buffer(&self) -> usize {
        (self.memory_budget / 64).clamp(16 << 10, 1 << 20)
    }

    /// Bytes a merge reads from each input at once, when the budget has
    /// room for it (`budget::charge` shrinks it when not).
    pub(crate) fn merge_read_chunk(&self) -> usize {
        (self.memory_budget / 512).clamp(4 << 10, 256 << 10)
    }

    /// How many immutable memory runs one flush merges into a disk run.
    pub(crate) fn runs_per_flush(&self) -> usize {
        let n = (self.merge_fraction * self.memory_runs as f64).floor() as usize;
        n.clamp(1, self.memory_runs - 1)
    }
}

/// Per-write settings.
#[derive(Clone, Copy, Debug, Default)]
pub struct WriteOptions {
    /// `fdatasync` the WAL before acknowledging (survives a machine crash).
    pub sync: bool,
    /// Skip the WAL for this write (lost on a crash until flushed).
    pub disable_wal: bool,
}
