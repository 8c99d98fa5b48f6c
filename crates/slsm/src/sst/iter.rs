//! [`RunIter`]: an owned, bidirectional cursor over a run.

use std::ops::Range;
use std::sync::Arc;

use super::block::Block;
use super::reader::RunFile;
use crate::cache::{ChunkReader, Want, CHUNK};
use crate::error::{Error, Result};

/// A cursor over the entries of a run in [`crate::key::compare`] order. It
/// owns an `Arc` of the file, so it may outlive the run's place in the
/// engine's version. Every block it enters is verified when read from the
/// file (see the module docs of `sst`); a corruption found while moving
/// makes the cursor invalid and is reported by [`RunIter::status`].
/// Positioning calls (`seek*`) clear the status.
pub struct RunIter {
    file: Arc<RunFile>,
    block_idx: usize,
    block: Option<Arc<Block>>,
    pos: usize,
    entry: Option<(Range<usize>, Range<usize>)>,
    /// The current internal key, when its block stores the keys' shared
    /// prefix once (else the key is read in the block).
    key: Vec<u8>,
    status: Option<Error>,
    /// For one forward pass (a merge): blocks are read in big chunks,
    /// outside the block cache.
    chunks: Option<ChunkReader>,
    /// Blocks entered in a row by stepping forward out of the one before.
    forward_steps: u32,
    /// Once `forward_steps` reaches [`READAHEAD_AFTER`]: the cursor is
    /// scanning, and reads the blocks the cache lacks in growing chunks
    /// (not caching them). Dropped by every seek.
    ahead: Option<ChunkReader>,
}

/// Blocks a cursor must step into forward, one after another, before it
/// reads ahead (RocksDB's iterators wait for two sequential reads too): a
/// seek followed by a few `next`s never pays for a chunk.
pub(crate) const READAHEAD_AFTER: u32 = 2;

impl std::fmt::Debug for RunIter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunIter")
            .field("file", &self.file.path())
            .field("block", &self.block_idx)
            .field("pos", &self.pos)
            .field("valid", &self.valid())
            .finish()
    }
}

impl RunIter {
    /// A cursor over `file`, initially not positioned (invalid).
    pub fn new(file: Arc<RunFile>) -> RunIter {
        RunIter {
            file,
            block_idx: 0,
            block: None,
            pos: 0,
            entry: None,
            key: Vec::new(),
            status: None,
            chunks: None,
            forward_steps: 0,
            ahead: None,
        }
    }

    /// A cursor for one forward pass over the whole file (a merge input):
    /// blocks are read in large chunks without going through the block
    /// cache, so a merge does not evict what lookups use. The pages it has
    /// read are dropped from the page cache only where the page cache cannot
    /// hold the run files anyway (the budget's decision, `bypasses_os_cache`):
    /// elsewhere lookups keep reading the file until the merge is done, and
    /// dropping its pages sent them to the device (in memory, 5M keys:
    /// `readwhilewriting` read 15-52 bytes from the device per lookup).
    pub fn sequential(file: Arc<RunFile>) -> RunIter {
        RunIter::sequential_in_chunks(file, CHUNK)
    }

    /// [`sequential`](Self::sequential) reading `chunk` bytes at once (a
    /// merge sizes them to its memory budget).
    pub fn sequential_in_chunks(file: Arc<RunFile>, chunk: usize) -> RunIter {
        let drop_behind = file.block_cache().bypasses_os_cache();
        let mut it = RunIter::new(file);
        it.chunks = Some(ChunkReader::with_chunk(drop_behind, chunk));
        it
    }

    /// Positions at the first entry `>= ikey`.
    pub fn seek(&mut self, ikey: &[u8]) {
        self.reposition();
        let i = self.file.block_for_point(ikey);
        self.enter(i, |file, b| file.position_in(b, ikey).ok());
    }

    /// Positions at the last entry `<= ikey`.
    pub fn seek_for_prev(&mut self, ikey: &[u8]) {
        self.reposition();
        let n = self.file.num_blocks();
        let i = self.file.block_for_point(ikey);
        if i == n {
            // Every key is smaller: the last entry of the run.
            return self.seek_to_last();
        }
        // Block i holds the first key >= ikey: the answer is in it, or is
        // the last entry of the block before.
        let block = match self.load(i) {
            Ok(b) => b,
            Err(e) => return self.fail(e),
        };
        match block.last_at_or_before(ikey) {
            Ok(Some(j)) => {
                self.block_idx = i;
                self.set_pos(block, j);
            }
            Ok(None) if i > 0 => self.enter(i - 1, |_, b| Some(b.count() - 1)),
            Ok(None) => self.invalidate(),
            Err(c) => self.fail(self.file.to_error(c)),
        }
    }

    /// Positions at the first entry.
    pub fn seek_to_first(&mut self) {
        self.reposition();
        self.enter(0, |_, _| Some(0));
    }

    /// Positions at the last entry.
    pub fn seek_to_last(&mut self) {
        self.reposition();
        match self.file.num_blocks().checked_sub(1) {
            Some(i) => self.enter(i, |_, b| Some(b.count() - 1)),
            None => self.invalidate(),
        }
    }

    /// Moves to the next entry (invalid after the last one).
    pub fn next(&mut self) {
        let Some(block) = self.block.as_ref().filter(|_| self.entry.is_some()) else {
            return;
        };
        if self.pos + 1 < block.count() {
            self.move_to(self.pos + 1);
        } else {
            self.forward_steps = self.forward_steps.saturating_add(1);
            self.enter(self.block_idx + 1, |_, _| Some(0));
        }
    }

    /// Moves to the previous entry (invalid before the first one).
    pub fn prev(&mut self) {
        if self.block.is_none() || self.entry.is_none() {
            return;
        }
        if self.pos > 0 {
            self.move_to(self.pos - 1);
        } else if self.block_idx > 0 {
            self.forward_steps = 0;
            self.enter(self.block_idx - 1, |_, b| Some(b.count() - 1));
        } else {
            self.invalidate();
        }
    }

    /// True when positioned at an entry.
    pub fn valid(&self) -> bool {
        self.entry.is_some()
    }

    /// The current internal key. Panics if the cursor is not valid.
    pub fn key(&self) -> &[u8] {
        let (k, _) = self
            .entry
            .as_ref()
            .expect("RunIter::key on an invalid cursor");
        let block = self.block.as_ref().expect("a valid cursor has a block");
        match block.key_prefix().is_empty() {
            true => block.slice(k.clone()),
            false => &self.key,
        }
    }

    /// The current value. Panics if the cursor is not valid.
    pub fn value(&self) -> &[u8] {
        let (_, v) = self
            .entry
            .as_ref()
            .expect("RunIter::value on an invalid cursor");
        self.block
            .as_ref()
            .expect("a valid cursor has a block")
            .slice(v.clone())
    }

    /// The corruption that invalidated the cursor, if any.
    pub fn status(&self) -> Result<()> {
        match &self.status {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// The file the cursor reads.
    pub(crate) fn file(&self) -> &Arc<RunFile> {
        &self.file
    }

    /// Block `i`: through the cache, or from the chunk reader for one pass.
    fn load(&mut self, i: usize) -> Result<Arc<Block>> {
        let want = match self.chunks.as_mut() {
            Some(chunks) => Want::Pass(chunks),
            None if self.forward_steps >= READAHEAD_AFTER => Want::Scan(&mut self.ahead),
            None => Want::Lookup,
        };
        self.file
            .block(i, want)?
            .ok_or_else(|| self.file.corruption(0, "a block past the file's last"))
    }

    /// Loads block `i` (invalid if past the end) and moves to the entry
    /// `pick` selects; `None` from `pick` means the block contradicts its
    /// fence pointer.
    fn enter(&mut self, i: usize, pick: impl FnOnce(&RunFile, &Block) -> Option<usize>) {
        if i >= self.file.num_blocks() {
            return self.invalidate();
        }
        let block = match self.load(i) {
            Ok(b) => b,
            Err(e) => return self.fail(e),
        };
        self.block_idx = i;
        match pick(&self.file, &block) {
            Some(j) => self.set_pos(block, j),
            None => {
                let e = self
                    .file
                    .corruption(block.offset(), "block does not match its fence pointer");
                self.fail(e)
            }
        }
    }

    fn set_pos(&mut self, block: Arc<Block>, j: usize) {
        self.block = Some(block);
        self.move_to(j);
    }

    /// Moves to entry `j` of the current block (a step within the block
    /// leaves the block's reference count alone).
    fn move_to(&mut self, j: usize) {
        let Some(block) = &self.block else {
            return self.invalidate();
        };
        match block.entry_ranges(j) {
            Ok(ranges) => {
                if !block.key_prefix().is_empty() {
                    block.stored_key_into(ranges.0.clone(), &mut self.key);
                }
                self.pos = j;
                self.entry = Some(ranges);
            }
            Err(c) => {
                let e = self.file.to_error(c);
                self.fail(e)
            }
        }
    }

    /// A seek: clears the status and ends any readahead.
    fn reposition(&mut self) {
        self.status = None;
        self.forward_steps = 0;
        self.ahead = None;
    }

    fn invalidate(&mut self) {
        self.block = None;
        self.entry = None;
        // A cursor past its end gives back its readahead window.
        self.ahead = None;
    }

    fn fail(&mut self, e: Error) {
        self.invalidate();
        self.status = Some(e);
    }
}
