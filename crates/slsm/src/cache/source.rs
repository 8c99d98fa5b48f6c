//! What the cache's readers see of a file of blocks: [`BlockSource`], with
//! one door to its blocks ([`BlockSource::block`]) that takes how a block
//! is wanted ([`Want`]), as RocksDB's block-based table reaches its blocks
//! through one `RetrieveBlock` with a read mode. The batch fetch (`fetch`)
//! and the warming of new files (`warm`) are written against it, knowing
//! nothing of the files' format; the run-file reader (`sst::RunFile`)
//! implements it.
//!
//! * **Owns**: nothing: a contract.
//! * **Thread safety**: a source is shared by any number of threads.

use std::sync::Arc;

use super::block::{Admission, Cacheable};
use super::chunks::ChunkReader;
use crate::error::Result;
use crate::fs::DirectRead;

/// How a block is wanted, from the cheapest to the most deliberate read.
#[derive(Debug)]
pub(crate) enum Want<'a> {
    /// A lookup's: the file held in memory, the cache (a counted hit or
    /// miss), or the file, read, verified, decoded and cached.
    Lookup,
    /// A lookup's whose miss is counted already (it asked the cache for a
    /// borrowed block first): read and cached.
    Missed,
    /// Only if it is in memory now: the cache, the file held in memory, or
    /// the OS page cache (then admitted ahead); `None` when it would wait
    /// for the device.
    IfReady,
    /// Into the cache ahead of the read that needs it (a batch's fetch),
    /// unless it is there: that read then counts as its first use.
    /// Answers `None`.
    Ahead,
    /// Read as these stored bytes by a batch's one submission: verified,
    /// decoded and admitted ahead.
    Fetched(&'a [u8]),
    /// A scanning cursor's: the cache if it has it, else through the
    /// cursor's readahead window (made on first use), verified and decoded
    /// but not cached, so a scan leaves the cache to what lookups reuse.
    Scan(&'a mut Option<ChunkReader>),
    /// A pass over the whole file (a merge's input, `verify`): through
    /// `chunks`, not cached.
    Pass(&'a mut ChunkReader),
    /// Warming a new file: through `chunks`, cached as the admission says.
    Warm(&'a mut ChunkReader, Admission),
}

/// A file of blocks read through a block cache.
pub(crate) trait BlockSource: Send + Sync + 'static {
    /// The block the cache holds for it.
    type Block: Cacheable;

    /// Block `i` as `want` says: `None` past the last block, and where
    /// the want allows it (`IfReady`, `Ahead`).
    fn block(&self, i: usize, want: Want<'_>) -> Result<Option<Arc<Self::Block>>>;

    /// Number of blocks.
    fn blocks(&self) -> usize;

    /// Where block `i` lies, if the cache lacks it and it would be read
    /// directly (`O_DIRECT`): a batch's reads can then be submitted in one
    /// go, and each handed back with [`Want::Fetched`].
    fn direct_read(&self, i: usize) -> Option<DirectRead>;

    /// The last key of block `i`, in the engine's internal-key order.
    fn last_key(&self, i: usize) -> &[u8];

    /// The blocks of this file the cache holds now.
    fn cached_blocks(&self) -> Vec<usize>;

    /// Takes this file's blocks out of the cache now, and caches no more
    /// of them.
    fn forget_cached(&self);

    /// Whether warming this file pays: false for a file held in memory
    /// (read in place) and where the page cache cannot hold the files
    /// (reading them back would be device reads).
    fn worth_warming(&self) -> bool;

    /// Bytes the cache could take before it evicts anything.
    fn cache_room(&self) -> u64;
}
