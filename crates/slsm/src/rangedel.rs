//! Range tombstones (`delete_range`): how they are held and queried.
//!
//! A range tombstone `[start, end)@seq` deletes every version of every user
//! key in the range whose sequence number is below `seq`. Tombstones may
//! overlap, so for lookups they are *fragmented*: the boundaries of all
//! tombstones cut the key space into non-overlapping fragments, each listing
//! the sequence numbers of the tombstones that cover it. Finding the
//! tombstones that cover a key is then one binary search for the fragment
//! containing it: the extent lookup of `slsm-extent`, on byte-string keys.
//!
//! `ExtentMap` itself keys extents by `u64` and forbids overlap, so it does
//! not fit byte-string tombstones directly; [`MemRangeDels`] follows its
//! design instead: writers (rare: one per `delete_range`) append under a
//! lock and publish a new immutable fragment index copy-on-write; readers
//! load the published index without a lock, and skip everything when a run
//! has no range tombstones at all.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwapOption;
use parking_lot::Mutex;

/// A range deletion stored in a run: user keys in `start..end` (end
/// exclusive) written before `seq` are deleted.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RangeTombstone {
    /// First deleted user key.
    pub start: Vec<u8>,
    /// First user key after the deleted range.
    pub end: Vec<u8>,
    /// Sequence number of the deletion.
    pub seq: u64,
}

/// Non-overlapping fragments of a set of range tombstones, sorted by start.
#[derive(Debug, Default)]
pub(crate) struct Fragments {
    starts: Vec<Vec<u8>>,
    ends: Vec<Vec<u8>>,
    /// Sequence numbers covering each fragment, descending.
    seqs: Vec<Vec<u64>>,
}

impl Fragments {
    /// Fragments `tombstones` (any order, overlaps allowed).
    pub fn build<'a>(tombstones: impl IntoIterator<Item = &'a RangeTombstone>) -> Fragments {
        let mut ts: Vec<&RangeTombstone> =
            tombstones.into_iter().filter(|t| t.start < t.end).collect();
        let mut out = Fragments::default();
        if ts.is_empty() {
            return out;
        }
        ts.sort_by(|a, b| a.start.cmp(&b.start));
        let mut bounds: Vec<&[u8]> = ts
            .iter()
            .flat_map(|t| [t.start.as_slice(), t.end.as_slice()])
            .collect();
        bounds.sort_unstable();
        bounds.dedup();
        // Sweep: `active` holds the tombstones covering the current fragment.
        let mut active: Vec<&RangeTombstone> = Vec::new();
        let mut next = 0;
        for w in bounds.windows(2) {
            let (lo, hi) = (w[0], w[1]);
            active.retain(|t| t.end.as_slice() > lo);
            while next < ts.len() && ts[next].start.as_slice() <= lo {
                if ts[next].end.as_slice() > lo {
                    active.push(ts[next]);
                }
                next += 1;
            }
            if active.is_empty() {
                continue;
            }
            let mut seqs: Vec<u64> = active.iter().map(|t| t.seq).collect();
            seqs.sort_unstable_by(|a, b| b.cmp(a));
            seqs.dedup();
            out.starts.push(lo.to_vec());
            out.ends.push(hi.to_vec());
            out.seqs.push(seqs);
        }
        out
    }

    /// True if there are no fragments.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// The highest sequence number `<= snapshot` of a tombstone covering
    /// `user_key`, if any.
    #[inline]
    pub fn covering_seq(&self, user_key: &[u8], snapshot: u64) -> Option<u64> {
        let i = self
            .starts
            .partition_point(|s| s.as_slice() <= user_key)
            .checked_sub(1)?;
        if user_key >= self.ends[i].as_slice() {
            return None;
        }
        self.seqs[i].iter().copied().find(|&s| s <= snapshot)
    }

    /// The lowest sequence number `> seq` of a tombstone covering
    /// `user_key`: the oldest tombstone that deletes a version at `seq`.
    pub fn lowest_covering_above(&self, user_key: &[u8], seq: u64) -> Option<u64> {
        let i = self
            .starts
            .partition_point(|s| s.as_slice() <= user_key)
            .checked_sub(1)?;
        if user_key >= self.ends[i].as_slice() {
            return None;
        }
        self.seqs[i].iter().rev().copied().find(|&s| s > seq)
    }
}

/// The range tombstones of one memory run.
///
/// Thread safety: `insert` may race with readers; a reader sees either the
/// index before or after the insert, both consistent (and the engine only
/// makes a tombstone visible after its batch is published).
#[derive(Default)]
pub(crate) struct MemRangeDels {
    all: Mutex<Vec<RangeTombstone>>,
    count: AtomicUsize,
    index: ArcSwapOption<Fragments>,
}

impl MemRangeDels {
    pub fn insert(&self, start: &[u8], end: &[u8], seq: u64) {
        let mut all = self.all.lock();
        all.push(RangeTombstone {
            start: start.to_vec(),
            end: end.to_vec(),
            seq,
        });
        self.index
            .store(Some(Arc::new(Fragments::build(all.iter()))));
        self.count.store(all.len(), Ordering::Release);
    }

    /// Number of tombstones.
    #[inline]
    pub fn len(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }

    /// The highest covering sequence number `<= snapshot`, if any.
    #[inline]
    pub fn covering_seq(&self, user_key: &[u8], snapshot: u64) -> Option<u64> {
        if self.len() == 0 {
            return None;
        }
        self.index.load().as_ref()?.covering_seq(user_key, snapshot)
    }

    /// A copy of every tombstone.
    pub fn to_vec(&self) -> Vec<RangeTombstone> {
        self.all.lock().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str, e: &str, seq: u64) -> RangeTombstone {
        RangeTombstone {
            start: s.as_bytes().to_vec(),
            end: e.as_bytes().to_vec(),
            seq,
        }
    }

    /// The brute-force answer.
    fn naive(ts: &[RangeTombstone], k: &[u8], snap: u64) -> Option<u64> {
        ts.iter()
            .filter(|t| t.start.as_slice() <= k && k < t.end.as_slice() && t.seq <= snap)
            .map(|t| t.seq)
            .max()
    }

    #[test]
    fn fragments_match_brute_force() {
        let ts = vec![
            t("b", "f", 5),
            t("d", "h", 9),
            t("a", "c", 2),
            t("e", "e", 7), // empty: ignored
            t("g", "z", 1),
            t("d", "h", 3),
        ];
        let f = Fragments::build(&ts);
        for k in ["", "a", "b", "c", "d", "e", "f", "g", "h", "y", "z", "zz"] {
            for snap in 0..11 {
                assert_eq!(
                    f.covering_seq(k.as_bytes(), snap),
                    naive(&ts, k.as_bytes(), snap),
                    "key {k} snapshot {snap}"
                );
            }
        }
    }

    #[test]
    fn mem_range_dels_publish_on_insert() {
        let m = MemRangeDels::default();
        assert_eq!(m.covering_seq(b"k", 100), None);
        m.insert(b"a", b"m", 10);
        assert_eq!(m.covering_seq(b"k", 100), Some(10));
        assert_eq!(m.covering_seq(b"k", 9), None);
        assert_eq!(m.covering_seq(b"m", 100), None);
        m.insert(b"j", b"l", 20);
        assert_eq!(m.covering_seq(b"k", 100), Some(20));
        assert_eq!(m.to_vec().len(), 2);
    }

    use proptest::prelude::*;

    proptest! {
        #[test]
        fn fragments_agree_with_brute_force(
            raw in prop::collection::vec((0u8..20, 0u8..20, 1u64..50), 0..30),
            probes in prop::collection::vec((0u8..21, 0u64..60), 1..40),
        ) {
            let ts: Vec<RangeTombstone> = raw
                .iter()
                .map(|&(a, b, s)| RangeTombstone { start: vec![a], end: vec![b], seq: s })
                .collect();
            let f = Fragments::build(&ts);
            for (k, snap) in probes {
                prop_assert_eq!(f.covering_seq(&[k], snap), naive(&ts, &[k], snap));
            }
        }
    }
}
