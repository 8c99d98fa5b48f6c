//! The cursor every source of internal keys gives a merge: memory runs,
//! run files (a leaf of `iter/`: the merge and the user's iterator build on
//! it).

use std::sync::Arc;

use slsm_skiplist::OwnedIter;

use crate::error::Result;
use crate::key::InternalOrder;
use crate::sst::{RunFile, RunIter};

/// A bidirectional cursor over internal keys in `key::compare` order.
///
/// `key`/`value` may only be called while `valid()`. A cursor that hits
/// corruption becomes invalid and reports it from `status`.
pub(crate) trait InternalIter: Send {
    fn valid(&self) -> bool;
    fn key(&self) -> &[u8];
    fn value(&self) -> &[u8];
    /// First entry `>= ikey`.
    fn seek(&mut self, ikey: &[u8]);
    /// Last entry `<= ikey`.
    fn seek_for_prev(&mut self, ikey: &[u8]);
    fn seek_to_first(&mut self);
    fn seek_to_last(&mut self);
    fn next(&mut self);
    fn prev(&mut self);
    fn status(&self) -> Result<()>;
    /// The skiplist cursor behind this one, if it is a memory run's: a
    /// merging iterator seeks all of those together
    /// ([`OwnedIter::seek_all`]).
    fn as_skiplist_cursor(&mut self) -> Option<&mut OwnedIter<InternalOrder>> {
        None
    }
    /// The run-file block `seek(ikey)` will read, if this cursor reads a
    /// run file: a merging iterator fetches those of all its cursors at
    /// once before it seeks them.
    fn block_for_seek(&self, _ikey: &[u8]) -> Option<(Arc<RunFile>, usize)> {
        None
    }
}

impl InternalIter for OwnedIter<InternalOrder> {
    fn as_skiplist_cursor(&mut self) -> Option<&mut OwnedIter<InternalOrder>> {
        Some(self)
    }

    fn valid(&self) -> bool {
        OwnedIter::valid(self)
    }
    fn key(&self) -> &[u8] {
        OwnedIter::key(self)
    }
    fn value(&self) -> &[u8] {
        OwnedIter::value(self)
    }
    fn seek(&mut self, ikey: &[u8]) {
        OwnedIter::seek(self, ikey)
    }
    fn seek_for_prev(&mut self, ikey: &[u8]) {
        OwnedIter::seek_for_prev(self, ikey)
    }
    fn seek_to_first(&mut self) {
        OwnedIter::seek_to_first(self)
    }
    fn seek_to_last(&mut self) {
        OwnedIter::seek_to_last(self)
    }
    fn next(&mut self) {
        self.move_next()
    }
    fn prev(&mut self) {
        self.move_prev()
    }
    fn status(&self) -> Result<()> {
        Ok(())
    }
}

impl InternalIter for RunIter {
    fn valid(&self) -> bool {
        RunIter::valid(self)
    }
    fn key(&self) -> &[u8] {
        RunIter::key(self)
    }
    fn value(&self) -> &[u8] {
        RunIter::value(self)
    }
    fn seek(&mut self, ikey: &[u8]) {
        RunIter::seek(self, ikey)
    }
    fn block_for_seek(&self, ikey: &[u8]) -> Option<(Arc<RunFile>, usize)> {
        let file = self.file();
        let i = file.block_for_point(ikey);
        (i < file.num_blocks()).then(|| (Arc::clone(file), i))
    }
    fn seek_for_prev(&mut self, ikey: &[u8]) {
        RunIter::seek_for_prev(self, ikey)
    }
    fn seek_to_first(&mut self) {
        RunIter::seek_to_first(self)
    }
    fn seek_to_last(&mut self) {
        RunIter::seek_to_last(self)
    }
    fn next(&mut self) {
        RunIter::next(self)
    }
    fn prev(&mut self) {
        RunIter::prev(self)
    }
    fn status(&self) -> Result<()> {
        RunIter::status(self)
    }
}

/// A cursor over a run file.
pub(crate) fn run_cursor(file: &Arc<RunFile>) -> Box<dyn InternalIter> {
    Box::new(RunIter::new(Arc::clone(file)))
}

/// A cursor for one forward pass over a run file (a merge input); it keeps
/// little of the file resident.
pub(crate) fn run_cursor_sequential(file: &Arc<RunFile>, chunk: usize) -> Box<dyn InternalIter> {
    Box::new(RunIter::sequential_in_chunks(Arc::clone(file), chunk))
}
