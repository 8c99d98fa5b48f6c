//! [`CachedBlocks`]: one open file's place in the [`BlockCache`](super::BlockCache),
//! a slot per block, so that a hit reads no hash table: a lookup that has
//! found its block in the file's fence pointers loads the block's slot.
//!
//! * **Owns**: the file's slots (and through them its cached blocks).
//! * **Thread safety**: shared by the file's readers and the cache's
//!   shards; a slot changes only under its shard's lock.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::block::Cacheable;
use super::slot::BlockSlot;

/// One open file's place in the cache: a slot per data block, holding
/// the block while it is cached.
pub(crate) struct CachedBlocks<B> {
    /// Unique in the process: files of different databases, or a file
    /// opened twice, never share blocks.
    id: u64,
    pub(super) slots: Box<[BlockSlot<B>]>,
    /// The file is gone: nothing may be cached for it any more.
    pub(super) forgotten: AtomicBool,
}

static NEXT_FILE_ID: AtomicU64 = AtomicU64::new(1);

impl<B: Cacheable> CachedBlocks<B> {
    pub(super) fn new(blocks: usize) -> CachedBlocks<B> {
        CachedBlocks {
            id: NEXT_FILE_ID.fetch_add(1, Ordering::Relaxed),
            slots: (0..blocks).map(|_| BlockSlot::default()).collect(),
            forgotten: AtomicBool::new(false),
        }
    }

    pub(super) fn slot(&self, index: usize) -> &BlockSlot<B> {
        &self.slots[index]
    }

    pub(super) fn is_forgotten(&self) -> bool {
        self.forgotten.load(Ordering::Acquire)
    }

    /// Starts loading the slots of blocks `first..first + n` into the CPU's
    /// cache (a lookup knows the group of blocks it will land in before it
    /// knows the block).
    pub fn prefetch(&self, first: usize, n: usize) {
        let end = first.saturating_add(n).min(self.slots.len());
        let Some(slots) = self.slots.get(first..end) else {
            return;
        };
        for line in slots.chunks(4) {
            slsm_skiplist::prefetch((line.as_ptr()).cast());
        }
    }

    /// The blocks now cached, in order.
    pub fn cached(&self) -> Vec<usize> {
        (0..self.slots.len())
            .filter(|&i| !self.slots[i].is_empty())
            .collect()
    }

    /// Bytes the slots take (charged with the file's index).
    pub fn memory_usage(&self) -> usize {
        self.slots.len() * std::mem::size_of::<BlockSlot<B>>()
    }

    /// A hash of block `index` of this file: picks its shard, names it in
    /// the ghost queue.
    pub(super) fn key(&self, index: usize) -> u64 {
        let x = self.id.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ index as u64;
        (x ^ x >> 29).wrapping_mul(0xBF58_476D_1CE4_E5B9) ^ x >> 32
    }
}
