//! `rocksdb-bench`: the db_bench-compatible benchmark of `slsm bench`,
//! driving RocksDB (the `rocksdb` crate's vendored RocksDB, built in release
//! mode with `NDEBUG`) instead of slsm. Same flags, workloads, key and value
//! generation and output lines (the harness is `slsm_cli::bench`).
//!
//! RocksDB is configured as its own `db_bench` (11.x) configures it by
//! default, plus what its tuning guide and every published db_bench run
//! add, so that its users would recognise the set-up:
//! * block-based tables, 4 KiB blocks, a full (not block-based) Bloom
//!   filter of `--bloom_bits` (10) bits per key;
//! * a HyperClock block cache of `--cache_size` bytes (db_bench's default
//!   cache type; `--cache_type=lru_cache` for an LRU cache), index and
//!   filter blocks held by the table readers, as db_bench's default;
//! * `--max_background_jobs` (2) flush and compaction threads;
//! * level compaction with RocksDB's defaults (dynamic level bytes, 64 MiB
//!   write buffers, two of them);
//! * `--compression_type` on every level;
//! * `multireadrandom` through `batched_multi_get_cf` (the batched MultiGet).

use anyhow::{bail, Result};
use rocksdb::{
    BlockBasedOptions, Cache, ColumnFamilyDescriptor, DBCompressionType, Options, WaitForCompactOptions, WriteBatch,
    WriteOptions, DB,
};
use slsm_cli::bench::flags::{Compression, FlagError};
use slsm_cli::bench::{BatchOp, BenchFlags, Engine, EngineFactory, WriteMode};
use std::path::Path;
use std::sync::Arc;

/// Flags of db_bench that this peer implements beyond the shared ones.
const ROCKSDB_FLAGS: &[&str] = &["bloom_bits", "max_background_jobs", "cache_type"];

/// RocksDB's configuration for one run, resolved from the flags.
struct Config {
    bloom_bits: f64,
    max_background_jobs: i32,
    cache_type: String,
    cache_size: usize,
    compression: Compression,
    write_buffer_size: Option<usize>,
}

fn engine_flag<T: std::str::FromStr>(flags: &BenchFlags, name: &str, default: T) -> Result<T> {
    match flags.engine_flag(name) {
        None => Ok(default),
        Some(v) => v
            .parse()
            .map_err(|_| anyhow::Error::new(FlagError(format!("invalid value '{v}' for --{name}")))),
    }
}

impl Config {
    fn from_flags(flags: &BenchFlags) -> Result<Config> {
        let cache_type: String = engine_flag(flags, "cache_type", "hyper_clock_cache".into())?;
        if !matches!(cache_type.as_str(), "hyper_clock_cache" | "lru_cache") {
            bail!(FlagError(format!(
                "--cache_type={cache_type} is not supported (hyper_clock_cache or lru_cache)"
            )));
        }
        // db_bench's default write buffer is RocksDB's own (64 MiB); only
        // an explicit flag changes it (the mem set asks for one big buffer).
        let write_buffer_size = flags
            .given
            .contains_key("write_buffer_size")
            .then_some(flags.write_buffer_size as usize);
        Ok(Config {
            bloom_bits: engine_flag(flags, "bloom_bits", 10.0)?,
            max_background_jobs: engine_flag(flags, "max_background_jobs", 2)?,
            cache_type,
            cache_size: flags.cache_size as usize,
            compression: flags.compression_type,
            write_buffer_size,
        })
    }

    fn compression(&self) -> DBCompressionType {
        match self.compression {
            Compression::None => DBCompressionType::None,
            Compression::Lz4 => DBCompressionType::Lz4,
            Compression::Zstd => DBCompressionType::Zstd,
        }
    }

    fn options(&self, no_wal_memtable: Option<u64>) -> Options {
        let mut table = BlockBasedOptions::default();
        let cache = match self.cache_type.as_str() {
            // Estimated entry charge 0: HyperClock sizes itself (db_bench's
            // "hyper_clock_cache", an alias of auto_hyper_clock_cache).
            "hyper_clock_cache" => Cache::new_hyper_clock_cache(self.cache_size, 0),
            _ => Cache::new_lru_cache(self.cache_size),
        };
        table.set_block_cache(&cache);
        if self.bloom_bits > 0.0 {
            table.set_bloom_filter(self.bloom_bits, false);
        }
        let mut o = Options::default();
        o.create_if_missing(true);
        o.set_block_based_table_factory(&table);
        o.set_max_background_jobs(self.max_background_jobs);
        o.set_compression_type(self.compression());
        if let Some(size) = self.write_buffer_size {
            o.set_write_buffer_size(size);
        }
        if let Some(size) = no_wal_memtable {
            // Memtable mode: everything stays in one memtable.
            o.set_write_buffer_size(size as usize);
        }
        o
    }

    fn describe(&self) -> Vec<(String, String)> {
        let v = |s: &str| s.to_string();
        vec![
            (v("RocksDB"), format!("version {} (rocksdb crate 0.25, release build, NDEBUG)", rocksdb_version())),
            (v("Compression"), v(self.compression.name())),
            (
                v("Block cache"),
                format!("{} of {} bytes", self.cache_type, self.cache_size),
            ),
            (
                v("Filter"),
                if self.bloom_bits > 0.0 {
                    format!("full Bloom filter, {} bits per key", self.bloom_bits)
                } else {
                    v("none")
                },
            ),
            (
                v("Write buffer"),
                format!(
                    "{} bytes x 2",
                    self.write_buffer_size.unwrap_or(64 << 20)
                ),
            ),
            (
                v("Compaction"),
                format!(
                    "level (RocksDB defaults), max_background_jobs={}",
                    self.max_background_jobs
                ),
            ),
        ]
    }
}

/// The version of the vendored RocksDB: librocksdb-sys 0.19.0+11.8.1, which
/// Cargo.toml pins through `rocksdb = "=0.25.0"`.
fn rocksdb_version() -> &'static str {
    "11.8.1"
}

struct RocksEngine {
    db: DB,
}

fn write_options(mode: WriteMode) -> WriteOptions {
    let mut w = WriteOptions::default();
    w.set_sync(mode.sync);
    w.disable_wal(mode.disable_wal);
    w
}

impl Engine for RocksEngine {
    fn put(&self, key: &[u8], value: &[u8], mode: WriteMode) -> Result<()> {
        Ok(self.db.put_opt(key, value, &write_options(mode))?)
    }

    fn delete(&self, key: &[u8], mode: WriteMode) -> Result<()> {
        Ok(self.db.delete_opt(key, &write_options(mode))?)
    }

    fn write_batch(&self, ops: &[BatchOp<'_>], mode: WriteMode) -> Result<()> {
        let mut batch = WriteBatch::default();
        for op in ops {
            match *op {
                BatchOp::Put(k, v) => batch.put(k, v),
                BatchOp::Delete(k) => batch.delete(k),
            }
        }
        Ok(self.db.write_opt(batch, &write_options(mode))?)
    }

    fn get(&self, key: &[u8]) -> Result<Option<usize>> {
        Ok(self.db.get_pinned(key)?.map(|v| v.len()))
    }

    fn multi_get(&self, keys: &[&[u8]]) -> Result<(u64, u64)> {
        let cf = self.db.cf_handle(rocksdb::DEFAULT_COLUMN_FAMILY_NAME);
        let Some(cf) = cf else {
            bail!("RocksDB has no default column family");
        };
        let (mut found, mut bytes) = (0, 0);
        for (k, v) in keys.iter().zip(self.db.batched_multi_get_cf(&cf, keys, false)) {
            if let Some(v) = v? {
                found += 1;
                bytes += (k.len() + v.len()) as u64;
            }
        }
        Ok((found, bytes))
    }

    fn seek(&self, key: &[u8], nexts: usize) -> Result<(bool, u64)> {
        let mut it = self.db.raw_iterator();
        it.seek(key);
        let mut exact = false;
        let mut bytes = 0;
        if it.valid() {
            exact = it.key() == Some(key);
            for _ in 0..nexts {
                match (it.key(), it.value()) {
                    (Some(k), Some(v)) => bytes += (k.len() + v.len()) as u64,
                    _ => break,
                }
                it.next();
            }
        }
        it.status()?;
        Ok((exact, bytes))
    }

    fn scan(&self, limit: u64, reverse: bool, each: &mut dyn FnMut(usize)) -> Result<u64> {
        let mut it = self.db.raw_iterator();
        let mut count = 0;
        if reverse {
            it.seek_to_last();
        } else {
            it.seek_to_first();
        }
        while it.valid() && count < limit {
            if let (Some(k), Some(v)) = (it.key(), it.value()) {
                each(k.len() + v.len());
            }
            count += 1;
            if reverse {
                it.prev();
            } else {
                it.next();
            }
        }
        it.status()?;
        Ok(count)
    }

    fn flush(&self) -> Result<()> {
        // The end of a write workload: what was written reaches the OS (the
        // WAL is written with every write; sync it as `Db::sync` would).
        Ok(self.db.flush_wal(true)?)
    }

    fn compact(&self) -> Result<()> {
        self.db.compact_range::<&[u8], &[u8]>(None, None);
        Ok(())
    }

    fn wait_for_compaction(&self) -> Result<()> {
        let mut o = WaitForCompactOptions::default();
        o.set_flush(true);
        Ok(self.db.wait_for_compact(&o)?)
    }

    fn report(&self) -> Option<String> {
        self.db.property_value("rocksdb.stats").ok().flatten()
    }
}

struct RocksFactory;

impl EngineFactory for RocksFactory {
    fn name(&self) -> &str {
        "rocksdb"
    }

    fn engine_flags(&self) -> &[&str] {
        ROCKSDB_FLAGS
    }

    fn engine_help(&self) -> String {
        "\
RocksDB flags (db_bench's names; defaults as db_bench with --bloom_bits=10):
  --bloom_bits=B            full Bloom filter bits per key, 0 for none (10)
  --max_background_jobs=N   flush and compaction threads (2)
  --cache_type=T            hyper_clock_cache (default) or lru_cache
"
        .to_string()
    }

    fn recognizes(&self, dir: &Path) -> bool {
        // Every RocksDB directory has CURRENT (naming the MANIFEST) and IDENTITY.
        dir.join("CURRENT").is_file() && dir.join("IDENTITY").is_file()
    }

    fn describe(&self, flags: &BenchFlags) -> Vec<(String, String)> {
        Config::from_flags(flags).map(|c| c.describe()).unwrap_or_default()
    }

    fn open(
        &self,
        path: &Path,
        flags: &BenchFlags,
        memtable: bool,
        _fresh: bool,
    ) -> Result<Arc<dyn Engine>> {
        let config = Config::from_flags(flags)?;
        let memtable_size = memtable.then(|| {
            let per_entry = (flags.key_size + flags.value_size) as u64 + 64;
            let entries = flags.num.max(flags.writes_per_thread()) * flags.threads as u64;
            (per_entry * entries * 3 / 2).max(64 << 20)
        });
        // The default column family is opened by name so that its handle
        // exists for batched_multi_get_cf, and with a descriptor carrying the
        // same options: `DB::open_cf` would give it `Options::default()`
        // (LZ4, no Bloom filter, RocksDB's own 32 MiB cache), whatever the
        // flags said.
        let options = config.options(memtable_size);
        let default_cf =
            ColumnFamilyDescriptor::new(rocksdb::DEFAULT_COLUMN_FAMILY_NAME, options.clone());
        let db = DB::open_cf_descriptors(&options, path, [default_cf])?;
        Ok(Arc::new(RocksEngine { db }))
    }
}

fn main() {
    slsm_cli::bench::main_for("rocksdb-bench", &RocksFactory);
}
