//! [`LowerBounds`]: searches that advance one cache miss at a time, when
//! their caller says, so that their misses overlap the caller's own work.
//!
//! A search from the top of a large list is a chain of dependent cache
//! misses: run on its own it waits for each in turn. A caller with other
//! memory-bound work (an LSM's batched lookup searching its run files)
//! starts the searches, steps them between its own phases, and finishes
//! them when it needs their answers: by then most of their misses have
//! been served while it worked.

use crate::list::{entry, SkipList};
use crate::multi::Lane;
use crate::order::KeyOrder;

/// Searches for the first entry at or after each of several keys, each in
/// its own list, advanced by [`step`](Self::step) and ended by
/// [`finish`](Self::finish).
pub struct LowerBounds<'l, 'k, O: KeyOrder> {
    searches: Vec<(&'l SkipList<O>, Lane<'k>)>,
    out: Vec<Option<(&'l [u8], &'l [u8])>>,
    /// Searches not yet finished.
    left: usize,
}

impl<'l, 'k, O: KeyOrder> LowerBounds<'l, 'k, O> {
    /// Starts a search for each `(list, key)`; none has read a node yet.
    pub fn new(searches: impl IntoIterator<Item = (&'l SkipList<O>, &'k [u8])>) -> Self {
        let searches: Vec<_> = searches
            .into_iter()
            .enumerate()
            .map(|(idx, (list, key))| {
                let lane = Lane {
                    k: list.search_key(key),
                    idx,
                    x: list.head,
                    level: list.top_level(),
                    bound: std::ptr::null_mut(),
                    pending: std::ptr::null_mut(),
                };
                (list, lane)
            })
            .collect();
        let left = searches.len();
        LowerBounds {
            out: vec![None; left],
            searches,
            left,
        }
    }

    /// Advances every unfinished search until it needs a node that may not
    /// be in the CPU's cache (it starts loading it) or until it finds its
    /// entry. True once every search has finished.
    pub fn step(&mut self) -> bool {
        if self.left == 0 {
            return true;
        }
        for (list, lane) in &mut self.searches {
            if lane.idx == usize::MAX {
                continue;
            }
            if let Some(node) = list.lane_step(lane) {
                // SAFETY: `node` is null or a live node of `list`, and nodes
                // live as long as their list, which outlives `'l`.
                self.out[lane.idx] = unsafe { entry(node) };
                lane.idx = usize::MAX;
                self.left -= 1;
            }
        }
        self.left == 0
    }

    /// Runs every search to its end: the first entry at or after each key
    /// in its list (`None` past the last), in the order of [`new`](Self::new).
    pub fn finish(mut self) -> Vec<Option<(&'l [u8], &'l [u8])>> {
        while !self.step() {}
        self.out
    }
}
