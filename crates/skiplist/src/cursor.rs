//! The cursor every iterator of the skiplist moves: a position and a range,
//! without a borrow of the list (every method takes the list), so that both
//! the borrowing [`Iter`](crate::Iter) and the owning
//! [`OwnedIter`](crate::OwnedIter) are built on it.

use std::cmp::Ordering;
use std::ops::Bound;

use crate::list::SkipList;
use crate::node::{prefetch, Node};
use crate::order::KeyOrder;

/// Cursor state without a borrow of the list; every method takes the list.
/// Starts loading the node after `n` (`n` itself was loaded by the step
/// before), so that a scan's next step finds it in the CPU's cache: nodes
/// sit in the arena in insertion order, so each step of a scan in key order
/// is otherwise a cache miss, overlapped this way with the caller's work on
/// `n`.
#[inline]
fn prefetch_successor(n: *mut Node) {
    if !n.is_null() {
        // SAFETY: `n` is a live node of the list.
        let succ = unsafe { Node::next(n, 0) };
        prefetch(succ as *const u8);
        prefetch(Node::slot_addr(succ, 0));
    }
}

pub(crate) struct RawCursor {
    pub(crate) node: *mut Node,
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    /// Back end of the double-ended iteration, computed lazily.
    back: Option<*mut Node>,
    /// Iteration finished (front and back met, or the cursor ran off the range).
    done: bool,
}

impl RawCursor {
    pub(crate) fn new<O: KeyOrder>(
        list: &SkipList<O>,
        lower: Bound<Vec<u8>>,
        upper: Bound<Vec<u8>>,
    ) -> Self {
        let mut c = RawCursor {
            node: std::ptr::null_mut(),
            lower,
            upper,
            back: None,
            done: true,
        };
        c.seek_to_first(list);
        c
    }

    pub(crate) fn set(&mut self, n: *mut Node) {
        self.node = n;
        self.back = None;
        self.done = n.is_null();
    }

    pub(crate) fn above_lower<O: KeyOrder>(&self, list: &SkipList<O>, n: *mut Node) -> bool {
        // SAFETY: `n` is a live node of `list`.
        let key = unsafe { Node::key(n) };
        match &self.lower {
            Bound::Unbounded => true,
            Bound::Included(b) => list.order.compare(key, b) != Ordering::Less,
            Bound::Excluded(b) => list.order.compare(key, b) == Ordering::Greater,
        }
    }

    pub(crate) fn below_upper<O: KeyOrder>(&self, list: &SkipList<O>, n: *mut Node) -> bool {
        // SAFETY: `n` is a live node of `list`.
        let key = unsafe { Node::key(n) };
        match &self.upper {
            Bound::Unbounded => true,
            Bound::Included(b) => list.order.compare(key, b) != Ordering::Greater,
            Bound::Excluded(b) => list.order.compare(key, b) == Ordering::Less,
        }
    }

    pub(crate) fn clip_upper<O: KeyOrder>(&self, list: &SkipList<O>, n: *mut Node) -> *mut Node {
        if !n.is_null() && !self.below_upper(list, n) {
            std::ptr::null_mut()
        } else {
            n
        }
    }

    pub(crate) fn clip_lower<O: KeyOrder>(&self, list: &SkipList<O>, n: *mut Node) -> *mut Node {
        if !n.is_null() && !self.above_lower(list, n) {
            std::ptr::null_mut()
        } else {
            n
        }
    }

    pub(crate) fn first_in_range<O: KeyOrder>(&self, list: &SkipList<O>) -> *mut Node {
        let n = match &self.lower {
            // SAFETY: the head has every level.
            Bound::Unbounded => unsafe { Node::next(list.head, 0) },
            Bound::Included(b) => list.find_ge(&list.search_key(b)),
            Bound::Excluded(b) => {
                let k = list.search_key(b);
                let n = list.find_ge(&k);
                if !n.is_null() && list.node_eq(n, &k) {
                    // SAFETY: live node.
                    unsafe { Node::next(n, 0) }
                } else {
                    n
                }
            }
        };
        self.clip_upper(list, n)
    }

    pub(crate) fn last_in_range<O: KeyOrder>(&self, list: &SkipList<O>) -> *mut Node {
        let n = match &self.upper {
            Bound::Unbounded => list.find_last_before(None, false),
            Bound::Included(b) => list.find_last_before(Some(&list.search_key(b)), true),
            Bound::Excluded(b) => list.find_last_before(Some(&list.search_key(b)), false),
        };
        self.clip_lower(list, n)
    }

    pub(crate) fn seek_to_first<O: KeyOrder>(&mut self, list: &SkipList<O>) {
        let n = self.first_in_range(list);
        self.set(n);
    }

    pub(crate) fn seek_to_last<O: KeyOrder>(&mut self, list: &SkipList<O>) {
        let n = self.last_in_range(list);
        self.set(n);
    }

    pub(crate) fn seek<O: KeyOrder>(&mut self, list: &SkipList<O>, key: &[u8]) {
        let n = list.find_ge(&list.search_key(key));
        self.seek_found(list, n);
    }

    /// Ends a seek given `n`, the list's first node >= the key (or null).
    pub(crate) fn seek_found<O: KeyOrder>(&mut self, list: &SkipList<O>, n: *mut Node) {
        let n = if !n.is_null() && !self.above_lower(list, n) {
            self.first_in_range(list)
        } else {
            self.clip_upper(list, n)
        };
        self.set(n);
    }

    pub(crate) fn seek_for_prev<O: KeyOrder>(&mut self, list: &SkipList<O>, key: &[u8]) {
        let n = list.find_last_before(Some(&list.search_key(key)), true);
        let n = if !n.is_null() && !self.below_upper(list, n) {
            self.last_in_range(list)
        } else {
            self.clip_lower(list, n)
        };
        self.set(n);
    }

    pub(crate) fn next_node<O: KeyOrder>(&self, list: &SkipList<O>, n: *mut Node) -> *mut Node {
        // SAFETY: `n` is a live node.
        self.clip_upper(list, unsafe { Node::next(n, 0) })
    }

    pub(crate) fn prev_node<O: KeyOrder>(&self, list: &SkipList<O>, n: *mut Node) -> *mut Node {
        // SAFETY: `n` is a live node.
        let k = list.search_key(unsafe { Node::key(n) });
        self.clip_lower(list, list.find_last_before(Some(&k), false))
    }

    pub(crate) fn move_next<O: KeyOrder>(&mut self, list: &SkipList<O>) {
        if !self.node.is_null() {
            let n = self.next_node(list, self.node);
            prefetch_successor(n);
            self.set(n);
        }
    }

    pub(crate) fn move_prev<O: KeyOrder>(&mut self, list: &SkipList<O>) {
        if !self.node.is_null() {
            let n = self.prev_node(list, self.node);
            self.set(n);
        }
    }

    pub(crate) fn next<O: KeyOrder>(&mut self, list: &SkipList<O>) -> *mut Node {
        if self.done {
            return std::ptr::null_mut();
        }
        let n = self.node;
        if self.back == Some(n) {
            self.done = true;
            self.node = std::ptr::null_mut();
        } else {
            self.node = self.next_node(list, n);
            prefetch_successor(self.node);
            self.done = self.node.is_null();
        }
        n
    }

    pub(crate) fn next_back<O: KeyOrder>(&mut self, list: &SkipList<O>) -> *mut Node {
        if self.done {
            return std::ptr::null_mut();
        }
        let b = match self.back {
            Some(b) => b,
            None => self.last_in_range(list),
        };
        if b.is_null() {
            self.done = true;
            self.node = std::ptr::null_mut();
            return b;
        }
        if b == self.node {
            self.done = true;
            self.node = std::ptr::null_mut();
        } else {
            let p = self.prev_node(list, b);
            if p.is_null() {
                self.done = true;
                self.node = std::ptr::null_mut();
            }
            self.back = Some(p);
        }
        b
    }
}

pub(crate) fn owned_bound(b: Bound<&&[u8]>) -> Bound<Vec<u8>> {
    match b {
        Bound::Included(k) => Bound::Included(k.to_vec()),
        Bound::Excluded(k) => Bound::Excluded(k.to_vec()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

macro_rules! cursor_methods {
    () => {
        /// True when the cursor is on an entry (inside the range).
        pub fn valid(&self) -> bool {
            !self.c.node.is_null()
        }

        /// Positions on the first entry with key >= `key` (and inside the range).
        pub fn seek(&mut self, key: &[u8]) {
            self.c.seek(&*self.list, key)
        }

        /// Positions on the last entry with key <= `key` (and inside the range).
        pub fn seek_for_prev(&mut self, key: &[u8]) {
            self.c.seek_for_prev(&*self.list, key)
        }

        /// Positions on the first entry of the range.
        pub fn seek_to_first(&mut self) {
            self.c.seek_to_first(&*self.list)
        }

        /// Positions on the last entry of the range.
        pub fn seek_to_last(&mut self) {
            self.c.seek_to_last(&*self.list)
        }

        /// Moves the cursor to the next entry (invalid past the range's end).
        /// No-op when not valid.
        pub fn move_next(&mut self) {
            self.c.move_next(&*self.list)
        }

        /// Moves the cursor to the previous entry (an O(log n) search; invalid
        /// before the range's start). No-op when not valid.
        pub fn move_prev(&mut self) {
            self.c.move_prev(&*self.list)
        }
    };
}
