//! The keys of one batched lookup, as every source's search sees them: the
//! lookup keys in one buffer, their hashes, which are still unresolved and
//! in what order (a leaf of `read/batch/`: the memory runs' and the run
//! files' searches both work on it).

use crate::answer::Answer;
use crate::key;
use crate::read::view::Tally;

/// The keys of one batch, with what every source needs of them.
pub(super) struct Batch<'a> {
    pub(super) keys: &'a [&'a [u8]],
    pub(super) lookups: &'a LookupKeys,
    pub(super) hashes: &'a [u64],
    /// Unresolved keys (indexes into `keys`), in key order if `sorted`.
    pub(super) pending: Vec<usize>,
    pub(super) sorted: bool,
    /// Counted here and added to the engine's counters once per batch: a
    /// locked add per key and run is a fence that keeps the next key's
    /// cache misses from starting early.
    pub(super) tally: Tally,
    /// Given each value found, with its key's index, once.
    pub(super) found: &'a mut dyn FnMut(usize, &[u8]),
}

/// Hands `answer`, key `i`'s, to `found` if it is a value.
#[inline]
pub(super) fn report(found: &mut dyn FnMut(usize, &[u8]), i: usize, answer: Answer<'_>) {
    if let Answer::Value(v) = answer {
        found(i, v);
    }
}

/// The lookup keys of a batch back to back in one buffer: one allocation
/// for the batch instead of one per key (a server's pipelined GETs spent
/// 5% of their time in `malloc` for them).
pub(super) struct LookupKeys {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl LookupKeys {
    pub(super) fn new(keys: &[&[u8]], snapshot: u64) -> LookupKeys {
        let total = keys.iter().map(|k| k.len() + key::TRAILER_LEN).sum();
        let mut bytes = Vec::with_capacity(total);
        let ends = keys
            .iter()
            .map(|k| {
                key::append_lookup_key(&mut bytes, k, snapshot);
                bytes.len()
            })
            .collect();
        LookupKeys { bytes, ends }
    }

    /// The lookup key of `keys[i]`.
    #[inline]
    pub(super) fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..self.ends[i]]
    }
}

/// The indexes of `keys` in ascending key order. Sorted on the 8 bytes of
/// each key past the prefix the whole batch shares, compared as integers,
/// full keys compared only when those tie. Sorted by `memcmp`, about six
/// calls a key, `memcmp` was 6% of a cached Python `multi_get` of 64
/// (perf); on integers the batch measured 2-3% faster. The shared prefix
/// is skipped because keys that begin alike (a keyspace's tag, an
/// integer's leading zeros) would tie on their first 8 bytes every time.
pub(super) fn key_order(keys: &[&[u8]]) -> Vec<usize> {
    let shared = match keys.split_first() {
        Some((first, rest)) => rest
            .iter()
            .map(|k| key::common_prefix_len(first, k))
            .fold(first.len(), usize::min),
        None => 0,
    };
    let mut order: Vec<(u64, usize)> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| (slsm_skiplist::key_prefix(&k[shared..]), i))
        .collect();
    order.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| keys[a.1].cmp(keys[b.1])));
    order.into_iter().map(|(_, i)| i).collect()
}
