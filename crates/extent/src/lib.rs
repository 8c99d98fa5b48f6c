//! `slsm-extent`: a concurrent map of non-overlapping `u64` ranges
//! ("extents"), modelled on Chris Mason's cache-friendly kernel skiplist for
//! index ranges (LWN, "Skiplists II: API and benchmarks", 2013) — the
//! structure proposed for Btrfs extents and IOMMU address ranges.
//!
//! # Structure
//!
//! A skiplist whose nodes are *leaves*; each leaf holds up to `LEAF_CAP`
//! extents in a sorted array. A leaf with key `k` is responsible for the
//! extents whose last point lies between `k` and the next leaf's key.
//!
//! ```text
//!  level 2  head ------------------------------> L3 ---------------> nil
//!  level 1  head ---------------> L2 ----------> L3 ---------------> nil
//!  level 0  head -----> L1 -----> L2 -----> L3 -----> L4 ----------> nil
//!           [e e e]     [e e]     [e e e e]   [e]       [e e e]
//!           slot arrays: sorted, in the leaf, guarded by a sequence counter
//! ```
//!
//! # Thread-safety contract
//!
//! * `ExtentMap<T>` is `Send + Sync` for `T: Send + Sync`; all methods take
//!   `&self`. Values must be `Clone + 'static`: readers get clones.
//! * [`insert`](ExtentMap::insert), [`remove`](ExtentMap::remove) and
//!   [`insert_hole`](ExtentMap::insert_hole) are linearizable: stored
//!   extents never overlap, and a range is never handed out twice.
//!   They lock only the leaves they change (an insert: the leaves whose key
//!   ranges meet the new range, normally one; a split or an unlink also
//!   locks the neighbours being re-linked), always left to right, so they
//!   cannot deadlock.
//! * [`lookup`](ExtentMap::lookup) takes no lock: it reads a leaf's slot
//!   array under an epoch guard and validates it (not dead, not split
//!   meanwhile), retrying otherwise. It returns an extent that really was in
//!   the map and covers the point; an extent that is present for the whole
//!   call is always found.
//! * Iteration ([`iter`](ExtentMap::iter), [`leaves`](ExtentMap::leaves),
//!   [`first`](ExtentMap::first), [`last`](ExtentMap::last),
//!   [`next_after`](ExtentMap::next_after),
//!   [`prev_before`](ExtentMap::prev_before)) is consistent per leaf: see
//!   the `iter` module notes.
//! * Readers never see a `T` being dropped: each value lives in its own
//!   epoch-managed allocation that is freed by `crossbeam-epoch` only once
//!   no reader can still hold it (likewise for unlinked leaves); readers
//!   clone a value only after validating the read that found it.
//! * [`len`](ExtentMap::len) is exact when quiescent.
//!
//! Lookups and iteration return clones of the values, and `remove` returns
//! a clone (the original is dropped once no reader can see it), so `T`
//! should be cheap to clone (wrap large values in `Arc`).
//!
//! # Example
//!
//! ```
//! use slsm_extent::{Error, ExtentMap};
//!
//! let m = ExtentMap::new();
//! m.insert(100, 50, "a").unwrap();
//! assert_eq!(m.insert(120, 10, "b"), Err(Error::Overlap { start: 100, len: 50 }));
//! assert_eq!(m.lookup(149).unwrap().value, "a");
//! assert!(m.lookup(150).is_none());
//! let s = m.insert_hole(0, 1 << 20, 64, 64, "c").unwrap();
//! assert_eq!(s, 0);
//! // [64, 128) would overlap [100, 150): the next 64-aligned fit is 192.
//! assert_eq!(m.insert_hole(0, 1 << 20, 64, 64, "d"), Ok(192));
//! assert_eq!(m.remove(100, 50), Some("a"));
//! assert_eq!(m.len(), 2);
//! ```

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

mod error;
mod hole;
mod iter;
mod leaf;
mod map;
mod pool;
mod restructure;

pub use error::{Error, HoleError};
pub use iter::{Iter, Leaves};
pub use map::ExtentMap;

/// Default number of extent slots per leaf: the best of the design range
/// 16-64 in the leaf-size sweep (`examples/extent_bench.rs --sweep`; see
/// README). 128 measured a little faster still on lookups; use
/// `ExtentMap::<T, 128>` for that.
pub const DEFAULT_LEAF_CAP: usize = 64;

/// An extent `[start, start + len)` and (a clone of) its value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Extent<T> {
    /// First point covered.
    pub start: u64,
    /// Number of points covered (>= 1).
    pub len: u64,
    /// The stored value.
    pub value: T,
}

impl<T> Extent<T> {
    /// One past the last point covered (`start + len`, never overflows).
    pub fn end(&self) -> u64 {
        self.start + self.len
    }

    /// Whether `point` lies in the extent.
    pub fn contains(&self, point: u64) -> bool {
        point >= self.start && point - self.start < self.len
    }
}
