//! The tracker of [`Transactions`](super::Transactions): the writes made
//! while transactions are open, the open transactions' snapshots, and the
//! writes of validated transactions not yet visible (pending), which
//! together say whether a key or range was written after a snapshot.
//!
//! * **Owns**: those records, within a byte limit.
//! * **Calls**: nothing.
//! * **Thread safety**: none of its own; `Transactions` holds it under a
//!   mutex.

use std::collections::BTreeMap;
use std::ops::Bound;

use super::range::{admits_keys, KeyRange};
use crate::batch::{Op, WriteBatch};

/// The most bytes the tracker may hold: its keys (each twice) and
/// their bookkeeping. A transaction left open (a `WATCH` of an idle
/// client, a forgotten Python transaction) would otherwise make it keep
/// every key written after its snapshot, without bound. Past the limit the
/// oldest records are forgotten, and every transaction whose snapshot is
/// older than them fails to commit with `Error::Conflict` if it read
/// anything: a false conflict, which optimistic transactions allow and
/// callers retry (RocksDB's optimistic transactions answer `TryAgain` when
/// the memtable history they validate against is too short, for the same
/// reason). 8 MiB is ~70,000 writes of 16-byte keys after the snapshot.
const TRACKED_BYTES_LIMIT: usize = 8 << 20;

/// Bytes charged per record beyond its key's two copies: two vector
/// headers and allocations, and the maps' slots.
const RECORD_OVERHEAD: usize = 96;

/// Writes made while transactions were open: key -> the sequence number
/// visible right after the write (an upper bound of its own).
pub(super) struct Tracker {
    keys: BTreeMap<Vec<u8>, u64>,
    /// The keys recorded at each sequence number, oldest first, so that
    /// pruning visits what it removes. A scan of `keys` on every close
    /// made commits quadratic while one transaction stayed open (a `WATCH`
    /// of an idle client, a long-lived Python transaction): with one open,
    /// a short transaction took 17 us after 20,000 others and 79 us after
    /// 80,000, under the exclusive gate; now 1.4 us throughout.
    by_seq: BTreeMap<u64, Vec<Vec<u8>>>,
    ranges: Vec<(Vec<u8>, Vec<u8>, u64)>,
    /// Snapshot sequence numbers of the open transactions.
    open: BTreeMap<u64, usize>,
    /// Writes up to this sequence number were forgotten for the limit: a
    /// transaction whose snapshot is older conflicts.
    horizon: u64,
    /// Keys (with how many transactions write them) and ranges of
    /// validated transactions whose writes are not yet visible: they
    /// conflict with every snapshot. Not charged to the limit: bounded by
    /// the transactions committing at once.
    pending: BTreeMap<Vec<u8>, usize>,
    pending_ranges: Vec<(Vec<u8>, Vec<u8>)>,
    /// Bytes held (see [`TRACKED_BYTES_LIMIT`]), and the limit.
    bytes: usize,
    limit: usize,
}

impl Default for Tracker {
    fn default() -> Tracker {
        Tracker::with_limit(TRACKED_BYTES_LIMIT)
    }
}

impl Tracker {
    fn with_limit(limit: usize) -> Tracker {
        Tracker {
            keys: BTreeMap::new(),
            by_seq: BTreeMap::new(),
            ranges: Vec::new(),
            open: BTreeMap::new(),
            horizon: 0,
            pending: BTreeMap::new(),
            pending_ranges: Vec::new(),
            bytes: 0,
            limit,
        }
    }

    /// Counts a transaction open at `snapshot`.
    pub(super) fn register(&mut self, snapshot: u64) {
        *self.open.entry(snapshot).or_default() += 1;
    }

    /// Counts a transaction open at `snapshot` closed, and forgets what no
    /// open transaction needs any more.
    pub(super) fn unregister(&mut self, snapshot: u64) {
        if let Some(n) = self.open.get_mut(&snapshot) {
            *n -= 1;
            if *n == 0 {
                self.open.remove(&snapshot);
            }
        }
        self.prune();
    }

    /// Records a write of every key in `[start, end)` at `seq` that was
    /// not a batch (a bulk load).
    pub(super) fn record_range(&mut self, start: &[u8], end: &[u8], seq: u64) {
        self.bytes += range_charge(start, end);
        self.ranges.push((start.to_vec(), end.to_vec(), seq));
        if self.bytes > self.limit {
            self.forget_oldest();
        }
    }

    /// Records the writes of `batch`, visible from `seq` on.
    pub(super) fn record(&mut self, batch: &WriteBatch, seq: u64) {
        for op in batch.ops().flatten() {
            match op {
                Op::Put(k, _) | Op::Delete(k) => {
                    let newest = self.keys.entry(k.to_vec()).or_insert(seq);
                    *newest = (*newest).max(seq);
                    self.by_seq.entry(seq).or_default().push(k.to_vec());
                    self.bytes += key_charge(k);
                }
                Op::DeleteRange(s, e) => {
                    self.bytes += range_charge(s, e);
                    self.ranges.push((s.to_vec(), e.to_vec(), seq));
                }
            }
        }
        if self.bytes > self.limit {
            self.forget_oldest();
        }
    }

    /// Marks the writes of `batch`, a transaction validated but not yet
    /// visible, as pending.
    pub(super) fn mark_pending(&mut self, batch: &WriteBatch) {
        for op in batch.ops().flatten() {
            match op {
                Op::Put(k, _) | Op::Delete(k) => *self.pending.entry(k.to_vec()).or_default() += 1,
                Op::DeleteRange(s, e) => self.pending_ranges.push((s.to_vec(), e.to_vec())),
            }
        }
    }

    /// The pending writes of `batch` are done: visible from `seq` on, or
    /// (`None`) failed and never applied.
    pub(super) fn land(&mut self, batch: &WriteBatch, seq: Option<u64>) {
        self.unmark_pending(batch);
        if let Some(seq) = seq {
            self.record(batch, seq);
        }
    }

    /// Takes back the marks of [`mark_pending`](Self::mark_pending).
    fn unmark_pending(&mut self, batch: &WriteBatch) {
        for op in batch.ops().flatten() {
            match op {
                Op::Put(k, _) | Op::Delete(k) => {
                    if let Some(n) = self.pending.get_mut(k) {
                        *n -= 1;
                        if *n == 0 {
                            self.pending.remove(k);
                        }
                    }
                }
                Op::DeleteRange(s, e) => {
                    let mine = |r: &(Vec<u8>, Vec<u8>)| r.0 == s && r.1 == e;
                    if let Some(i) = self.pending_ranges.iter().position(mine) {
                        self.pending_ranges.swap_remove(i);
                    }
                }
            }
        }
    }

    /// Forgets the oldest records until half the limit is held, and
    /// moves the horizon past them.
    fn forget_oldest(&mut self) {
        while self.bytes > self.limit / 2 {
            let Some(&seq) = self.by_seq.keys().next() else {
                break;
            };
            self.forget_through(seq);
            self.horizon = self.horizon.max(seq);
        }
        if self.bytes > self.limit / 2 {
            // What is left is range writes.
            let newest = self.ranges.iter().map(|r| r.2).max().unwrap_or(0);
            self.forget_through(newest);
            self.horizon = self.horizon.max(newest);
        }
    }

    /// Forgets every record of a write at or before `seq`.
    fn forget_through(&mut self, seq: u64) {
        while let Some(entry) = self.by_seq.first_entry() {
            if *entry.key() > seq {
                break;
            }
            let (at, keys) = entry.remove_entry();
            for key in keys {
                self.bytes -= key_charge(&key);
                // A later write of the key keeps it (under its own entry).
                if self.keys.get(&key) == Some(&at) {
                    self.keys.remove(&key);
                }
            }
        }
        if !self.ranges.is_empty() {
            let bytes = &mut self.bytes;
            self.ranges.retain(|(s, e, at)| {
                let keep = *at > seq;
                if !keep {
                    *bytes -= range_charge(s, e);
                }
                keep
            });
        }
    }

    pub(super) fn written_after(&self, key: &[u8], snapshot: u64) -> bool {
        snapshot < self.horizon
            || self.pending.contains_key(key)
            || self
                .pending_ranges
                .iter()
                .any(|(s, e)| key >= s.as_slice() && key < e.as_slice())
            || self.keys.get(key).is_some_and(|&s| s > snapshot)
            || self
                .ranges
                .iter()
                .any(|(s, e, seq)| *seq > snapshot && key >= s.as_slice() && key < e.as_slice())
    }

    pub(super) fn range_written_after(&self, range: &KeyRange, snapshot: u64) -> bool {
        if snapshot < self.horizon {
            return true;
        }
        let bounds = (borrowed(&range.0), borrowed(&range.1));
        // (BTreeMap::range panics on inverted bounds: they admit nothing.)
        (admits_keys(range)
            && (self.pending.range::<[u8], _>(bounds).next().is_some()
                || self
                    .keys
                    .range::<[u8], _>(bounds)
                    .any(|(_, &s)| s > snapshot)))
            || self
                .pending_ranges
                .iter()
                .any(|(s, e)| overlaps(&range.0, &range.1, s, e))
            || self.ranges.iter().any(|(s, e, seq)| {
                *seq > snapshot && overlaps(&range.0, &range.1, s.as_slice(), e.as_slice())
            })
    }

    /// Forgets writes no open transaction can conflict with.
    fn prune(&mut self) {
        match self.open.keys().next() {
            Some(&oldest) => self.forget_through(oldest),
            None => {
                self.keys.clear();
                self.by_seq.clear();
                self.ranges.clear();
                self.bytes = 0;
            }
        }
    }
}

fn key_charge(key: &[u8]) -> usize {
    2 * key.len() + RECORD_OVERHEAD
}

fn range_charge(start: &[u8], end: &[u8]) -> usize {
    start.len() + end.len() + RECORD_OVERHEAD
}

fn borrowed(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match b {
        Bound::Included(k) => Bound::Included(k.as_slice()),
        Bound::Excluded(k) => Bound::Excluded(k.as_slice()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// True if `[start, end)` meets the range `lower..upper`.
fn overlaps(lower: &Bound<Vec<u8>>, upper: &Bound<Vec<u8>>, start: &[u8], end: &[u8]) -> bool {
    let below_upper = match upper {
        Bound::Included(u) => start <= u.as_slice(),
        Bound::Excluded(u) => start < u.as_slice(),
        Bound::Unbounded => true,
    };
    let above_lower = match lower {
        Bound::Included(l) | Bound::Excluded(l) => end > l.as_slice(),
        Bound::Unbounded => true,
    };
    below_upper && above_lower
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum Step {
        /// A write of these keys (indexes into a small key space).
        Write(Vec<u8>),
        /// A bulk load of keys `first..first + len` (a range write).
        Load(u8, u8),
        /// A transaction begins at the current sequence number.
        Begin,
        /// The `n`-th open transaction (modulo how many) closes.
        Close(usize),
        /// A validated transaction writing these keys takes its place in
        /// the commit order (its keys pending).
        Place(Vec<u8>),
        /// The `n`-th placed transaction's write becomes visible.
        Land(usize),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            3 => proptest::collection::vec(0u8..12, 1..4).prop_map(Step::Write),
            1 => (0u8..12, 1u8..4).prop_map(|(first, len)| Step::Load(first, len)),
            1 => Just(Step::Begin),
            1 => any::<usize>().prop_map(Step::Close),
            1 => proptest::collection::vec(0u8..12, 1..3).prop_map(Step::Place),
            1 => any::<usize>().prop_map(Step::Land),
        ]
    }

    /// Key `k` as a batch stores it (with its keyspace tag).
    fn stored(k: u8) -> Vec<u8> {
        let mut batch = WriteBatch::default();
        batch.put([k], b"v");
        match batch.ops().flatten().next() {
            Some(Op::Put(key, _)) => key.to_vec(),
            _ => unreachable!("a batch of one put"),
        }
    }

    proptest! {
        /// Against a model that never forgets a write: for every open
        /// transaction and every key, the tracker knows whether the key
        /// was written after the transaction's snapshot (or, past its
        /// byte limit, dooms the transaction), holds no key no open
        /// transaction needs, and stays within its limit.
        #[test]
        fn tracks_what_open_transactions_need_and_forgets_the_rest(
            steps in proptest::collection::vec(step(), 1..120),
            limit in prop_oneof![Just(TRACKED_BYTES_LIMIT), 300usize..2000],
        ) {
            let mut t = Tracker::with_limit(limit);
            let mut all: Vec<(u8, u64)> = Vec::new();
            let mut open: Vec<u64> = Vec::new();
            let mut placed: Vec<WriteBatch> = Vec::new();
            let mut seq = 0u64;
            for s in steps {
                match s {
                    Step::Write(keys) => {
                        seq += 1;
                        let mut batch = WriteBatch::default();
                        for k in &keys {
                            batch.put([*k], b"v");
                            all.push((*k, seq));
                        }
                        if !open.is_empty() {
                            t.record(&batch, seq);
                        }
                    }
                    Step::Load(first, len) => {
                        seq += 1;
                        let end = first.saturating_add(len).min(12);
                        all.extend((first..end).map(|k| (k, seq)));
                        if !open.is_empty() {
                            t.record_range(&stored(first), &stored(end), seq);
                        }
                    }
                    Step::Begin => {
                        open.push(seq);
                        t.register(seq);
                    }
                    Step::Close(n) if !open.is_empty() => {
                        t.unregister(open.remove(n % open.len()));
                    }
                    Step::Close(_) => {}
                    Step::Place(keys) => {
                        let mut batch = WriteBatch::default();
                        for k in &keys {
                            batch.put([*k], b"v");
                        }
                        t.mark_pending(&batch);
                        placed.push(batch);
                    }
                    Step::Land(n) if !placed.is_empty() => {
                        let batch = placed.remove(n % placed.len());
                        seq += 1;
                        t.land(&batch, Some(seq));
                        // (The landing transaction closes: what it alone
                        // needed goes.)
                        t.prune();
                        for op in batch.ops().flatten() {
                            if let Op::Put(k, _) = op {
                                all.push((*k.last().unwrap(), seq));
                            }
                        }
                    }
                    Step::Land(_) => {}
                }
                // Never a missed conflict; a false one only for a snapshot
                // older than what the limit made it forget.
                for &snapshot in &open {
                    for k in 0u8..12 {
                        let pending = placed.iter().flat_map(|b| b.ops().flatten()).any(
                            |op| matches!(op, Op::Put(key, _) if *key.last().unwrap() == k),
                        );
                        let model = pending
                            || all.iter().any(|&(key, s)| key == k && s > snapshot);
                        let told = t.written_after(&stored(k), snapshot);
                        prop_assert!(told || !model, "missed {} after {}", k, snapshot);
                        prop_assert!(!told || model || snapshot < t.horizon);
                    }
                }
                let held: usize = t.by_seq.values().flatten().map(|k| key_charge(k)).sum::<usize>()
                    + t.ranges.iter().map(|(s, e, _)| range_charge(s, e)).sum::<usize>();
                prop_assert_eq!(t.bytes, held);
                prop_assert!(t.bytes <= limit);
                let oldest = open.iter().min().copied();
                for (key, &s) in &t.keys {
                    prop_assert!(oldest.is_some_and(|o| s > o), "{:?} kept at {}", key, s);
                }
                prop_assert!(t.by_seq.keys().all(|&s| oldest.is_some_and(|o| s > o)));
            }
        }
    }
}
