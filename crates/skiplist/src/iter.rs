//! The skiplist's iterators: [`Iter`] borrows the list, [`OwnedIter`] holds
//! an `Arc` of it; both move a [`RawCursor`].

use std::iter::FusedIterator;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use crate::cursor::{owned_bound, RawCursor};
use crate::list::{entry, SkipList};
use crate::multi::INTERLEAVE;
use crate::order::KeyOrder;

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
