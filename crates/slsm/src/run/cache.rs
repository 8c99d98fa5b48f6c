//! [`BlockCache`]: the data blocks of run files kept in memory, decompressed
//! and verified, within a budget of bytes.
//!
//! A thin layer over `quick_cache` (the cache fjall uses): sharded, safe
//! for any number of threads, scan-resistant (a CLOCK-Pro variant close to
//! S3-FIFO: a block read once by a long scan or a merge does not push out
//! the blocks lookups keep coming back to). Every block is charged its
//! bytes plus the cache's own overhead per entry, so the charge is what the
//! cache costs in memory. A block handed out stays valid for as long as its
//! borrower holds it, even if the cache evicts it meanwhile.
//!
//! `quick_cache`'s split stays at its default, 97% of the capacity for
//! blocks read again and 3% on probation: a million GETs through `slsm
//! serve` right after merges rewrote the data missed the cache more with
//! 80% (+12% misses in the first pass, +34% in the second) and 50% (+35%,
//! +71%), and served fewer requests.
//!
//! A merge's output starts cold (the inputs' blocks leave with their
//! files). Warming it, by reading into the cache the output blocks that
//! overlap the inputs' cached blocks once the inputs are gone, was built and
//! measured (2026-11-25) and not landed: after the `-P 16` SETs of
//! `bench/redis/compare.sh` the cache held 137 MB of warmed blocks, yet the
//! next million GETs missed 250K times instead of 148K (the warmed blocks
//! filled the hot share, so the blocks the GETs needed entered the 3%
//! probation and left before their second use), and the server's peak RSS
//! rose from 221 to 337 MB (blocks allocated while freed ones were still
//! held).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use quick_cache::sync::Cache;
use quick_cache::Weighter;

use super::block::Block;

/// Bytes charged per cached block beyond its data: the table slot (key,
/// pointer, metadata), the `Block` header and its allocations' headers.
pub(crate) const ENTRY_OVERHEAD: u64 = 128;

/// Identifies a block: the cache id of its file (unique in the process) and
/// the block's index in the file.
type BlockKey = (u64, u64);

#[derive(Clone, Copy, Debug)]
struct ChargeBytes;

impl Weighter<BlockKey, Arc<Block>> for ChargeBytes {
    fn weight(&self, _key: &BlockKey, block: &Arc<Block>) -> u64 {
        block.len() as u64 + ENTRY_OVERHEAD
    }
}

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
    /// of the cache: within [`BlockCache::set_readahead_limit`]).
    pub readahead: u64,
}

/// A cache of data blocks shared by every run file of a database. See the
/// [module docs](self).
pub struct BlockCache {
    cache: Cache<BlockKey, Arc<Block>, ChargeBytes>,
    bytes_read: std::sync::atomic::AtomicU64,
    bypass_os_cache: std::sync::atomic::AtomicBool,
    /// Bytes iterators' readahead windows hold (`run::chunks`), and the
    /// most they may hold together.
    readahead_held: AtomicUsize,
    readahead_limit: AtomicUsize,
}

impl std::fmt::Debug for BlockCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockCache")
            .field("stats", &self.stats())
            .finish()
    }
}

impl BlockCache {
    /// A cache of at most `capacity` bytes (0: nothing is cached).
    pub fn new(capacity: usize) -> Arc<BlockCache> {
        let capacity = capacity as u64;
        let estimated_blocks = (capacity / 4096).clamp(16, 1 << 24) as usize;
        Arc::new(BlockCache {
            cache: Cache::with_weighter(estimated_blocks, capacity.max(1), ChargeBytes),
            bytes_read: Default::default(),
            bypass_os_cache: Default::default(),
            readahead_held: AtomicUsize::new(0),
            readahead_limit: AtomicUsize::new((capacity as usize / 16).max(1 << 20)),
        })
    }

    /// Block `index` of the file whose cache id is `file`.
    pub(crate) fn get(&self, file: u64, index: u64) -> Option<Arc<Block>> {
        self.cache.get(&(file, index))
    }

    /// Caches block `index` of file `file`.
    pub(crate) fn insert(&self, file: u64, index: u64, block: Arc<Block>) {
        if self.cache.capacity() > 1 {
            self.cache.insert((file, index), block);
        }
    }

    /// Drops every cached block of the file whose cache id is `file` and
    /// which has `blocks` data blocks.
    pub(crate) fn forget_file(&self, file: u64, blocks: usize) {
        if self.cache.is_empty() {
            return;
        }
        for index in 0..blocks as u64 {
            self.cache.remove(&(file, index));
        }
    }

    /// Counts `bytes` read from a file for a block the cache lacked.
    pub(crate) fn note_read(&self, bytes: usize) {
        self.bytes_read
            .fetch_add(bytes as u64, std::sync::atomic::Ordering::Relaxed);
    }

    /// Whether the blocks this cache lacks are read without leaving their
    /// pages in the operating system's page cache.
    pub(crate) fn bypasses_os_cache(&self) -> bool {
        self.bypass_os_cache
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Sets [`bypasses_os_cache`](Self::bypasses_os_cache).
    pub(crate) fn set_bypass_os_cache(&self, bypass: bool) {
        self.bypass_os_cache
            .store(bypass, std::sync::atomic::Ordering::Relaxed);
    }

    /// Bounds what scanning iterators' readahead windows may hold together
    /// (a database gives them part of its budget's buffer share).
    pub(crate) fn set_readahead_limit(&self, bytes: usize) {
        self.readahead_limit.store(bytes, Ordering::Relaxed);
    }

    /// Takes `bytes` of the readahead allowance if it has room.
    pub(crate) fn reserve_readahead(&self, bytes: usize) -> bool {
        let limit = self.readahead_limit.load(Ordering::Relaxed);
        self.readahead_held
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
                (held.saturating_add(bytes) <= limit).then_some(held + bytes)
            })
            .is_ok()
    }

    /// Gives back `bytes` taken by [`reserve_readahead`](Self::reserve_readahead).
    pub(crate) fn release_readahead(&self, bytes: usize) {
        self.readahead_held.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// Changes the capacity (evicting what no longer fits).
    pub fn set_capacity(&self, capacity: usize) {
        self.cache.set_capacity((capacity as u64).max(1));
    }

    /// The cache's figures.
    pub fn stats(&self) -> CacheStats {
        let capacity = self.cache.capacity();
        CacheStats {
            capacity: if capacity <= 1 { 0 } else { capacity },
            usage: self.cache.weight(),
            entries: self.cache.len() as u64,
            hits: self.cache.hits(),
            misses: self.cache.misses(),
            bytes_read: self.bytes_read.load(std::sync::atomic::Ordering::Relaxed),
            bypasses_os_cache: self.bypasses_os_cache(),
            readahead: self.readahead_held.load(Ordering::Relaxed) as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::block::{BlockBuilder, BlockBytes};
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// A block of `n` bytes of payload whose only value tells which it is.
    fn block(tag: u64, pad: usize) -> Arc<Block> {
        let mut b = BlockBuilder::default();
        let key = crate::key::encode(&tag.to_be_bytes(), 1, crate::key::Kind::Value);
        b.add(&key, &vec![tag as u8; pad]);
        Arc::new(Block::decode(BlockBytes::Owned(b.finish().into()), tag).unwrap())
    }

    fn tag_of(b: &Block) -> u64 {
        b.offset()
    }

    #[test]
    fn holds_at_most_its_capacity() {
        let cache = BlockCache::new(100_000);
        for i in 0..1000 {
            cache.insert(1, i, block(i, 900));
            assert!(cache.stats().usage <= 100_000, "{:?}", cache.stats());
        }
        let s = cache.stats();
        assert!(s.entries > 50 && s.entries < 110, "{s:?}");
        cache.set_capacity(10_000);
        assert!(cache.stats().usage <= 10_000);
        let none = BlockCache::new(0);
        none.insert(1, 1, block(1, 10));
        assert_eq!(none.stats().entries, 0);
    }

    /// A block evicted while a reader holds it stays whole for the reader.
    #[test]
    fn borrowed_blocks_outlive_eviction() {
        let cache = BlockCache::new(20_000);
        cache.insert(7, 0, block(0, 5000));
        let held = cache.get(7, 0).unwrap();
        for i in 1..100 {
            cache.insert(7, i, block(i, 5000));
        }
        assert!(cache.get(7, 0).is_none(), "evicted");
        assert_eq!(held.entry(0).unwrap().1, &vec![0u8; 5000][..]);
    }

    /// Hot blocks survive a scan of many blocks read once.
    #[test]
    fn a_scan_does_not_evict_the_working_set() {
        let cache = BlockCache::new(400 * 1124);
        for round in 0..20 {
            for i in 0..100 {
                if cache.get(1, i).is_none() {
                    cache.insert(1, i, block(i, 1000));
                }
            }
            if round == 10 {
                for j in 0..5000 {
                    cache.insert(2, j, block(j, 1000));
                }
            }
        }
        let hot = (0..100).filter(|&i| cache.get(1, i).is_some()).count();
        assert!(hot >= 90, "only {hot} of 100 hot blocks left");
    }

    proptest! {
        /// Against a model, from several threads: a hit is always the block
        /// inserted under that key, and the charge never exceeds capacity.
        #[test]
        fn concurrent_readers_see_what_was_inserted(ops in prop::collection::vec((0u64..64, 0usize..3000), 1..400)) {
            let cache = BlockCache::new(64 * 1024);
            let model: HashMap<u64, ()> = ops.iter().map(|&(k, _)| (k, ())).collect();
            std::thread::scope(|s| {
                for t in 0..3 {
                    let (cache, ops) = (&cache, &ops);
                    s.spawn(move || {
                        for (n, &(k, pad)) in ops.iter().enumerate() {
                            if (n + t) % 2 == 0 {
                                cache.insert(9, k, block(k, pad));
                            } else if let Some(b) = cache.get(9, k) {
                                assert_eq!(tag_of(&b), k);
                            }
                        }
                    });
                }
            });
            prop_assert!(cache.stats().usage <= 64 * 1024);
            for k in 0..64 {
                if let Some(b) = cache.get(9, k) {
                    prop_assert!(model.contains_key(&k));
                    prop_assert_eq!(tag_of(&b), k);
                }
            }
        }
    }
}
