//! Finding a key in a [`RunFile`], one way for every read: the fence
//! pointers pick the block ([`RunFile::block_for_point`]), the block's
//! prefix words and entries the entry ([`RunFile::position_in`]). A point
//! lookup and a cursor's seek take both steps at once; a batch takes each
//! in two halves (`start_block_for_point` / `finish_block_for_point`,
//! `start_entry` / `stored_entry_within`), every key through the first half
//! before any through the second, so that the keys' cache misses overlap;
//! a sorted sweep of many gallops the fences forward from the last.

use std::cmp::Ordering;
use std::ops::Range;
use std::sync::Arc;

use super::{Entry, KeyValue, RunFile};
use crate::cache::Want;
use crate::error::Result;
use crate::key;
use crate::sst::block::Block;

impl RunFile {
    /// The first entry whose internal key is `>= lookup` (by
    /// [`key::compare`]), or `None` if every key is smaller.
    pub fn seek(&self, lookup: &[u8]) -> Result<Option<Entry>> {
        match self.block(self.block_for_point(lookup), Want::Lookup)? {
            Some(block) => self.entry_in(block, lookup).map(Some),
            None => Ok(None),
        }
    }

    /// [`RunFile::seek`] for a point lookup: `read` gets the entry's key
    /// parts ([`Entry::key_parts`]) and value (`None` if every key is
    /// smaller), borrowed from a cached block without a reference count.
    pub(crate) fn seek_with<R>(
        &self,
        lookup: &[u8],
        read: impl FnOnce(Option<(KeyValue<'_>, &[u8])>) -> R,
    ) -> Result<R> {
        let i = self.block_for_point(lookup);
        if i >= self.num_blocks() {
            return Ok(read(None));
        }
        let guard = crossbeam_epoch::pin();
        if let Some(block) = self.cached_block(i, &guard) {
            let range = Self::start_entry(block, lookup);
            return Ok(read(Some(self.stored_entry_within(block, lookup, range)?)));
        }
        // Read unpinned (see `RunFile::uncached_of_batch`).
        drop(guard);
        let Some(block) = self.block(i, Want::Missed)? else {
            return Ok(read(None));
        };
        let range = Self::start_entry(&block, lookup);
        Ok(read(Some(self.stored_entry_within(&block, lookup, range)?)))
    }

    /// The first entry `>= lookup` in `block`, the block
    /// [`RunFile::block_for_point`] chose for it.
    pub(crate) fn entry_in(&self, block: Arc<Block>, lookup: &[u8]) -> Result<Entry> {
        let j = self.position_in(&block, lookup)?;
        self.entry_at(block, j)
    }

    /// The position of the first entry `>= lookup` in `block`, the block
    /// [`RunFile::block_for_point`] chose for it: both halves of the entry
    /// step at once. A block without such an entry contradicts its fence
    /// pointer (corruption).
    pub(crate) fn position_in(&self, block: &Block, lookup: &[u8]) -> Result<usize> {
        self.answer_within(block, lookup, Self::start_entry(block, lookup))
    }

    /// The first half of the entry step ([`RunFile::position_in`]): the entries of `block` a
    /// search for `lookup` must compare, from the block's prefix words
    /// alone, the first one's key and value starting to load. The value's
    /// lines are then on their way before the comparison reads the key,
    /// not a second miss after it; a batch takes every key through this
    /// before any through [`RunFile::stored_entry_within`], so that the keys'
    /// misses overlap too.
    pub(crate) fn start_entry(block: &Block, lookup: &[u8]) -> Range<usize> {
        let range = block.narrow(lookup, 0);
        block.prefetch_entry(range.start);
        range
    }

    /// The second half of the entry step for a point lookup or a batch's:
    /// the entry among `range` (what [`RunFile::start_entry`] gave), borrowed
    /// from `block`: its key in its two stored parts ([`Entry::key_parts`]) and its value.
    pub(crate) fn stored_entry_within<'b>(
        &self,
        block: &'b Block,
        lookup: &[u8],
        range: Range<usize>,
    ) -> Result<(KeyValue<'b>, &'b [u8])> {
        let j = self.answer_within(block, lookup, range)?;
        let (rest, value) = block.stored_entry(j).map_err(|c| self.to_error(c))?;
        Ok(((block.key_prefix(), rest), value))
    }

    /// Entry `j` of `block` (a position the entry step gave).
    fn entry_at(&self, block: Arc<Block>, j: usize) -> Result<Entry> {
        let (key, value) = block.entry_ranges(j).map_err(|c| self.to_error(c))?;
        Ok(Entry { block, key, value })
    }

    /// [`RunFile::seek`] for many lookups sorted ascending by
    /// [`key::compare`]: sweeps the fences forward (galloping from the
    /// current block) and reuses a block between lookups that land in it.
    /// Calls `out(i, result)` for each `lookups[i]` in order. Unsorted input
    /// still gives correct answers, only slower.
    pub fn multi_seek(
        &self,
        lookups: &[&[u8]],
        out: &mut dyn FnMut(usize, Option<KeyValue<'_>>),
    ) -> Result<()> {
        let mut fence = 0;
        let mut current: Option<(usize, Arc<Block>)> = None;
        let mut pos = 0;
        let mut key = Vec::new();
        for (n, lookup) in lookups.iter().enumerate() {
            if n > 0 && key::compare(lookup, lookups[n - 1]) == Ordering::Less {
                (fence, pos) = (0, 0);
            }
            fence = self.index.gallop_last_ge(lookup, fence);
            if fence == self.num_blocks() {
                out(n, None);
                continue;
            }
            if current.as_ref().is_none_or(|(i, _)| *i != fence) {
                let Some(block) = self.block(fence, Want::Lookup)? else {
                    out(n, None);
                    continue;
                };
                current = Some((fence, block));
                pos = 0;
            }
            let block = &current.as_ref().expect("loaded above").1;
            pos = self.answer_in(block, lookup, pos)?;
            block
                .key_into(pos, &mut key)
                .map_err(|c| self.to_error(c))?;
            let (_, value) = block.stored_entry(pos).map_err(|c| self.to_error(c))?;
            out(n, Some((&key, value)));
        }
        Ok(())
    }

    /// Index of the first block whose last key is `>= target`
    /// (`num_blocks()` if none).
    /// The slots of the group of blocks the search lands in start loading
    /// with it, so that the cache's answer is in the CPU's cache by the
    /// time the search ends.
    pub(crate) fn block_for_point(&self, target: &[u8]) -> usize {
        self.index
            .point_last_ge(target, |first, n| self.cached.prefetch(first, n))
    }

    /// [`RunFile::block_for_point`] in two steps, for a batch that takes
    /// every key through the first before any through the second (their
    /// cache misses overlap): the first fence the block can be at, with
    /// the fences the rest of the search compares starting to load ...
    pub(crate) fn start_block_for_point(&self, target: &[u8]) -> usize {
        self.index.point_group(target)
    }

    /// ... and the block, searched from that fence, with its cache slot
    /// starting to load. Unlike a single lookup, a batch knows the block
    /// before it asks the cache for it, so it loads one slot, not the
    /// group's (and not the group's block ends, which only a read of the
    /// file needs: four to five lines a key fewer).
    pub(crate) fn finish_block_for_point(&self, target: &[u8], from: usize) -> usize {
        let block = self.index.gallop_last_ge(target, from);
        self.cached.prefetch(block, 1);
        block
    }

    /// [`RunFile::position_in`] among the entries from `from` on (a sweep's
    /// next lookup in the block of the one before).
    fn answer_in(&self, block: &Block, lookup: &[u8], from: usize) -> Result<usize> {
        self.answer_within(block, lookup, block.narrow(lookup, from))
    }

    /// The second half of the entry step: the first entry `>= lookup`
    /// among the entries `range` of `block` (what [`Block::narrow`] gave
    /// for `lookup`).
    fn answer_within(&self, block: &Block, lookup: &[u8], range: Range<usize>) -> Result<usize> {
        let j = block
            .lower_bound_within(lookup, range)
            .map_err(|c| self.to_error(c))?;
        if j == block.count() {
            return Err(self.corruption(block.offset(), "block does not match its fence pointer"));
        }
        Ok(j)
    }
}
