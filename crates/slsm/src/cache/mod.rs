//! The block cache and what feeds it: [`BlockCache`] keeps the blocks of
//! open files in memory, decompressed and verified, within a budget of
//! bytes, in pages of the process's pool (`pages`); `fetch` reads a batch's
//! blocks concurrently, `warm` fills a new file's blocks into room nobody
//! uses, `chunks` reads a file front to back outside the cache. None of it
//! knows the files' format: the cache holds any [`Cacheable`] block by file
//! and block number, and reads through a [`BlockSource`] and its one door,
//! `BlockSource::block`, with a [`Want`] (the run-file reader, `sst`, is
//! the source).
//!
//! Hand-written rather than `quick_cache` (which fjall uses, and this
//! engine used until stop 49) because a hit here reads no hash table: each
//! open run file has a slot per data block ([`CachedBlocks`]), and a
//! lookup that has found its block in the file's fence pointers loads that
//! slot, a line it has already started loading during the fence search.
//! `quick_cache` took three dependent cache misses (its control bytes, its
//! entry, the block's reference count) before the block's first byte, 34%
//! of a cached `readrandom`; a slot in front of it made cached lookups
//! ~20% faster (1M keys all cached, alternating runs). A hit takes no lock
//! and writes nothing shared but a saturating hit count in the block, read
//! by the eviction policy.
//!
//! What stays and what goes is S3-FIFO ([`shard`]), which is scan-resistant:
//! a block read once by a scan or a merge passes through the small queue
//! and leaves without touching the blocks lookups keep coming back to. The
//! cache is sharded by block (each shard a mutex, a share of the capacity
//! and its queues), and only misses take a shard's lock. A hit is counted
//! in the block's slot (16 bytes: the block and a hit count), which the
//! lookup has just read.
//!
//! Every block is charged its bytes plus [`ENTRY_OVERHEAD`], so the charge
//! is what the cache costs in memory (a block in a page of the pool,
//! `pages`, is charged the whole page); a file's slots (8 bytes per block)
//! are charged with the file's index (16 bytes per block). A block handed
//! out stays valid for as long as its borrower holds it, even if the cache evicts it meanwhile
//! (a slot's block is released by the epoch collector once no reader can
//! be using it: [`slot`]).
//!
//! * **Owns**: the blocks (through the slots), the queues, the figures.
//! * **Thread safety**: any number of threads; hits lock nothing.

mod block;
pub(crate) mod chunks;
mod fetch;
mod file;
pub(crate) mod pages;
mod shard;
mod slot;
mod source;
#[cfg(test)]
mod test_block;
#[cfg(test)]
mod tests;
mod warm;

pub(crate) use block::{Admission, Cacheable, ENTRY_OVERHEAD};
pub(crate) use chunks::{ChunkReader, Readahead, CHUNK};
#[cfg(test)]
pub(crate) use fetch::read_directly;
pub(crate) use fetch::{fetch, fetch_wanted};
pub(crate) use file::CachedBlocks;
pub(crate) use pages::PAGE;
pub(crate) use source::{BlockSource, Want};
pub(crate) use warm::{warm_after, warm_room};

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crossbeam_epoch::Guard;
use parking_lot::Mutex;

use self::shard::{NewBlock, Shard};
use self::slot::{BlockSlot, PREFETCHED};
use crate::counter::StripedCounter;

/// Capacity per shard below which the cache has fewer shards (a shard
/// must hold many blocks for its queues to work).
const MIN_SHARD_BYTES: usize = 1 << 20;
const MAX_SHARDS: usize = 16;

/// What the cache holds and how it did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Bytes the cache may hold.
    pub capacity: u64,
    /// Bytes it holds (blocks and overhead).
    pub usage: u64,
    /// Blocks it holds.
    pub entries: u64,
    /// Lookups it answered.
    pub hits: u64,
    /// Lookups it could not.
    pub misses: u64,
    /// Bytes of blocks read from files because the cache lacked them.
    pub bytes_read: u64,
    /// Blocks are read without leaving them in the operating system's page
    /// cache (the memory limit cannot hold the files; see `budget`).
    pub bypasses_os_cache: bool,
    /// Bytes the readahead windows of scanning iterators hold (not blocks
    /// of the cache: within the readahead allowance, `Readahead`).
    pub readahead: u64,
}

/// A cache of data blocks shared by every file of a database. See the
/// [module docs](self).
pub struct BlockCache<B> {
    shards: Box<[Mutex<Shard<B>>]>,
    capacity: AtomicU64,
    hits: StripedCounter,
    misses: StripedCounter,
    bytes_read: AtomicU64,
    bypass_os_cache: AtomicBool,
    /// What iterators' readahead windows may hold together (`chunks`).
    readahead: Arc<Readahead>,
}

impl<B> Drop for BlockCache<B> {
    fn drop(&mut self) {
        let capacity = self.capacity.load(Ordering::Relaxed);
        // The blocks go with the shards, after this: their pages are
        // given back then, and returned to the system as they come.
        pages::adjust_allowance(-(capacity as i64));
    }
}

impl<B: Cacheable> std::fmt::Debug for BlockCache<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockCache")
            .field("stats", &self.stats())
            .finish()
    }
}

impl<B: Cacheable> BlockCache<B> {
    /// A cache of at most `capacity` bytes (0: nothing is cached).
    pub fn new(capacity: usize) -> Arc<BlockCache<B>> {
        let n = (capacity / MIN_SHARD_BYTES).clamp(1, MAX_SHARDS);
        let n = 1 << n.ilog2();
        let cache = BlockCache {
            shards: (0..n).map(|_| Mutex::new(Shard::new(0))).collect(),
            capacity: AtomicU64::new(0),
            hits: StripedCounter::default(),
            misses: StripedCounter::default(),
            bytes_read: AtomicU64::new(0),
            bypass_os_cache: AtomicBool::new(false),
            readahead: Arc::new(Readahead::new((capacity / 16).max(1 << 20))),
        };
        cache.set_capacity(capacity);
        Arc::new(cache)
    }

    /// The slots of a newly opened file of `blocks` data blocks.
    pub(crate) fn register(&self, blocks: usize) -> Arc<CachedBlocks<B>> {
        Arc::new(CachedBlocks::new(blocks))
    }

    fn shard(&self, key: u64) -> &Mutex<Shard<B>> {
        &self.shards[(key >> 32) as usize & (self.shards.len() - 1)]
    }

    /// Block `index` of `file`, counted as a hit or a miss.
    #[inline]
    pub(crate) fn get(&self, file: &CachedBlocks<B>, index: usize) -> Option<Arc<B>> {
        let slot = file.slots.get(index)?;
        let block = slot.get(&crossbeam_epoch::pin());
        self.count(slot, block.is_some());
        block
    }

    /// [`BlockCache::get`] borrowed for as long as `guard` is pinned: no
    /// reference count taken. The block's lines start loading together.
    #[inline]
    pub(crate) fn get_pinned<'g>(
        &self,
        file: &CachedBlocks<B>,
        index: usize,
        guard: &'g Guard,
    ) -> Option<&'g B> {
        let slot = file.slots.get(index)?;
        let block = slot.peek(guard);
        if let Some(block) = block {
            block.prefetch_header();
        }
        self.count(slot, block.is_some());
        block
    }

    /// Counts `n` misses of blocks a reader then read itself.
    pub(crate) fn count_misses(&self, n: u64) {
        if n > 0 {
            self.misses.add(n);
        }
    }

    #[inline]
    fn count(&self, slot: &BlockSlot<B>, hit: bool) {
        match hit {
            true => {
                slot.note_hit();
                self.hits.add(1);
            }
            false => self.misses.add(1),
        }
    }

    /// Blocks `(file, index)` of a batch, each counted as a hit or a miss:
    /// every cached block's first line starts loading before any reference
    /// is taken, so the batch waits for one memory latency, not one per
    /// block.
    pub(crate) fn get_many<'g>(
        &self,
        blocks: &[(&CachedBlocks<B>, usize)],
        guard: &'g Guard,
    ) -> Vec<Option<&'g B>> {
        for &(file, index) in blocks {
            if let Some(block) = file.slots.get(index).and_then(|s| s.peek(guard)) {
                block.prefetch_header();
            }
        }
        // Counted once for the batch: a locked add per block is a fence
        // that keeps the next block's misses from starting early.
        let mut hits = 0;
        let found: Vec<_> = blocks
            .iter()
            .map(|&(file, index)| {
                let slot = file.slots.get(index)?;
                let block = slot.peek(guard);
                if block.is_some() {
                    slot.note_hit();
                    hits += 1;
                }
                block
            })
            .collect();
        self.hits.add(hits);
        self.misses.add(blocks.len() as u64 - hits);
        found
    }

    /// Whether block `index` of `file` is cached (not counted).
    pub(crate) fn contains(&self, file: &CachedBlocks<B>, index: usize) -> bool {
        file.slots.get(index).is_some_and(|s| !s.is_empty())
    }

    /// Caches `block` as block `index` of `file` and returns it, or the
    /// block another reader cached there first.
    pub(crate) fn insert(
        &self,
        file: &Arc<CachedBlocks<B>>,
        index: usize,
        block: Arc<B>,
        how: Admission,
    ) -> Arc<B> {
        if index >= file.slots.len() {
            return block;
        }
        let key = file.key(index);
        let mut shard = self.shard(key).lock();
        if file.is_forgotten() {
            return block;
        }
        if let Some(cached) = file.slot(index).get(&crossbeam_epoch::pin()) {
            return cached;
        }
        let weight = block.charge() as u64 + ENTRY_OVERHEAD;
        let hits = match how {
            Admission::Read => 0,
            Admission::Ahead | Admission::Inherited => PREFETCHED,
        };
        let new = NewBlock {
            block: Arc::clone(&block),
            hits,
            weight,
            key,
            main: how == Admission::Inherited,
        };
        shard.insert(file, index, new);
        block
    }

    /// Bytes the cache could take before it evicts anything.
    pub(crate) fn room(&self) -> u64 {
        let n = self.shards.len() as u64;
        let per_shard = self.capacity.load(Ordering::Relaxed) / n;
        self.shards
            .iter()
            .map(|s| per_shard.saturating_sub(s.lock().usage()))
            .sum()
    }

    /// Drops every cached block of `file` (its file is gone: nobody can ask
    /// for them again, and left in place they would hold capacity until
    /// the eviction reached them), and caches nothing more for it.
    pub(crate) fn forget(&self, file: &CachedBlocks<B>) {
        file.forgotten.store(true, Ordering::Release);
        for index in 0..file.slots.len() {
            if file.slot(index).is_empty() {
                continue;
            }
            let mut shard = self.shard(file.key(index)).lock();
            if let Some(len) = file.slot(index).empty() {
                shard.forgot(len as u64 + ENTRY_OVERHEAD);
            }
        }
    }

    /// Counts `bytes` read from a file for a block the cache lacked.
    pub(crate) fn note_read(&self, bytes: usize) {
        self.bytes_read.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// Whether the blocks this cache lacks are read without leaving their
    /// pages in the operating system's page cache.
    pub(crate) fn bypasses_os_cache(&self) -> bool {
        self.bypass_os_cache.load(Ordering::Relaxed)
    }

    /// Sets [`bypasses_os_cache`](Self::bypasses_os_cache).
    pub(crate) fn set_bypass_os_cache(&self, bypass: bool) {
        self.bypass_os_cache.store(bypass, Ordering::Relaxed);
    }

    /// The allowance scanning iterators' readahead windows share (part
    /// of the budget's buffer share).
    pub(crate) fn readahead(&self) -> &Arc<Readahead> {
        &self.readahead
    }

    /// Changes the capacity (evicting what no longer fits).
    pub fn set_capacity(&self, capacity: usize) {
        let capacity = capacity as u64;
        let old = self.capacity.swap(capacity, Ordering::Relaxed);
        let n = self.shards.len() as u64;
        for shard in self.shards.iter() {
            shard.lock().set_capacity(capacity / n);
        }
        // After the evictions: the pages they freed go back to the system
        // if the pool's allowance shrank below them.
        pages::adjust_allowance(capacity as i64 - old as i64);
    }

    /// The cache's figures.
    pub fn stats(&self) -> CacheStats {
        let (mut usage, mut entries) = (0, 0);
        for shard in self.shards.iter() {
            let shard = shard.lock();
            usage += shard.usage();
            entries += shard.entries() as u64;
        }
        CacheStats {
            capacity: self.capacity.load(Ordering::Relaxed),
            usage,
            entries,
            hits: self.hits.get(),
            misses: self.misses.get(),
            bytes_read: self.bytes_read.load(Ordering::Relaxed),
            bypasses_os_cache: self.bypasses_os_cache(),
            readahead: self.readahead.held() as u64,
        }
    }
}
