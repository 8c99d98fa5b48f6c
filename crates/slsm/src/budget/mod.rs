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
//! back to the system: `cache::pages`), so the budget holds at every write.
//! The cache's new room is then warmed with the run files' blocks
//! (`cache::warm_room`). Once quiet for [`IDLE_FLUSH`], the sealed runs
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
//! ## Admission: nothing is taken before the budget has room for it
//!
//! Every term but the block cache only grows through this component, under
//! one lock (`split`), and only once the cache has been shrunk by as much
//! (its capacity set, its blocks evicted): the accounted total is at most
//! the budget at every instant, and [`MemoryBudget::usage`] reads it under
//! the same lock, so no sample can fall between a charge and the shrink.
//! When the cache has nothing left to give, the one asking is refused and
//! does with less:
//!
//! * a memory run whose reserve cannot grow is sealed where it is (the
//!   writer goes on in a new run, or stalls, counted, for a flush);
//! * a write bigger than a whole run (`buffer::MemoryBuffer::make_room`)
//!   waits for room, and fails with `InvalidArgument` if even an empty
//!   cache could not hold it;
//! * a flush or merge ([`charge::JobCharge`]) starts with smaller write
//!   and read buffers, and cuts its output into several run files (with
//!   disjoint key ranges: one sorted run) when its filter's key hashes
//!   cannot grow; a merge that cannot even start a new file waits for room
//!   and, after [`MERGE_PATIENCE`], gives up and is retried later.
//!
//! Each of the two kinds of job has a floor set aside for it (like the
//! readahead share): what it holds up to its floor is never refused, so a
//! job can always finish a file, and a flush never waits.
//!
//! What may wait for what, and why nothing deadlocks: writers wait for
//! flushes (a full buffer) and for room (a write bigger than a run); a
//! merge waits for room. A flush waits for nothing: past its floor it cuts
//! files, and if even that is refused (a budget its files' indexes already
//! fill) it goes on and counts an overrun (`MemoryUsage::overruns`). Room
//! is given back by flushes and merges finishing or cutting a file, none
//! of which waits for a writer; a merge never waits for room only its own
//! end would free, because it gives up after a bounded wait and releases
//! everything it held. So every chain of waits ends at a flush or at a
//! merge's bounded wait.
//!
//! * **Owns**: the block cache and the split.
//! * **Thread safety**: any thread may call it; `rebalance` is called by the
//!   jobs after every change of the run files.

pub(crate) mod charge;
mod runs;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, MutexGuard};

use crate::memtable::MemRun;
use crate::options::Options;
use crate::sst::{BlockCache, CacheStats};
use crate::version::Version;

/// Where the memory goes right now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryUsage {
    /// `Options::memory_budget`.
    pub budget: u64,
    /// Bytes held by the memory runs (skiplists and their filters).
    pub memory_runs: u64,
    /// Bytes the memory runs may hold at most (with what writes bigger
    /// than a run were given beside it).
    pub memory_runs_limit: u64,
    /// Bytes of the indexes, filters and range tombstones of open run files.
    pub pinned: u64,
    /// The block cache's figures.
    pub cache: CacheStats,
    /// Bytes set aside for iterators' readahead, the log's buffer and the
    /// floors of a running flush and merge.
    pub buffers: u64,
    /// Bytes running flushes and merges hold past their floors (run files
    /// being written: filter hashes, index, write buffer; merge inputs
    /// being read; the indexes and filters of the files they wrote).
    pub building: u64,
    /// Times a flush, or a merge that had given up too often, went past
    /// the budget because it had no room at all (a budget the run files'
    /// indexes and filters already fill: see `budget`'s module docs).
    pub overruns: u64,
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

/// How long a merge waits for room before it gives up (and is retried).
pub(crate) const MERGE_PATIENCE: Duration = Duration::from_secs(1);

/// The terms of the split that change with jobs and run files, changed
/// and read together under one lock (see the [module docs](self)).
#[derive(Clone, Copy, Debug, Default)]
struct Split {
    /// Indexes and filters of the current version's run files.
    pinned: usize,
    /// What the running flush and merge hold, by [`JobKind`].
    held: [usize; 2],
    /// What memory runs holding one write bigger than a run were given
    /// past their reserve (`MemRun::oversize`, summed).
    oversize: usize,
}

/// The two kinds of job that run at once, each with a floor of its own
/// (`Options::flush_floor`, `Options::merge_floor`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum JobKind {
    /// Memory runs to a level-0 file: never waits for room.
    Flush = 0,
    /// Run files into the next level (or all into the deepest): may wait
    /// for room, for a bounded time.
    Merge = 1,
}

/// The split of the budget. See the [module docs](self).
pub(crate) struct MemoryBudget {
    /// `Options::memory_budget`, or what [`set_total`](Self::set_total)
    /// made it since.
    budget: AtomicUsize,
    /// `Options::memory_runs`.
    memory_runs: usize,
    /// The most one memory run may hold (`Options::effective_run_size`).
    run_ceiling: usize,
    /// Bytes reserved per memory run, at most `run_ceiling`: see the
    /// [module docs](self). Raised only under `split`.
    run_reserve: AtomicUsize,
    /// A run has been sealed full, so `run_reserve` is measured, not the
    /// whole share.
    run_reserve_measured: AtomicBool,
    /// Readahead and the log's buffer.
    buffers: usize,
    /// The floors of a running flush and merge, by [`JobKind`].
    floors: [usize; 2],
    fixed_cache: Option<usize>,
    cache: Arc<BlockCache>,
    split: Mutex<Split>,
    /// Signalled whenever something is given back.
    room: Condvar,
    /// Memory runs in the current version.
    live_runs: AtomicUsize,
    /// The reserve of the runs that do not exist is lent to the cache.
    lending: AtomicBool,
    /// When a run was last sealed (or the database opened).
    last_seal: Mutex<Instant>,
    /// The process's memory limit (`os_memory`), read at open.
    os_limit: Option<u64>,
    /// `Options::os_page_cache`.
    os_page_cache: Option<bool>,
    overruns: AtomicU64,
}

impl MemoryBudget {
    pub fn new(opts: &Options) -> MemoryBudget {
        let run_ceiling = opts.effective_run_size();
        let memory_runs_limit = run_ceiling * opts.memory_runs;
        let readahead = opts.readahead_bytes();
        let buffers = readahead + opts.log_buffer_bytes();
        let floors = [opts.flush_floor(), opts.merge_floor()];
        let cache_size = opts.block_cache_size.unwrap_or_else(|| {
            opts.memory_budget
                .saturating_sub(memory_runs_limit)
                .saturating_sub(buffers + floors[0] + floors[1])
        });
        let cache = BlockCache::new(cache_size);
        cache.readahead().set_limit(readahead);
        MemoryBudget {
            budget: AtomicUsize::new(opts.memory_budget),
            memory_runs: opts.memory_runs,
            run_ceiling,
            run_reserve: AtomicUsize::new(run_ceiling),
            run_reserve_measured: Default::default(),
            buffers,
            floors,
            fixed_cache: opts.block_cache_size,
            cache,
            split: Mutex::new(Split::default()),
            room: Condvar::new(),
            live_runs: AtomicUsize::new(1),
            lending: AtomicBool::new(false),
            last_seal: Mutex::new(Instant::now()),
            os_limit: crate::os_memory::memory_limit(),
            os_page_cache: opts.os_page_cache,
            overruns: AtomicU64::new(0),
        }
    }

    /// The budget now.
    fn total(&self) -> usize {
        self.budget.load(Ordering::Relaxed)
    }

    /// Makes the budget `bytes` from now on. Only the block cache follows
    /// (it shrinks or grows at once, as the cache's share of a budget
    /// given at open would): the memory runs' size, the buffers and the
    /// jobs' floors stay as they were made at open, so a budget below
    /// what those hold leaves the cache empty and the engine above the
    /// budget until it is raised (`MemoryUsage::total` says by how much).
    pub fn set_total(&self, bytes: usize) {
        let split = self.split.lock();
        self.budget.store(bytes, Ordering::Relaxed);
        self.resize_cache(&split);
        drop(split);
        self.room.notify_all();
    }

    /// The block cache every run file of the database reads through.
    pub fn cache(&self) -> &Arc<BlockCache> {
        &self.cache
    }

    /// Gives the block cache what the budget leaves once the run files of
    /// `version` have their indexes and filters in memory.
    pub fn rebalance(&self, version: &Version) {
        self.rebalance_releasing(version, None, &[]);
    }

    /// [`rebalance`](Self::rebalance), and in the same step the end of the
    /// job of kind `ended` whose files `version` now holds (its charge's
    /// `JobCharge::end`): what it held becomes the files' pinned bytes, and
    /// what the memory runs it `flushed` were given past their reserve
    /// comes back.
    pub fn rebalance_releasing(
        &self,
        version: &Version,
        ended: Option<JobKind>,
        flushed: &[Arc<MemRun>],
    ) {
        let pinned: usize = version
            .disk_runs_newest_first()
            .map(|r| r.file.pinned_bytes())
            .sum();
        {
            let mut split = self.split.lock();
            split.pinned = pinned;
            for run in flushed {
                split.oversize = split.oversize.saturating_sub(run.oversize());
            }
            self.live_runs.store(version.mems.len(), Ordering::Relaxed);
            if let Some(kind) = ended {
                split.held[kind as usize] = 0;
            }
            self.resize_cache(&split);
        }
        self.room.notify_all();
        let bypass = match self.os_page_cache {
            Some(keep) => !keep,
            None => {
                let run_bytes = version
                    .disk_runs_newest_first()
                    .map(|r| r.file.file_size())
                    .sum();
                page_cache_cannot_hold(run_bytes, self.total() as u64, self.os_limit)
            }
        };
        self.cache.set_bypass_os_cache(bypass);
    }

    /// What the running jobs hold past their floors.
    fn excess(&self, split: &Split) -> usize {
        split
            .held
            .iter()
            .zip(self.floors)
            .map(|(&held, floor)| held.saturating_sub(floor))
            .sum()
    }

    /// Everything but the block cache, with the memory runs' limit `runs`.
    fn committed(&self, split: &Split, runs: usize) -> usize {
        let excess = self.excess(split);
        runs + self.buffers
            + self.floors[0]
            + self.floors[1]
            + split.pinned
            + split.oversize
            + excess
    }

    /// What may still be taken from the block cache: the budget less
    /// everything else, counting the memory runs' reserve whole even while
    /// it is lent (a loan is taken back at the next seal without asking).
    fn room(&self, split: &Split) -> usize {
        let unlent = self.run_reserve.load(Ordering::Relaxed) * self.memory_runs;
        self.total().saturating_sub(self.committed(split, unlent))
    }

    /// Gives the block cache what the rest of the budget leaves (called
    /// under `split`, after every change of its terms).
    fn resize_cache(&self, split: &Split) {
        if self.fixed_cache.is_none() {
            let left = self
                .total()
                .saturating_sub(self.committed(split, self.memory_runs_limit()));
            self.cache.set_capacity(left);
        }
    }

    /// Where the memory goes, with the memory runs of the version `current`
    /// returns: both read under the split's lock, so every term is from one
    /// instant of the split, and the version is never older than the split
    /// (a job applies its edit before it gives its charge back).
    pub fn usage(&self, current: impl FnOnce() -> Arc<Version>) -> MemoryUsage {
        let split: MutexGuard<'_, Split> = self.split.lock();
        let version = current();
        let excess = self.excess(&split);
        MemoryUsage {
            budget: self.total() as u64,
            memory_runs: version.mems.iter().map(|m| m.memory_usage() as u64).sum(),
            memory_runs_limit: (self.memory_runs_limit() + split.oversize) as u64,
            pinned: split.pinned as u64,
            cache: self.cache.stats(),
            buffers: (self.buffers + self.floors[0] + self.floors[1]) as u64,
            building: excess as u64,
            overruns: self.overruns.load(Ordering::Relaxed),
        }
    }
}

/// True if what the memory limit leaves beside the engine's budget is less
/// than the run files: the page cache cannot keep them (see the [module
/// docs](self)). No known limit: it can.
fn page_cache_cannot_hold(run_bytes: u64, budget: u64, os_limit: Option<u64>) -> bool {
    os_limit.is_some_and(|limit| run_bytes > limit.saturating_sub(budget))
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
}
