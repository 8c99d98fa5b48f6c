//! The benchmark's settings: every db_bench flag the harness understands,
//! resolved to its value (parsing them is `parse.rs`).

pub use super::parse::{parse, Parsed};

use anyhow::{bail, Result};
use serde::Serialize;
use std::collections::BTreeMap;

/// Every flag the harness understands, resolved to its value.
#[derive(Clone, Debug, Serialize)]
pub struct BenchFlags {
    /// Workloads to run, in order.
    pub benchmarks: Vec<String>,
    /// Number of keys (the key space is `[0, num)`).
    pub num: u64,
    /// Reads per thread for read workloads (`-1` means `num`).
    pub reads: i64,
    /// Writes per thread for fill/overwrite (`-1` means `num`).
    pub writes: i64,
    /// Deletes per thread for deleterandom (`-1` means `num`).
    pub deletes: i64,
    /// Key size in bytes.
    pub key_size: usize,
    /// Value size in bytes.
    pub value_size: usize,
    /// Entries per write batch (fills, deletes) and per multi-get.
    pub batch_size: usize,
    /// Threads; each does the full op count.
    pub threads: usize,
    /// Database directory.
    pub db: String,
    /// Write without the write-ahead log.
    pub disable_wal: bool,
    /// Sync the log on every write.
    pub sync: bool,
    /// Seed base for the random generators (thread `i` uses `seed + i`).
    pub seed: u64,
    /// Print the latency histogram of each workload.
    pub histogram: bool,
    /// Bytes per memory buffer (slsm: bytes per memory run).
    pub write_buffer_size: u64,
    /// Entries read after each seek in seekrandom.
    pub seek_nexts: usize,
    /// Bytes (key and value) per second the background writer of the
    /// `*whilewriting` workloads may write; 0: as fast as it can (db_bench's
    /// `--benchmark_write_rate_limit`).
    pub benchmark_write_rate_limit: u64,
    /// Percentage of reads in readrandomwriterandom (the rest are puts).
    pub readwritepercent: u32,
    /// Keep and reuse the database in `--db` (skips fill workloads).
    pub use_existing_db: bool,
    /// Block compression every engine is asked to use: `none`, `lz4` or
    /// `zstd` (an engine that cannot says so in its header).
    pub compression_type: Compression,
    /// How compressible generated values are (db_bench's
    /// `--compression_ratio`): each 100-byte piece of the value pool is
    /// `ratio * 100` random bytes repeated.
    pub compression_ratio: f64,
    /// Bytes of block cache every engine is given (db_bench's `--cache_size`).
    pub cache_size: u64,
    /// Run every workload in memtable mode (see `fillrandom_mem`).
    pub memtable: bool,
    /// Print the engine's statistics after the run.
    pub statistics: bool,
    /// Write all results as JSON to this file.
    pub json: Option<String>,
    /// Show progress bars (`auto`: when stderr is a terminal).
    pub progress: Option<bool>,
    /// Every flag as given on the command line (after normalising `-` to `_`).
    pub given: BTreeMap<String, String>,
}

impl Default for BenchFlags {
    fn default() -> Self {
        BenchFlags {
            benchmarks: vec!["fillrandom".into(), "readrandom".into()],
            num: 1_000_000,
            reads: -1,
            writes: -1,
            deletes: -1,
            key_size: 16,
            value_size: 100,
            batch_size: 1,
            threads: 1,
            db: std::env::temp_dir()
                .join("slsm-bench")
                .to_string_lossy()
                .into_owned(),
            disable_wal: false,
            sync: false,
            seed: 0,
            histogram: false,
            write_buffer_size: 64 << 20,
            seek_nexts: 0,
            benchmark_write_rate_limit: 0,
            readwritepercent: 90,
            use_existing_db: false,
            compression_type: Compression::None,
            compression_ratio: 0.5,
            cache_size: DEFAULT_CACHE_SIZE,
            memtable: false,
            statistics: false,
            json: None,
            progress: None,
            given: BTreeMap::new(),
        }
    }
}

impl BenchFlags {
    /// These flags with `batch_size` keys per write (db_bench's
    /// `fillbatch` writes 1,000 per batch whatever `--batch_size` says).
    pub fn with_batch_size(&self, batch_size: usize) -> BenchFlags {
        BenchFlags {
            batch_size,
            ..self.clone()
        }
    }

    /// The flags of db_bench's `fillsync` (`sync`) or `fill100K`: a
    /// thousandth of the keys and writes, synced or with 100,000-byte values.
    pub fn for_small_fill(&self, sync: bool) -> BenchFlags {
        let mut f = self.clone();
        f.num = (self.num / 1000).max(1);
        if self.writes >= 0 {
            f.writes = (self.writes / 1000).max(1);
        }
        if sync {
            f.sync = true;
        } else {
            f.value_size = 100_000;
        }
        f
    }

    /// Reads per thread.
    pub fn reads_per_thread(&self) -> u64 {
        if self.reads < 0 {
            self.num
        } else {
            self.reads as u64
        }
    }

    /// Writes per thread.
    pub fn writes_per_thread(&self) -> u64 {
        if self.writes < 0 {
            self.num
        } else {
            self.writes as u64
        }
    }

    /// Deletes per thread.
    pub fn deletes_per_thread(&self) -> u64 {
        if self.deletes < 0 {
            self.num
        } else {
            self.deletes as u64
        }
    }

    /// The value of an engine-specific flag, if given.
    pub fn engine_flag(&self, name: &str) -> Option<&str> {
        self.given.get(name).map(String::as_str)
    }
}

/// db_bench's default `--cache_size` (32 MiB).
pub const DEFAULT_CACHE_SIZE: u64 = 32 << 20;

/// Block compression asked of the engines (`--compression_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    /// Blocks stored as they are.
    None,
    /// LZ4 (fast; fjall's default).
    Lz4,
    /// Zstandard.
    Zstd,
}

impl Compression {
    /// Parses db_bench's spelling (`none`, `lz4`, `zstd`; any case).
    pub fn parse(v: &str) -> Result<Compression> {
        match v.to_ascii_lowercase().as_str() {
            "none" | "no" => Ok(Compression::None),
            "lz4" => Ok(Compression::Lz4),
            "zstd" => Ok(Compression::Zstd),
            _ => bail!(
                "--compression_type={v} is not supported by this benchmark (use none, lz4 or zstd)"
            ),
        }
    }

    /// db_bench's name of the compression.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
        }
    }
}

/// A bad bench command line (the binary exits with the usage status).
#[derive(Debug)]
pub struct FlagError(pub String);

impl std::fmt::Display for FlagError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for FlagError {}
