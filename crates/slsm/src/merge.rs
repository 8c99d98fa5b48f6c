//! The k-way heap merge that writes a new run ("The Skiplist-Based LSM
//! Tree", section 2.5, algorithm 1), with the rules for which versions may
//! be dropped.
//!
//! The input is a [`MergingIter`] over the runs being merged, which yields
//! every version of a user key newest first, plus the runs' range
//! tombstones. A version is kept if it is the newest one some reader can
//! see: the latest state, or any live snapshot. Snapshots split the sequence
//! space into stripes (`(s_{i-1}, s_i]`); within one stripe only the newest
//! version of a key is visible to anyone, and a version covered by a newer
//! range tombstone of the same stripe is visible to no one. A tombstone
//! (point or range) is dropped as well when the output is the bottom of the
//! tree (nothing older exists below) and no snapshot predates it, since then
//! it hides nothing.

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::iter::{InternalIter, MergingIter};
use crate::key::{self, Kind};
use crate::keyspace::catalog::Catalog;
use crate::keyspace::rules::{Rules, Verdict};
use crate::keyspace::tag;
use crate::rangedel::{Fragments, RangeTombstone};
use crate::sst::RunBuilder;

/// What a merge may drop.
pub(crate) struct MergePolicy {
    /// Sequence numbers of live snapshots, ascending.
    pub snapshots: Vec<u64>,
    /// True if no data older than the inputs exists below the output.
    pub bottommost: bool,
    /// The live keyspaces: entries of dropped ones are dropped.
    pub catalog: Arc<Catalog>,
    /// TTLs and compaction filters by keyspace id.
    pub rules: Arc<HashMap<u32, Rules>>,
    /// Milliseconds since the epoch, for TTLs.
    pub now: u64,
}

impl MergePolicy {
    fn stripe(&self, seq: u64) -> usize {
        self.snapshots.partition_point(|&s| s < seq)
    }

    fn drops_tombstone(&self, seq: u64) -> bool {
        self.bottommost && self.stripe(seq) == 0
    }

    /// The rules' verdict on the newest value of a key, if its keyspace
    /// has rules and no snapshot can see the value (filters never change
    /// what a snapshot reads).
    fn verdict(&self, user_key: &[u8], value: &[u8], stripe: usize) -> Verdict {
        if self.rules.is_empty() || stripe != self.snapshots.len() {
            return Verdict::Keep;
        }
        match tag::id_of(user_key).and_then(|(id, len)| Some((self.rules.get(&id)?, len))) {
            Some((rules, len)) => rules.judge(&user_key[len..], value, self.now),
            None => Verdict::Keep,
        }
    }

    /// True if `user_key` belongs to a dropped keyspace.
    #[inline]
    fn in_dropped_keyspace(&self, user_key: &[u8]) -> bool {
        match tag::id_of(user_key) {
            Some((0, _)) => false,
            Some((id, _)) => !self.catalog.is_live(id),
            None => false,
        }
    }
}

/// Totals of one merge.
#[derive(Default, Debug, Clone, Copy)]
pub(crate) struct MergeTotals {
    pub entries_read: u64,
    pub entries_written: u64,
    pub range_dels_written: u64,
}

/// Where a merge writes its output: one run file ([`RunBuilder`]) or a
/// job's outputs, which may cut it into several (`jobs::build`).
pub(crate) trait RunSink {
    /// Appends an entry (keys in increasing order). `Ok(false)` if the
    /// sink gave up (nothing more is taken; the merge stops).
    fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<bool>;
    /// Records a range tombstone; `Ok(false)` if the sink gave up.
    fn add_range_tombstone(&mut self, start: &[u8], end: &[u8], seq: u64) -> Result<bool>;
}

impl RunSink for RunBuilder {
    fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<bool> {
        RunBuilder::add(self, ikey, value).map(|()| true)
    }

    fn add_range_tombstone(&mut self, start: &[u8], end: &[u8], seq: u64) -> Result<bool> {
        RunBuilder::add_range_tombstone(self, start, end, seq);
        Ok(true)
    }
}

/// Writes the merged, deduplicated contents of `input` (positioned by this
/// function) and the surviving `range_dels` into `out`. `None` if `out`
/// gave up part way.
pub(crate) fn merge_into(
    input: &mut MergingIter,
    range_dels: &[RangeTombstone],
    out: &mut impl RunSink,
    policy: &MergePolicy,
) -> Result<Option<MergeTotals>> {
    let mut totals = MergeTotals::default();
    let fragments = Fragments::build(range_dels);
    let mut last_user_key: Option<Vec<u8>> = None;
    let mut last_stripe = usize::MAX;
    input.seek_to_first();
    while input.valid() {
        totals.entries_read += 1;
        let ikey = input.key();
        let parsed = key::parse(ikey)
            .ok_or_else(|| Error::corruption("<merge input>", 0, "undecodable internal key"))?;
        let stripe = policy.stripe(parsed.seq);
        let same_key = last_user_key.as_deref() == Some(parsed.user_key);
        let shadowed = same_key && stripe == last_stripe;
        if !same_key {
            key::remember(&mut last_user_key, parsed.user_key);
        }
        last_stripe = stripe;
        let covered = !fragments.is_empty()
            && fragments
                .lowest_covering_above(parsed.user_key, parsed.seq)
                .is_some_and(|t| policy.stripe(t) == stripe);
        let dropped_tombstone = parsed.kind == Kind::Delete && policy.drops_tombstone(parsed.seq);
        let dropped = dropped_tombstone || policy.in_dropped_keyspace(parsed.user_key);
        if !shadowed && !covered && !dropped {
            let verdict = match parsed.kind {
                Kind::Value => policy.verdict(parsed.user_key, input.value(), stripe),
                Kind::Delete => Verdict::Keep,
            };
            let taken = match verdict {
                Verdict::Keep => Some(out.add(ikey, input.value())?),
                Verdict::Replace(v) => Some(out.add(ikey, &v)?),
                // A tombstone keeps older versions below hidden; at the
                // bottom nothing is below.
                Verdict::Remove if policy.bottommost => None,
                Verdict::Remove => {
                    let tomb = key::encode(parsed.user_key, parsed.seq, Kind::Delete);
                    Some(out.add(&tomb, b"")?)
                }
            };
            match taken {
                Some(false) => return Ok(None),
                Some(true) => totals.entries_written += 1,
                None => {}
            }
        }
        input.next();
    }
    input.status()?;
    for t in range_dels {
        if !policy.drops_tombstone(t.seq) && !policy.in_dropped_keyspace(&t.start) {
            if !out.add_range_tombstone(&t.start, &t.end, t.seq)? {
                return Ok(None);
            }
            totals.range_dels_written += 1;
        }
    }
    Ok(Some(totals))
}
