//! Cursors and iterators.

use std::cmp::Ordering;
use std::iter::FusedIterator;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use crate::list::{entry, SkipList, INTERLEAVE};
use crate::node::Node;
use crate::order::KeyOrder;

/// Cursor state without a borrow of the list; every method takes the list.
struct RawCursor {
    node: *mut Node,
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    /// Back end of the double-ended iteration, computed lazily.
    back: Option<*mut Node>,
    /// Iteration finished (front and back met, or the cursor ran off the range).
    done: bool,
}

impl RawCursor {
    fn new<O: KeyOrder>(list: &SkipList<O>, lower: Bound<Vec<u8>>, upper: Bound<Vec<u8>>) -> Self {
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

    fn set(&mut self, n: *mut Node) {
        self.node = n;
        self.back = None;
        self.done = n.is_null();
    }

    fn above_lower<O: KeyOrder>(&self, list: &SkipList<O>, n: *mut Node) -> bool {
        // SAFETY: `n` is a live node of `list`.
        let key = unsafe { Node::key(n) };
        match &self.lower {
            Bound::Unbounded => true,
            Bound::Included(b) => list.order.compare(key, b) != Ordering::Less,
            Bound::Excluded(b) => list.order.compare(key, b) == Ordering::Greater,
        }
    }

    fn below_upper<O: KeyOrder>(&self, list: &SkipList<O>, n: *mut Node) -> bool {
        // SAFETY: `n` is a live node of `list`.
        let key = unsafe { Node::key(n) };
        match &self.upper {
            Bound::Unbounded => true,
            Bound::Included(b) => list.order.compare(key, b) != Ordering::Greater,
            Bound::Excluded(b) => list.order.compare(key, b) == Ordering::Less,
        }
    }

    fn clip_upper<O: KeyOrder>(&self, list: &SkipList<O>, n: *mut Node) -> *mut Node {
        if !n.is_null() && !self.below_upper(list, n) {
            std::ptr::null_mut()
        } else {
            n
        }
    }

    fn clip_lower<O: KeyOrder>(&self, list: &SkipList<O>, n: *mut Node) -> *mut Node {
        if !n.is_null() && !self.above_lower(list, n) {
            std::ptr::null_mut()
        } else {
            n
        }
    }

    fn first_in_range<O: KeyOrder>(&self, list: &SkipList<O>) -> *mut Node {
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

    fn last_in_range<O: KeyOrder>(&self, list: &SkipList<O>) -> *mut Node {
        let n = match &self.upper {
            Bound::Unbounded => list.find_last_before(None, false),
            Bound::Included(b) => list.find_last_before(Some(&list.search_key(b)), true),
            Bound::Excluded(b) => list.find_last_before(Some(&list.search_key(b)), false),
        };
        self.clip_lower(list, n)
    }

    fn seek_to_first<O: KeyOrder>(&mut self, list: &SkipList<O>) {
        let n = self.first_in_range(list);
        self.set(n);
    }

    fn seek_to_last<O: KeyOrder>(&mut self, list: &SkipList<O>) {
        let n = self.last_in_range(list);
        self.set(n);
    }

    fn seek<O: KeyOrder>(&mut self, list: &SkipList<O>, key: &[u8]) {
        let n = list.find_ge(&list.search_key(key));
        self.seek_found(list, n);
    }

    /// Ends a seek given `n`, the list's first node >= the key (or null).
    fn seek_found<O: KeyOrder>(&mut self, list: &SkipList<O>, n: *mut Node) {
        let n = if !n.is_null() && !self.above_lower(list, n) {
            self.first_in_range(list)
        } else {
            self.clip_upper(list, n)
        };
        self.set(n);
    }

    fn seek_for_prev<O: KeyOrder>(&mut self, list: &SkipList<O>, key: &[u8]) {
        let n = list.find_last_before(Some(&list.search_key(key)), true);
        let n = if !n.is_null() && !self.below_upper(list, n) {
            self.last_in_range(list)
        } else {
            self.clip_lower(list, n)
        };
        self.set(n);
    }

    fn next_node<O: KeyOrder>(&self, list: &SkipList<O>, n: *mut Node) -> *mut Node {
        // SAFETY: `n` is a live node.
        self.clip_upper(list, unsafe { Node::next(n, 0) })
    }

    fn prev_node<O: KeyOrder>(&self, list: &SkipList<O>, n: *mut Node) -> *mut Node {
        // SAFETY: `n` is a live node.
        let k = list.search_key(unsafe { Node::key(n) });
        self.clip_lower(list, list.find_last_before(Some(&k), false))
    }

    fn move_next<O: KeyOrder>(&mut self, list: &SkipList<O>) {
        if !self.node.is_null() {
            let n = self.next_node(list, self.node);
            self.set(n);
        }
    }

    fn move_prev<O: KeyOrder>(&mut self, list: &SkipList<O>) {
        if !self.node.is_null() {
            let n = self.prev_node(list, self.node);
            self.set(n);
        }
    }

    fn next<O: KeyOrder>(&mut self, list: &SkipList<O>) -> *mut Node {
        if self.done {
            return std::ptr::null_mut();
        }
        let n = self.node;
        if self.back == Some(n) {
            self.done = true;
            self.node = std::ptr::null_mut();
        } else {
            self.node = self.next_node(list, n);
            self.done = self.node.is_null();
        }
        n
    }

    fn next_back<O: KeyOrder>(&mut self, list: &SkipList<O>) -> *mut Node {
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

fn owned_bound(b: Bound<&&[u8]>) -> Bound<Vec<u8>> {
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

/// A cursor and a double-ended iterator over a (range of a) [`SkipList`].
///
/// **Cursor:** [`valid`](Iter::valid), [`key`](Iter::key),
/// [`value`](Iter::value), [`seek`](Iter::seek),
/// [`seek_for_prev`](Iter::seek_for_prev), [`seek_to_first`](Iter::seek_to_first),
/// [`seek_to_last`](Iter::seek_to_last), [`move_next`](Iter::move_next),
/// [`move_prev`](Iter::move_prev). The cursor never leaves the range it was
/// created with: positions outside it are "not valid".
///
/// **Iterator:** `next()` yields the entry under the cursor and advances it;
/// `next_back()` yields from the end of the range backwards; the two ends
/// meet without overlapping. Any cursor positioning restarts the iteration
/// from the new position to the end of the range.
///
/// Safe to use while other threads insert: it sees entries that existed when
/// it was positioned and may or may not see ones inserted concurrently; order
/// is always respected. `Send + Sync`.
pub struct Iter<'a, O: KeyOrder> {
    list: &'a SkipList<O>,
    c: RawCursor,
}

// SAFETY: the cursor holds a shared borrow of a Sync list, owned bound vectors, and pointers to
// immutable, never-freed nodes.
unsafe impl<O: KeyOrder> Send for Iter<'_, O> {}
// SAFETY: as above; `&Iter` only reads.
unsafe impl<O: KeyOrder> Sync for Iter<'_, O> {}

impl<'a, O: KeyOrder> Iter<'a, O> {
    cursor_methods!();

    /// Key under the cursor.
    ///
    /// # Panics
    /// If the cursor is not [`valid`](Iter::valid).
    pub fn key(&self) -> &'a [u8] {
        self.entry().expect("Iter::key on an invalid cursor").0
    }

    /// Value under the cursor.
    ///
    /// # Panics
    /// If the cursor is not [`valid`](Iter::valid).
    pub fn value(&self) -> &'a [u8] {
        self.entry().expect("Iter::value on an invalid cursor").1
    }

    /// `(key, value)` under the cursor, `None` when not valid.
    pub fn entry(&self) -> Option<(&'a [u8], &'a [u8])> {
        // SAFETY: null or a live node of `self.list`, which outlives 'a.
        unsafe { entry(self.c.node) }
    }
}

impl<'a, O: KeyOrder> Iterator for Iter<'a, O> {
    type Item = (&'a [u8], &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        let n = self.c.next(self.list);
        // SAFETY: null or a live node of `self.list`.
        unsafe { entry(n) }
    }
}

impl<O: KeyOrder> DoubleEndedIterator for Iter<'_, O> {
    fn next_back(&mut self) -> Option<Self::Item> {
        let n = self.c.next_back(self.list);
        // SAFETY: null or a live node of `self.list`.
        unsafe { entry(n) }
    }
}

impl<O: KeyOrder> FusedIterator for Iter<'_, O> {}

/// Like [`Iter`]'s cursor API but owning an `Arc` of the list, so it can be
/// kept without a borrow. `key()`/`value()` borrow the cursor. `Send + Sync`.
pub struct OwnedIter<O: KeyOrder> {
    list: Arc<SkipList<O>>,
    c: RawCursor,
}

// SAFETY: as for `Iter`; the Arc keeps the nodes alive.
unsafe impl<O: KeyOrder> Send for OwnedIter<O> {}
// SAFETY: as for `Iter`.
unsafe impl<O: KeyOrder> Sync for OwnedIter<O> {}

impl<O: KeyOrder> OwnedIter<O> {
    cursor_methods!();

    /// Key under the cursor.
    ///
    /// # Panics
    /// If the cursor is not [`valid`](OwnedIter::valid).
    pub fn key(&self) -> &[u8] {
        self.entry().expect("OwnedIter::key on an invalid cursor").0
    }

    /// Value under the cursor.
    ///
    /// # Panics
    /// If the cursor is not [`valid`](OwnedIter::valid).
    pub fn value(&self) -> &[u8] {
        self.entry()
            .expect("OwnedIter::value on an invalid cursor")
            .1
    }

    /// `(key, value)` under the cursor, `None` when not valid.
    pub fn entry(&self) -> Option<(&[u8], &[u8])> {
        // SAFETY: null or a live node of `self.list`, kept alive by the Arc while `self` is borrowed.
        unsafe { entry(self.c.node) }
    }

    /// The list this cursor walks.
    pub fn list(&self) -> &Arc<SkipList<O>> {
        &self.list
    }

    /// Seeks every cursor to its first entry >= `key` (inside its range),
    /// exactly as calling [`seek`](OwnedIter::seek) on each would, but with
    /// the searches running in lockstep so that their cache misses overlap:
    /// for a merging iterator over many lists, one search's latency instead
    /// of one per list.
    pub fn seek_all(cursors: &mut [&mut OwnedIter<O>], key: &[u8]) {
        for group in cursors.chunks_mut(INTERLEAVE) {
            let mut found = [std::ptr::null_mut(); INTERLEAVE];
            let found = &mut found[..group.len()];
            SkipList::find_ge_lockstep(group, |c| &*c.list, key, found);
            for (c, &n) in group.iter_mut().zip(found.iter()) {
                c.c.seek_found(&*c.list, n);
            }
        }
    }
}

impl<O: KeyOrder> SkipList<O> {
    /// A cursor/iterator over all entries, positioned on the first one.
    pub fn iter(&self) -> Iter<'_, O> {
        Iter {
            list: self,
            c: RawCursor::new(self, Bound::Unbounded, Bound::Unbounded),
        }
    }

    /// A cursor/iterator over the entries whose keys fall in `range` (under the
    /// list's order), positioned on the first one. Accepts `..`, `a..b`,
    /// `a..=b`, `a..`, `..b`, `..=b` and `(Bound<&[u8]>, Bound<&[u8]>)`.
    pub fn range<'k, R: RangeBounds<&'k [u8]>>(&self, range: R) -> Iter<'_, O> {
        Iter {
            list: self,
            c: RawCursor::new(
                self,
                owned_bound(range.start_bound()),
                owned_bound(range.end_bound()),
            ),
        }
    }

    /// A cursor over all entries that holds an `Arc` of the list.
    pub fn owned_iter(self: &Arc<Self>) -> OwnedIter<O> {
        OwnedIter {
            list: Arc::clone(self),
            c: RawCursor::new(self, Bound::Unbounded, Bound::Unbounded),
        }
    }

    /// A cursor over a range that holds an `Arc` of the list.
    pub fn owned_range<'k, R: RangeBounds<&'k [u8]>>(self: &Arc<Self>, range: R) -> OwnedIter<O> {
        OwnedIter {
            list: Arc::clone(self),
            c: RawCursor::new(
                self,
                owned_bound(range.start_bound()),
                owned_bound(range.end_bound()),
            ),
        }
    }
}
