//! Batched lookups: [`INTERLEAVE`] searches run in lockstep so their cache
//! misses overlap, and the finger search over sorted keys (after RocksDB
//! pull request #14428, "memtable MultiGet finger search").

use std::cmp::Ordering;
use std::sync::atomic::Ordering as AtOrd;

use crate::list::{entry, SkipList};
use crate::node::{prefetch, Node, SUCC_PREFIX};
use crate::order::KeyOrder;
use crate::search::SearchKey;

/// Number of searches [`SkipList::multi_get`] runs in lockstep.
pub const INTERLEAVE: usize = 32;

/// One in-flight search of [`SkipList::multi_get`]: `x` (< key) at `level`, `bound`
/// a node known >= key (or null), `pending` the successor to compare next (prefetched).
#[derive(Clone, Copy)]
pub(crate) struct Lane<'k> {
    pub(crate) k: SearchKey<'k>,
    pub(crate) idx: usize,
    pub(crate) x: *mut Node,
    pub(crate) level: usize,
    pub(crate) bound: *mut Node,
    pub(crate) pending: *mut Node,
}

impl<O: KeyOrder> SkipList<O> {
    /// Looks up every key; results are in the caller's order (any order,
    /// duplicates allowed). Runs [`INTERLEAVE`] searches in lockstep, each
    /// prefetching the node it reads next, so their cache misses overlap
    /// (memory-level parallelism); see also [`SkipList::multi_get_finger`] and
    /// [`SkipList::multi_get_independent`].
    pub fn multi_get(&self, keys: &[&[u8]]) -> Vec<Option<&[u8]>> {
        let mut out = vec![None; keys.len()];
        if keys.len() <= 1 {
            if let Some(k) = keys.first() {
                out[0] = self.get(k);
            }
            return out;
        }
        Self::lockstep(
            keys.len(),
            |i| (self, keys[i]),
            |i, k, n| {
                if !n.is_null() && self.node_eq(n, k) {
                    // SAFETY: live node of `self`.
                    out[i] = Some(unsafe { Node::value(n) });
                }
            },
        );
        out
    }

    /// The first entry at or after each key ([`SkipList::lower_bound`] of
    /// every key), in the caller's order, found by searches run in lockstep
    /// as [`SkipList::multi_get`] runs them: for keys spread over a large
    /// list, their cache misses overlap.
    pub fn lower_bounds(&self, keys: &[&[u8]]) -> Vec<Option<(&[u8], &[u8])>> {
        Self::lower_bounds_by(keys.len(), |i| (self, keys[i]))
    }

    /// [`SkipList::lower_bound`] of each `(list, key)`, in the caller's
    /// order: the searches of several lists (an LSM's memory runs) run in
    /// lockstep together, so their cache misses overlap as those of one
    /// list's keys do in [`SkipList::lower_bounds`].
    pub fn lower_bounds_across<'l>(
        searches: &[(&'l SkipList<O>, &[u8])],
    ) -> Vec<Option<(&'l [u8], &'l [u8])>> {
        Self::lower_bounds_by(searches.len(), |i| searches[i])
    }

    /// [`SkipList::lower_bounds_across`] of the `n` searches `search(i)`
    /// gives (for callers whose lists sit inside their own types).
    pub fn lower_bounds_by<'l, 'k>(
        n: usize,
        search: impl Fn(usize) -> (&'l SkipList<O>, &'k [u8]),
    ) -> Vec<Option<(&'l [u8], &'l [u8])>> {
        let mut out = vec![None; n];
        match n {
            0 => {}
            1 => {
                let (list, key) = search(0);
                out[0] = list.lower_bound(key);
            }
            _ => Self::lockstep(n, search, |i, _, node| {
                // SAFETY: `node` is null or a live node of `search(i).0`,
                // which outlives `'l`.
                out[i] = unsafe { entry(node) };
            }),
        }
        out
    }

    /// Looks up every key with a finger search over the keys in sorted order
    /// (duplicates allowed); results are in the caller's order.
    pub fn multi_get_finger(&self, keys: &[&[u8]]) -> Vec<Option<&[u8]>> {
        let mut out = vec![None; keys.len()];
        if keys.len() <= 1 {
            if let Some(k) = keys.first() {
                out[0] = self.get(k);
            }
            return out;
        }
        let mut idx: Vec<(u64, usize)> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (self.order.prefix(k), i))
            .collect();
        idx.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| self.order.compare(keys[a.1], keys[b.1]))
        });
        let mut f = self.finger();
        for (prefix, i) in idx {
            let k = SearchKey {
                key: keys[i],
                prefix,
            };
            let n = f.seek_node(&k);
            if !n.is_null() && self.node_eq(n, &k) {
                // SAFETY: live node.
                out[i] = Some(unsafe { Node::value(n) });
            }
        }
        out
    }

    /// Group-prefetching searches (AMAC): up to [`INTERLEAVE`] searches advance one
    /// node at a time, round robin; a finished lane takes the next search at once.
    /// `found(i, k, node)` gets the first node >= `k`, search `i`'s key, in its
    /// list (null if none); `search(i)` gives search `i`'s list and key.
    fn lockstep<'l, 'k>(
        n: usize,
        search: impl Fn(usize) -> (&'l SkipList<O>, &'k [u8]),
        mut found: impl FnMut(usize, &SearchKey<'k>, *mut Node),
    ) where
        O: 'l,
    {
        let idle = Lane {
            k: SearchKey {
                key: &[],
                prefix: 0,
            },
            idx: usize::MAX,
            x: std::ptr::null_mut(),
            level: 0,
            bound: std::ptr::null_mut(),
            pending: std::ptr::null_mut(),
        };
        let mut lanes = [idle; INTERLEAVE];
        let mut next = 0;
        let mut active = 0;
        loop {
            for lane in lanes.iter_mut() {
                if lane.idx == usize::MAX {
                    if next == n {
                        continue;
                    }
                    let (list, key) = search(next);
                    *lane = Lane {
                        k: list.search_key(key),
                        idx: next,
                        x: list.head,
                        level: list.top_level(),
                        bound: std::ptr::null_mut(),
                        pending: std::ptr::null_mut(),
                    };
                    next += 1;
                    active += 1;
                }
                if let Some(node) = search(lane.idx).0.lane_step(lane) {
                    found(lane.idx, &lane.k, node);
                    lane.idx = usize::MAX;
                    active -= 1;
                }
            }
            if active == 0 && next == n {
                return;
            }
        }
    }

    /// The first node >= `key` in the list of each of `items` (null where none),
    /// written to `out[i]` for `items[i]` (at most [`INTERLEAVE`] items; `list_of`
    /// gives an item's list). The searches advance in lockstep, each prefetching the
    /// node it reads next: their cache misses overlap, so positioning cursors over R
    /// lists costs about one search's latency, not R.
    pub(crate) fn find_ge_lockstep<T>(
        items: &[T],
        list_of: impl Fn(&T) -> &SkipList<O>,
        key: &[u8],
        out: &mut [*mut Node],
    ) {
        let n = items.len();
        assert!(n <= INTERLEAVE && out.len() == n);
        let mut lanes: [Option<Lane<'_>>; INTERLEAVE] = [None; INTERLEAVE];
        for (i, item) in items.iter().enumerate() {
            let list = list_of(item);
            lanes[i] = Some(Lane {
                k: list.search_key(key),
                idx: i,
                x: list.head,
                level: list.top_level(),
                bound: std::ptr::null_mut(),
                pending: std::ptr::null_mut(),
            });
        }
        let mut active = n;
        while active > 0 {
            for slot in lanes[..n].iter_mut() {
                let Some(lane) = slot else { continue };
                if let Some(found) = list_of(&items[lane.idx]).lane_step(lane) {
                    out[lane.idx] = found;
                    *slot = None;
                    active -= 1;
                }
            }
        }
    }

    /// Advances one lane until it needs a node that is not known to be cached (it then
    /// prefetches that node and returns `None`) or until it has found the first node >= its
    /// key (`Some`, maybe null).
    #[inline(always)]
    pub(crate) fn lane_step(&self, l: &mut Lane<'_>) -> Option<*mut Node> {
        let kp = l.k.prefix;
        if !l.pending.is_null() {
            let n = l.pending;
            l.pending = std::ptr::null_mut();
            if self.cmp_node(n, &l.k) == Ordering::Less {
                l.x = n;
            } else {
                if l.level == 0 {
                    return Some(n);
                }
                l.bound = n;
                l.level -= 1;
            }
        }
        loop {
            let (x, level) = (l.x, l.level);
            if SUCC_PREFIX && level > 0 {
                // SAFETY: `x` is the head or a node reached at `level >= 1`.
                let hint = unsafe { Node::succ_prefix(x, level) }.load(AtOrd::Acquire);
                if hint > kp {
                    // Descending early is always safe; the bound is unknown.
                    l.bound = std::ptr::null_mut();
                    l.level -= 1;
                    continue;
                }
                // SAFETY: as above.
                let next = unsafe { Node::next(x, level) };
                if next.is_null() || next == l.bound {
                    l.bound = next;
                    l.level -= 1;
                    continue;
                }
                if hint < kp {
                    // The successor is < k (hint never below its prefix): step onto it.
                    l.x = next;
                    prefetch(Node::slot_addr(next, level));
                    prefetch(Node::slot_addr(next, level - 1));
                    return None;
                }
                l.pending = next;
                prefetch(next as *const u8);
                return None;
            }
            // SAFETY: `x` is the head or a node reached at `level`.
            let next = unsafe { Node::next(x, level) };
            if next.is_null() || next == l.bound {
                if level == 0 {
                    return Some(next);
                }
                l.bound = next;
                l.level -= 1;
                continue;
            }
            l.pending = next;
            prefetch(Node::slot_addr(next, 0));
            prefetch(next as *const u8);
            return None;
        }
    }

    /// Looks up every key independently from the head (for comparison with
    /// [`SkipList::multi_get`]).
    pub fn multi_get_independent(&self, keys: &[&[u8]]) -> Vec<Option<&[u8]>> {
        keys.iter().map(|k| self.get(k)).collect()
    }
}
