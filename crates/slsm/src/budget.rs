//! The memory budget: one number, `Options::memory_budget`, bounds what
//! the engine holds, and this component splits it and keeps the split as
//! run files come and go.
//!
//! * up to a quarter for the memory runs (`Options::effective_run_size`
//!   seals each run at its share; writers stall rather than let runs grow
//!   past it). A run is also sealed at `Options::run_entries` entries, which
//!   small entries reach long before the bytes (24,576 entries of 16 + 100
//!   bytes take ~4.5 MiB, against an 8 MiB share in a 256 MiB budget), so
//!   the reserve is what the runs show they need: the whole share until a
//!   run is first sealed full, then the largest run seen (plus a sixteenth),
//!   raised before any run would outgrow it and never lowered again (see
//!   [`MemoryBudget::make_room_in_run`]). The block cache gets the rest: in
//!   a 256 MiB budget with such entries, ~21 MiB more;
//! * set aside for buffers: a sixty-fourth for the readahead windows of
//!   scanning iterators (all of them together; past that, an iterator
//!   reads block by block: 2 MiB in the default budget, eight windows at
//!   their largest, 256 KiB), and a sixteenth, at most 1 MiB, for the
//!   write-ahead log's buffer (what it keeps between writes; a bigger
//!   group is encoded in a buffer freed after its write);
//! * the indexes and Bloom filters of the open run files, which stay in
//!   memory (pinned: a lookup never reads them from the device);
//! * what a flush or merge holds while it runs: the run file being built
//!   (the key hashes its Bloom filter is made from, 8 bytes per key, its
//!   index, its write buffer: a sixty-fourth of the budget, at most 1 MiB)
//!   and a merge's inputs (a chunk each, a 512th, at most 256 KiB):
//!   charged as it grows, released when the job is done (RocksDB
//!   charges filter construction to its block cache the same way). These
//!   were part of a fixed sixteenth set aside for buffers; charged while
//!   they exist, the cache has them whenever no job runs (1M keys of 16 +
//!   100 bytes, at the default budget: 5 MiB more cache, the last ~4% of
//!   the data's blocks);
//! * the block cache: what is left, recomputed whenever the set of run files
//!   or the charge of files being built changes (or a fixed
//!   `Options::block_cache_size`).
//!
//! The reserve of memory runs that do not exist is lent to the block cache
//! once no run has been sealed for [`QUIET`] (RocksDB's write buffer
//! manager charges memtables to its cache in the same spirit): a database
//! that is only read gets the budget for its cache. The next seal takes it
//! back before the new run takes a write (the cache shrinks, its pages go
//! back to the system: `run::pages`), so the budget holds at every write.
//! The cache's new room is then warmed with the run files' blocks
//! (`run::warm_room`). Once quiet for [`IDLE_FLUSH`], the sealed runs
//! waiting for company are flushed as well (`Background::flush_loop`):
//! their reserve joins the loan, and a lookup no longer searches their
//! skiplists. Each holds an entry in ~30%
//! more memory than the block cache does (1M keys of 16 + 100 bytes at
//! the default budget: three runs of 67K entries, 11 MB), and a skiplist
//! search misses the CPU's cache at every level where a cached block is
//! found through its fences in two or three misses.
//! Lending waits for quiet because while writes go on the runs come and go
//! every few milliseconds, and a cache that grew and shrank with them would
//! evict, give back and fault in memory on every seal. A tenth of a second
//! is many seals of a busy writer, and short beside the reads that follow
//! a load: with a second, a Python program reading 1M keys right after
//! writing them did most of its first 200K `get`s on the smaller cache
//! (1.75 against 1.40 us a lookup; 100 ms: 1.40). Flushing waits longer:
//! a writer sealing a run every quarter of a second or more gets level-0
//! files of one run instead of several, one more rewrite of its data. (Before blocks
//! lived in pages the engine hands back itself, lending was measured and
//! not landed: glibc kept the pages of the 4 KiB blocks the cache gave
//! back while the runs took fresh ones, and the peak resident memory of
//! the default 5M set rose from 165-184 to 185-251 MB.) Following what a
//! full run holds does not churn either: the reserve drops once, when the
//! first run is sealed full, and after that only grows, when entries do.
//!
//! The operating system's page cache sits outside the budget but inside
//! a container's memory limit. Where that limit (or the machine's memory)
//! less the budget cannot hold the run files anyway, blocks are read
//! without leaving their pages behind (see `fs::pread`): they would only
//! make the kernel reclaim on every read (measured, 5M keys in 256 MiB:
//! random reads 58-60 -> 51-53 us at the median, the cgroup's peak 150 ->
//! 98 MiB). Where it can hold them, the page cache stays a second cache
//! behind the block cache, as it is for RocksDB and fjall by default.
//!
//! * **Owns**: the block cache and the split.
//! * **Thread safety**: any thread may call it; `rebalance` is called by the
//!   jobs after every change of the run files.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    /// Bytes set aside for iterators' readahead and the log's buffer.
    pub buffers: u64,
    /// Bytes held by running flushes and merges: run files being written
    /// (filter hashes, index, write buffer) and merge inputs being read.
    pub building: u64,
}

impl MemoryUsage {
    /// Everything the engine accounts for.
    pub fn total(&self) -> u64 {
        self.memory_runs + self.pinned + self.cache.usage + self.buffers + self.building
    }
}

/// How long no memory run must have been sealed before the reserve of the
/// runs that do not exist is lent to the block cache.
pub(crate) const QUIET: Duration = Duration::from_millis(100);

/// How long no memory run must have been sealed before the sealed runs are
/// flushed without waiting for company (see the [module docs](self)).
pub(crate) const IDLE_FLUSH: Duration = Duration::from_millis(250);

/// The split of the budget. See the [module docs](self).
pub(crate) struct MemoryBudget {
    budget: usize,
    /// `Options::memory_runs`.
    memory_runs: usize,
    /// The most one memory run may hold (`Options::effective_run_size`).
    run_ceiling: usize,
    /// Bytes reserved per memory run, at most `run_ceiling`: see the
    /// [module docs](self).
    run_reserve: AtomicUsize,
    /// A run has been sealed full, so `run_reserve` is measured, not the
    /// whole share.
    run_reserve_measured: AtomicBool,
    buffers: usize,
    fixed_cache: Option<usize>,
    cache: Arc<BlockCache>,
    pinned: AtomicUsize,
    building: AtomicUsize,
    /// Held while the cache's capacity is computed and set.
    resizing: parking_lot::Mutex<()>,
    /// Memory runs in the current version.
    live_runs: AtomicUsize,
    /// The reserve of the runs that do not exist is lent to the cache.
    lending: AtomicBool,
    /// When a run was last sealed (or the database opened).
    last_seal: parking_lot::Mutex<Instant>,
    /// The process's memory limit (`os_memory`), read at open.
    os_limit: Option<u64>,
    /// `Options::os_page_cache`.
    os_page_cache: Option<bool>,
}

impl MemoryBudget {
    pub fn new(opts: &Options) -> MemoryBudget {
        let run_ceiling = opts.effective_run_size();
        let memory_runs_limit = run_ceiling * opts.memory_runs;
        let readahead = opts.readahead_bytes();
        let buffers = readahead + opts.log_buffer_bytes();
        let cache_size = opts.block_cache_size.unwrap_or_else(|| {
            opts.memory_budget
                .saturating_sub(memory_runs_limit)
                .saturating_sub(buffers)
        });
        let cache = BlockCache::new(cache_size);
        cache.set_readahead_limit(readahead);
        MemoryBudget {
            budget: opts.memory_budget,
            memory_runs: opts.memory_runs,
            run_ceiling,
            run_reserve: AtomicUsize::new(run_ceiling),
            run_reserve_measured: Default::default(),
            buffers,
            fixed_cache: opts.block_cache_size,
            cache,
            pinned: AtomicUsize::new(0),
            building: AtomicUsize::new(0),
            resizing: Default::default(),
            live_runs: AtomicUsize::new(1),
            lending: AtomicBool::new(false),
            last_seal: parking_lot::Mutex::new(Instant::now()),
            os_limit: crate::os_memory::memory_limit(),
            os_page_cache: opts.os_page_cache,
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
        self.live_runs.store(version.mems.len(), Ordering::Relaxed);
        self.resize_cache();
        let bypass = match self.os_page_cache {
            Some(keep) => !keep,
            None => {
                let run_bytes = version
                    .disk_runs_newest_first()
                    .map(|r| r.file.file_size())
                    .sum();
                page_cache_cannot_hold(run_bytes, self.budget as u64, self.os_limit)
            }
        };
        self.cache.set_bypass_os_cache(bypass);
    }

    /// Gives the block cache what the rest of the budget leaves.
    fn resize_cache(&self) {
        if self.fixed_cache.is_none() {
            // The flush, the merge and the writers' leader resize at any
            // time: under the lock the last capacity set is computed from
            // the last figures, never a stale larger one.
            let _one_at_a_time = self.resizing.lock();
            let left = self
                .budget
                .saturating_sub(self.memory_runs_limit())
                .saturating_sub(self.buffers)
                .saturating_sub(self.pinned.load(Ordering::Relaxed))
                .saturating_sub(self.building.load(Ordering::Relaxed));
            self.cache.set_capacity(left);
        }
    }

    /// Bytes the memory runs may hold together now: the reserve of every
    /// run there may be, or, while it is lent, of the runs there are.
    fn memory_runs_limit(&self) -> usize {
        let runs = match self.lending.load(Ordering::Relaxed) {
            true => self
                .live_runs
                .load(Ordering::Relaxed)
                .clamp(1, self.memory_runs),
            false => self.memory_runs,
        };
        self.run_reserve.load(Ordering::Relaxed) * runs
    }

    /// A memory run was sealed and a new one started (`version` has it):
    /// the reserve lent to the cache comes back now, before the new run
    /// takes its first write.
    pub fn note_seal(&self, version: &Version) {
        let was_lending = {
            let mut last_seal = self.last_seal.lock();
            *last_seal = Instant::now();
            self.live_runs.store(version.mems.len(), Ordering::Relaxed);
            self.lending.swap(false, Ordering::Relaxed)
        };
        if was_lending {
            self.resize_cache();
        }
    }

    /// Called now and then by the background threads with the current
    /// version: lends the reserve of the runs that do not exist to the
    /// cache once no run was sealed for [`QUIET`]. (Under the seal's lock:
    /// a seal after `version` was loaded either makes it not quiet or
    /// comes after, and takes the loan back.) True if the loan started
    /// now: the cache has new room.
    pub fn tick(&self, version: &Version) -> bool {
        if self.fixed_cache.is_some() || self.lending.load(Ordering::Relaxed) {
            return false;
        }
        {
            let last_seal = self.last_seal.lock();
            if last_seal.elapsed() < QUIET {
                return false;
            }
            self.live_runs.store(version.mems.len(), Ordering::Relaxed);
            self.lending.store(true, Ordering::Relaxed);
        }
        self.resize_cache();
        true
    }

    /// Whether the sealed memory runs are due for a flush even if fewer
    /// than a flush takes: the reserve is lent and no run was sealed for
    /// [`IDLE_FLUSH`] (see `Background::flush_loop`).
    pub fn idle_flush_due(&self) -> bool {
        self.lending.load(Ordering::Relaxed) && self.last_seal.lock().elapsed() >= IDLE_FLUSH
    }

    /// Called before a write that leaves the active memory run holding
    /// `bytes`: raises the reserve per run (shrinking the block cache
    /// first) if the run would outgrow it. Within the run's ceiling, which
    /// the caller keeps by sealing, the budget then holds at every write.
    #[inline]
    pub fn make_room_in_run(&self, bytes: usize) {
        if bytes > self.run_reserve.load(Ordering::Relaxed) {
            self.raise_run_reserve(bytes);
        }
    }

    #[cold]
    fn raise_run_reserve(&self, bytes: usize) {
        let wanted = with_margin(bytes).min(self.run_ceiling);
        let before = self.run_reserve.fetch_max(wanted, Ordering::Relaxed);
        if wanted > before {
            self.resize_cache();
        }
    }

    /// A memory run was sealed because it was full: the first time, the
    /// reserve per run drops from the whole share to what the memory runs
    /// of `version` hold at most (the runs' sizes are now measured).
    pub fn note_full_run(&self, version: &Version) {
        if self.run_reserve_measured.swap(true, Ordering::Relaxed) {
            return;
        }
        let largest = version
            .mems
            .iter()
            .map(|m| m.usage_after(0))
            .max()
            .unwrap_or(0);
        let measured = with_margin(largest).min(self.run_ceiling);
        // Only ever lowers it: `largest` covers every run there is.
        self.run_reserve.fetch_min(measured, Ordering::Relaxed);
        self.resize_cache();
    }

    /// A charge for the memory of one run file being built: `set(bytes)`
    /// says what it holds now, and dropping the charge releases it.
    pub fn build_charge(self: &Arc<Self>) -> BuildCharge {
        BuildCharge {
            budget: Arc::clone(self),
            bytes: 0,
        }
    }

    /// Where the memory goes, with the memory runs of `version`.
    pub fn usage(&self, version: &Version) -> MemoryUsage {
        MemoryUsage {
            budget: self.budget as u64,
            memory_runs: version.mems.iter().map(|m| m.memory_usage() as u64).sum(),
            memory_runs_limit: self.memory_runs_limit() as u64,
            pinned: self.pinned.load(Ordering::Relaxed) as u64,
            cache: self.cache.stats(),
            buffers: self.buffers as u64,
            building: self.building.load(Ordering::Relaxed) as u64,
        }
    }
}

/// `bytes` and a sixteenth more: runs sealed at the same entry count differ
/// a little in size with their keys and values.
fn with_margin(bytes: usize) -> usize {
    bytes.saturating_add(bytes / 16)
}

/// True if what the memory limit leaves beside the engine's budget is less
/// than the run files: the page cache cannot keep them (see the [module
/// docs](self)). No known limit: it can.
fn page_cache_cannot_hold(run_bytes: u64, budget: u64, os_limit: Option<u64>) -> bool {
    os_limit.is_some_and(|limit| run_bytes > limit.saturating_sub(budget))
}

/// What one run file being built holds, charged to the budget (see
/// [`MemoryBudget::build_charge`]).
pub(crate) struct BuildCharge {
    budget: Arc<MemoryBudget>,
    bytes: usize,
}

impl BuildCharge {
    /// The file being built holds `bytes` now.
    pub fn set(&mut self, bytes: usize) {
        if bytes == self.bytes {
            return;
        }
        let building = &self.budget.building;
        if bytes > self.bytes {
            building.fetch_add(bytes - self.bytes, Ordering::Relaxed);
        } else {
            building.fetch_sub(self.bytes - bytes, Ordering::Relaxed);
        }
        self.bytes = bytes;
        self.budget.resize_cache();
    }
}

impl Drop for BuildCharge {
    fn drop(&mut self) {
        self.set(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_cache_is_bypassed_only_when_it_cannot_hold_the_files() {
        let mib = |n: u64| n << 20;
        assert!(page_cache_cannot_hold(mib(560), mib(128), Some(mib(256))));
        assert!(!page_cache_cannot_hold(mib(100), mib(128), Some(mib(256))));
        assert!(!page_cache_cannot_hold(
            mib(560),
            mib(128),
            Some(mib(24 << 10))
        ));
        assert!(page_cache_cannot_hold(1, mib(128), Some(mib(64))));
        assert!(!page_cache_cannot_hold(mib(1 << 20), mib(128), None));
    }

    #[test]
    fn a_build_charge_shrinks_the_cache_until_dropped() {
        let opts = Options::default();
        let budget = Arc::new(MemoryBudget::new(&opts));
        let full = budget.cache().stats().capacity;
        let mut charge = budget.build_charge();
        charge.set(10 << 20);
        assert_eq!(budget.cache().stats().capacity, full - (10 << 20));
        let mut other = budget.build_charge();
        other.set(1 << 20);
        charge.set(4 << 20);
        assert_eq!(budget.cache().stats().capacity, full - (5 << 20));
        assert_eq!(budget.building.load(Ordering::Relaxed), 5 << 20);
        drop(charge);
        drop(other);
        assert_eq!(budget.cache().stats().capacity, full);
        assert_eq!(budget.building.load(Ordering::Relaxed), 0);
    }
}
