//! [`RunFile`]: an open, immutable run, read with positional reads through
//! the database's block cache.

use std::cmp::Ordering;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering as AtomicOrdering};
use std::sync::Arc;

mod blocks;

use super::block::Block;
use super::cache::{BlockCache, CachedBlocks};
use super::format::{Corrupt, FOOTER_LEN};
use super::index::Index;
use super::meta::read_meta;
use super::{RangeTombstone, RunProperties};
use crate::bloom::BloomView;
use crate::error::{Error, Result};
use crate::fs::{Advice, FileSystem, RandomAccessFile};
use crate::key;
use crate::manifest::DbId;

/// An entry borrowed from a run's block: `(internal key, value)`.
pub type KeyValue<'a> = (&'a [u8], &'a [u8]);

/// Cache capacity of a run opened without a database's cache.
const STANDALONE_CACHE: usize = 8 << 20;

/// An entry of a run and the block that holds it.
#[derive(Debug)]
pub struct Entry {
    block: Arc<Block>,
    key: Range<usize>,
    value: Range<usize>,
}

impl Entry {
    /// The internal key.
    pub fn key(&self) -> &[u8] {
        self.block.slice(self.key.clone())
    }

    /// The value.
    pub fn value(&self) -> &[u8] {
        self.block.slice(self.value.clone())
    }
}

/// An open run file. Immutable, `Send + Sync`; share it as `Arc<RunFile>`.
pub struct RunFile {
    path: PathBuf,
    fs: Arc<dyn FileSystem>,
    file: Box<dyn RandomAccessFile>,
    /// The whole file, when the file system holds it in memory: raw blocks
    /// are then read in place.
    in_memory: Option<Arc<Vec<u8>>>,
    /// One bit per data block whose checksum this process has verified (for
    /// blocks read in place).
    verified: Box<[AtomicU64]>,
    cache: Arc<BlockCache>,
    /// This file's slots in `cache`.
    cached: Arc<CachedBlocks>,
    props: RunProperties,
    db_id: DbId,
    max_block_raw: u64,
    index: Index,
    filter: Vec<u8>,
    range_dels: Vec<RangeTombstone>,
    obsolete: AtomicBool,
}

impl std::fmt::Debug for RunFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunFile")
            .field("path", &self.path)
            .field("properties", &self.props)
            .field("blocks", &self.index.len())
            .finish()
    }
}

impl RunFile {
    /// Opens the run at `path` on the operating system's file system with a
    /// cache of its own; see [`open_in`](Self::open_in).
    pub fn open(path: &Path) -> Result<RunFile> {
        RunFile::open_with(crate::fs::std_fs(), path)
    }

    /// [`open`](Self::open) through the file system `fs`.
    pub fn open_with(fs: Arc<dyn FileSystem>, path: &Path) -> Result<RunFile> {
        RunFile::open_in(fs, path, BlockCache::new(STANDALONE_CACHE))
    }

    /// Opens the run at `path` through `fs`, its data blocks read through
    /// `cache`: reads and verifies the footer and the index, filter,
    /// range-tombstone and properties blocks (kept in memory while the file
    /// is open). Damage is reported as `Error::Corruption`.
    pub fn open_in(
        fs: Arc<dyn FileSystem>,
        path: &Path,
        cache: Arc<BlockCache>,
    ) -> Result<RunFile> {
        let file = fs.open_random(path).map_err(|e| Error::io(path, e))?;
        let len = file.len();
        if len < FOOTER_LEN as u64 {
            return Err(Error::corruption(
                path,
                0,
                "file too short for a run footer",
            ));
        }
        let meta = read_meta(&*file, path)?;
        file.advise(Advice::Random);
        let blocks = meta.index.len();
        Ok(RunFile {
            in_memory: file.in_memory(),
            path: path.to_path_buf(),
            fs,
            file,
            verified: (0..blocks.div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect(),
            cached: cache.register(blocks),
            cache,
            props: meta.file.props,
            db_id: meta.file.db_id,
            max_block_raw: meta.file.max_block_raw,
            index: meta.index,
            filter: meta.filter,
            range_dels: meta.range_dels,
            obsolete: AtomicBool::new(false),
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The run's properties.
    pub fn properties(&self) -> &RunProperties {
        &self.props
    }

    /// The database the file says it belongs to.
    pub fn db_id(&self) -> DbId {
        self.db_id
    }

    /// Size of the file in bytes.
    pub fn file_size(&self) -> u64 {
        self.props.file_size
    }

    /// Bytes the open file holds in memory (index, filter, range
    /// tombstones), beyond the blocks it has in the cache.
    pub fn pinned_bytes(&self) -> usize {
        let tombstones: usize = self
            .range_dels
            .iter()
            .map(|t| t.start.len() + t.end.len() + 56)
            .sum();
        self.index.memory_usage()
            + self.cached.memory_usage()
            + self.filter.capacity()
            + tombstones
            + 8 * self.verified.len()
    }

    /// False if no user key with [`crate::bloom::hash_key`] hash `h` is in
    /// the run (Bloom filter test).
    pub fn may_contain_hash(&self, h: u64) -> bool {
        BloomView::parse(&self.filter).is_none_or(|v| v.may_contain_hash(h))
    }

    /// Bytes of the run's Bloom filter.
    pub fn filter_bytes(&self) -> usize {
        self.filter.len()
    }

    /// How many of `hashes` pass the run's Bloom filter.
    pub fn filter_passes(&self, hashes: &[u64]) -> usize {
        hashes.iter().filter(|&&h| self.may_contain_hash(h)).count()
    }

    /// Starts loading the filter block [`may_contain_hash`](Self::may_contain_hash)
    /// will read for `h`, so that a lookup probing many runs waits for
    /// their filters' cache misses once, not once per run.
    pub fn prefetch_filter(&self, h: u64) {
        if let Some(v) = BloomView::parse(&self.filter) {
            v.prefetch_hash(h);
        }
    }

    /// True if `user_key` lies between the run's min and max user keys.
    pub fn overlaps_user_key(&self, user_key: &[u8]) -> bool {
        self.props.entries > 0
            && self.props.min_user_key.as_slice() <= user_key
            && user_key <= self.props.max_user_key.as_slice()
    }

    /// The range tombstones of the run, in the order they were written.
    pub fn range_tombstones(&self) -> &[RangeTombstone] {
        &self.range_dels
    }

    /// The first entry whose internal key is `>= lookup` (by
    /// [`key::compare`]), or `None` if every key is smaller.
    pub fn seek(&self, lookup: &[u8]) -> Result<Option<Entry>> {
        match self.block_at(self.block_for_point(lookup))? {
            Some(block) => self.entry_in(block, lookup).map(Some),
            None => Ok(None),
        }
    }

    /// The first entry `>= lookup` in `block`, the block
    /// [`RunFile::block_for_point`] chose for it.
    pub(crate) fn entry_in(&self, block: Arc<Block>, lookup: &[u8]) -> Result<Entry> {
        let range = Self::start_entry(&block, lookup);
        self.entry_within(block, lookup, range)
    }

    /// The first half of [`RunFile::entry_in`]: the entries of `block` a
    /// search for `lookup` must compare, from the block's prefix words
    /// alone, the first one's key and value starting to load. The value's
    /// lines are then on their way before the comparison reads the key,
    /// not a second miss after it; a batch takes every key through this
    /// before any through [`RunFile::entry_within`], so that the keys'
    /// misses overlap too.
    pub(crate) fn start_entry(block: &Block, lookup: &[u8]) -> std::ops::Range<usize> {
        let range = block.narrow(lookup, 0);
        block.prefetch_entry(range.start);
        range
    }

    /// The second half of [`RunFile::entry_in`]: the entry among `range`
    /// (what [`RunFile::start_entry`] gave).
    pub(crate) fn entry_within(
        &self,
        block: Arc<Block>,
        lookup: &[u8],
        range: std::ops::Range<usize>,
    ) -> Result<Entry> {
        let j = self.answer_within(&block, lookup, range)?;
        self.entry_at(block, j)
    }

    /// Entry `j` of `block` (a position [`RunFile::answer_in`] gave).
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
                current = Some((fence, self.block(fence)?));
                pos = 0;
            }
            let block = &current.as_ref().expect("loaded above").1;
            pos = self.answer_in(block, lookup, pos)?;
            out(n, Some(block.entry(pos).map_err(|c| self.to_error(c))?));
        }
        Ok(())
    }

    /// Reads the whole file: checks its checksum, every block's checksum,
    /// that keys are valid and strictly sorted and match the index and the
    /// properties, and that the filter knows every user key. Returns the
    /// number of entries checked.
    pub fn verify(&self) -> Result<u64> {
        super::verify::verify(self)
    }

    /// Marks the file for deletion when the last reference is dropped (used
    /// when a merge replaces the run; readers holding an `Arc` keep it).
    pub fn mark_obsolete(&self) {
        self.obsolete.store(true, AtomicOrdering::Release);
    }

    /// Number of data blocks.
    pub(crate) fn num_blocks(&self) -> usize {
        self.index.len()
    }

    /// The fence pointers.
    pub(crate) fn index(&self) -> &Index {
        &self.index
    }

    /// Whether the file lives in memory (read in place, never warmed).
    pub(crate) fn is_in_memory(&self) -> bool {
        self.in_memory.is_some()
    }

    /// The blocks of this file the cache holds now.
    pub(crate) fn cached_blocks(&self) -> Vec<usize> {
        self.cached.cached()
    }

    /// Takes this file's blocks out of the cache now, and caches no more of
    /// them (a merge replaced it; readers of older versions read it from
    /// the file).
    pub(crate) fn forget_cached(&self) {
        self.cache.forget(&self.cached);
    }

    /// The block cache this file reads through (and whose policy for the
    /// OS page cache its readers follow).
    pub(crate) fn block_cache(&self) -> &BlockCache {
        &self.cache
    }

    /// The file, for reads outside the cache (merges, `verify`).
    pub(crate) fn raw_file(&self) -> &dyn RandomAccessFile {
        &*self.file
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
    /// what the rest of the search reads starting to load ...
    pub(crate) fn start_block_for_point(&self, target: &[u8]) -> usize {
        self.index
            .point_group(target, |first, n| self.cached.prefetch(first, n))
    }

    /// ... and the block, searched from that fence.
    pub(crate) fn finish_block_for_point(&self, target: &[u8], from: usize) -> usize {
        self.index.gallop_last_ge(target, from)
    }

    /// An `Error::Corruption` for this file.
    pub(crate) fn corruption(&self, offset: u64, why: &str) -> Error {
        Error::corruption(&self.path, offset, why)
    }

    pub(crate) fn to_error(&self, c: Corrupt) -> Error {
        Error::corruption(&self.path, c.offset, c.reason)
    }

    /// The first entry `>= lookup` in a block whose last key is `>= lookup`.
    fn answer_in(&self, block: &Block, lookup: &[u8], from: usize) -> Result<usize> {
        self.answer_within(block, lookup, block.narrow(lookup, from))
    }

    /// [`RunFile::answer_in`] among the entries `range` of `block` (what
    /// [`Block::narrow`] gave for `lookup`).
    fn answer_within(
        &self,
        block: &Block,
        lookup: &[u8],
        range: std::ops::Range<usize>,
    ) -> Result<usize> {
        let j = block
            .lower_bound_within(lookup, range)
            .map_err(|c| self.to_error(c))?;
        if j == block.count() {
            return Err(self.corruption(block.offset(), "block does not match its fence pointer"));
        }
        Ok(j)
    }
}

impl Drop for RunFile {
    /// An obsolete file is deleted on the clean-up thread (see `reaper`):
    /// the thread dropping the last reference may be a writer. Its cached
    /// blocks go with it, there too: nobody can ask for them again (the
    /// cache id is never reused), and left in place they hold capacity
    /// until the eviction hand has passed a hot block twice. Measured on
    /// `slsm serve` (a million GETs right after merges rewrote the data,
    /// redis-benchmark -P 16): misses 400K -> 190K, requests/s +24% at the
    /// median of five. RocksDB 9's `uncache_aggressiveness` erases an
    /// obsolete file's blocks for the same reason.
    fn drop(&mut self) {
        if self.obsolete.load(AtomicOrdering::Acquire) {
            let (fs, path) = (Arc::clone(&self.fs), std::mem::take(&mut self.path));
            let (cache, cached) = (Arc::clone(&self.cache), Arc::clone(&self.cached));
            crate::reaper::defer(move || {
                cache.forget(&cached);
                let _ = fs.remove_file(&path);
            });
        }
    }
}
