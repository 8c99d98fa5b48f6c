//! [`BlockSlot`]: where one cached block lives, read by lookups without a
//! lock and without writing anything shared.
//!
//! The slot owns one reference to its block (an `Arc<Block>` turned into a
//! raw pointer). A reader pins a `crossbeam-epoch` guard, loads the
//! pointer and takes a reference of its own (or, in a batch, only starts
//! loading the block's first line, so that the misses of many blocks
//! overlap before any reference is taken). Emptying a slot hands the
//! slot's reference to the epoch collector, which drops it only once every
//! thread pinned at that moment has unpinned: no reader can be between
//! loading the pointer and taking its reference when the block goes.
//!
//! Before this, the slots were `arc_swap` cells. Their `load_full` took
//! the reference at once, an atomic increment on the block's header that
//! also kept the next key of a batch from starting its own miss, and their
//! guards come eight to a thread, fewer than a batch's keys.
//!
//! * **Owns**: one reference to its block, and the block's hit count.
//! * **Thread safety**: any number of readers; [`fill`](BlockSlot::fill)
//!   and [`empty`](BlockSlot::empty) are called under the lock of the
//!   slot's shard only, so a slot never changes under another writer.

use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU8, Ordering};
use std::sync::Arc;

use crossbeam_epoch::Guard;

use super::block::Cacheable;

/// The most hits a slot counts (S3-FIFO's two bits).
const MAX_HITS: u8 = 3;
/// A slot's block was put there ahead of its first read (a batch's fetch,
/// warming): that read is not a hit.
pub(super) const PREFETCHED: u8 = 0x80;

pub(super) struct BlockSlot<B> {
    block: AtomicPtr<B>,
    /// Hits since the eviction policy last looked (S3-FIFO's frequency),
    /// beside the pointer so that counting one writes the line the lookup
    /// has just read, not the block's.
    hits: AtomicU8,
}

impl<B> Default for BlockSlot<B> {
    fn default() -> BlockSlot<B> {
        BlockSlot {
            block: AtomicPtr::new(ptr::null_mut()),
            hits: AtomicU8::new(0),
        }
    }
}

impl<B: Cacheable> BlockSlot<B> {
    pub fn is_empty(&self) -> bool {
        self.block.load(Ordering::Acquire).is_null()
    }

    /// The block, with a reference of the caller's own.
    #[inline]
    pub fn get(&self, guard: &Guard) -> Option<Arc<B>> {
        let _ = guard;
        let p = self.block.load(Ordering::Acquire);
        if p.is_null() {
            return None;
        }
        // SAFETY: `p` came from `Arc::into_raw` in `fill`, and the slot's
        // reference is dropped only by the epoch collector after `empty`
        // took it out, once every thread pinned then (this one, holding
        // `guard` since before the load) has unpinned: the block is alive.
        unsafe {
            Arc::increment_strong_count(p);
            Some(Arc::from_raw(p))
        }
    }

    /// The block, borrowed for as long as `guard` is pinned.
    #[inline]
    pub fn peek<'g>(&self, guard: &'g Guard) -> Option<&'g B> {
        let _ = guard;
        let p = self.block.load(Ordering::Acquire);
        // SAFETY: as in `get`, the block lives while `guard` is pinned.
        unsafe { p.as_ref() }
    }

    /// Puts `block` in the empty slot, with `hits` as its count. Only the
    /// slot's shard calls it, under its lock.
    pub fn fill(&self, block: Arc<B>, hits: u8) {
        self.hits.store(hits, Ordering::Relaxed);
        let old = self
            .block
            .swap(Arc::into_raw(block).cast_mut(), Ordering::AcqRel);
        debug_assert!(old.is_null(), "a full slot filled");
        if !old.is_null() {
            retire(old);
        }
    }

    /// Takes the block out, returning its `charge()` (what it was charged
    /// for); the block goes once no reader can be using it. Only the
    /// slot's shard (evicting) and `forget` call it, under the shard's lock.
    pub fn empty(&self) -> Option<usize> {
        let p = self.block.swap(ptr::null_mut(), Ordering::AcqRel);
        if p.is_null() {
            return None;
        }
        // SAFETY: the slot's own reference keeps the block alive until
        // `retire` hands it over.
        let len = unsafe { (*p).charge() };
        retire(p);
        Some(len)
    }

    #[inline]
    pub fn note_hit(&self) {
        let hits = self.hits.load(Ordering::Relaxed);
        if hits & PREFETCHED != 0 {
            self.hits.store(0, Ordering::Relaxed);
        } else if hits < MAX_HITS {
            self.hits.store(hits + 1, Ordering::Relaxed);
        }
    }

    /// Whether the block was hit since the policy last asked, counting one
    /// hit off (the block's second chance).
    pub fn take_hit(&self) -> bool {
        let hits = self.hits.load(Ordering::Relaxed) & !PREFETCHED;
        if hits > 0 {
            self.hits.store(hits - 1, Ordering::Relaxed);
        }
        hits > 0
    }
}

impl<B> Drop for BlockSlot<B> {
    fn drop(&mut self) {
        let p = *self.block.get_mut();
        if !p.is_null() {
            // SAFETY: the slot owns this reference; being dropped, it has no
            // readers (they hold the file, which holds the slots).
            drop(unsafe { Arc::from_raw(p) });
        }
    }
}

/// A raw block reference on its way to the collector.
struct Retired<B>(*const B);
// SAFETY: it stands for an `Arc<B>`, which is `Send` because a cached
// item is `Send + Sync` (`Cacheable`).
unsafe impl<B: Cacheable> Send for Retired<B> {}

/// Drops the reference `p` (from `Arc::into_raw`) once no thread pinned now
/// is pinned any more.
fn retire<B: Cacheable>(p: *const B) {
    let retired = Retired(p);
    let guard = crossbeam_epoch::pin();
    // SAFETY: `p` was taken out of its slot, so no reader pinned from now on
    // can load it; the collector runs the drop after the readers pinned
    // before have unpinned. The closure owns the reference.
    unsafe {
        guard.defer_unchecked(move || {
            let retired = retired;
            drop(Arc::from_raw(retired.0));
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::test_block::{block, Block};

    #[test]
    fn a_slot_hands_out_its_block_until_emptied() {
        let slot = BlockSlot::<Block>::default();
        let guard = crossbeam_epoch::pin();
        assert!(slot.get(&guard).is_none() && slot.is_empty());
        let b = block(7);
        slot.fill(Arc::clone(&b), 0);
        let got = slot.get(&guard).unwrap();
        assert!(Arc::ptr_eq(&got, &b));
        assert_eq!(slot.peek(&guard).unwrap().offset(), 7);
        assert_eq!(slot.empty(), Some(b.len()));
        assert!(slot.is_empty() && slot.empty().is_none());
        // Held references outlive the slot's.
        drop(guard);
        assert_eq!(got.offset(), 7);
        slot.fill(block(8), 0);
        drop(slot);
    }

    /// Readers taking references while a writer fills and empties the slot
    /// over and over: every block read is whole (Miri checks the rest).
    #[test]
    fn readers_race_with_emptying() {
        let slot = BlockSlot::<Block>::default();
        let rounds = if cfg!(miri) { 50 } else { 20_000 };
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    for _ in 0..rounds {
                        let guard = crossbeam_epoch::pin();
                        if let Some(b) = slot.get(&guard) {
                            assert!(b.offset() < rounds as u64);
                        }
                    }
                });
            }
            for i in 0..rounds {
                slot.fill(block(i as u64), 0);
                slot.empty();
            }
        });
    }

    #[test]
    fn hits_count_up_to_three_and_prefetched_blocks_start_owing_one() {
        let slot = BlockSlot::<Block>::default();
        slot.fill(block(1), PREFETCHED);
        slot.note_hit();
        assert!(!slot.take_hit(), "the read it was fetched for");
        for _ in 0..5 {
            slot.note_hit();
        }
        assert!(slot.take_hit() && slot.take_hit() && slot.take_hit());
        assert!(!slot.take_hit());
    }
}
