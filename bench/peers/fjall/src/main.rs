//! `fjall-bench`: the db_bench-compatible benchmark of `slsm bench`, driving
//! fjall 3 instead of slsm. Same flags, workloads, key generation and output
//! lines (the harness is `slsm_cli::bench`). fjall runs with its default
//! options but for two things every engine of a comparison is given alike:
//! * `--cache_size`: the block cache (fjall's default is 32 MiB, as
//!   db_bench's);
//! * `--compression_type`: `lz4` is fjall's own default policy (data
//!   blocks uncompressed on the two top levels, LZ4 below); `none` turns it
//!   off; fjall 3 has no Zstandard, so `zstd` is refused.
//!
//! Mapping of the write flags:
//! * `--sync`: every write batch is committed with `PersistMode::SyncData`.
//! * `--disable_wal`: fjall always journals; the journal is then not flushed
//!   to the OS per write (`manual_journal_persist`), the closest it offers.
//! * memtable mode (`*_mem`, `--memtable`): as `--disable_wal`, plus a
//!   memtable and journal limit large enough for all the data.

use anyhow::Result;
use fjall::config::CompressionPolicy;
use fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode};
use slsm_cli::bench::flags::{Compression, FlagError};
use slsm_cli::bench::{scan_order, BatchOp, BenchFlags, Engine, EngineFactory, WriteMode};
use std::path::Path;
use std::sync::Arc;

struct FjallEngine {
    db: Database,
    ks: Keyspace,
}

impl FjallEngine {
    fn commit_mode(mode: WriteMode) -> Option<PersistMode> {
        mode.sync.then_some(PersistMode::SyncData)
    }
}

impl Engine for FjallEngine {
    fn put(&self, key: &[u8], value: &[u8], mode: WriteMode) -> Result<()> {
        self.ks.insert(key, value)?;
        if mode.sync {
            self.db.persist(PersistMode::SyncData)?;
        }
        Ok(())
    }

    fn delete(&self, key: &[u8], mode: WriteMode) -> Result<()> {
        self.ks.remove(key)?;
        if mode.sync {
            self.db.persist(PersistMode::SyncData)?;
        }
        Ok(())
    }

    fn write_batch(&self, ops: &[BatchOp<'_>], mode: WriteMode) -> Result<()> {
        let mut batch = self.db.batch().durability(Self::commit_mode(mode));
        for op in ops {
            match *op {
                BatchOp::Put(k, v) => batch.insert(&self.ks, k, v),
                BatchOp::Delete(k) => batch.remove(&self.ks, k),
            }
        }
        batch.commit()?;
        Ok(())
    }

    fn get(&self, key: &[u8]) -> Result<Option<usize>> {
        Ok(self.ks.get(key)?.map(|v| v.len()))
    }

    fn seek(&self, key: &[u8], nexts: usize) -> Result<(bool, u64)> {
        let mut it = self.ks.range(key..);
        let mut exact = false;
        let mut bytes = 0;
        if let Some(first) = it.next() {
            if nexts == 0 {
                exact = &*first.key()? == key;
            } else {
                let (k, v) = first.into_inner()?;
                exact = &*k == key;
                bytes += (k.len() + v.len()) as u64;
                for g in it.take(nexts - 1) {
                    let (k, v) = g.into_inner()?;
                    bytes += (k.len() + v.len()) as u64;
                }
            }
        }
        Ok((exact, bytes))
    }

    fn scan(&self, limit: u64, reverse: bool, each: &mut dyn FnMut(usize)) -> Result<u64> {
        let mut n = 0;
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        for g in scan_order(self.ks.iter(), reverse).take(limit) {
            let (k, v) = g.into_inner()?;
            each(k.len() + v.len());
            n += 1;
        }
        Ok(n)
    }

    fn flush(&self) -> Result<()> {
        self.db.persist(PersistMode::Buffer)?;
        Ok(())
    }

    fn compact(&self) -> Result<()> {
        self.ks.major_compact()?;
        Ok(())
    }

    fn wait_for_compaction(&self) -> Result<()> {
        // fjall has no call for it: poll until no flush is queued and no
        // compaction runs, several times in a row (one may start the next).
        let mut quiet = 0;
        while quiet < 5 {
            let busy = self.db.outstanding_flushes() > 0 || self.db.active_compactions() > 0;
            quiet = if busy { 0 } else { quiet + 1 };
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Ok(())
    }

    fn report(&self) -> Option<String> {
        Some(format!(
            "fjall: {} tables ({} in L0), {:.1} MiB on disk",
            self.ks.table_count(),
            self.ks.l0_table_count(),
            self.ks.disk_space() as f64 / 1048576.0
        ))
    }
}

struct FjallFactory;

/// fjall's data block compression for `--compression_type`.
fn compression_policy(c: Compression) -> Result<CompressionPolicy> {
    match c {
        Compression::None => Ok(CompressionPolicy::disabled()),
        Compression::Lz4 => Ok(KeyspaceCreateOptions::default().data_block_compression_policy),
        Compression::Zstd => Err(anyhow::Error::new(FlagError(
            "--compression_type=zstd: fjall 3 has no Zstandard compression".into(),
        ))),
    }
}

impl EngineFactory for FjallFactory {
    fn name(&self) -> &str {
        "fjall"
    }

    fn recognizes(&self, dir: &Path) -> bool {
        // fjall 3 writes a "version" marker and a "keyspaces" folder.
        dir.join("version").is_file() && dir.join("keyspaces").is_dir()
    }

    fn describe(&self, flags: &BenchFlags) -> Vec<(String, String)> {
        let compression = match flags.compression_type {
            Compression::None => "none".to_string(),
            Compression::Lz4 => "lz4 (fjall's default: data blocks LZ4 from level 2 on)".to_string(),
            Compression::Zstd => "zstd: not supported by fjall 3".to_string(),
        };
        let v = |s: &str| s.to_string();
        vec![
            (v("fjall"), v("version 3 (crates.io, release build)")),
            (v("Compression"), compression),
            (v("Block cache"), format!("{} bytes", flags.cache_size)),
            (v("Options"), v("fjall defaults otherwise (leveled compaction, 64 MiB memtable)")),
        ]
    }

    fn open(
        &self,
        path: &Path,
        flags: &BenchFlags,
        memtable: bool,
        _fresh: bool,
    ) -> Result<Arc<dyn Engine>> {
        let policy = compression_policy(flags.compression_type)?;
        let mut builder = Database::builder(path).cache_size(flags.cache_size);
        let no_wal = memtable || flags.disable_wal;
        if no_wal {
            builder = builder.manual_journal_persist(true);
        }
        let mut mem_size = None;
        if memtable {
            let per_entry = (flags.key_size + flags.value_size) as u64 + 64;
            let entries = flags.num.max(flags.writes_per_thread()) * flags.threads as u64;
            let size = (per_entry * entries * 3 / 2).max(flags.write_buffer_size);
            builder = builder.max_journaling_size((size * 4).max(512 << 20));
            mem_size = Some(size);
        }
        let db = builder.open()?;
        let ks = db.keyspace("default", || {
            let mut o = KeyspaceCreateOptions::default().data_block_compression_policy(policy);
            if no_wal {
                o = o.manual_journal_persist(true);
            }
            if let Some(size) = mem_size {
                o = o.max_memtable_size(size);
            }
            o
        })?;
        Ok(Arc::new(FjallEngine { db, ks }))
    }
}

fn main() {
    slsm_cli::bench::main_for("fjall-bench", &FjallFactory);
}
