//! Ordered traversal: the extent iterator, the leaf iterator, and the
//! cursor-style neighbour queries (`first`, `last`, `next_after`,
//! `prev_before`).
//!
//! None of these hold a lock or an epoch guard between calls. Each step
//! reads one validated leaf snapshot, so what is returned from one leaf is
//! a consistent picture of that leaf; across leaves, concurrent updates may
//! or may not be seen. Output is always strictly increasing and
//! non-overlapping, and an extent present for the whole traversal is always
//! returned.

use std::collections::VecDeque;

use crossbeam_epoch::{self as epoch, Guard};

use crate::map::ExtentMap;
use crate::Extent;

impl<T, const LEAF_CAP: usize> ExtentMap<T, LEAF_CAP>
where
    T: Clone + Send + Sync + 'static,
{
    /// Iterates over all extents in increasing order, yielding clones.
    /// Reads one leaf snapshot at a time (see the module docs for the
    /// consistency guarantee).
    pub fn iter(&self) -> Iter<'_, T, LEAF_CAP> {
        Iter {
            map: self,
            bound: Some(0),
            min_start: 0,
            buf: VecDeque::new(),
        }
    }

    /// Iterates leaf by leaf, yielding a snapshot (in order) of the extents
    /// of each non-empty leaf: the article's leaf iterator, for bulk work.
    pub fn leaves(&self) -> Leaves<'_, T, LEAF_CAP> {
        Leaves {
            map: self,
            bound: Some(0),
            min_start: 0,
        }
    }

    /// The extent with the lowest start, if any.
    pub fn first(&self) -> Option<Extent<T>> {
        self.first_from(0)
    }

    /// The extent with the highest start, if any.
    pub fn last(&self) -> Option<Extent<T>> {
        self.prev_before(u64::MAX)
    }

    /// Cursor step forward: the first extent whose start is `> start`.
    /// Pass the `start` of the extent you are at.
    pub fn next_after(&self, start: u64) -> Option<Extent<T>> {
        self.first_from(start.checked_add(1)?)
    }

    /// Cursor step backward: the last extent whose start is `< start`.
    /// Pass the `start` of the extent you are at.
    pub fn prev_before(&self, start: u64) -> Option<Extent<T>> {
        let q = start.checked_sub(1)?;
        let guard = &epoch::pin();
        // An extent covering `q` has the greatest start <= q; it may be
        // stored in a leaf after the one responsible for `q`.
        if let Some(e) = self.lookup_in(q, guard) {
            return Some(e);
        }
        // Otherwise every extent starting at or before `q` also ends before
        // `q`, so it sits in the leaf responsible for `q` or an earlier one.
        let mut bound = q;
        loop {
            let snap = self.read(bound, guard, |l| {
                let i = l.count_start_lt(start);
                (i > 0).then(|| l.item(i - 1))
            });
            if let Some(raw) = snap.r {
                // SAFETY: validated read under `guard`.
                return Some(unsafe { raw.extent() });
            }
            bound = snap.leaf.key.checked_sub(1)?;
        }
    }

    /// First extent with `start >= min_start`.
    fn first_from(&self, min_start: u64) -> Option<Extent<T>> {
        let guard = &epoch::pin();
        // Such an extent's last point is >= min_start.
        let mut bound = min_start;
        loop {
            let snap = self.read(bound, guard, |l| {
                let i = l.count_start_lt(min_start);
                (i < l.len()).then(|| l.item(i))
            });
            if let Some(raw) = snap.r {
                // SAFETY: validated read under `guard`.
                return Some(unsafe { raw.extent() });
            }
            bound = snap.next_key?;
        }
    }

    pub(crate) fn lookup_in(&self, point: u64, guard: &Guard) -> Option<Extent<T>> {
        let mut bound = point;
        loop {
            let snap = self.read(bound, guard, |l| {
                let i = l.first_last_ge(point);
                (i < l.len()).then(|| l.item(i))
            });
            if let Some(raw) = snap.r {
                // SAFETY: validated read under `guard`.
                return (raw.start <= point).then(|| unsafe { raw.extent() });
            }
            // Nothing ends at or after `point` here: the covering extent,
            // if any, ends in a later leaf.
            bound = snap.next_key?;
        }
    }

    /// Snapshot of the leaf responsible for `bound`, filtered to extents
    /// starting at or after `min_start`; returns the next leaf's key.
    fn leaf_snapshot(&self, bound: u64, min_start: u64) -> (Vec<Extent<T>>, Option<u64>) {
        let guard = &epoch::pin();
        let snap = self.read(bound, guard, |l| {
            let i = l.count_start_lt(min_start);
            (i..l.len()).map(|k| l.item(k)).collect::<Vec<_>>()
        });
        // SAFETY: validated read under `guard`.
        let v = snap.r.iter().map(|raw| unsafe { raw.extent() }).collect();
        (v, snap.next_key)
    }
}

/// Iterator over extents in order; see [`ExtentMap::iter`].
pub struct Iter<'a, T, const LEAF_CAP: usize> {
    map: &'a ExtentMap<T, LEAF_CAP>,
    /// Key of the next leaf to read, `None` once the last leaf was read.
    bound: Option<u64>,
    /// Everything yielded so far ends at or before this.
    min_start: u64,
    buf: VecDeque<Extent<T>>,
}

impl<T, const LEAF_CAP: usize> Iterator for Iter<'_, T, LEAF_CAP>
where
    T: Clone + Send + Sync + 'static,
{
    type Item = Extent<T>;

    fn next(&mut self) -> Option<Extent<T>> {
        while self.buf.is_empty() {
            let b = self.bound?;
            let (v, next) = self.map.leaf_snapshot(b, self.min_start);
            self.buf.extend(v);
            self.bound = next;
        }
        let e = self.buf.pop_front()?;
        self.min_start = e.start + e.len;
        Some(e)
    }
}

/// Iterator over leaf snapshots; see [`ExtentMap::leaves`].
pub struct Leaves<'a, T, const LEAF_CAP: usize> {
    map: &'a ExtentMap<T, LEAF_CAP>,
    bound: Option<u64>,
    min_start: u64,
}

impl<T, const LEAF_CAP: usize> Iterator for Leaves<'_, T, LEAF_CAP>
where
    T: Clone + Send + Sync + 'static,
{
    type Item = Vec<Extent<T>>;

    fn next(&mut self) -> Option<Vec<Extent<T>>> {
        loop {
            let b = self.bound?;
            let (v, next) = self.map.leaf_snapshot(b, self.min_start);
            self.bound = next;
            if let Some(l) = v.last() {
                self.min_start = l.start + l.len;
                return Some(v);
            }
        }
    }
}
