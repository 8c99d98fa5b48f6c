//! A k-way merge of internal-key cursors with a binary heap of child
//! indices (a min-heap going forward, a max-heap going backward), as in the
//! sLSM paper's HeapMerge ("The Skiplist-Based LSM Tree", algorithm 1) but bidirectional.

use std::cmp::Ordering;

use slsm_skiplist::OwnedIter;

use super::internal::InternalIter;
use crate::error::Result;
use crate::key;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    Forward,
    Backward,
}

/// Merges children that each yield internal keys in order. Internal keys
/// are unique across children (every write has its own sequence number),
/// so the merge is a plain interleave.
pub(crate) struct MergingIter {
    children: Vec<Box<dyn InternalIter>>,
    /// Indices of valid children, heap-ordered for `direction`.
    heap: Vec<usize>,
    direction: Direction,
}

impl MergingIter {
    pub fn new(children: Vec<Box<dyn InternalIter>>) -> Self {
        MergingIter {
            children,
            heap: Vec::new(),
            direction: Direction::Forward,
        }
    }

    /// True if child `a` should sit above child `b` in the heap.
    #[inline]
    fn above(&self, a: usize, b: usize) -> bool {
        let ord = key::compare(self.children[a].key(), self.children[b].key());
        match self.direction {
            Direction::Forward => ord == Ordering::Less,
            Direction::Backward => ord == Ordering::Greater,
        }
    }

    fn sift_down(&mut self, mut pos: usize) {
        let n = self.heap.len();
        loop {
            let (l, r) = (2 * pos + 1, 2 * pos + 2);
            let mut best = pos;
            if l < n && self.above(self.heap[l], self.heap[best]) {
                best = l;
            }
            if r < n && self.above(self.heap[r], self.heap[best]) {
                best = r;
            }
            if best == pos {
                return;
            }
            self.heap.swap(pos, best);
            pos = best;
        }
    }

    fn rebuild(&mut self, direction: Direction) {
        self.direction = direction;
        self.heap.clear();
        self.heap
            .extend((0..self.children.len()).filter(|&i| self.children[i].valid()));
        for pos in (0..self.heap.len() / 2).rev() {
            self.sift_down(pos);
        }
    }

    /// After the top child moved: restore the heap.
    fn fix_top(&mut self) {
        let top = self.heap[0];
        if self.children[top].valid() {
            self.sift_down(0);
        } else {
            self.heap.swap_remove(0);
            if !self.heap.is_empty() {
                self.sift_down(0);
            }
        }
    }
}

impl InternalIter for MergingIter {
    fn valid(&self) -> bool {
        !self.heap.is_empty()
    }

    fn key(&self) -> &[u8] {
        self.children[self.heap[0]].key()
    }

    fn value(&self) -> &[u8] {
        self.children[self.heap[0]].value()
    }

    fn seek(&mut self, ikey: &[u8]) {
        // Memory runs' skiplists are searched in lockstep (their cache
        // misses overlap); run files one by one, once the blocks they will
        // read have been fetched together.
        if self.children.len() > 1 && crate::cache::fetch_wanted() {
            let blocks: Vec<_> = self
                .children
                .iter()
                .filter_map(|c| c.block_for_seek(ikey))
                .collect();
            if blocks.len() > 1 {
                crate::cache::fetch(&blocks);
            }
        }
        for c in &mut self.children {
            if c.as_skiplist_cursor().is_none() {
                c.seek(ikey);
            }
        }
        let mut lists: Vec<&mut OwnedIter<_>> = self
            .children
            .iter_mut()
            .filter_map(|c| c.as_skiplist_cursor())
            .collect();
        OwnedIter::seek_all(&mut lists, ikey);
        self.rebuild(Direction::Forward);
    }

    fn seek_for_prev(&mut self, ikey: &[u8]) {
        for c in &mut self.children {
            c.seek_for_prev(ikey);
        }
        self.rebuild(Direction::Backward);
    }

    fn seek_to_first(&mut self) {
        for c in &mut self.children {
            c.seek_to_first();
        }
        self.rebuild(Direction::Forward);
    }

    fn seek_to_last(&mut self) {
        for c in &mut self.children {
            c.seek_to_last();
        }
        self.rebuild(Direction::Backward);
    }

    fn next(&mut self) {
        if self.direction == Direction::Backward {
            // Put every other child at its first entry after the current key.
            let cur = self.heap[0];
            let k = self.key().to_vec();
            for (i, c) in self.children.iter_mut().enumerate() {
                if i != cur {
                    c.seek(&k);
                }
            }
            self.children[cur].next();
            self.rebuild(Direction::Forward);
            return;
        }
        let top = self.heap[0];
        self.children[top].next();
        self.fix_top();
    }

    fn prev(&mut self) {
        if self.direction == Direction::Forward {
            let cur = self.heap[0];
            let k = self.key().to_vec();
            for (i, c) in self.children.iter_mut().enumerate() {
                if i != cur {
                    c.seek_for_prev(&k);
                }
            }
            self.children[cur].prev();
            self.rebuild(Direction::Backward);
            return;
        }
        let top = self.heap[0];
        self.children[top].prev();
        self.fix_top();
    }

    fn status(&self) -> Result<()> {
        self.children.iter().try_for_each(|c| c.status())
    }
}
