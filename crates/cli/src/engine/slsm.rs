//! The slsm engine behind the benchmark's [`Engine`] interface, and the
//! options `slsm bench` and the admin commands open it with.

use crate::bench::flags::Compression;
use crate::bench::report::EngineStats;
use crate::bench::{
    scan_order, seek_and_read, BatchOp, BenchFlags, Engine, EngineFactory, WriteMode,
};
use anyhow::Result;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Flags specific to slsm (the sLSM paper's knobs), accepted by `slsm bench`.
pub const SLSM_FLAGS: &[&str] = &[
    "run_entries",
    "memory_runs",
    "merge_fraction",
    "level_runs",
    "max_space_amplification",
    "bloom_fp_rate",
    "bloom_bits",
    "fence_entries",
    "background_merges",
    "memory_budget",
    "block_size",
    "os_page_cache",
];

fn parse_flag<T: std::str::FromStr>(flags: &BenchFlags, name: &str) -> Result<Option<T>>
where
    T::Err: std::fmt::Display,
{
    match flags.engine_flag(name) {
        None => Ok(None),
        Some(v) => v.parse::<T>().map(Some).map_err(|e| {
            anyhow::Error::new(crate::bench::flags::FlagError(format!(
                "invalid value '{v}' for --{name}: {e}"
            )))
        }),
    }
}

/// slsm options for a benchmark run. `--write_buffer_size` is the size of one
/// memory run. In memtable mode the database lives in memory
/// ([`slsm::Options::in_memory`]): no WAL, no file on disk.
pub fn bench_options(flags: &BenchFlags, memtable: bool) -> Result<slsm::Options> {
    let mut o = slsm::Options {
        sync_writes: flags.sync,
        disable_wal: flags.disable_wal,
        ..Default::default()
    };
    // Only an explicit --write_buffer_size sets the run size: db_bench's own
    // default (64 MiB, for RocksDB's two memtables) would give slsm's `R`
    // runs four times the memory its defaults are tuned for.
    if flags.given.contains_key("write_buffer_size") {
        o.run_size = usize::try_from(flags.write_buffer_size).unwrap_or(usize::MAX);
    }
    if let Some(v) = parse_flag(flags, "run_entries")? {
        o.run_entries = v;
    }
    if let Some(v) = parse_flag(flags, "memory_runs")? {
        o.memory_runs = v;
    }
    if let Some(v) = parse_flag(flags, "merge_fraction")? {
        o.merge_fraction = v;
    }
    if let Some(v) = parse_flag(flags, "level_runs")? {
        o.level_runs = v;
    }
    if let Some(v) = parse_flag(flags, "max_space_amplification")? {
        o.max_space_amplification = v;
    }
    if let Some(bits) = parse_flag::<f64>(flags, "bloom_bits")? {
        // A Bloom filter with b bits per key and the best number of hashes
        // has a false-positive rate of about 0.6185^b.
        if bits > 0.0 {
            o.bloom_fp_rate = 0.6185f64.powf(bits).clamp(1e-9, 0.5);
        }
    }
    if let Some(v) = parse_flag(flags, "bloom_fp_rate")? {
        o.bloom_fp_rate = v;
    }
    if let Some(v) = parse_flag(flags, "fence_entries")? {
        o.fence_entries = v;
    }
    if let Some(v) = parse_flag(flags, "memory_budget")? {
        o.memory_budget = v;
    }
    if let Some(v) = parse_flag(flags, "block_size")? {
        o.block_size = v;
    }
    if let Some(v) = parse_flag::<String>(flags, "os_page_cache")? {
        o.os_page_cache = match v.as_str() {
            "auto" => None,
            "1" | "true" => Some(true),
            "0" | "false" => Some(false),
            _ => {
                return Err(anyhow::Error::new(crate::bench::flags::FlagError(format!(
                    "invalid value '{v}' for --os_page_cache: true, false or auto"
                ))))
            }
        };
    }
    // db_bench's --cache_size: only when given, so that slsm's own split of
    // its memory budget applies otherwise.
    if flags.given.contains_key("cache_size") {
        o.block_cache_size = Some(usize::try_from(flags.cache_size).unwrap_or(usize::MAX));
    }
    o.compression = ::slsm::Compression::all(match flags.compression_type {
        Compression::None => ::slsm::Codec::None,
        Compression::Lz4 => ::slsm::Codec::Lz4,
        Compression::Zstd => ::slsm::Codec::Zstd(3),
    });
    if let Some(v) = parse_flag::<String>(flags, "background_merges")? {
        o.background_merges = !matches!(v.as_str(), "0" | "false");
    }
    if memtable {
        // The pure in-memory path: the same engine on an in-memory file
        // system with no WAL (`Options::in_memory`). Memory runs are flushed
        // into in-memory run images and merged in the background, so the
        // data is held once, compactly, and a lookup costs a few Bloom
        // probes and one search however much was written. (One skiplist
        // buffer big enough for everything was measured slower on both
        // fillrandom and readrandom: every insert and get walks ~15
        // dependent cache misses of a 4M-entry list.)
        o = o.in_memory();
        o.sync_writes = false;
    }
    Ok(o)
}

/// An open slsm database.
pub struct SlsmEngine {
    db: slsm::Db,
}

impl SlsmEngine {
    /// Wraps an open database.
    pub fn new(db: slsm::Db) -> Self {
        SlsmEngine { db }
    }
}

fn wopts(mode: WriteMode) -> slsm::WriteOptions {
    slsm::WriteOptions {
        sync: mode.sync,
        disable_wal: mode.disable_wal,
    }
}

impl Engine for SlsmEngine {
    fn put(&self, key: &[u8], value: &[u8], mode: WriteMode) -> Result<()> {
        Ok(self.db.put_opt(key, value, &wopts(mode))?)
    }

    fn delete(&self, key: &[u8], mode: WriteMode) -> Result<()> {
        Ok(self.db.delete_opt(key, &wopts(mode))?)
    }

    fn write_batch(&self, ops: &[BatchOp<'_>], mode: WriteMode) -> Result<()> {
        let mut batch = slsm::WriteBatch::new();
        for op in ops {
            match *op {
                BatchOp::Put(k, v) => {
                    batch.put(k, v);
                }
                BatchOp::Delete(k) => {
                    batch.delete(k);
                }
            }
        }
        Ok(self.db.write_opt(batch, &wopts(mode))?)
    }

    fn get(&self, key: &[u8]) -> Result<Option<usize>> {
        Ok(self.db.get(key)?.map(|v| v.len()))
    }

    /// The values are looked at where the engine keeps them, not copied:
    /// what RocksDB's `MultiGet` into `PinnableSlice`s does for the peer.
    fn multi_get(&self, keys: &[&[u8]]) -> Result<(u64, u64)> {
        let mut found = 0;
        let mut bytes = 0;
        self.db.multi_get_with(keys, |i, v| {
            found += 1;
            bytes += (keys[i].len() + v.len()) as u64;
        })?;
        Ok((found, bytes))
    }

    fn seek(&self, key: &[u8], nexts: usize) -> Result<(bool, u64)> {
        seek_and_read(self.db.range(key..), key, nexts)
    }

    fn scan(&self, limit: u64, reverse: bool, each: &mut dyn FnMut(usize)) -> Result<u64> {
        let mut n = 0;
        for item in scan_order(self.db.range::<&[u8], _>(..), reverse).take(limit as usize) {
            let (k, v) = item?;
            each(k.len() + v.len());
            n += 1;
        }
        Ok(n)
    }

    fn flush(&self) -> Result<()> {
        Ok(self.db.sync()?)
    }

    fn compact(&self) -> Result<()> {
        Ok(self.db.compact()?)
    }

    fn wait_for_compaction(&self) -> Result<()> {
        Ok(self.db.wait_for_compaction()?)
    }

    fn stats(&self) -> Option<EngineStats> {
        let s = self.db.stats();
        Some(EngineStats {
            user_bytes_written: s.user_bytes_written,
            merge_bytes_written: s.merge_bytes_written,
            write_amplification: s.write_amplification(),
            stall_count: s.stall_count,
            stall_micros: s.stall_micros,
        })
    }

    fn report(&self) -> Option<String> {
        Some(self.db.stats().to_string())
    }
}

/// Opens slsm databases for `slsm bench`.
pub struct SlsmFactory {
    /// The in-memory file system of memtable mode, kept across reopens.
    memory_fs: Mutex<Option<Arc<dyn slsm::fs::FileSystem>>>,
}

pub(super) static SLSM_FACTORY: SlsmFactory = SlsmFactory {
    memory_fs: Mutex::new(None),
};

impl EngineFactory for SlsmFactory {
    fn name(&self) -> &str {
        "slsm"
    }

    fn engine_flags(&self) -> &[&str] {
        SLSM_FLAGS
    }

    fn recognizes(&self, dir: &Path) -> bool {
        slsm::Db::is_database(dir)
    }

    fn describe(&self, flags: &BenchFlags) -> Vec<(String, String)> {
        let v = |s: &str| s.to_string();
        let mut lines = vec![(v("slsm"), format!("version {}", env!("CARGO_PKG_VERSION")))];
        let Ok(o) = bench_options(flags, flags.memtable) else {
            return lines;
        };
        let compression = if o.compression.levels.len() == 1 && o.compression.bottommost.is_none() {
            o.compression.levels[0].name()
        } else {
            format!("{:?}", o.compression)
        };
        let cache = match o.block_cache_size {
            Some(bytes) => format!("{bytes} bytes"),
            None => v("what the memory budget leaves (see stats)"),
        };
        lines.push((v("Compression"), compression));
        lines.push((v("Memory budget"), format!("{} bytes", o.memory_budget)));
        lines.push((v("Block cache"), cache));
        lines.push((
            v("Options"),
            format!(
                "R={} runs of {} entries / {} bytes, m={}, D={}, space amp <= {}, bloom fp {}, mu={}, blocks of {} bytes",
                o.memory_runs,
                o.run_entries,
                o.effective_run_size(),
                o.merge_fraction,
                o.level_runs,
                o.max_space_amplification,
                o.bloom_fp_rate,
                o.fence_entries,
                o.block_size
            ),
        ));
        lines
    }

    fn engine_help(&self) -> String {
        "\
  --engine=NAME          slsm (default), skiplist (the bare slsm-skiplist: no
                         WAL, no overwrite, no deletes) or btreemap (a locked
                         BTreeMap, for testing the harness)
slsm flags (the sLSM paper's knobs; defaults from slsm::Options):
  --write_buffer_size=N  bytes of one memory run (Rn)
  --run_entries=N        entries of one memory run (Rn); sealed at either limit
  --memory_runs=R        memory runs (R)
  --merge_fraction=M     fraction of memory runs flushed together (m)
  --level_runs=D         runs per disk level before a merge (D)
  --max_space_amplification=A
                         file bytes per byte of the deepest level's data
                         before everything is merged there (2; inf: off)
  --bloom_fp_rate=E      Bloom filter false-positive rate (epsilon)
  --bloom_bits=B         db_bench's bits per key, mapped to E = 0.6185^B
  --fence_entries=MU     entries per fence pointer (mu)
  --background_merges=B  merge on a background thread (true)
  --memory_budget=N      bytes the engine may use in all (134217728)
  --block_size=N         bytes of a run file's data block (4096)
  --os_page_cache=B      keep read blocks in the OS page cache: true,
                         false (direct reads) or auto (auto: false when
                         the memory limit cannot hold the run files)
(--cache_size sets the block cache instead of what the budget leaves;
--compression_type=none|lz4|zstd compresses run files' data blocks)
"
        .to_string()
    }

    fn open(
        &self,
        path: &Path,
        flags: &BenchFlags,
        memtable: bool,
        fresh: bool,
    ) -> Result<Arc<dyn Engine>> {
        let mut opts = bench_options(flags, memtable)?;
        if memtable {
            // Reopening in memtable mode finds the data of the previous
            // memtable-mode workload: keep its in-memory file system.
            let mut kept = self.memory_fs.lock().unwrap_or_else(|e| e.into_inner());
            match kept.as_ref() {
                Some(fs) if !fresh => opts.fs = Arc::clone(fs),
                _ => *kept = Some(Arc::clone(&opts.fs)),
            }
        }
        let db = slsm::Db::open(path, opts)?;
        Ok(Arc::new(SlsmEngine::new(db)))
    }
}
