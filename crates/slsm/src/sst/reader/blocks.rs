//! The one door to a [`RunFile`]'s data blocks, [`RunFile::block`], and
//! where they come from: the file held in memory (read in place when
//! stored raw, its checksum verified once), the block cache, or a
//! positional read of the file, verified, decompressed and then cached.
//! How a block is wanted (a lookup, a batch's fetch, a scan, a merge's
//! pass, warming) is the caller's [`Want`]; the file's side of the cache's
//! contract ([`BlockSource`]) is here too.

use std::cell::RefCell;
use std::sync::atomic::Ordering as AtomicOrdering;
use std::sync::Arc;

use super::RunFile;
use crate::cache::pages;
use crate::cache::{Admission, BlockSource, Cacheable, ChunkReader, Want};
use crate::error::{Error, Result};
use crate::fs::DirectRead;
use crate::sst::block::{Block, BlockBytes};
use crate::sst::compress::{decompress, decompress_into, is_raw};
use crate::sst::format::{check_block, Handle, TRAILER_LEN};

impl RunFile {
    /// Data block `i` as `want` says (see [`Want`]): `None` past the last
    /// block, for `Want::IfReady` when the block would wait for the
    /// device, and for `Want::Ahead`.
    #[inline]
    pub(crate) fn block(&self, i: usize, want: Want<'_>) -> Result<Option<Arc<Block>>> {
        if i >= self.num_blocks() {
            return Ok(None);
        }
        match want {
            Want::Lookup => self.lookup(i).map(Some),
            Want::Missed => match self.in_memory {
                Some(_) => self.lookup(i).map(Some),
                None => self.read_and_admit(i, Admission::Read).map(Some),
            },
            Want::IfReady => self.if_ready(i),
            Want::Ahead => self.ahead(i).map(|()| None),
            Want::Fetched(stored) => self.admit(i, stored, Admission::Ahead).map(Some),
            Want::Scan(window) => self.scanned(i, window).map(Some),
            Want::Pass(chunks) => self.through_chunks(i, chunks).map(Some),
            Want::Warm(chunks, how) => self.warm(i, chunks, how).map(Some),
        }
    }

    /// Where block `i` lies for a direct read (`O_DIRECT`, when the memory
    /// limit cannot hold the files): then a batch's reads are submitted
    /// together, and each comes back through [`Want::Fetched`].
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

    /// A lookup's block `i`: in place, cached, or read and cached.
    #[inline]
    fn lookup(&self, i: usize) -> Result<Arc<Block>> {
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

    /// Block `i` if it is cached or in memory; `None` if it would wait for
    /// the device.
    fn if_ready(&self, i: usize) -> Result<Option<Arc<Block>>> {
        if self.in_memory.is_some() {
            return self.lookup(i).map(Some);
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

    /// Puts block `i` in the cache ahead of the read that will need it.
    fn ahead(&self, i: usize) -> Result<()> {
        if self.in_memory.is_some() || self.cache.contains(&self.cached, i) {
            return Ok(());
        }
        self.read_and_admit(i, Admission::Ahead).map(|_| ())
    }

    /// A scanning cursor's block `i`: cached, or read through its window.
    fn scanned(&self, i: usize, window: &mut Option<ChunkReader>) -> Result<Arc<Block>> {
        if self.in_memory.is_some() {
            return self.lookup(i);
        }
        if let Some(block) = self.cache.get(&self.cached, i) {
            return Ok(block);
        }
        let reader = window.get_or_insert_with(|| {
            let shared = Arc::clone(self.cache.readahead());
            ChunkReader::readahead(shared, self.cache.bypasses_os_cache())
        });
        self.cache.note_read(self.index.handle(i).len as usize);
        self.through_chunks(i, reader)
    }

    /// Block `i` read through `chunks`' window, verified and decoded, not
    /// cached. A compressed block is decompressed straight from the
    /// window.
    fn through_chunks(&self, i: usize, chunks: &mut ChunkReader) -> Result<Arc<Block>> {
        let stored = self.chunk_bytes(i, chunks)?;
        let raw = match self.unseal(i, stored)? {
            Some(raw) => raw,
            None => stored[..stored.len() - TRAILER_LEN].to_vec(),
        };
        self.decode_raw(i, raw).map(Arc::new)
    }

    /// The stored bytes of block `i`, through `chunks`' window.
    fn chunk_bytes<'c>(&self, i: usize, chunks: &'c mut ChunkReader) -> Result<&'c [u8]> {
        let h = self.index.handle(i);
        chunks
            .bytes(self.file.as_ref(), (h.offset, h.len), self.props.data_bytes)
            .map_err(|e| self.read_error(h, e))
    }

    /// Reads block `i` from the file (leaving its pages in the OS page cache
    /// unless the cache says the memory limit cannot hold the files
    /// anyway), verifies and decodes it, and caches it as `how` says.
    fn read_and_admit(&self, i: usize, how: Admission) -> Result<Arc<Block>> {
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
    /// `how` says: warming the file (`cache::warm`).
    fn warm(&self, i: usize, chunks: &mut ChunkReader, how: Admission) -> Result<Arc<Block>> {
        let stored = self.chunk_bytes(i, chunks)?;
        let block = self.decode_for_cache(i, stored)?;
        // A warmed block replaces one lookups were using, or fills room
        // the cache has (the data fits): it will be searched again, and
        // building its index here, on the warming thread while the block
        // is in this CPU's cache, spares the first lookups a plain search
        // and the build (a first pass of random `get`s over 1M warmed keys
        // was 1.4x the second's time without it).
        block.index_prefixes();
        self.cache_block(i, block, 0, how)
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
    /// into a page of the pool (`cache::pages`) if its raw form fits in one,
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

impl Cacheable for Block {
    fn charge(&self) -> usize {
        self.len()
    }

    fn prefetch_header(&self) {
        self.prefetch_struct();
    }
}

impl BlockSource for RunFile {
    type Block = Block;

    fn block(&self, i: usize, want: Want<'_>) -> Result<Option<Arc<Block>>> {
        RunFile::block(self, i, want)
    }

    fn blocks(&self) -> usize {
        self.num_blocks()
    }

    fn direct_read(&self, i: usize) -> Option<DirectRead> {
        RunFile::direct_read(self, i)
    }

    fn last_key(&self, i: usize) -> &[u8] {
        self.index.last_key(i)
    }

    fn cached_blocks(&self) -> Vec<usize> {
        self.cached.cached()
    }

    fn forget_cached(&self) {
        self.cache.forget(&self.cached);
    }

    fn worth_warming(&self) -> bool {
        self.in_memory.is_none() && !self.cache.bypasses_os_cache()
    }

    fn cache_room(&self) -> u64 {
        self.cache.room()
    }
}
