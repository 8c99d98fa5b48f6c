//! The map itself: skiplist search, lock-free snapshots, insert and
//! remove; the structural changes (leaf split and leaf unlink) are in
//! `restructure.rs`.
//!
//! # Protocol
//!
//! *Responsibility.* A live leaf `L` whose level-0 successor is `N` holds
//! exactly the extents whose last point lies in `[L.key, N.key)` (`N.key =
//! ∞` at the end). Leaf keys never change; the head leaf has key 0.
//!
//! *Readers* (lookup, iteration) take no lock. Under an epoch guard they
//! search for the last leaf with `key <= bound`, then: load the leaf's
//! sequence counter (retry while odd), read the slots they need with
//! relaxed atomic loads, load `next[0]` and `dead`, and re-check the
//! counter. If it moved they re-read; if `dead` is set they restart the
//! search; if `next[0].key <= bound` the leaf was split after they found it
//! and they move right. Otherwise what they read is a consistent snapshot
//! of everything the leaf is responsible for (a split links the new right
//! leaf *before* it truncates the left one, so a reader that sees the
//! truncated leaf also sees the new `next[0]`). Values are dereferenced
//! (cloned) only after validation. This is the article's RCU lookup,
//! with the sequence-counter validation that makes it always correct.
//!
//! *Writers* lock leaves strictly in increasing key order ("left to
//! right"): an insert of `[start, last]` locks the leaves whose ranges meet
//! `[start, last]` (usually one) and checks for an overlapping extent in
//! them, then in later leaves with a validated lock-free read: any insert
//! that could create an overlap needs one of the held leaves, so those
//! later leaves cannot gain an overlapping extent meanwhile. A split of
//! leaf `L` locks, left to right, the predecessors of the new leaf at the
//! levels above `L`'s height, then `L`, then the (unreachable) new leaf; an
//! unlink of an empty leaf `D` locks its predecessors at every level, then
//! `D`. Every lock set is validated after locking (not dead, links
//! unchanged) and released and retried on failure. Under a leaf's lock its
//! `next` pointers and slot array cannot change, and its level-0 successor
//! cannot be unlinked (that needs the same lock).
//!
//! # Reclamation
//!
//! Removed values (one heap cell per extent) and unlinked leaves are
//! handed to the epoch collector (`Guard::defer_unchecked`, which drops
//! them and recycles their memory through the per-thread pools of the
//! `pool` module) *after* they became unreachable from the map's live
//! structure (the slot was overwritten, or
//! every predecessor re-pointed). A reader can only have loaded such a
//! pointer while pinned and before it was overwritten, so the collector
//! frees it only after that reader unpins. A leaf's `next` pointers are frozen when
//! it is marked dead, so any leaf a pinned reader can reach was linked at
//! some moment after the reader pinned (induction along the path: a live
//! leaf's successor is live; a dead leaf's successors are the ones it had
//! when it was last live). Hence it was retired after the reader pinned and
//! the collector will not free it until the reader unpins. `T: 'static`
//! is required because destruction may run after the map itself is gone.

use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};

use crossbeam_epoch::{self as epoch, Guard, Shared};
use crossbeam_utils::Backoff;
use parking_lot::MutexGuard;

use crate::error::Error;
use crate::leaf::{Leaf, MAX_LEVEL};
use crate::pool;
use crate::{Extent, DEFAULT_LEAF_CAP};

/// A concurrent map from non-overlapping `u64` ranges to values.
///
/// See the [crate documentation](crate) for the data structure and the
/// thread-safety contract. `LEAF_CAP` is the number of extent slots per
/// leaf (default [`DEFAULT_LEAF_CAP`]); it must be at least 2.
///
/// `ExtentMap<T>` is `Send + Sync` when `T: Send + Sync`; every method takes
/// `&self` and may be called from any number of threads at once.
pub struct ExtentMap<T, const LEAF_CAP: usize = DEFAULT_LEAF_CAP> {
    pub(crate) head: Box<Leaf<T, LEAF_CAP>>,
    /// Highest tower ever linked (monotonic); searches start there.
    pub(crate) level_hint: AtomicUsize,
}

/// The result of a validated read of one leaf.
pub(crate) struct Snap<'g, T, const LEAF_CAP: usize, R> {
    /// The leaf that was responsible for the bound when it was read.
    pub leaf: &'g Leaf<T, LEAF_CAP>,
    /// What the reader closure returned, from a consistent snapshot.
    pub r: R,
    /// Key of the leaf's successor at that time (`None`: last leaf).
    pub next_key: Option<u64>,
}

impl<T> ExtentMap<T, DEFAULT_LEAF_CAP>
where
    T: Clone + Send + Sync + 'static,
{
    /// Creates an empty map with the default leaf capacity.
    pub fn new() -> Self {
        Self::with_leaf_capacity()
    }
}

impl<T> Default for ExtentMap<T, DEFAULT_LEAF_CAP>
where
    T: Clone + Send + Sync + 'static,
{
    fn default() -> Self {
        Self::new()
    }
}

impl<T, const LEAF_CAP: usize> ExtentMap<T, LEAF_CAP>
where
    T: Clone + Send + Sync + 'static,
{
    const CAP_OK: () = assert!(LEAF_CAP >= 2, "LEAF_CAP must be at least 2");

    /// Creates an empty map whose leaves hold `LEAF_CAP` extents, e.g.
    /// `ExtentMap::<u64, 16>::with_leaf_capacity()`.
    pub fn with_leaf_capacity() -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::CAP_OK;
        ExtentMap {
            head: Box::new(Leaf::new(0, MAX_LEVEL)),
            level_hint: AtomicUsize::new(1),
        }
    }

    /// Number of extents in the map: the per-leaf counts summed (O(number
    /// of leaves), no shared counter on the write path). Exact when no
    /// writer is running; under concurrent updates, approximate.
    pub fn len(&self) -> usize {
        let guard = &epoch::pin();
        let mut n = self.head.len();
        let mut x = self.head.next_at(0, guard);
        while let Some(l) = x {
            n += l.len();
            x = l.next_at(0, guard);
        }
        n
    }

    /// `true` if the map holds no extent (same caveat as [`len`](Self::len)).
    pub fn is_empty(&self) -> bool {
        self.first().is_none()
    }

    /// Inserts `[start, start + len)` with `value`.
    ///
    /// Fails with [`Error::InvalidRange`] if `len == 0` or `start + len`
    /// overflows, and with [`Error::Overlap`] (carrying the existing extent)
    /// if any stored extent intersects the range. Atomic with respect to
    /// every other operation.
    pub fn insert(&self, start: u64, len: u64, value: T) -> Result<(), Error> {
        self.insert_impl(start, len, value, None, &epoch::pin())
            .map_err(|(e, _)| e)
    }

    /// Removes the extent that starts at `start` and has exactly length
    /// `len`, returning (a clone of) its value. Returns `None` if no such
    /// extent exists (an extent that merely overlaps is left alone).
    pub fn remove(&self, start: u64, len: u64) -> Option<T> {
        if len == 0 {
            return None;
        }
        let last = start.checked_add(len)? - 1;
        let guard = &epoch::pin();
        let (leaf, lock) = self.lock_responsible(last, None, guard);
        let i = leaf.first_last_ge(start);
        if i >= leaf.len() {
            return None;
        }
        let it = leaf.item(i);
        if it.start != start || it.last != last {
            return None;
        }
        let val = leaf.remove_at(i);
        // SAFETY: `val` was in the leaf until just now and is retired below,
        // after this use; we hold the leaf lock and a guard.
        let value = unsafe { val.deref() }.clone();
        let val = val.as_raw().cast_mut();
        // SAFETY: the slot that held `val` has been overwritten, so no new
        // reader can load it; readers that loaded it earlier are pinned, and
        // the collector runs this only after they unpin. `T: Send` lets it
        // run on any thread.
        unsafe { guard.defer_unchecked(move || pool::free(val)) };
        let empty = leaf.len() == 0;
        drop(lock);
        if empty && !ptr::eq(leaf, &*self.head) {
            self.unlink(leaf, guard);
        }
        Some(value)
    }

    /// Returns (a clone of) the extent covering `point`, if any. Lock-free:
    /// reads a validated snapshot of one leaf (two if the extent spans a
    /// leaf boundary).
    pub fn lookup(&self, point: u64) -> Option<Extent<T>> {
        self.lookup_in(point, &epoch::pin())
    }

    /// Insert that hands the value back on failure (used by `insert_hole`).
    /// `hint`: a leaf that is probably responsible for `start`.
    pub(crate) fn insert_impl<'g>(
        &'g self,
        start: u64,
        len: u64,
        value: T,
        mut hint: Option<&'g Leaf<T, LEAF_CAP>>,
        guard: &'g Guard,
    ) -> Result<(), (Error, T)> {
        if len == 0 {
            return Err((Error::InvalidRange, value));
        }
        let Some(end) = start.checked_add(len) else {
            return Err((Error::InvalidRange, value));
        };
        let last = end - 1;
        loop {
            let (l0, g0) = self.lock_responsible(start, hint.take(), guard);
            // Lock, left to right, every further leaf whose range meets
            // [start, last]. (A locked live leaf's successor cannot be
            // unlinked: that needs the locked leaf's lock.)
            let mut rest: Vec<(&Leaf<T, LEAF_CAP>, MutexGuard<'_, ()>)> = Vec::new();
            let mut target = l0;
            while let Some(n) = target.next_at(0, guard) {
                if n.key > last {
                    break;
                }
                let g = n.lock.lock();
                debug_assert!(!n.dead.load(Ordering::Relaxed));
                rest.push((n, g));
                target = n;
            }
            // Overlap check: the first extent ending at or after `start`.
            // Any extent overlapping [start, end) that another thread could
            // be inserting needs one of the leaves we hold (it starts in
            // our range, or starts before it and ends in or after `l0`), so
            // extents in later leaves can be checked with a validated
            // lock-free read instead of more locks.
            let i0 = l0.first_last_ge(start);
            let mut succ = (i0 < l0.len()).then(|| l0.item(i0));
            if succ.is_none() {
                for (leaf, _) in &rest {
                    let i = leaf.first_last_ge(start);
                    if i < leaf.len() {
                        succ = Some(leaf.item(i));
                        break;
                    }
                }
            }
            if succ.is_none() {
                let mut next_key = target.next_at(0, guard).map(|n| n.key);
                while let Some(k) = next_key {
                    let snap = self.read(k, guard, |l| {
                        let i = l.first_last_ge(start);
                        (i < l.len()).then(|| l.item(i))
                    });
                    if snap.r.is_some() {
                        succ = snap.r;
                        break;
                    }
                    next_key = snap.next_key;
                }
            }
            if let Some(s) = succ {
                if s.start < end {
                    let e = Error::Overlap {
                        start: s.start,
                        len: s.last - s.start + 1,
                    };
                    return Err((e, value));
                }
            }
            if target.len() >= LEAF_CAP {
                drop(rest);
                drop(g0);
                self.split(target, start, guard);
                continue;
            }
            // No overlap: the slots starting before `start` also end before it.
            let pos = if rest.is_empty() {
                i0
            } else {
                target.first_last_ge(start)
            };
            let val = Shared::from(pool::alloc(value).cast_const());
            target.insert_at(pos, start, last, val);
            drop(rest);
            drop(g0);
            return Ok(());
        }
    }

    /// Last leaf with `key <= key`, following towers (may return a leaf
    /// that is being unlinked; callers validate).
    pub(crate) fn search_le<'g>(&'g self, key: u64, guard: &'g Guard) -> &'g Leaf<T, LEAF_CAP> {
        let mut x: &'g Leaf<T, LEAF_CAP> = &self.head;
        let top = self.level_hint.load(Ordering::Relaxed);
        for lvl in (0..top).rev() {
            // The cached successor key spares touching a successor we do
            // not enter; the real key is re-checked before entering.
            while x.next_key(lvl) <= key {
                match x.next_at(lvl, guard) {
                    Some(n) if n.key <= key => x = n,
                    _ => break,
                }
            }
        }
        x
    }

    /// Lock-free: runs `f` on a validated snapshot of the leaf responsible
    /// for `bound` (re-running it if a writer interfered). `f` sees racy
    /// data on the runs that get discarded, so it must only read the leaf
    /// and must not dereference value pointers.
    pub(crate) fn read<'g, R>(
        &'g self,
        bound: u64,
        guard: &'g Guard,
        mut f: impl FnMut(&Leaf<T, LEAF_CAP>) -> R,
    ) -> Snap<'g, T, LEAF_CAP, R> {
        let backoff = Backoff::new();
        'retry: loop {
            let mut leaf = self.search_le(bound, guard);
            loop {
                let Some(seq) = leaf.read_begin() else {
                    backoff.snooze();
                    continue;
                };
                let r = f(leaf);
                let next = leaf.next_at(0, guard);
                let dead = leaf.dead.load(Ordering::Acquire);
                if !leaf.read_valid(seq) {
                    backoff.spin();
                    continue;
                }
                if dead {
                    // Being unlinked: its range now belongs to a predecessor.
                    backoff.snooze();
                    continue 'retry;
                }
                match next {
                    Some(n) if n.key <= bound => leaf = n, // split: move right
                    _ => {
                        return Snap {
                            leaf,
                            r,
                            next_key: next.map(|n| n.key),
                        }
                    }
                }
            }
        }
    }
}

impl<T, const LEAF_CAP: usize> Drop for ExtentMap<T, LEAF_CAP> {
    fn drop(&mut self) {
        // SAFETY: `&mut self` gives exclusive access: no reader or writer is
        // running. Leaves reachable on level 0 are owned by the map alone
        // (unlinked leaves were handed to the collector and are not on it).
        unsafe {
            let g = epoch::unprotected();
            let mut p = self.head.next_ptr(0, g);
            while !p.is_null() {
                let next = p.deref().next_ptr(0, g);
                pool::free(p.as_raw().cast_mut());
                p = next;
            }
        }
    }
}

impl<T, const LEAF_CAP: usize> std::fmt::Debug for ExtentMap<T, LEAF_CAP>
where
    T: Clone + Send + Sync + 'static + std::fmt::Debug,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.iter().map(|e| (e.start, e.len, e.value)))
            .finish()
    }
}
