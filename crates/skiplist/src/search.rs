//! Searching the skiplist: comparing a key with a node (8-byte prefix
//! first, as goleveldb pull request #387 proposed), walking a level, and the
//! point lookups built on them.

use std::cmp::Ordering;
use std::sync::atomic::Ordering as AtOrd;

use crate::list::{entry, prefetch_step, SkipList};
use crate::node::{prefetch, Node, SUCC_PREFIX};
use crate::order::KeyOrder;

/// A search key with its prefix computed once.
#[derive(Clone, Copy)]
pub(crate) struct SearchKey<'k> {
    pub(crate) key: &'k [u8],
    pub(crate) prefix: u64,
}

impl<O: KeyOrder> SkipList<O> {
    #[inline]
    pub(crate) fn search_key<'k>(&self, key: &'k [u8]) -> SearchKey<'k> {
        SearchKey {
            key,
            prefix: self.order.prefix(key),
        }
    }

    /// Compares a (non-head) node's key with `k`: prefix first, unsigned, and
    /// the full keys only on a tie.
    #[inline(always)]
    pub(crate) fn cmp_node(&self, node: *const Node, k: &SearchKey<'_>) -> Ordering {
        // SAFETY: callers pass live, non-head nodes.
        let p = unsafe { Node::prefix(node) };
        match p.cmp(&k.prefix) {
            // SAFETY: as above.
            Ordering::Equal => self.order.compare(unsafe { Node::key(node) }, k.key),
            o => o,
        }
    }

    /// `node` (head or live node) sorts strictly before `k`.
    #[inline(always)]
    pub(crate) fn before(&self, node: *const Node, k: &SearchKey<'_>) -> bool {
        std::ptr::eq(node, self.head) || self.cmp_node(node, k) == Ordering::Less
    }

    #[inline(always)]
    pub(crate) fn top_level(&self) -> usize {
        self.height.load(AtOrd::Relaxed).min(self.max_height) - 1
    }

    /// Walks `level` forward from `before` (head or a node < k) to the last node < k.
    /// `bound` is a node already known to be >= k (or null): reaching it ends the walk
    /// without a comparison. Returns (last < k, first >= k or null).
    ///
    /// At levels >= 1 a successor whose prefix hint is strictly below the key's prefix is
    /// stepped over without loading its header (the hint is never below the real prefix).
    #[inline(always)]
    pub(crate) fn walk_level(
        &self,
        k: &SearchKey<'_>,
        mut before: *mut Node,
        level: usize,
        bound: *mut Node,
    ) -> (*mut Node, *mut Node) {
        loop {
            if SUCC_PREFIX && level > 0 {
                // SAFETY: `before` is the head or a node reached at `level >= 1`.
                let hint = unsafe { Node::succ_prefix(before, level) }.load(AtOrd::Acquire);
                if hint < k.prefix {
                    // SAFETY: as above.
                    let next = unsafe { Node::next(before, level) };
                    if !next.is_null() {
                        prefetch_step(next, level);
                        before = next;
                        continue;
                    }
                }
            }
            // SAFETY: `before` is the head or a node reached at `level`, so it has that level.
            let next = unsafe { Node::next(before, level) };
            if cfg!(feature = "search-prefetch-key") && level == 0 {
                // The key bytes of a level-0 candidate (may be the answer) often start on the
                // next cache line: fetch it in parallel with the header.
                prefetch((next as *const u8).wrapping_add(48));
            }
            if next.is_null() || next == bound || self.cmp_node(next, k) != Ordering::Less {
                return (before, next);
            }
            before = next;
        }
    }

    /// Like [`SkipList::walk_level`] for read-only searches at any level: at levels >= 1 it
    /// may stop early using the successor-prefix hint. Returns (a node < k, a node known to be
    /// >= k or null when unknown / end of level). Only the level-0 result is exact.
    #[inline(always)]
    pub(crate) fn walk_level_fast(
        &self,
        k: &SearchKey<'_>,
        mut before: *mut Node,
        level: usize,
        bound: *mut Node,
    ) -> (*mut Node, *mut Node) {
        if !SUCC_PREFIX || level == 0 {
            return self.walk_level(k, before, level, bound);
        }
        loop {
            // The hint is never smaller than the real successor's prefix (Acquire: a hint
            // seen implies the link it describes, or a newer one, is seen too).
            // SAFETY: `before` is the head or a node reached at `level >= 1`.
            let hint = unsafe { Node::succ_prefix(before, level) }.load(AtOrd::Acquire);
            if hint > k.prefix {
                // Stopping early is always safe (the lower levels are complete).
                return (before, std::ptr::null_mut());
            }
            // SAFETY: as above.
            let next = unsafe { Node::next(before, level) };
            if next.is_null() || next == bound {
                return (before, next);
            }
            // hint < prefix: the successor is < k without loading it.
            if hint == k.prefix && self.cmp_node(next, k) != Ordering::Less {
                return (before, next);
            }
            prefetch_step(next, level);
            before = next;
        }
    }

    /// First node >= k, or null.
    #[inline]
    pub(crate) fn find_ge(&self, k: &SearchKey<'_>) -> *mut Node {
        let mut x = self.head;
        let mut bound = std::ptr::null_mut();
        let mut level = self.top_level();
        loop {
            let (b, n) = self.walk_level_fast(k, x, level, bound);
            if level == 0 {
                return n;
            }
            x = b;
            bound = n;
            level -= 1;
        }
    }

    /// Last node < k (`inclusive == false`) or <= k (`inclusive == true`); null if none.
    /// With `k == None`, the last node of the list.
    pub(crate) fn find_last_before(&self, k: Option<&SearchKey<'_>>, inclusive: bool) -> *mut Node {
        let mut x = self.head;
        let mut level = self.top_level();
        loop {
            // SAFETY: `x` is the head or a node reached at `level`.
            let next = unsafe { Node::next(x, level) };
            let advance = !next.is_null()
                && match k {
                    None => true,
                    Some(k) => match self.cmp_node(next, k) {
                        Ordering::Less => true,
                        Ordering::Equal => inclusive,
                        Ordering::Greater => false,
                    },
                };
            if advance {
                x = next;
            } else if level == 0 {
                return if x == self.head {
                    std::ptr::null_mut()
                } else {
                    x
                };
            } else {
                level -= 1;
            }
        }
    }

    /// The value stored under `key`.
    pub fn get(&self, key: &[u8]) -> Option<&[u8]> {
        let k = self.search_key(key);
        let n = self.find_ge(&k);
        if !n.is_null() && self.node_eq(n, &k) {
            // SAFETY: live node; the slice lives as long as `self`.
            Some(unsafe { Node::value(n) })
        } else {
            None
        }
    }

    /// `node` has exactly the key `k` (prefix checked first).
    #[inline(always)]
    pub(crate) fn node_eq(&self, node: *const Node, k: &SearchKey<'_>) -> bool {
        self.cmp_node(node, k) == Ordering::Equal
    }

    /// The first entry whose key is >= `key` under the list's order.
    pub fn lower_bound(&self, key: &[u8]) -> Option<(&[u8], &[u8])> {
        let n = self.find_ge(&self.search_key(key));
        // SAFETY: `n` is null or a live node.
        unsafe { entry(n) }
    }
}
