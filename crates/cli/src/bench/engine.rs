//! The interface the benchmark drives, so one harness measures every engine.

use super::flags::BenchFlags;
use super::report::EngineStats;
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, RwLock};

/// Durability asked of a write.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteMode {
    /// Sync the log before returning.
    pub sync: bool,
    /// Skip the write-ahead log.
    pub disable_wal: bool,
}

/// One entry of a write batch.
#[derive(Clone, Copy, Debug)]
pub enum BatchOp<'a> {
    /// Insert or overwrite.
    Put(&'a [u8], &'a [u8]),
    /// Delete.
    Delete(&'a [u8]),
}

/// `entries` front to back, or back to front if `reverse`: the order of an
/// [`Engine::scan`].
pub fn scan_order<'a, I>(entries: I, reverse: bool) -> Box<dyn Iterator<Item = I::Item> + 'a>
where
    I: DoubleEndedIterator + 'a,
{
    if reverse {
        Box::new(entries.rev())
    } else {
        Box::new(entries)
    }
}

/// What a seek that reads `nexts` entries gives db_bench: whether the first
/// entry at or after `key` (the first `entries` yields) is `key` itself, and
/// the bytes of keys and values of the first `nexts` entries. Every engine's
/// [`Engine::seek`] is this over its own range iterator.
pub fn seek_and_read<K, V, E>(
    mut entries: impl Iterator<Item = std::result::Result<(K, V), E>>,
    key: &[u8],
    nexts: usize,
) -> Result<(bool, u64)>
where
    K: AsRef<[u8]>,
    V: AsRef<[u8]>,
    anyhow::Error: From<E>,
{
    let Some(first) = entries.next() else {
        return Ok((false, 0));
    };
    let (k, v) = first?;
    let exact = k.as_ref() == key;
    let mut bytes = 0;
    if nexts > 0 {
        bytes += (k.as_ref().len() + v.as_ref().len()) as u64;
        for item in entries.take(nexts - 1) {
            let (k, v) = item?;
            bytes += (k.as_ref().len() + v.as_ref().len()) as u64;
        }
    }
    Ok((exact, bytes))
}

/// An open database, as the benchmark sees it. All methods take `&self` and
/// are called from several threads at once.
pub trait Engine: Send + Sync {
    /// Inserts or overwrites one key.
    fn put(&self, key: &[u8], value: &[u8], mode: WriteMode) -> Result<()>;
    /// Deletes one key.
    fn delete(&self, key: &[u8], mode: WriteMode) -> Result<()>;
    /// Applies a batch atomically.
    fn write_batch(&self, ops: &[BatchOp<'_>], mode: WriteMode) -> Result<()>;
    /// Point lookup; the length of the value if the key exists.
    fn get(&self, key: &[u8]) -> Result<Option<usize>>;
    /// Looks up several keys; returns (keys found, bytes of keys and values found).
    fn multi_get(&self, keys: &[&[u8]]) -> Result<(u64, u64)> {
        let mut found = 0;
        let mut bytes = 0;
        for k in keys {
            if let Some(n) = self.get(k)? {
                found += 1;
                bytes += (k.len() + n) as u64;
            }
        }
        Ok((found, bytes))
    }
    /// Positions at the first key `>= key` and reads `nexts` entries from
    /// there (db_bench's seekrandom: the bytes of those entries are counted).
    /// Returns (whether the first key equals `key`, bytes of the entries read).
    fn seek(&self, key: &[u8], nexts: usize) -> Result<(bool, u64)>;
    /// Reads up to `limit` entries in key order from the first key (from the
    /// last, descending, if `reverse`), calling `each(key_len + value_len)`
    /// for every entry; returns the count.
    fn scan(&self, limit: u64, reverse: bool, each: &mut dyn FnMut(usize)) -> Result<u64>;
    /// Makes everything written durable (end of a write workload).
    fn flush(&self) -> Result<()> {
        Ok(())
    }
    /// Compacts the whole database (the `compact` pseudo-workload).
    fn compact(&self) -> Result<()> {
        Ok(())
    }
    /// Returns once the background flushes and compactions the writes so
    /// far made due have finished (the `waitforcompaction` pseudo-workload).
    fn wait_for_compaction(&self) -> Result<()> {
        Ok(())
    }
    /// Counters for the JSON report.
    fn stats(&self) -> Option<EngineStats> {
        None
    }
    /// Human-readable statistics (`--statistics`, the `stats` workload).
    fn report(&self) -> Option<String> {
        None
    }
}

/// Opens engines for the benchmark.
pub trait EngineFactory: Sync {
    /// Engine name for reports ("slsm", "fjall", ...).
    fn name(&self) -> &str;
    /// Engine-specific flags accepted without a warning.
    fn engine_flags(&self) -> &[&str] {
        &[]
    }
    /// Help lines describing the engine-specific flags.
    fn engine_help(&self) -> String {
        String::new()
    }
    /// How the engine is configured for `flags` (version, compression,
    /// cache, filters, ...): `(name, value)` lines for the header, as
    /// db_bench prints its options, and for the JSON report.
    fn describe(&self, _flags: &BenchFlags) -> Vec<(String, String)> {
        Vec::new()
    }
    /// True if `dir` holds a database of this engine (so the benchmark may
    /// delete it before a fresh fill). Anything not recognised is left alone.
    fn recognizes(&self, dir: &Path) -> bool;
    /// Opens (creating if missing) the database in `path`. In `memtable`
    /// mode nothing may touch the disk: the WAL is off and the data stays in
    /// memory. `fresh` says the runner just deleted the database (a fill
    /// starts from empty); in-memory engines must start empty too.
    fn open(
        &self,
        path: &Path,
        flags: &BenchFlags,
        memtable: bool,
        fresh: bool,
    ) -> Result<Arc<dyn Engine>>;
}

/// A trivial in-memory engine (a locked `BTreeMap`), for testing the harness.
#[derive(Default)]
pub struct MemEngine {
    map: RwLock<BTreeMap<Vec<u8>, Vec<u8>>>,
}

impl Engine for MemEngine {
    fn put(&self, key: &[u8], value: &[u8], _: WriteMode) -> Result<()> {
        self.map
            .write()
            .unwrap()
            .insert(key.to_vec(), value.to_vec());
        Ok(())
    }
    fn delete(&self, key: &[u8], _: WriteMode) -> Result<()> {
        self.map.write().unwrap().remove(key);
        Ok(())
    }
    fn write_batch(&self, ops: &[BatchOp<'_>], _: WriteMode) -> Result<()> {
        let mut m = self.map.write().unwrap();
        for op in ops {
            match *op {
                BatchOp::Put(k, v) => {
                    m.insert(k.to_vec(), v.to_vec());
                }
                BatchOp::Delete(k) => {
                    m.remove(k);
                }
            }
        }
        Ok(())
    }
    fn get(&self, key: &[u8]) -> Result<Option<usize>> {
        Ok(self.map.read().unwrap().get(key).map(Vec::len))
    }
    fn seek(&self, key: &[u8], nexts: usize) -> Result<(bool, u64)> {
        let m = self.map.read().unwrap();
        let entries = m.range(key.to_vec()..).map(Ok::<_, anyhow::Error>);
        seek_and_read(entries, key, nexts)
    }
    fn scan(&self, limit: u64, reverse: bool, each: &mut dyn FnMut(usize)) -> Result<u64> {
        let m = self.map.read().unwrap();
        let mut n = 0;
        for (k, v) in scan_order(m.iter(), reverse).take(limit as usize) {
            each(k.len() + v.len());
            n += 1;
        }
        Ok(n)
    }
}

/// The file [`MemFactory`] marks its (otherwise empty) directories with.
const MEM_ENGINE_MARKER: &str = "BTREEMAP-BENCH";

/// Factory for [`MemEngine`] (the data lives in memory only).
pub struct MemFactory;

impl EngineFactory for MemFactory {
    fn name(&self) -> &str {
        "btreemap"
    }
    fn recognizes(&self, dir: &Path) -> bool {
        dir.join(MEM_ENGINE_MARKER).exists()
    }
    fn open(
        &self,
        path: &Path,
        _: &BenchFlags,
        memtable: bool,
        _: bool,
    ) -> Result<Arc<dyn Engine>> {
        // Like a real engine, it leaves a database directory behind (empty
        // but for its marker) that the next run may delete.
        if !memtable {
            std::fs::create_dir_all(path)?;
            std::fs::write(path.join(MEM_ENGINE_MARKER), b"")?;
        }
        Ok(Arc::new(MemEngine::default()))
    }
}
