//! [`RunIter`]: an owned, bidirectional cursor over a run.

use std::ops::Range;
use std::sync::Arc;

use super::block::Block;
use super::index;
use super::reader::RunFile;
use crate::error::{Error, Result};

/// A cursor over the entries of a run in [`crate::key::compare`] order. It
/// owns an `Arc` of the file, so it may outlive the run's place in the
/// engine's version. Every block it enters is checksum-verified (once per
/// process, see the module docs of `run`); a
/// corruption found while moving makes the cursor invalid and is reported
/// by [`RunIter::status`]. Positioning calls (`seek*`) clear the status.
pub struct RunIter {
    file: Arc<RunFile>,
    block_idx: usize,
    block: Option<Block>,
    pos: usize,
    entry: Option<(Range<usize>, Range<usize>)>,
    status: Option<Error>,
    /// For one forward pass (a merge): file bytes below this offset have
    /// been released; `None` when not releasing.
    released_to: Option<usize>,
}

/// A sequential cursor releases what it has read in steps of this size.
const RELEASE_STEP: usize = 4 << 20;

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
            status: None,
            released_to: None,
        }
    }

    /// A cursor for one forward pass over the whole file (a merge input):
    /// pages it has moved past are released from this process's resident
    /// memory (they stay in the page cache), so merging large runs does not
    /// make them resident.
    pub fn sequential(file: Arc<RunFile>) -> RunIter {
        let mut it = RunIter::new(file);
        it.released_to = Some(0);
        it
    }

    fn release_behind(&mut self, offset: usize) {
        if let Some(done) = self.released_to {
            if offset >= done + RELEASE_STEP {
                self.file.release(done..offset);
                self.released_to = Some(offset);
            }
        }
    }

    /// Starts loading what [`seek`](Self::seek) to `ikey` will read.
    pub fn prefetch_seek(&self, ikey: &[u8]) {
        self.file.prefetch_seek(ikey);
    }

    /// Positions at the first entry `>= ikey`.
    pub fn seek(&mut self, ikey: &[u8]) {
        self.status = None;
        let file = self.file.clone();
        let i = file.block_for_point(ikey);
        self.enter(i, |b| {
            let j = b.lower_bound(file.data(), ikey, 0).ok()?;
            (j < b.count()).then_some(j)
        });
    }

    /// Positions at the last entry `<= ikey`.
    pub fn seek_for_prev(&mut self, ikey: &[u8]) {
        self.status = None;
        let file = self.file.clone();
        match index::last_first_le(file.data(), file.fences(), ikey) {
            Some(i) => self.enter(i, |b| b.last_at_or_before(file.data(), ikey).ok()?),
            None => self.invalidate(),
        }
    }

    /// Positions at the first entry.
    pub fn seek_to_first(&mut self) {
        self.status = None;
        self.enter(0, |_| Some(0));
    }

    /// Positions at the last entry.
    pub fn seek_to_last(&mut self) {
        self.status = None;
        let n = self.file.num_blocks();
        match n.checked_sub(1) {
            Some(i) => self.enter(i, |b| Some(b.count() - 1)),
            None => self.invalidate(),
        }
    }

    /// Moves to the next entry (invalid after the last one).
    pub fn next(&mut self) {
        let Some(block) = self.block.filter(|_| self.entry.is_some()) else {
            return;
        };
        if self.pos + 1 < block.count() {
            self.set_pos(block, self.pos + 1);
        } else {
            self.enter(self.block_idx + 1, |_| Some(0));
        }
    }

    /// Moves to the previous entry (invalid before the first one).
    pub fn prev(&mut self) {
        let Some(block) = self.block.filter(|_| self.entry.is_some()) else {
            return;
        };
        if self.pos > 0 {
            self.set_pos(block, self.pos - 1);
        } else if self.block_idx > 0 {
            self.enter(self.block_idx - 1, |b| Some(b.count() - 1));
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
        &self.file.data()[k.clone()]
    }

    /// The current value. Panics if the cursor is not valid.
    pub fn value(&self) -> &[u8] {
        let (_, v) = self
            .entry
            .as_ref()
            .expect("RunIter::value on an invalid cursor");
        &self.file.data()[v.clone()]
    }

    /// The corruption that invalidated the cursor, if any.
    pub fn status(&self) -> Result<()> {
        match &self.status {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// Loads block `i` (invalid if past the end) and moves to the entry
    /// `pick` selects; `None` from `pick` means the block contradicts its
    /// fence pointer.
    fn enter(&mut self, i: usize, pick: impl FnOnce(&Block) -> Option<usize>) {
        if i >= self.file.num_blocks() {
            return self.invalidate();
        }
        let block = match self.file.load_block(i) {
            Ok(b) => b,
            Err(e) => return self.fail(e),
        };
        self.block_idx = i;
        self.release_behind(block.offset() as usize);
        match pick(&block) {
            Some(j) => self.set_pos(block, j),
            None => {
                let e = self
                    .file
                    .corruption(block.offset(), "block does not match its fence pointer");
                self.fail(e)
            }
        }
    }

    fn set_pos(&mut self, block: Block, j: usize) {
        match block.entry(self.file.data(), j) {
            Ok(e) => {
                self.block = Some(block);
                self.pos = j;
                self.entry = Some((e.key, e.value));
            }
            Err(c) => {
                let e = self.file.corruption(c.offset, &c.reason);
                self.fail(e)
            }
        }
    }

    fn invalidate(&mut self) {
        self.block = None;
        self.entry = None;
    }

    fn fail(&mut self, e: Error) {
        self.invalidate();
        self.status = Some(e);
    }
}
