//! The bare `slsm-skiplist` behind the benchmark's [`Engine`] interface.

use crate::bench::{
    scan_order, seek_and_read, BatchOp, BenchFlags, Engine, EngineFactory, WriteMode,
};
use anyhow::Result;
use std::path::Path;
use std::sync::Arc;

/// The bare `slsm-skiplist` (no WAL, no runs, no merges): the in-memory
/// path under the engine, for the goleveldb memdb comparison. Inserting a
/// key that exists keeps the first value (the skiplist has no overwrite);
/// deletes are not supported.
pub struct SkiplistEngine {
    list: slsm_skiplist::SkipList,
}

impl Engine for SkiplistEngine {
    fn put(&self, key: &[u8], value: &[u8], _: WriteMode) -> Result<()> {
        self.list
            .try_insert(key, value)
            .map_err(|e| anyhow::anyhow!("skiplist insert: {e:?}"))?;
        Ok(())
    }

    fn delete(&self, _: &[u8], _: WriteMode) -> Result<()> {
        anyhow::bail!("the skiplist engine does not support deletes")
    }

    fn write_batch(&self, ops: &[BatchOp<'_>], mode: WriteMode) -> Result<()> {
        for op in ops {
            match *op {
                BatchOp::Put(k, v) => self.put(k, v, mode)?,
                BatchOp::Delete(k) => self.delete(k, mode)?,
            }
        }
        Ok(())
    }

    fn get(&self, key: &[u8]) -> Result<Option<usize>> {
        Ok(self.list.get(key).map(<[u8]>::len))
    }

    fn seek(&self, key: &[u8], nexts: usize) -> Result<(bool, u64)> {
        let entries = self.list.range(key..).map(Ok::<_, anyhow::Error>);
        seek_and_read(entries, key, nexts)
    }

    fn scan(&self, limit: u64, reverse: bool, each: &mut dyn FnMut(usize)) -> Result<u64> {
        let mut n = 0;
        let limit = usize::try_from(limit).unwrap_or(usize::MAX);
        for (k, v) in scan_order(self.list.iter(), reverse).take(limit) {
            each(k.len() + v.len());
            n += 1;
        }
        Ok(n)
    }

    fn report(&self) -> Option<String> {
        Some(format!(
            "skiplist: {} entries, {:.1} MiB",
            self.list.len(),
            self.list.memory_usage() as f64 / 1048576.0
        ))
    }
}

/// Opens an empty [`SkiplistEngine`] (nothing is stored on disk).
pub struct SkiplistFactory;

impl EngineFactory for SkiplistFactory {
    fn name(&self) -> &str {
        "slsm-skiplist"
    }

    fn recognizes(&self, _: &Path) -> bool {
        false // it never creates a directory
    }

    fn open(&self, _: &Path, _: &BenchFlags, _: bool, _: bool) -> Result<Arc<dyn Engine>> {
        Ok(Arc::new(SkiplistEngine {
            list: slsm_skiplist::SkipList::new(),
        }))
    }
}
