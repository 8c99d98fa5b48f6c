//! The memory budget: one number, `Options::memory_budget`, bounds what
//! the engine holds, and this component splits it and keeps the split as
//! run files come and go.
//!
//! * a quarter for the memory runs (`Options::effective_run_size` seals
//!   each run at its share; writers stall rather than let runs grow past
//!   it);
//! * a sixteenth for the buffers of merges (chunked reads of every input,
//!   the output's write buffer) and of the write-ahead log;
//! * the indexes and Bloom filters of the open run files, which stay in
//!   memory (pinned: a lookup never reads them from the device);
//! * the block cache: what is left, recomputed whenever the set of run files
//!   changes (or a fixed `Options::block_cache_size`).
//!
//! * **Owns**: the block cache and the split.
//! * **Thread safety**: any thread may call it; `rebalance` is called by the
//!   jobs after every change of the run files.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::options::Options;
use crate::run::{BlockCache, CacheStats};
use crate::version::Version;

/// Where the memory goes right now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryUsage {
    /// `Options::memory_budget`.
    pub budget: u64,
    /// Bytes held by the memory runs (skiplists and their filters).
    pub memory_runs: u64,
    /// Bytes the memory runs may hold at most.
    pub memory_runs_limit: u64,
    /// Bytes of the indexes, filters and range tombstones of open run files.
    pub pinned: u64,
    /// The block cache's figures.
    pub cache: CacheStats,
    /// Bytes set aside for merge and log buffers.
    pub buffers: u64,
}

impl MemoryUsage {
    /// Everything the engine accounts for.
    pub fn total(&self) -> u64 {
        self.memory_runs + self.pinned + self.cache.usage + self.buffers
    }
}

/// The split of the budget. See the [module docs](self).
pub(crate) struct MemoryBudget {
    budget: usize,
    memory_runs_limit: usize,
    buffers: usize,
    fixed_cache: Option<usize>,
    cache: Arc<BlockCache>,
    pinned: AtomicUsize,
}

impl MemoryBudget {
    pub fn new(opts: &Options) -> MemoryBudget {
        let memory_runs_limit = opts.effective_run_size() * opts.memory_runs;
        let buffers = opts.memory_budget / 16;
        let cache_size = opts.block_cache_size.unwrap_or_else(|| {
            opts.memory_budget
                .saturating_sub(memory_runs_limit)
                .saturating_sub(buffers)
        });
        MemoryBudget {
            budget: opts.memory_budget,
            memory_runs_limit,
            buffers,
            fixed_cache: opts.block_cache_size,
            cache: BlockCache::new(cache_size),
            pinned: AtomicUsize::new(0),
        }
    }

    /// The block cache every run file of the database reads through.
    pub fn cache(&self) -> &Arc<BlockCache> {
        &self.cache
    }

    /// Gives the block cache what the budget leaves once the run files of
    /// `version` have their indexes and filters in memory.
    pub fn rebalance(&self, version: &Version) {
        let pinned: usize = version
            .disk_runs_newest_first()
            .map(|r| r.file.pinned_bytes())
            .sum();
        self.pinned.store(pinned, Ordering::Relaxed);
        if self.fixed_cache.is_none() {
            let left = self
                .budget
                .saturating_sub(self.memory_runs_limit)
                .saturating_sub(self.buffers)
                .saturating_sub(pinned);
            self.cache.set_capacity(left);
        }
    }

    /// Where the memory goes, with the memory runs of `version`.
    pub fn usage(&self, version: &Version) -> MemoryUsage {
        MemoryUsage {
            budget: self.budget as u64,
            memory_runs: version.mems.iter().map(|m| m.memory_usage() as u64).sum(),
            memory_runs_limit: self.memory_runs_limit as u64,
            pinned: self.pinned.load(Ordering::Relaxed) as u64,
            cache: self.cache.stats(),
            buffers: self.buffers as u64,
        }
    }
}
