//! Blocks borrowed for one lookup or one batch: a cached block is used
//! in place while the reader's epoch guard is pinned, with no reference
//! count taken; a block the cache lacks is read before the guard is
//! pinned, never while (a guard pinned across reads holds back the
//! collection of every block they evict).

use std::ops::Deref;
use std::sync::Arc;

use crossbeam_epoch::Guard;

use super::RunFile;
use crate::cache::Want;
use crate::error::Result;
use crate::sst::block::Block;

/// A block a lookup searches: borrowed from the cache while the lookup's
/// epoch guard is pinned, or read for it. Borrowed, a cached block costs
/// no reference count: taken and dropped for every key of a batch, its
/// two locked read-modify-writes were fences between the keys' cache
/// misses.
pub(crate) enum BatchBlock<'g> {
    Cached(&'g Block),
    Read(Arc<Block>),
}

impl Deref for BatchBlock<'_> {
    type Target = Block;

    fn deref(&self) -> &Block {
        match self {
            BatchBlock::Cached(block) => block,
            BatchBlock::Read(block) => block,
        }
    }
}

impl RunFile {
    /// Data block `i` if the cache holds it, borrowed for as long as
    /// `guard` is pinned: no reference count taken (a counted hit or
    /// miss; after a miss, [`Want::Missed`] reads it). Beside the door
    /// ([`RunFile::block`]) because what it hands out is a borrow under
    /// the caller's guard, not a block of the caller's own.
    pub(crate) fn cached_block<'g>(&self, i: usize, guard: &'g Guard) -> Option<&'g Block> {
        if self.in_memory.is_some() {
            return None;
        }
        let block = self.cache.get_pinned(&self.cached, i, guard)?;
        block.note_reuse();
        block.prefetch();
        Some(block)
    }

    /// The blocks of a batch's `wanted` that the cache lacks (`None` for
    /// the others, and past a file's last block), read and cached now,
    /// before the batch pins its guard: a guard pinned across reads would
    /// hold back the collection of every block they evict, and on a cache
    /// smaller than the data that garbage grew the process by 120 MB
    /// (`multireadrandom`, the default set).
    pub(crate) fn uncached_of_batch(
        wanted: &[(&RunFile, usize)],
    ) -> Result<Vec<Option<Arc<Block>>>> {
        let Some(cache) = wanted.first().map(|(file, _)| &file.cache) else {
            return Ok(Vec::new());
        };
        let shared = |file: &RunFile| file.in_memory.is_none() && Arc::ptr_eq(&file.cache, cache);
        let mut misses = 0;
        let read = wanted
            .iter()
            .map(|&(file, i)| match i < file.num_blocks() && shared(file) {
                true if file.cache.contains(&file.cached, i) => Ok(None),
                true => {
                    misses += 1;
                    file.block(i, Want::Missed)
                }
                false => file.block(i, Want::Lookup),
            })
            .collect();
        cache.count_misses(misses);
        read
    }

    /// Blocks `(file, i)` of a batch (`None` past a file's last block):
    /// those in `read` ([`RunFile::uncached_of_batch`]), and the cached
    /// ones found together (`BlockCache::get_many`: their misses overlap)
    /// and borrowed for as long as `guard` is pinned. A block evicted since
    /// `read` was made is read again, under the guard (rare).
    pub(crate) fn blocks_of_batch<'g>(
        wanted: &[(&RunFile, usize)],
        read: Vec<Option<Arc<Block>>>,
        guard: &'g Guard,
    ) -> Result<Vec<Option<BatchBlock<'g>>>> {
        let Some(cache) = wanted.first().map(|(file, _)| &file.cache) else {
            return Ok(Vec::new());
        };
        let slots: Vec<_> = wanted
            .iter()
            .zip(&read)
            .filter(|((file, _), read)| read.is_none() && Arc::ptr_eq(&file.cache, cache))
            .map(|((file, i), _)| (&*file.cached, *i))
            .collect();
        let mut found = cache.get_many(&slots, guard).into_iter();
        for block in found.as_slice().iter().flatten() {
            block.note_reuse();
            block.prefetch();
        }
        wanted
            .iter()
            .zip(read)
            .map(|(&(file, i), read)| {
                if let Some(block) = read {
                    return Ok(Some(BatchBlock::Read(block)));
                }
                let cached = match Arc::ptr_eq(&file.cache, cache) {
                    true => found.next().flatten(),
                    false => None,
                };
                match cached {
                    Some(block) => Ok(Some(BatchBlock::Cached(block))),
                    None => Ok(file.block(i, Want::Lookup)?.map(BatchBlock::Read)),
                }
            })
            .collect()
    }
}
