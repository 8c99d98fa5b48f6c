//! Where a [`RunFile`]'s data blocks come from: the file held in memory
//! (read in place when stored raw, its checksum verified once), the block
//! cache, or a positional read of the file, verified, decompressed and
//! then cached.

use std::cell::RefCell;
use std::sync::atomic::Ordering as AtomicOrdering;
use std::sync::Arc;

use super::RunFile;
use crate::error::{Error, Result};
use crate::fs::DirectRead;
use crate::run::block::{Block, BlockBytes};
use crate::run::cache::Admission;
use crate::run::chunks::ChunkReader;
use crate::run::compress::{decompress, decompress_into, is_raw};
use crate::run::format::{check_block, Handle, TRAILER_LEN};
use crate::run::pages;

impl RunFile {
    /// Block `i` ([`RunFile::block`]), `None` past the last block.
    pub(crate) fn block_at(&self, i: usize) -> Result<Option<Arc<Block>>> {
        match i < self.num_blocks() {
            true => self.block(i).map(Some),
            false => Ok(None),
        }
    }

    /// Data block `i`, from the cache or read (and verified) from the file.
    pub(crate) fn block(&self, i: usize) -> Result<Arc<Block>> {
        if let Some(mem) = &self.in_memory {
            if let Some(block) = self.block_in_place(mem, i)? {
                return Ok(block);
            }
        }
        if let Some(block) = self.cache.get(&self.cached, i) {
            block.note_reuse();
            // A cached block is rarely in the CPU's cache: bring it in at
            // once rather than miss by miss.
            block.prefetch();
            return Ok(block);
        }
        self.read_and_admit(i, Admission::Read)
    }

    /// How data block `i` is read if the cache lacks it and the read is
    /// direct (`O_DIRECT`, when the memory limit cannot hold the files):
    /// then a batch's reads can be submitted together.
    pub(crate) fn direct_read(&self, i: usize) -> Option<DirectRead> {
        if !self.cache.bypasses_os_cache() || i >= self.num_blocks() {
            return None;
        }
        let fd = self.file.direct_fd()?;
        let h = self.index.handle(i);
        Some(DirectRead {
            fd,
            offset: h.offset,
            len: h.len as usize,
        })
    }

    /// Verifies, decodes and caches data block `i`, read as `stored` by a
    /// batch's fetch ahead of the read that will need it.
    pub(crate) fn admit_fetched(&self, i: usize, stored: &[u8]) -> Result<()> {
        self.admit(i, stored, Admission::Ahead).map(|_| ())
    }

    /// Puts data block `i` in the cache ahead of the read that will need it
    /// (a batch's concurrent fetch): that read then counts as its first use.
    pub(crate) fn prefetch_block(&self, i: usize) -> Result<()> {
        if self.in_memory.is_some() || self.cache.contains(&self.cached, i) {
            return Ok(());
        }
        self.read_and_admit(i, Admission::Ahead).map(|_| ())
    }

    /// Data block `i` for a cursor scanning forward: from the cache if it
    /// is there, else from the window of `ahead` (created on first use),
    /// which reads the file in growing chunks; verified and decoded, but not
    /// cached, so that a scan leaves the cache to the blocks lookups reuse.
    pub(crate) fn block_read_ahead(
        &self,
        i: usize,
        ahead: &mut Option<ChunkReader>,
    ) -> Result<Arc<Block>> {
        if self.in_memory.is_some() {
            return self.block(i);
        }
        if let Some(block) = self.cache.get(&self.cached, i) {
            return Ok(block);
        }
        let reader = ahead.get_or_insert_with(|| ChunkReader::readahead(Arc::clone(&self.cache)));
        self.cache.note_read(self.index.handle(i).len as usize);
        self.block_from_chunks(i, reader)
    }

    /// Data block `i` read through `chunks`' window, verified and decoded,
    /// not cached: a merge's or `verify`'s pass over the file, a scan's
    /// readahead. A compressed block is decompressed straight from the
    /// window.
    pub(crate) fn block_from_chunks(
        &self,
        i: usize,
        chunks: &mut ChunkReader,
    ) -> Result<Arc<Block>> {
        let h = self.index.handle(i);
        let stored = chunks
            .bytes(self.file.as_ref(), h, self.props.data_bytes)
            .map_err(|e| self.read_error(h, e))?;
        let raw = match self.unseal(i, stored)? {
            Some(raw) => raw,
            None => stored[..stored.len() - TRAILER_LEN].to_vec(),
        };
        self.decode_raw(i, raw).map(Arc::new)
    }

    /// Data block `i` if it is in the cache or can be read without waiting
    /// for the device (the page cache has it); `None` otherwise.
    pub(crate) fn block_if_ready(&self, i: usize) -> Result<Option<Arc<Block>>> {
        if self.in_memory.is_some() {
            return self.block(i).map(Some);
        }
        if let Some(block) = self.cache.get(&self.cached, i) {
            return Ok(Some(block));
        }
        if self.direct_read(i).is_some() {
            // Read past the page cache anyway: whatever it holds is no
            // quicker for us, and asking would cost a system call.
            return Ok(None);
        }
        let h = self.index.handle(i);
        match self.file.read_vec_at_if_cached(h.offset, h.len as usize) {
            Ok(Some(stored)) => self.admit(i, &stored, Admission::Ahead).map(Some),
            Ok(None) => Ok(None),
            Err(e) => Err(self.read_error(h, e)),
        }
    }

    /// Reads block `i` from the file (leaving its pages in the OS page cache
    /// unless the cache says the memory limit cannot hold the files
    /// anyway), verifies and decodes it, and caches it; `prefetched` if no
    /// search uses it yet (see [`Block::note_reuse`]).
    pub(super) fn read_and_admit(&self, i: usize, how: Admission) -> Result<Arc<Block>> {
        let h = self.index.handle(i);
        let block = with_scratch(h.len as usize, |stored| {
            let read = match self.cache.bypasses_os_cache() {
                true => self.file.read_at_uncached(h.offset, stored),
                false => self.file.read_at(h.offset, stored),
            };
            read.map_err(|e| self.read_error(h, e))?;
            self.decode_for_cache(i, stored)
        })?;
        self.cache_block(i, block, h.len as usize, how)
    }

    /// Reads block `i` through `chunks` (front to back) and caches it as
    /// `how` says: warming the file (`run::warm`).
    pub(crate) fn warm_block(
        &self,
        i: usize,
        chunks: &mut ChunkReader,
        how: Admission,
    ) -> Result<()> {
        let h = self.index.handle(i);
        let stored = chunks
            .bytes(self.file.as_ref(), h, self.props.data_bytes)
            .map_err(|e| self.read_error(h, e))?;
        let block = self.decode_for_cache(i, stored)?;
        // A warmed block replaces one lookups were using, or fills room
        // the cache has (the data fits): it will be searched again, and
        // building its index here, on the warming thread while the block
        // is in this CPU's cache, spares the first lookups a plain search
        // and the build (a first pass of random `get`s over 1M warmed keys
        // was 1.4x the second's time without it).
        block.index_prefixes();
        self.cache_block(i, block, 0, how).map(|_| ())
    }

    /// Verifies and decodes block `i` read as `stored`, and caches it.
    fn admit(&self, i: usize, stored: &[u8], how: Admission) -> Result<Arc<Block>> {
        let block = self.decode_for_cache(i, stored)?;
        self.cache_block(i, block, stored.len(), how)
    }

    fn cache_block(
        &self,
        i: usize,
        block: Block,
        read: usize,
        how: Admission,
    ) -> Result<Arc<Block>> {
        self.cache.note_read(read);
        if how != Admission::Read {
            block.mark_prefetched();
        }
        Ok(self.cache.insert(&self.cached, i, Arc::new(block), how))
    }

    /// Checks the trailer of block `i` stored as `stored` and decodes it
    /// into a page of the pool (`run::pages`) if its raw form fits in one,
    /// else onto the heap.
    fn decode_for_cache(&self, i: usize, stored: &[u8]) -> Result<Block> {
        let offset = self.index.handle(i).offset;
        let (codec, payload) = check_block(stored, offset, "data").map_err(|c| self.to_error(c))?;
        if let Some(mut page) = pages::page() {
            let len = match is_raw(codec) {
                true => page.get_mut(..payload.len()).map(|dst| {
                    dst.copy_from_slice(payload);
                    payload.len()
                }),
                false => decompress_into(codec, payload, self.max_block_raw as usize, &mut page)
                    .map_err(|why| self.corruption(offset, why))?,
            };
            if let Some(len) = len {
                return Block::decode(BlockBytes::Page(page, len), offset)
                    .map_err(|c| self.to_error(c));
            }
        }
        let raw = decompress(codec, payload, self.max_block_raw as usize)
            .map_err(|why| self.corruption(offset, why))?;
        self.decode_raw(i, raw.into_owned())
    }

    /// Checks the trailer of block `i` stored as `stored` and decompresses
    /// the block; `None` if it is stored raw (it is `stored` less its
    /// trailer).
    fn unseal(&self, i: usize, stored: &[u8]) -> Result<Option<Vec<u8>>> {
        let offset = self.index.handle(i).offset;
        let (codec, payload) = check_block(stored, offset, "data").map_err(|c| self.to_error(c))?;
        match decompress(codec, payload, self.max_block_raw as usize) {
            Ok(std::borrow::Cow::Borrowed(_)) => Ok(None),
            Ok(std::borrow::Cow::Owned(raw)) => Ok(Some(raw)),
            Err(why) => Err(self.corruption(offset, why)),
        }
    }

    /// Block `i` from its raw bytes.
    fn decode_raw(&self, i: usize, raw: Vec<u8>) -> Result<Block> {
        let offset = self.index.handle(i).offset;
        Block::decode(BlockBytes::Owned(raw.into_boxed_slice()), offset)
            .map_err(|c| self.to_error(c))
    }

    /// Block `i` of a file held in memory, read in place if it is stored
    /// raw (`None` if it is compressed: it goes through the cache).
    fn block_in_place(&self, mem: &Arc<Vec<u8>>, i: usize) -> Result<Option<Arc<Block>>> {
        let h = self.index.handle(i);
        let (start, end) = (h.offset as usize, (h.offset + h.len) as usize);
        let stored = mem
            .get(start..end)
            .ok_or_else(|| self.corruption(h.offset, "data block outside the file"))?;
        let (word, bit) = (&self.verified[i / 64], 1u64 << (i % 64));
        let codec = if word.load(AtomicOrdering::Relaxed) & bit != 0 {
            stored[stored.len() - TRAILER_LEN]
        } else {
            let (codec, _) = check_block(stored, h.offset, "data").map_err(|c| self.to_error(c))?;
            word.fetch_or(bit, AtomicOrdering::Relaxed);
            codec
        };
        if codec != 0 {
            return Ok(None);
        }
        let bytes = BlockBytes::Shared(Arc::clone(mem), start..end - TRAILER_LEN);
        let block = Block::decode(bytes, h.offset).map_err(|c| self.to_error(c))?;
        Ok(Some(Arc::new(block)))
    }

    /// A failed read of `h`: a file shorter than its index says was damaged
    /// (truncated, perhaps by another process); anything else is I/O.
    fn read_error(&self, h: Handle, e: std::io::Error) -> Error {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            self.corruption(h.offset, "the file ends before this block (truncated?)")
        } else {
            Error::io(&self.path, e)
        }
    }
}

/// Stored blocks up to this size are read into the thread's scratch buffer;
/// larger ones (a huge value's block) into a buffer of their own.
const SCRATCH_MAX: usize = 64 << 10;

thread_local! {
    /// Where a block read for the cache lands before it is verified and
    /// decoded into its page: read after read, no allocation.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Calls `f` with a buffer of `len` bytes (their contents unspecified).
fn with_scratch<R>(len: usize, f: impl FnOnce(&mut [u8]) -> R) -> R {
    if len > SCRATCH_MAX {
        return f(&mut vec![0; len]);
    }
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buf) => {
            if buf.len() < len {
                buf.resize(len, 0);
            }
            f(&mut buf[..len])
        }
        Err(_) => f(&mut vec![0; len]),
    })
}
