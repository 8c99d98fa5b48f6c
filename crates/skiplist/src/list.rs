//! The skiplist proper: construction, search and insertion.

use std::cmp::Ordering;
use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering as AtOrd};

use crate::arena::Arena;
use crate::height::random_height;
use crate::node::{prefetch, Node, MAX_HEIGHT, SUCC_PREFIX};
use crate::order::{key_prefix, Bytewise, KeyOrder};

/// Construction options.
#[derive(Clone, Debug)]
pub struct Options {
    /// Size of each arena chunk in bytes (values larger than a quarter of this
    /// get a dedicated block). Minimum 256.
    pub arena_chunk_size: usize,
    /// Maximum tower height, clamped to `1..=32`.
    pub max_height: usize,
    /// Branching factor: 2 (p = 1/2) or 4 (p = 1/4). Other values are rounded
    /// to the nearest of these.
    pub branching: u32,
}

impl Default for Options {
    /// 1 MiB chunks, p = 1/4, max height 12 (chosen by the sweep in the README).
    fn default() -> Self {
        Options {
            arena_chunk_size: 1 << 20,
            max_height: 12,
            branching: 4,
        }
    }
}

/// Error of [`SkipList::try_insert`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InsertError {
    /// The key is `u32::MAX` bytes or longer.
    KeyTooLarge(usize),
    /// The value is `u32::MAX` bytes or longer.
    ValueTooLarge(usize),
}

impl fmt::Display for InsertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InsertError::KeyTooLarge(n) => write!(f, "skiplist key of {n} bytes is too large"),
            InsertError::ValueTooLarge(n) => write!(f, "skiplist value of {n} bytes is too large"),
        }
    }
}

impl std::error::Error for InsertError {}

/// Largest accepted key or value length (exclusive bound is `u32::MAX`).
pub const MAX_LEN: usize = u32::MAX as usize - 1;

static NEXT_LIST_ID: AtomicU64 = AtomicU64::new(1);

/// Number of searches [`SkipList::multi_get`] runs in lockstep.
pub const INTERLEAVE: usize = 32;

/// One in-flight search of [`SkipList::multi_get`]: `x` (< key) at `level`, `bound`
/// a node known >= key (or null), `pending` the successor to compare next (prefetched).
#[derive(Clone, Copy)]
struct Lane<'k> {
    k: SearchKey<'k>,
    idx: usize,
    x: *mut Node,
    level: usize,
    bound: *mut Node,
    pending: *mut Node,
}

/// A search key with its prefix computed once.
#[derive(Clone, Copy)]
pub(crate) struct SearchKey<'k> {
    pub(crate) key: &'k [u8],
    pub(crate) prefix: u64,
}

/// A concurrent ordered map from byte strings to byte strings.
///
/// # Thread safety
/// `SkipList` is `Send + Sync` and every method takes `&self`: any number of
/// threads may insert, look up and iterate at the same time. Readers never
/// block and never retry; inserts are lock-free apart from the (per-thread,
/// uncontended) arena shard lock. Entries can't be removed or changed:
/// an insert of a present key returns `false` and leaves the old value. All
/// memory is released when the list drops, so returned slices live as long as
/// the borrow of the list.
///
/// A reader that observes a node (through any method) observes its key and
/// value fully written: nodes are published with a Release CAS and read with
/// Acquire loads. Iteration concurrent with inserts sees every entry present
/// when it started and any subset of the concurrently inserted ones, always in
/// sorted order.
///
/// # Limits
/// Keys and values may be empty and at most [`MAX_LEN`] bytes long
/// (`u32::MAX - 1`); [`SkipList::try_insert`] reports larger ones and
/// [`SkipList::insert`] panics on them.
pub struct SkipList<O: KeyOrder = Bytewise> {
    pub(crate) head: *mut Node,
    pub(crate) arena: Arena,
    pub(crate) order: O,
    pub(crate) max_height: usize,
    shift: u32,
    /// Highest tower height in use (a hint: only ever grows).
    height: AtomicUsize,
    id: u64,
}

// SAFETY: all shared mutable state is atomics (tower pointers, counters) or behind the arena's
// mutexes; nodes are immutable after publication and live until the list drops. `O` is Send+Sync.
unsafe impl<O: KeyOrder> Send for SkipList<O> {}
// SAFETY: as above.
unsafe impl<O: KeyOrder> Sync for SkipList<O> {}

impl SkipList<Bytewise> {
    /// An empty list in bytewise order with default options.
    pub fn new() -> Self {
        Self::with_order(Bytewise, Options::default())
    }

    /// An empty list in bytewise order.
    pub fn with_options(opts: Options) -> Self {
        Self::with_order(Bytewise, opts)
    }
}

impl Default for SkipList<Bytewise> {
    fn default() -> Self {
        Self::new()
    }
}

impl<O: KeyOrder> fmt::Debug for SkipList<O> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SkipList")
            .field("len", &self.len())
            .field("memory_usage", &self.memory_usage())
            .finish()
    }
}

/// A cached search path used by [`SkipList::insert_with_hint`].
///
/// A hint belongs to one thread at a time (it is `Send`, not `Sync`) and may
/// be used with any list and any keys: it is validated on every use and
/// silently recomputed when it does not fit. Ascending inserts through one
/// hint cost O(1) amortised.
pub struct InsertHint {
    list_id: u64,
    height: usize,
    /// A one-shot splice (plain `insert`): levels above the new node's height may be
    /// searched with the successor-prefix hint, leaving their `succ` inexact.
    throwaway: bool,
    pred: [*mut Node; MAX_HEIGHT + 1],
    succ: [*mut Node; MAX_HEIGHT + 1],
}

// SAFETY: the pointers are only dereferenced while the list they belong to (checked by id) is
// borrowed by the caller; they are plain data otherwise.
unsafe impl Send for InsertHint {}

impl InsertHint {
    /// An empty hint.
    pub fn new() -> Self {
        InsertHint {
            list_id: 0,
            height: 0,
            throwaway: false,
            pred: [std::ptr::null_mut(); MAX_HEIGHT + 1],
            succ: [std::ptr::null_mut(); MAX_HEIGHT + 1],
        }
    }
}

impl Default for InsertHint {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for InsertHint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InsertHint").finish_non_exhaustive()
    }
}

impl<O: KeyOrder> SkipList<O> {
    /// An empty list with the given order and options.
    pub fn with_order(order: O, opts: Options) -> Self {
        let max_height = opts.max_height.clamp(1, MAX_HEIGHT);
        let shift = if opts.branching >= 3 { 2 } else { 1 };
        let arena = Arena::new(opts.arena_chunk_size);
        // SAFETY: MAX_HEIGHT is a valid height and the empty key/value fit in u32.
        let head =
            unsafe { Node::alloc(&arena, MAX_HEIGHT, 0, &[], &[]) }.expect("head node allocation");
        SkipList {
            head,
            arena,
            order,
            max_height,
            shift,
            height: AtomicUsize::new(1),
            id: NEXT_LIST_ID.fetch_add(1, AtOrd::Relaxed),
        }
    }

    /// The key order.
    pub fn order(&self) -> &O {
        &self.order
    }

    /// Number of entries (sum of per-shard counters; exact when no insert is
    /// in flight).
    pub fn len(&self) -> usize {
        self.arena
            .shards()
            .iter()
            .map(|s| s.entries.load(AtOrd::Relaxed))
            .sum()
    }

    /// True when the list has no entries.
    pub fn is_empty(&self) -> bool {
        // SAFETY: the head is live and has MAX_HEIGHT levels.
        unsafe { Node::next(self.head, 0).is_null() }
    }

    /// Bytes reserved by the arena (chunks plus dedicated large blocks).
    pub fn memory_usage(&self) -> usize {
        self.arena.memory_usage()
    }

    #[inline]
    pub(crate) fn search_key<'k>(&self, key: &'k [u8]) -> SearchKey<'k> {
        SearchKey {
            key,
            prefix: key_prefix(self.order.user_key(key)),
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

    /// Inserts `key -> value`. Returns `false` (and changes nothing) if the key
    /// is already present. Safe to call concurrently with any other method.
    ///
    /// # Panics
    /// If `key` or `value` is longer than [`MAX_LEN`] bytes
    /// (message: "slsm-skiplist: key or value too large"); use
    /// [`SkipList::try_insert`] to get an error instead.
    pub fn insert(&self, key: &[u8], value: &[u8]) -> bool {
        self.try_insert(key, value)
            .expect("slsm-skiplist: key or value too large")
    }

    /// Like [`SkipList::insert`] but reports oversized keys/values as errors.
    pub fn try_insert(&self, key: &[u8], value: &[u8]) -> Result<bool, InsertError> {
        let mut hint = InsertHint::new();
        hint.throwaway = true;
        self.insert_impl(&mut hint, key, value)
    }

    /// Inserts reusing the search path cached in `hint` (see [`InsertHint`]).
    ///
    /// # Panics
    /// As [`SkipList::insert`].
    pub fn insert_with_hint(&self, hint: &mut InsertHint, key: &[u8], value: &[u8]) -> bool {
        self.insert_impl(hint, key, value)
            .expect("slsm-skiplist: key or value too large")
    }

    /// Like [`SkipList::insert_with_hint`] but reports oversized keys/values as errors.
    pub fn try_insert_with_hint(
        &self,
        hint: &mut InsertHint,
        key: &[u8],
        value: &[u8],
    ) -> Result<bool, InsertError> {
        self.insert_impl(hint, key, value)
    }

    fn insert_impl(
        &self,
        sp: &mut InsertHint,
        key: &[u8],
        value: &[u8],
    ) -> Result<bool, InsertError> {
        if key.len() > MAX_LEN {
            return Err(InsertError::KeyTooLarge(key.len()));
        }
        if value.len() > MAX_LEN {
            return Err(InsertError::ValueTooLarge(value.len()));
        }
        let k = self.search_key(key);
        let mh = self.max_height;
        let list_height = self.height.load(AtOrd::Relaxed).min(mh);

        // Lowest level whose cached bracket pred < key <= succ still holds; brackets are
        // nested, so every level above it holds too.
        let mut recompute = mh;
        if sp.list_id == self.id && sp.height >= list_height {
            let mut l = 0;
            while l < mh {
                let p = sp.pred[l];
                let s = sp.succ[l];
                if self.before(p, &k) && (s.is_null() || self.cmp_node(s, &k) != Ordering::Less) {
                    break;
                }
                l += 1;
            }
            recompute = l;
        } else {
            sp.list_id = self.id;
            sp.height = list_height;
            sp.pred[mh] = self.head;
            sp.succ[mh] = std::ptr::null_mut();
            for l in list_height..mh {
                sp.pred[l] = self.head;
                sp.succ[l] = std::ptr::null_mut();
            }
            recompute = recompute.min(list_height);
        }
        let h = random_height(self.shift, mh);
        for l in (0..recompute).rev() {
            let (p, s) = if sp.throwaway && l >= h {
                // Only the predecessor matters at levels the node will not occupy.
                self.walk_level_fast(&k, sp.pred[l + 1], l, sp.succ[l + 1])
            } else {
                self.walk_level(&k, sp.pred[l + 1], l, sp.succ[l + 1])
            };
            sp.pred[l] = p;
            sp.succ[l] = s;
        }
        if !sp.succ[0].is_null() && self.node_eq(sp.succ[0], &k) {
            return Ok(false);
        }

        if h > list_height {
            self.height.fetch_max(h, AtOrd::Relaxed);
        }
        // SAFETY: 1 <= h <= max_height <= MAX_HEIGHT; lengths checked above.
        let node = unsafe { Node::alloc(&self.arena, h, k.prefix, key, value) }
            .expect("slsm-skiplist: node size overflows");
        for l in 0..h {
            loop {
                // SAFETY: `node` has height h > l and is not yet reachable at level l.
                unsafe { Node::tower(node, l).store(sp.succ[l], AtOrd::Relaxed) };
                if SUCC_PREFIX && l > 0 {
                    let sp_prefix = if sp.succ[l].is_null() {
                        u64::MAX
                    } else {
                        // SAFETY: live node.
                        unsafe { Node::prefix(sp.succ[l]) }
                    };
                    // SAFETY: as above.
                    unsafe { Node::succ_prefix(node, l).store(sp_prefix, AtOrd::Release) };
                }
                // SAFETY: pred is the head or a node of height > l.
                let res = unsafe { Node::tower(sp.pred[l], l) }.compare_exchange(
                    sp.succ[l],
                    node,
                    AtOrd::Release,
                    AtOrd::Acquire,
                );
                if res.is_ok() {
                    if SUCC_PREFIX && l > 0 {
                        // Written after the link: until then the pred's hint is the old
                        // successor's prefix, which is larger (safe). A delayed store can only
                        // write the prefix of a former successor, also never too small.
                        // SAFETY: pred is the head or a node of height > l.
                        unsafe { Node::succ_prefix(sp.pred[l], l).store(k.prefix, AtOrd::Release) };
                    }
                    break;
                }
                // Lost a race: re-search this level only, from the predecessor.
                let (p, s) = self.walk_level(&k, sp.pred[l], l, std::ptr::null_mut());
                sp.pred[l] = p;
                sp.succ[l] = s;
                if l == 0 && !s.is_null() && self.node_eq(s, &k) {
                    // Someone else inserted the key first; our node stays unreachable.
                    return Ok(false);
                }
            }
        }
        for l in 0..h {
            sp.pred[l] = node;
        }
        sp.height = sp.height.max(h);
        self.arena.shard().entries.fetch_add(1, AtOrd::Relaxed);
        Ok(true)
    }

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
        self.interleaved_gets(keys, &mut out);
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
            .map(|(i, k)| (key_prefix(self.order.user_key(k)), i))
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

    /// Group-prefetching lookups (AMAC): up to [`INTERLEAVE`] searches advance one
    /// node at a time, round robin; a finished lane takes the next key at once.
    fn interleaved_gets<'s>(&'s self, keys: &[&[u8]], out: &mut [Option<&'s [u8]>]) {
        let top = self.top_level();
        let idle = Lane {
            k: SearchKey {
                key: &[],
                prefix: 0,
            },
            idx: usize::MAX,
            x: self.head,
            level: 0,
            bound: std::ptr::null_mut(),
            pending: std::ptr::null_mut(),
        };
        let mut lanes = [idle; INTERLEAVE];
        let mut next_key = 0;
        let mut active = 0;
        loop {
            for lane in lanes.iter_mut() {
                if lane.idx == usize::MAX {
                    if next_key == keys.len() {
                        continue;
                    }
                    *lane = Lane {
                        k: self.search_key(keys[next_key]),
                        idx: next_key,
                        x: self.head,
                        level: top,
                        bound: std::ptr::null_mut(),
                        pending: std::ptr::null_mut(),
                    };
                    next_key += 1;
                    active += 1;
                }
                if let Some(n) = self.lane_step(lane) {
                    if !n.is_null() && self.node_eq(n, &lane.k) {
                        // SAFETY: live node of `self`.
                        out[lane.idx] = Some(unsafe { Node::value(n) });
                    }
                    lane.idx = usize::MAX;
                    active -= 1;
                }
            }
            if active == 0 && next_key == keys.len() {
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
    fn lane_step(&self, l: &mut Lane<'_>) -> Option<*mut Node> {
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

    /// Walks every level checking strict order, tower heights, stored prefixes
    /// and the prefix/order contract. Meant for tests.
    #[doc(hidden)]
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut level0 = 0usize;
        for level in 0..self.max_height {
            // SAFETY: head has all levels; nodes reached at `level` have height > level.
            let mut x = unsafe { Node::next(self.head, level) };
            let mut prev: *mut Node = std::ptr::null_mut();
            while !x.is_null() {
                // SAFETY: live node.
                let (h, key, p) = unsafe { (Node::height(x), Node::key(x), Node::prefix(x)) };
                if h <= level {
                    return Err(format!("node of height {h} linked at level {level}"));
                }
                if p != key_prefix(self.order.user_key(key)) {
                    return Err(format!("stored prefix mismatch for key {key:?}"));
                }
                if !prev.is_null() {
                    // SAFETY: live node.
                    let (pk, pp) = unsafe { (Node::key(prev), Node::prefix(prev)) };
                    if self.order.compare(pk, key) != Ordering::Less {
                        return Err(format!("level {level}: {pk:?} !< {key:?}"));
                    }
                    if pp > p {
                        return Err(format!("level {level}: prefix order disagrees at {key:?}"));
                    }
                }
                if level == 0 {
                    level0 += 1;
                }
                prev = x;
                // SAFETY: as above.
                x = unsafe { Node::next(x, level) };
            }
        }
        if level0 != self.len() {
            return Err(format!(
                "level 0 has {level0} nodes, len() = {}",
                self.len()
            ));
        }
        Ok(())
    }
}

/// Prefetch for a step onto `node` at `level` (feature `search-prefetch`): its tower slot
/// at `level` and, when descending, the one below are the next things the search reads.
#[inline(always)]
pub(crate) fn prefetch_step(node: *const Node, level: usize) {
    if cfg!(feature = "search-prefetch") {
        prefetch(Node::slot_addr(node, level));
        prefetch(node as *const u8);
    }
}

/// `(key, value)` of a node, `None` for null.
///
/// # Safety
/// `n` is null or a live node of a list that outlives `'a`.
#[inline]
pub(crate) unsafe fn entry<'a>(n: *const Node) -> Option<(&'a [u8], &'a [u8])> {
    if n.is_null() {
        None
    } else {
        // SAFETY: live node per contract.
        unsafe { Some((Node::key(n), Node::value(n))) }
    }
}
