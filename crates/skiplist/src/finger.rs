//! Finger search: lower-bound lookups that reuse the previous search path.

use std::cmp::Ordering;
use std::sync::atomic::Ordering as AtOrd;

use crate::list::{entry, SkipList};
use crate::node::{Node, MAX_HEIGHT, SUCC_PREFIX};
use crate::order::KeyOrder;
use crate::search::SearchKey;

/// A lower-bound search cursor that remembers its last search path.
///
/// `pred[l]` is the last node at level `l` that was found to be `<` the
/// previous key (or the head). For the next key the finger climbs from level
/// 0 while the remembered predecessor is not `<` the key or its successor at
/// that level is still `<` the key (an overshoot), and descends normally from
/// the first level where `pred < key <= next`. For keys in non-decreasing
/// order at distance `d` this costs O(log d); any other order (equal keys,
/// keys before the previous one) is still answered correctly, the climb just
/// goes higher (at worst to the top, i.e. a search from the head).
///
/// A `Finger` borrows its list and may run concurrently with inserts into it
/// (it is `Send`, so it can move to another thread, but one finger is used by
/// one thread at a time).
pub struct Finger<'a, O: KeyOrder> {
    list: &'a SkipList<O>,
    pred: [*mut Node; MAX_HEIGHT],
}

// SAFETY: the finger holds a shared borrow of a Sync list and pointers to its immutable,
// never-freed nodes.
unsafe impl<O: KeyOrder> Send for Finger<'_, O> {}

impl<O: KeyOrder> SkipList<O> {
    /// A finger positioned before the first entry.
    pub fn finger(&self) -> Finger<'_, O> {
        Finger {
            list: self,
            pred: [self.head; MAX_HEIGHT],
        }
    }
}

impl<'a, O: KeyOrder> Finger<'a, O> {
    /// The first entry with key >= `key` (a lower bound), reusing the previous
    /// search path.
    pub fn seek_ge(&mut self, key: &[u8]) -> Option<(&'a [u8], &'a [u8])> {
        let k = self.list.search_key(key);
        let n = self.seek_node(&k);
        // SAFETY: `n` is null or a live node of `self.list`, which outlives 'a.
        unsafe { entry(n) }
    }

    /// Forgets the search path (the next seek starts from the head).
    pub fn reset(&mut self) {
        self.pred = [self.list.head; MAX_HEIGHT];
    }

    pub(crate) fn seek_node(&mut self, k: &SearchKey<'_>) -> *mut Node {
        let list = self.list;
        let top = list.max_height - 1;
        let mut level = 0;
        // Once a pred is known to be < k, every pred above is too (preds are nested).
        let mut pred_ok = false;
        let bound = loop {
            let p = self.pred[level];
            if pred_ok || list.before(p, k) {
                pred_ok = true;
                if SUCC_PREFIX
                    && level > 0
                    // SAFETY: `p` is the head or a node reached at `level >= 1`.
                    && unsafe { Node::succ_prefix(p, level) }.load(AtOrd::Acquire) > k.prefix
                {
                    // The successor is beyond the key (hint never too small): descend here.
                    break std::ptr::null_mut();
                }
                // SAFETY: `p` is the head or a node reached at `level`.
                let next = unsafe { Node::next(p, level) };
                if next.is_null() || list.cmp_node(next, k) != Ordering::Less {
                    break next;
                }
                if level == top {
                    // Nowhere higher to go: walk this level.
                    let (b, n) = list.walk_level(k, p, level, std::ptr::null_mut());
                    self.pred[level] = b;
                    break n;
                }
            } else if level == top {
                // Key is before the remembered path even at the top: restart from the head.
                self.pred[level] = list.head;
                let (b, n) = list.walk_level(k, list.head, level, std::ptr::null_mut());
                self.pred[level] = b;
                break n;
            }
            level += 1;
        };
        // Descend from `level`, whose pred < k <= bound.
        let mut x = self.pred[level];
        let mut bound = bound;
        while level > 0 {
            level -= 1;
            let (b, n) = list.walk_level_fast(k, x, level, bound);
            self.pred[level] = b;
            x = b;
            bound = n;
        }
        bound
    }
}
