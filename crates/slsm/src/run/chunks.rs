//! Reading a run file front to back in large chunks, outside the block
//! cache: what a merge and `verify` do. One read covers many blocks (the
//! device sees big sequential reads), nothing read this way displaces the
//! blocks lookups keep in the cache, and the pages behind the reader are
//! dropped from the page cache (the file is being merged away).

use super::format::Handle;
use crate::fs::{Advice, RandomAccessFile};

/// Bytes read at once.
const CHUNK: usize = 256 << 10;

/// A window over a file, moved forward chunk by chunk.
#[derive(Debug, Default)]
pub(crate) struct ChunkReader {
    buf: Vec<u8>,
    /// File offset of `buf[0]`.
    start: u64,
    /// Drop the pages behind the window from the page cache.
    drop_behind: bool,
}

impl ChunkReader {
    /// A reader; `drop_behind` for a pass over a file that will not be read
    /// again (a merge input).
    pub fn new(drop_behind: bool) -> ChunkReader {
        ChunkReader {
            drop_behind,
            ..ChunkReader::default()
        }
    }

    /// The bytes of `h` (`end` is where reading may stop: the data blocks'
    /// end), reading a new chunk from `h.offset` if they are not in the
    /// window.
    pub fn bytes(
        &mut self,
        file: &dyn RandomAccessFile,
        h: Handle,
        end: u64,
    ) -> std::io::Result<&[u8]> {
        let in_window =
            h.offset >= self.start && h.offset + h.len <= self.start + self.buf.len() as u64;
        if !in_window {
            if self.drop_behind && !self.buf.is_empty() {
                file.advise(Advice::DontNeed(self.start, self.buf.len() as u64));
            }
            let want = (CHUNK as u64)
                .max(h.len)
                .min(end.saturating_sub(h.offset).max(h.len));
            self.buf.resize(want as usize, 0);
            file.read_at(h.offset, &mut self.buf)?;
            self.start = h.offset;
        }
        let at = (h.offset - self.start) as usize;
        Ok(&self.buf[at..at + h.len as usize])
    }
}
