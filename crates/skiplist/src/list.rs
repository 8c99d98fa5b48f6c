//! The skiplist proper: the type, its construction and its invariants.
//! Searching is in `search.rs`, inserting in `insert.rs`, batched lookups
//! in `multi.rs`.

use std::cmp::Ordering;
use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering as AtOrd};

use crate::arena::Arena;
use crate::node::{prefetch, Node, MAX_HEIGHT};
use crate::order::{Bytewise, KeyOrder};

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
    pub(crate) shift: u32,
    /// Highest tower height in use (a hint: only ever grows).
    pub(crate) height: AtomicUsize,
    pub(crate) id: u64,
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
                if p != self.order.prefix(key) {
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
