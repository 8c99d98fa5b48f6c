//! Changing the leaf structure of an [`ExtentMap`]: splitting a full leaf
//! and unlinking an empty one, with the left-to-right locking the protocol
//! in `map.rs` describes.

use std::ptr;
use std::sync::atomic::Ordering;

use crossbeam_epoch::{Guard, Shared};
use crossbeam_utils::Backoff;
use parking_lot::MutexGuard;

use crate::leaf::{random_height, Leaf, MAX_LEVEL};
use crate::map::ExtentMap;
use crate::pool;

impl<T, const LEAF_CAP: usize> ExtentMap<T, LEAF_CAP>
where
    T: Clone + Send + Sync + 'static,
{
    /// For every level, the last leaf with `key < key` (strictly).
    pub(crate) fn find_preds<'g>(
        &'g self,
        key: u64,
        guard: &'g Guard,
    ) -> [&'g Leaf<T, LEAF_CAP>; MAX_LEVEL] {
        let mut preds: [&'g Leaf<T, LEAF_CAP>; MAX_LEVEL] = [&*self.head; MAX_LEVEL];
        let mut x: &'g Leaf<T, LEAF_CAP> = &self.head;
        let top = self.level_hint.load(Ordering::Relaxed);
        for lvl in (0..top).rev() {
            while x.next_key(lvl) < key {
                match x.next_at(lvl, guard) {
                    Some(n) if n.key < key => x = n,
                    _ => break,
                }
            }
            preds[lvl] = x;
        }
        preds
    }

    /// Locks and returns the live leaf responsible for `point`, trying
    /// `hint` before searching.
    pub(crate) fn lock_responsible<'g>(
        &'g self,
        point: u64,
        mut hint: Option<&'g Leaf<T, LEAF_CAP>>,
        guard: &'g Guard,
    ) -> (&'g Leaf<T, LEAF_CAP>, MutexGuard<'g, ()>) {
        let backoff = Backoff::new();
        loop {
            let leaf = match hint.take() {
                Some(h) if h.key <= point => h,
                _ => self.search_le(point, guard),
            };
            let g = leaf.lock.lock();
            if !leaf.dead.load(Ordering::Relaxed) {
                match leaf.next_at(0, guard) {
                    Some(n) if n.key <= point => {}
                    _ => return (leaf, g),
                }
            }
            drop(g);
            backoff.snooze();
        }
    }

    /// Splits `target` in two if it is (still) full; `start` is the start
    /// of the extent that did not fit.
    ///
    /// Normally the upper half moves to the new leaf. If the pending insert
    /// goes past the last slot (ascending allocation, e.g. an allocator's
    /// moving hint) only the last slot moves, so `target` stays full and
    /// the new leaf has room for the run of appends that follows; likewise
    /// only the first slot stays for an insert before the first slot.
    /// Without this, ascending inserts would leave every leaf half empty
    /// and split (and later unlink) twice as often.
    pub(crate) fn split<'g>(&'g self, target: &'g Leaf<T, LEAF_CAP>, start: u64, guard: &'g Guard) {
        let h = random_height();
        let backoff = Backoff::new();
        loop {
            // Predecessors are needed only at levels above target's tower;
            // below, target itself is the predecessor.
            let preds = (h > target.height).then(|| self.find_preds(target.key, guard));
            let mut locks: Vec<MutexGuard<'g, ()>> = Vec::new();
            if let Some(p) = &preds {
                lock_left_to_right(p, target.height..h, &mut locks);
            }
            let tg = target.lock.lock();
            if target.dead.load(Ordering::Relaxed) {
                return;
            }
            let n = target.len();
            if n < LEAF_CAP {
                return;
            }
            if let Some(p) = &preds {
                let ok = (target.height..h).all(|lvl| {
                    !p[lvl].dead.load(Ordering::Relaxed)
                        && p[lvl]
                            .next_at(lvl, guard)
                            .is_none_or(|n| n.key > target.key)
                });
                if !ok {
                    drop(tg);
                    drop(locks);
                    backoff.snooze();
                    continue;
                }
            }
            let mid = match target.first_last_ge(start) {
                p if p >= n => n - 1,
                0 => 1,
                _ => n / 2,
            };
            // Strictly between the two parts: > last(mid-1) >= target.key
            // and <= last(mid) < target's successor key (0 < mid < n).
            let new_key = target.item(mid).start;
            let m = pool::alloc(Leaf::new(new_key, h));
            // SAFETY: `m` was allocated just above and is not yet shared; it
            // is freed only through the collector after being unlinked.
            let m_ref: &'g Leaf<T, LEAF_CAP> = unsafe { &*m };
            m_ref.fill_from(target, mid..n);
            let m = Shared::from(m.cast_const());
            let mg = m_ref.lock.lock(); // uncontended: not reachable yet
            let pred_at = |lvl: usize| -> &'g Leaf<T, LEAF_CAP> {
                if lvl < target.height {
                    target
                } else {
                    preds.as_ref().expect("preds computed for tall leaf")[lvl]
                }
            };
            for lvl in 0..h {
                m_ref.set_next(lvl, pred_at(lvl).next_ptr(lvl, guard));
            }
            if h > self.level_hint.load(Ordering::Relaxed) {
                // Rare: keep the hint's cache line read-only otherwise.
                self.level_hint.fetch_max(h, Ordering::Relaxed);
            }
            // Link bottom-up, then shrink `target`: a reader that sees the
            // shrunken array also sees `m` as target's successor.
            for lvl in 0..h {
                pred_at(lvl).set_next(lvl, m);
            }
            // The upper values now belong to `m`.
            target.truncate(mid);
            drop(mg);
            drop(tg);
            drop(locks);
            return;
        }
    }

    /// Unlinks `d` if it is (still) empty and live, retiring it.
    pub(crate) fn unlink<'g>(&'g self, d: &'g Leaf<T, LEAF_CAP>, guard: &'g Guard) {
        let backoff = Backoff::new();
        loop {
            if d.dead.load(Ordering::Acquire) {
                return;
            }
            let preds = self.find_preds(d.key, guard);
            let mut locks: Vec<MutexGuard<'g, ()>> = Vec::new();
            lock_left_to_right(&preds, 0..d.height, &mut locks);
            let dg = d.lock.lock();
            if d.dead.load(Ordering::Relaxed) || d.len() != 0 {
                return;
            }
            let ok = (0..d.height).all(|lvl| {
                !preds[lvl].dead.load(Ordering::Relaxed)
                    && preds[lvl]
                        .next_at(lvl, guard)
                        .is_some_and(|n| ptr::eq(n, d))
            });
            if !ok {
                drop(dg);
                drop(locks);
                backoff.snooze();
                continue;
            }
            // The owning pointer, as stored in the list (not derived from
            // the shared reference `d`, which grants no write access).
            let owned = preds[0].next_ptr(0, guard).as_raw().cast_mut();
            d.dead.store(true, Ordering::Release);
            for lvl in (0..d.height).rev() {
                preds[lvl].set_next(lvl, d.next_ptr(lvl, guard));
            }
            drop(dg);
            drop(locks);
            let d = owned;
            // SAFETY: `d` is now unreachable from every live leaf (all its
            // predecessors were re-pointed under their locks) and it is dead,
            // so no writer will link it again; readers that still hold it are
            // pinned and the collector runs this only after they unpin. It
            // came from `pool::alloc` (split). `T: Send + Sync` lets it be
            // dropped on any thread.
            unsafe { guard.defer_unchecked(move || pool::free(d)) };
            return;
        }
    }
}

/// Locks `preds[lvl]` for `lvl` in `levels`, from the highest level down
/// (i.e. in increasing key order), skipping repeats.
fn lock_left_to_right<'g, T, const LEAF_CAP: usize>(
    preds: &[&'g Leaf<T, LEAF_CAP>; MAX_LEVEL],
    levels: std::ops::Range<usize>,
    locks: &mut Vec<MutexGuard<'g, ()>>,
) {
    let mut prev: *const Leaf<T, LEAF_CAP> = ptr::null();
    for lvl in levels.rev() {
        let p = preds[lvl];
        if !ptr::eq(prev, p) {
            locks.push(p.lock.lock());
            prev = p;
        }
    }
}
