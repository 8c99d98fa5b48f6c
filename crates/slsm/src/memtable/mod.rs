//! A memory run: one skiplist of the sLSM memory buffer ("The Skiplist-Based
//! LSM Tree", section 2.1), with its Bloom filter over user keys and, once
//! sealed, its min/max user keys; and [`MemRun::apply`], the one way a write
//! batch reaches a memory run, shared by the write path and recovery
//! (LevelDB's `WriteBatchInternal::InsertInto`).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use std::cell::RefCell;

use slsm_skiplist::{key_prefix, InsertHint, LowerBounds, OwnedIter, SkipList};

use crate::batch::Op;
use crate::bloom::{hash_key, AtomicBloom};
use crate::key::{self, InternalOrder, Kind};
use crate::options::Options;
use crate::rangedel::{MemRangeDels, RangeTombstone};

use crate::answer::{newest_version, NewestVersion};

thread_local! {
    /// Each writing thread's splice (the search path of its last insert):
    /// ascending inserts (`fillseq`, sorted batches) then cost O(1) instead of
    /// a search from the head. A hint is checked against the list it was
    /// made for, so one per thread serves every run.
    static INSERT_HINT: RefCell<InsertHint> = RefCell::new(InsertHint::new());
    /// Scratch space for encoding internal keys while applying a batch.
    static IKEY_BUF: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// One decoded operation of a batch (`Err` for a malformed one, which ends
/// the batch: batches are validated before they are applied).
type OpResult<'a> = std::result::Result<Op<'a>, ()>;

/// A key buffer that grew past this (one huge key) is released after use.
const MAX_RETAINED_KEY_BUF: usize = 4096;

/// Bytes of skiplist memory assumed per entry when sizing a run's Bloom
/// filter: small entries overfill the filter gracefully (a higher false
/// positive rate), they never cause false negatives.
const ASSUMED_BYTES_PER_ENTRY: usize = 48;

/// One skiplist run of the memory buffer.
///
/// Thread safety: `insert` may run on many threads at once and concurrently
/// with every read; an entry becomes visible to readers as soon as its
/// insert returns (the engine additionally hides it behind the published
/// sequence number until its whole batch is in). The run is *sealed* once
/// it stops taking writes; only then are its key bounds known.
pub(crate) struct MemRun {
    list: Arc<SkipList<InternalOrder>>,
    bloom: AtomicBloom,
    /// Limits (`Rn`) past which the run is full.
    run_size: usize,
    /// Bytes the skiplist's arena takes at a time.
    arena_chunk: usize,
    run_entries: usize,
    /// Number of the WAL file holding this run's writes (0: none). A log
    /// may hold several consecutive runs (see `buffer::MemoryBuffer`).
    pub wal_number: u64,
    max_seq: AtomicU64,
    range_dels: MemRangeDels,
    bounds: OnceLock<Option<KeyBounds>>,
    /// Bytes the memory budget gave this run past its reserve, for one
    /// write bigger than a run (`budget::MemoryBudget::take_oversize`).
    oversize: AtomicUsize,
}

/// A sealed run's smallest and largest user keys, with their 8-byte
/// prefixes so that most lookups are ruled in or out without comparing key
/// bytes (a lookup tests every memory run's bounds).
struct KeyBounds {
    min: Vec<u8>,
    max: Vec<u8>,
    min_prefix: u64,
    max_prefix: u64,
}

impl KeyBounds {
    fn new(min: Vec<u8>, max: Vec<u8>) -> KeyBounds {
        KeyBounds {
            min_prefix: key_prefix(&min),
            max_prefix: key_prefix(&max),
            min,
            max,
        }
    }

    /// True if `min <= user_key <= max`. The prefixes order keys as their
    /// bytes do (zero-padded big-endian), so only an equal prefix needs the
    /// bytes.
    #[inline]
    fn contain(&self, user_key: &[u8]) -> bool {
        let p = key_prefix(user_key);
        let above_min = p > self.min_prefix || (p == self.min_prefix && user_key >= &self.min[..]);
        let below_max = p < self.max_prefix || (p == self.max_prefix && user_key <= &self.max[..]);
        above_min && below_max
    }
}

/// Who may insert into a run during an insert call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Inserters {
    /// The caller is the only thread inserting into the run until the call
    /// returns (the write path's uncontended case, and recovery): filter bits
    /// and the sequence-number high-water mark are updated with plain atomic
    /// stores instead of locked read-modify-writes (~20 cycles each).
    Alone,
    /// Other threads may be inserting (a commit group's members).
    Concurrent,
}

impl MemRun {
    /// An empty run sized by `opts.run_size` (within the memory budget, see
    /// `Options::effective_run_size`) and `opts.run_entries`, whose skiplist
    /// tells keys apart by their bytes after `shared` (the run before it,
    /// [`MemRun::key_prefix_shared`]; see `key::InternalOrder`).
    pub fn new(opts: &Options, wal_number: u64, shared: &[u8]) -> MemRun {
        let run_size = opts.effective_run_size();
        let arena_chunk = (run_size / 16).clamp(1024, 1 << 20);
        let list_opts = slsm_skiplist::Options {
            // Small chunks for small runs so that `memory_usage` tracks the
            // run size closely; 1 MiB chunks for large runs.
            arena_chunk_size: arena_chunk,
            ..Default::default()
        };
        let expected_entries = (run_size / ASSUMED_BYTES_PER_ENTRY).min(opts.run_entries);
        MemRun {
            list: Arc::new(SkipList::with_order(InternalOrder::past(shared), list_opts)),
            bloom: AtomicBloom::new(expected_entries.max(1024), opts.bloom_fp_rate),
            run_size,
            arena_chunk,
            run_entries: opts.run_entries,
            wal_number,
            max_seq: AtomicU64::new(0),
            range_dels: MemRangeDels::default(),
            bounds: OnceLock::new(),
            oversize: AtomicUsize::new(0),
        }
    }

    /// Inserts one entry. `hash` is `bloom::hash_key(user_key)`.
    pub fn insert(&self, ikey: &[u8], value: &[u8], hash: u64, seq: u64, who: Inserters) {
        match who {
            Inserters::Alone => self.bloom.insert_hash_alone(hash),
            Inserters::Concurrent => self.bloom.insert_hash(hash),
        }
        // Internal keys are unique (one sequence number per operation), so
        // the insert cannot find the key present.
        let inserted = INSERT_HINT
            .try_with(|hint| {
                self.list
                    .insert_with_hint(&mut hint.borrow_mut(), ikey, value)
            })
            // During thread-local destruction: a one-off search.
            .unwrap_or_else(|_| self.list.insert(ikey, value));
        debug_assert!(inserted, "duplicate internal key");
        match who {
            Inserters::Alone => {
                if seq > self.max_seq.load(Ordering::Relaxed) {
                    self.max_seq.store(seq, Ordering::Relaxed);
                }
            }
            Inserters::Concurrent => {
                self.max_seq.fetch_max(seq, Ordering::Relaxed);
            }
        }
    }

    /// Inserts the operations of one write batch, operation `i` at sequence
    /// number `first_seq + i`. The write path (each member of a commit
    /// group, concurrently) and recovery (replaying a log) both go through
    /// here. `who` says whether other threads insert into the run meanwhile.
    pub fn apply<'a>(
        &self,
        ops: impl Iterator<Item = OpResult<'a>> + Clone,
        first_seq: u64,
        who: Inserters,
    ) {
        let used_tls = IKEY_BUF
            .try_with(|buf| self.apply_with(ops.clone(), first_seq, who, &mut buf.borrow_mut()));
        if used_tls.is_err() {
            // During thread-local destruction.
            self.apply_with(ops, first_seq, who, &mut Vec::new());
        }
    }

    fn apply_with<'a>(
        &self,
        ops: impl Iterator<Item = OpResult<'a>>,
        first_seq: u64,
        who: Inserters,
        buf: &mut Vec<u8>,
    ) {
        for (seq, op) in (first_seq..).zip(ops) {
            let Ok(op) = op else { break };
            buf.clear();
            match op {
                Op::Put(k, v) => {
                    key::encode_into(buf, k, seq, Kind::Value);
                    self.insert(buf, v, hash_key(k), seq, who);
                }
                Op::Delete(k) => {
                    key::encode_into(buf, k, seq, Kind::Delete);
                    self.insert(buf, &[], hash_key(k), seq, who);
                }
                Op::DeleteRange(start, end) => self.insert_range_del(start, end, seq),
            }
        }
        if buf.capacity() > MAX_RETAINED_KEY_BUF {
            *buf = Vec::new();
        }
    }

    /// Records a range tombstone `[start, end)` at `seq`.
    pub fn insert_range_del(&self, start: &[u8], end: &[u8], seq: u64) {
        self.range_dels.insert(start, end, seq);
        self.max_seq.fetch_max(seq, Ordering::Relaxed);
    }

    /// The highest sequence number `<= snapshot` of a range tombstone of
    /// this run covering `user_key`.
    #[inline]
    pub fn covering_range_del(&self, user_key: &[u8], snapshot: u64) -> Option<u64> {
        self.range_dels.covering_seq(user_key, snapshot)
    }

    /// The run's range tombstones.
    pub fn range_tombstones(&self) -> Vec<RangeTombstone> {
        self.range_dels.to_vec()
    }

    /// Bytes reserved by the run (skiplist arena plus Bloom filter).
    pub fn memory_usage(&self) -> usize {
        self.list.memory_usage() + self.bloom.memory_usage()
    }

    /// True once the run reached `run_size` bytes or `run_entries` entries
    /// (`Options`): it should be sealed before it takes more writes.
    pub fn is_full(&self) -> bool {
        self.len() >= self.run_entries || self.memory_usage() >= self.run_size
    }

    /// What the run holds at most once writes of about `bytes` (encoded)
    /// are in it, if they fit without the run growing past `run_size`
    /// (their nodes, and a fresh arena chunk if the current one runs out)
    /// or its entry count past `run_entries`; `None` if it must be sealed
    /// first. An empty run takes any write (a write bigger than a run gets
    /// one to itself).
    pub fn room_for(&self, bytes: usize) -> Option<usize> {
        let after = self.usage_after(bytes);
        let fits = self.len() < self.run_entries && after <= self.run_size;
        (fits || self.is_empty()).then_some(after)
    }

    /// At most what the run holds once `bytes` more of encoded entries are
    /// in it.
    pub fn usage_after(&self, bytes: usize) -> usize {
        // A node costs about its key and value, plus a tower and a header
        // of a few dozen bytes: twice the encoded size is a safe bound for
        // the entries the engine stores. The arena may take a new chunk.
        let needed = bytes.saturating_mul(2) + self.arena_chunk;
        self.memory_usage() + needed
    }

    /// Bytes the budget gave this run past its reserve (see the field).
    pub fn oversize(&self) -> usize {
        self.oversize.load(Ordering::Relaxed)
    }

    /// The budget gave this run `extra` bytes more past its reserve.
    pub fn add_oversize(&self, extra: usize) {
        self.oversize.fetch_add(extra, Ordering::Relaxed);
    }

    /// Number of entries (every version counts).
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// True if nothing was written.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty() && self.range_dels.len() == 0
    }

    /// Highest sequence number inserted (0 if empty).
    pub fn max_seq(&self) -> u64 {
        self.max_seq.load(Ordering::Acquire)
    }

    /// The leading bytes the run's smallest and largest user keys share (at
    /// most `key::MAX_SHARED_PREFIX`): the next run's keys likely start with
    /// them too.
    pub fn key_prefix_shared(&self) -> Vec<u8> {
        let mut it = self.list.iter();
        let Some((first, _)) = it.next() else {
            return Vec::new();
        };
        let last = it.next_back().map_or(first, |(k, _)| k);
        key::shared_prefix(key::user_key(first), key::user_key(last)).to_vec()
    }

    /// Marks the run immutable and records its user-key bounds. Called once
    /// every write into it has completed.
    pub fn seal(&self) {
        self.bounds.get_or_init(|| {
            let mut it = self.list.iter();
            let first = it.next().map(|(k, _)| key::user_key(k).to_vec())?;
            let last = it
                .next_back()
                .map(|(k, _)| key::user_key(k).to_vec())
                .unwrap_or_else(|| first.clone());
            Some(KeyBounds::new(first, last))
        });
    }

    /// Starts loading the filter block [`may_contain`](Self::may_contain)
    /// reads for `hash` (see `RunFile::prefetch_filter`).
    #[inline]
    pub fn prefetch_filter(&self, hash: u64) {
        self.bloom.prefetch_hash(hash);
    }

    /// False if the run certainly holds no version of `user_key`: the Bloom
    /// filter, and for sealed runs the min/max keys, rule it out.
    #[inline]
    pub fn may_contain(&self, user_key: &[u8], hash: u64) -> bool {
        if let Some(bounds) = self.bounds.get() {
            match bounds {
                None => return false,
                Some(b) if !b.contain(user_key) => return false,
                _ => {}
            }
        }
        self.bloom.may_contain_hash(hash)
    }

    /// The newest version of `user_key` at or below the lookup key's
    /// sequence number. `lookup` is `key::lookup_key(user_key, snapshot)`.
    pub fn get(&self, user_key: &[u8], lookup: &[u8]) -> Option<NewestVersion<'_>> {
        let (ikey, value) = self.list.lower_bound(lookup)?;
        newest_version(user_key, ikey, value)
    }

    /// Searches for the first entry at or after each lookup key in its
    /// run, advanced a cache miss at a time by the caller between its own
    /// work (see `slsm_skiplist::LowerBounds`).
    pub fn lower_bounds_stepped<'r, 'k>(
        searches: impl IntoIterator<Item = (&'r MemRun, &'k [u8])>,
    ) -> LowerBounds<'r, 'k, InternalOrder> {
        LowerBounds::new(searches.into_iter().map(|(run, key)| (&*run.list, key)))
    }

    /// A finger-search cursor over this run, for batched lookups in
    /// ascending key order.
    pub fn finger(&self) -> slsm_skiplist::Finger<'_, InternalOrder> {
        self.list.finger()
    }

    /// An owning cursor over the run's internal keys.
    pub fn cursor(&self) -> OwnedIter<InternalOrder> {
        self.list.owned_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::KeyBounds;
    use proptest::prelude::*;

    /// Keys around the 8-byte prefix boundary: shorter, equal and longer
    /// than 8 bytes, sharing prefixes, with zero bytes (a zero-padded prefix
    /// ties `a` with `a\0`).
    fn key() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(prop::sample::select(vec![0u8, 1, b'a', 0xff]), 0..12)
    }

    proptest! {
        #[test]
        fn bounds_by_prefix_agree_with_byte_order(a in key(), b in key(), k in key()) {
            let (min, max) = if a <= b { (a, b) } else { (b, a) };
            let want = min.as_slice() <= k.as_slice() && k.as_slice() <= max.as_slice();
            prop_assert_eq!(KeyBounds::new(min, max).contain(&k), want);
        }
    }
}
