//! [`RunFile`]: an open, immutable run, read with positional reads through
//! the database's block cache. Where its blocks come from is `blocks`;
//! how a lookup borrows them from the cache, `pinned`; finding a key in
//! it, `search`.

use std::borrow::Cow;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering as AtomicOrdering};
use std::sync::Arc;

mod blocks;
mod pinned;
mod search;

use super::block::Block;
use super::format::{Corrupt, FOOTER_LEN};
use super::index::Index;
use super::meta::read_meta;
use super::properties::RunProperties;
use crate::bloom::Filter;
use crate::db_id::DbId;
use crate::error::{Error, Result};
use crate::fs::{Advice, FileSystem, RandomAccessFile};
use crate::rangedel::RangeTombstone;

/// The block cache run files read through: the engine's cache
/// (`crate::cache`) holding this format's decoded blocks.
pub(crate) type BlockCache = crate::cache::BlockCache<Block>;

/// One open run file's slots in the [`BlockCache`].
pub(crate) type CachedBlocks = crate::cache::CachedBlocks<Block>;

/// An entry borrowed from a run's block: `(internal key, value)`.
pub type KeyValue<'a> = (&'a [u8], &'a [u8]);

/// Cache capacity of a run opened without a database's cache.
const STANDALONE_CACHE: usize = 8 << 20;

/// An entry of a run and the block that holds it (`key` is the range of
/// the stored key: the internal key without the block's prefix).
#[derive(Debug)]
pub struct Entry {
    block: Arc<Block>,
    key: Range<usize>,
    value: Range<usize>,
}

impl Entry {
    /// The internal key (assembled when its block stores the keys' shared
    /// prefix once).
    pub fn key(&self) -> Cow<'_, [u8]> {
        let (prefix, rest) = self.key_parts();
        match prefix.is_empty() {
            true => Cow::Borrowed(rest),
            false => Cow::Owned([prefix, rest].concat()),
        }
    }

    /// The internal key in its two stored parts: the block's shared prefix
    /// (maybe empty) and the rest.
    pub(crate) fn key_parts(&self) -> (&[u8], &[u8]) {
        (self.block.key_prefix(), self.block.slice(self.key.clone()))
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
    filter: Filter,
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
    /// cache of its own (`open_in` reads through a database's).
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
    pub(crate) fn open_in(
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
            + self.filter.memory_usage()
            + tombstones
            + 8 * self.verified.len()
    }

    /// False if no user key with [`crate::bloom::hash_key`] hash `h` is in
    /// the run (Bloom filter test).
    pub fn may_contain_hash(&self, h: u64) -> bool {
        self.filter.may_contain_hash(h)
    }

    /// Bytes of the run's Bloom filter.
    pub fn filter_bytes(&self) -> usize {
        self.filter.serialized_len()
    }

    /// How many of `hashes` pass the run's Bloom filter.
    pub fn filter_passes(&self, hashes: &[u64]) -> usize {
        hashes.iter().filter(|&&h| self.may_contain_hash(h)).count()
    }

    /// Starts loading the filter block [`may_contain_hash`](Self::may_contain_hash)
    /// will read for `h`, so that a lookup probing many runs waits for
    /// their filters' cache misses once, not once per run.
    pub fn prefetch_filter(&self, h: u64) {
        self.filter.prefetch_hash(h);
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

    /// The block cache this file reads through (and whose policy for the
    /// OS page cache its readers follow).
    pub(crate) fn block_cache(&self) -> &BlockCache {
        &self.cache
    }

    /// The file, for reads outside the cache (merges, `verify`).
    pub(crate) fn raw_file(&self) -> &dyn RandomAccessFile {
        &*self.file
    }

    /// An `Error::Corruption` for this file.
    pub(crate) fn corruption(&self, offset: u64, why: &str) -> Error {
        Error::corruption(&self.path, offset, why)
    }

    pub(crate) fn to_error(&self, c: Corrupt) -> Error {
        Error::corruption(&self.path, c.offset, c.reason)
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
