//! Reading a run file front to back in large chunks, outside the block
//! cache: what a merge and `verify` do, and what an iterator does once it
//! is seen scanning forward (readahead). One read covers many blocks (the
//! device sees big sequential reads, the kernel is entered once per chunk
//! instead of once per block), and nothing read this way displaces the
//! blocks lookups keep in the cache. Where the page cache cannot hold the
//! run files, a merge also drops the pages behind it (the file is being
//! merged away; see `RunIter::sequential`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::fs::{Advice, RandomAccessFile};

/// Bytes read at once by a merge or `verify`, and the most an iterator's
/// readahead grows to (RocksDB's iterators stop at the same size).
pub(crate) const CHUNK: usize = 256 << 10;

/// An iterator's first readahead: a short scan that happens to cross a few
/// blocks reads little more than it needs; each refill doubles it.
const FIRST_READAHEAD: usize = 16 << 10;

/// Where a block lies in its file.
#[derive(Clone, Copy)]
struct Span {
    offset: u64,
    len: u64,
}

/// A window over a file, moved forward chunk by chunk.
#[derive(Debug, Default)]
pub(crate) struct ChunkReader {
    buf: Vec<u8>,
    /// File offset of `buf[0]`.
    start: u64,
    /// Bytes the next refill reads (at least the block asked for).
    chunk: usize,
    /// Drop the pages behind the window from the page cache.
    drop_behind: bool,
    /// Read without leaving the pages in the page cache.
    uncached: bool,
    /// An iterator's share of its cache's readahead allowance.
    allowance: Option<Allowance>,
}

/// The readahead allowance of a block cache's iterators (part of the
/// memory budget): what their windows hold together, and the most they
/// may.
#[derive(Debug)]
pub(crate) struct Readahead {
    held: AtomicUsize,
    limit: AtomicUsize,
}

impl Readahead {
    pub fn new(limit: usize) -> Readahead {
        Readahead {
            held: AtomicUsize::new(0),
            limit: AtomicUsize::new(limit),
        }
    }

    /// Bounds what the windows may hold together (a database gives them
    /// part of its budget's buffer share).
    pub fn set_limit(&self, bytes: usize) {
        self.limit.store(bytes, Ordering::Relaxed);
    }

    /// Bytes the windows hold now.
    pub fn held(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }

    /// Takes `bytes` of the allowance if it has room.
    fn reserve(&self, bytes: usize) -> bool {
        let limit = self.limit.load(Ordering::Relaxed);
        self.held
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
                (held.saturating_add(bytes) <= limit).then_some(held + bytes)
            })
            .is_ok()
    }

    /// Gives back `bytes` taken by [`reserve`](Self::reserve).
    fn release(&self, bytes: usize) {
        self.held.fetch_sub(bytes, Ordering::Relaxed);
    }
}

/// What one window holds of the allowance, given back when it is dropped.
#[derive(Debug)]
struct Allowance {
    shared: Arc<Readahead>,
    held: usize,
}

impl Allowance {
    /// Claims `want` bytes in place of what it held; if the allowance has
    /// no room, holds nothing and returns `fallback` (one block: the read
    /// the cursor would make without readahead).
    fn claim(&mut self, want: usize, fallback: usize) -> usize {
        self.shared.release(self.held);
        self.held = 0;
        if want > fallback && self.shared.reserve(want) {
            self.held = want;
            return want;
        }
        fallback
    }
}

impl Drop for Allowance {
    fn drop(&mut self) {
        self.shared.release(self.held);
    }
}

impl ChunkReader {
    /// A reader; `drop_behind` for a pass over a file that will not be read
    /// again (a merge input).
    pub fn new(drop_behind: bool) -> ChunkReader {
        ChunkReader::with_chunk(drop_behind, CHUNK)
    }

    /// [`new`](Self::new) reading `chunk` bytes at once (a block bigger
    /// than that is read whole).
    pub fn with_chunk(drop_behind: bool, chunk: usize) -> ChunkReader {
        ChunkReader {
            chunk: chunk.max(4096),
            drop_behind,
            ..ChunkReader::default()
        }
    }

    /// An iterator's readahead: chunks from 16 KiB doubling to 256 KiB
    /// while the `shared` allowance has room (one block at a time when it
    /// has none), read past the page cache if `uncached` (the budget found
    /// that the page cache cannot hold the files).
    pub fn readahead(shared: Arc<Readahead>, uncached: bool) -> ChunkReader {
        ChunkReader {
            chunk: FIRST_READAHEAD,
            uncached,
            allowance: Some(Allowance { shared, held: 0 }),
            ..ChunkReader::default()
        }
    }

    /// The `len` bytes at `offset` (`end` is where reading may stop: the
    /// data blocks' end), reading a new chunk from `offset` if they are not
    /// in the window.
    pub fn bytes(
        &mut self,
        file: &dyn RandomAccessFile,
        (offset, len): (u64, u64),
        end: u64,
    ) -> std::io::Result<&[u8]> {
        let h = Span { offset, len };
        let in_window =
            h.offset >= self.start && h.offset + h.len <= self.start + self.buf.len() as u64;
        if !in_window {
            if self.drop_behind && !self.buf.is_empty() {
                file.advise(Advice::DontNeed(self.start, self.buf.len() as u64));
            }
            let mut want = (self.chunk as u64)
                .max(h.len)
                .min(end.saturating_sub(h.offset).max(h.len));
            if let Some(allowance) = self.allowance.as_mut() {
                want = allowance.claim(want as usize, h.len as usize) as u64;
                if self.buf.capacity() as u64 > 2 * want {
                    self.buf = Vec::new();
                }
            }
            if self.uncached {
                self.buf = file.read_vec_at_uncached(h.offset, want as usize)?;
            } else {
                self.buf.resize(want as usize, 0);
                file.read_at(h.offset, &mut self.buf)?;
            }
            self.start = h.offset;
            self.chunk = (self.chunk * 2).min(CHUNK);
        }
        let at = (h.offset - self.start) as usize;
        Ok(&self.buf[at..at + h.len as usize])
    }
}
