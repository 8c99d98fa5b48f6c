//! The index block ("The Skiplist-Based LSM Tree", section 2.4, fence
//! pointers): the last internal key and the stored length of each data
//! block, held in memory while the run is open.
//!
//! ```text
//! payload = varint num_blocks | varint alignment
//!           then per block: varint len | last internal key |
//!                           varint (stored length << 1 | padded)
//! block   = payload | trailer (codec byte, CRC)
//! ```
//!
//! Blocks follow one another from offset 0; a `padded` block starts at the
//! next multiple of the alignment instead (see the [format](super)).

use std::cmp::Ordering;

use super::format::{corrupt, Decoded, Handle, TRAILER_LEN};
use crate::codec::{put_bytes, put_varint, Reader};
use crate::key;

/// Smallest possible stored data block: one entry of two one-byte varints,
/// one offset, the count and the trailer.
const MIN_BLOCK_LEN: u64 = 2 + 4 + 4 + TRAILER_LEN as u64;

/// Fences per group of the sampled top index ([`Index::groups`]): 16
/// prefixes are two cache lines.
const GROUP: usize = 16;

/// Appends the index entry of one data block to an index payload.
pub(crate) fn put_entry(out: &mut Vec<u8>, last: &[u8], stored_len: u64, padded: bool) {
    put_bytes(out, last);
    put_varint(out, stored_len << 1 | padded as u64);
}

/// The fence pointers of one run, in memory.
#[derive(Debug, Default)]
pub(crate) struct Index {
    /// Every block's last internal key, back to back.
    keys: Vec<u8>,
    /// Where each key ends in `keys`.
    key_ends: Vec<u32>,
    /// Where each block ends in the file (the next one starts there, or at
    /// the next multiple of `align` if it is padded).
    block_ends: Vec<u64>,
    /// One bit per block: it starts at a multiple of `align`.
    padded: Vec<u64>,
    align: u64,
    /// The user-key prefix every fence shares (the first and the last do,
    /// so all between do): a keyspace's tag, a key's leading zeros.
    shared: Box<[u8]>,
    /// The 8 bytes of each last key's user key past `shared`, big-endian,
    /// beside the fences so that a search compares integers over a dense
    /// array (the skiplist's trick, after goleveldb pull request #387); key
    /// bytes are read only on a tie. Taken past the shared prefix because
    /// prefixes taken from the start of the key tie on every fence when
    /// keys begin alike (the default keyspace's tag byte and db_bench's
    /// big-endian integers left 7 bytes that tied across neighbouring
    /// fences: full key comparisons were 7% of a cached lookup).
    prefixes: Vec<u64>,
    /// The last prefix of every group of [`GROUP`] fences: a top index small
    /// enough to stay cached, so that a point lookup searches it and then
    /// touches one or two lines of `prefixes`.
    groups: Vec<u64>,
    /// The last prefix of every [`GROUP`] groups: the top of the top index.
    /// A binary search over all of `groups` was a chain of ten dependent
    /// loads for a run of 13,000 blocks; this one is searched, then one
    /// window of `groups` is counted (see [`count_below`]).
    supers: Vec<u64>,
}

/// How many of `window`'s prefixes (ascending) are below `t`: where `t`'s
/// lower bound is within it. Counted over the whole window, without a
/// branch on the data (the compiler vectorizes it): a binary or galloping
/// search of 16 prefixes mispredicts two or three branches, each costing
/// more than the whole count.
#[inline]
fn count_below(window: &[u64], t: u64) -> usize {
    window.iter().map(|&p| usize::from(p < t)).sum()
}

impl Index {
    /// Decodes the index payload stored at `payload_at` and checks that the
    /// keys are valid and strictly increasing and that the blocks tile
    /// `0..data_bytes`.
    pub fn decode(payload: &[u8], payload_at: u64, data_bytes: u64) -> Decoded<Index> {
        let bad = |why: &str| corrupt(payload_at, format!("index block: {why}"));
        let mut r = Reader::new(payload);
        let n = r.varint_usize().ok_or_else(|| bad("truncated"))?;
        let align = r.varint().ok_or_else(|| bad("truncated"))?;
        if align != 0 && !(align.is_power_of_two() && align <= 1 << 20) {
            return Err(bad("impossible alignment"));
        }
        // Each entry takes at least two bytes: never trust `n` for allocation.
        let cap = n.min(payload.len() / 2);
        let mut index = Index {
            keys: Vec::with_capacity(payload.len()),
            key_ends: Vec::with_capacity(cap),
            block_ends: Vec::with_capacity(cap),
            padded: Vec::new(),
            align,
            shared: Box::default(),
            prefixes: Vec::with_capacity(cap),
            groups: Vec::new(),
            supers: Vec::new(),
        };
        let mut end = 0u64;
        for i in 0..n {
            let last = r.length_prefixed().ok_or_else(|| bad("truncated key"))?;
            let len_and_pad = r.varint().ok_or_else(|| bad("truncated block length"))?;
            let (len, padded) = (len_and_pad >> 1, len_and_pad & 1 == 1);
            if len < MIN_BLOCK_LEN {
                return Err(bad("impossible block length"));
            }
            key::parse(last).ok_or_else(|| bad("invalid key"))?;
            if i > 0 && key::compare(index.last_key(i - 1), last) != Ordering::Less {
                return Err(bad("fence keys out of order"));
            }
            if padded {
                if align == 0 || end.is_multiple_of(align) {
                    return Err(bad("padding where none belongs"));
                }
                end = end.next_multiple_of(align);
                index.mark_padded(i);
            }
            end = end
                .checked_add(len)
                .ok_or_else(|| bad("impossible block length"))?;
            index.keys.extend_from_slice(last);
            index
                .key_ends
                .push(u32::try_from(index.keys.len()).map_err(|_| bad("too large"))?);
            index.block_ends.push(end);
        }
        if !r.is_empty() || end != data_bytes {
            return Err(bad("does not cover the data blocks"));
        }
        index.build_prefixes();
        Ok(index)
    }

    /// Fills `shared`, `prefixes`, `groups` and `supers` from the fences.
    fn build_prefixes(&mut self) {
        let n = self.len();
        if n == 0 {
            return;
        }
        let (first, last) = (
            key::user_key(self.last_key(0)),
            key::user_key(self.last_key(n - 1)),
        );
        let shared_len = key::common_prefix_len(first, last);
        self.shared = first[..shared_len].into();
        self.prefixes = (0..n)
            .map(|i| {
                let user_key = key::user_key(self.last_key(i));
                slsm_skiplist::key_prefix(user_key.get(shared_len..).unwrap_or_default())
            })
            .collect();
        self.groups = self
            .prefixes
            .chunks(GROUP)
            .map(|c| c[c.len() - 1])
            .collect();
        self.supers = self.groups.chunks(GROUP).map(|c| c[c.len() - 1]).collect();
    }

    /// The prefix of `target` comparable with the fences' (`None` if it
    /// does not start with their shared prefix).
    fn prefix_of(&self, target: &[u8]) -> Option<u64> {
        let user_key = key::user_key(target);
        let rest = user_key.strip_prefix(&*self.shared)?;
        Some(slsm_skiplist::key_prefix(rest))
    }

    /// Number of data blocks.
    pub fn len(&self) -> usize {
        self.key_ends.len()
    }

    /// Last internal key of block `i`.
    pub fn last_key(&self, i: usize) -> &[u8] {
        let start = if i == 0 {
            0
        } else {
            self.key_ends[i - 1] as usize
        };
        &self.keys[start..self.key_ends[i] as usize]
    }

    /// Where block `i` is stored.
    pub fn handle(&self, i: usize) -> Handle {
        let mut offset = if i == 0 { 0 } else { self.block_ends[i - 1] };
        if self.is_padded(i) {
            offset = offset.next_multiple_of(self.align);
        }
        Handle {
            offset,
            len: self.block_ends[i] - offset,
        }
    }

    fn mark_padded(&mut self, i: usize) {
        let word = i / 64;
        if self.padded.len() <= word {
            self.padded.resize(word + 1, 0);
        }
        self.padded[word] |= 1 << (i % 64);
    }

    fn is_padded(&self, i: usize) -> bool {
        self.padded
            .get(i / 64)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    /// Bytes the index holds in memory.
    pub fn memory_usage(&self) -> usize {
        self.keys.capacity()
            + self.shared.len()
            + 4 * self.key_ends.capacity()
            + 8 * (self.block_ends.capacity()
                + self.padded.capacity()
                + self.prefixes.capacity()
                + self.groups.capacity()
                + self.supers.capacity())
    }

    /// Index of the first block whose last key is `>= target` (`len()` if
    /// none), for one point lookup: the top index narrows the search to the
    /// first group whose last prefix is not below the target's, then
    /// [`gallop_last_ge`](Self::gallop_last_ge) finishes (fences of earlier
    /// groups all have smaller prefixes, so they are below the target).
    /// `on_group(first, n)` learns the group (blocks `first..first + n`)
    /// before the search within it starts, to start loading what the
    /// caller will read of the block it lands on.
    pub fn point_last_ge(&self, target: &[u8], on_group: impl FnOnce(usize, usize)) -> usize {
        let first = self.point_group(target);
        self.prefetch_group_ends(first / GROUP);
        on_group(first, GROUP);
        self.gallop_last_ge(target, first)
    }

    /// The first half of [`point_last_ge`](Self::point_last_ge): the first
    /// fence of the target's group, found in the top index, with the
    /// prefixes the search within the group compares starting to load. A
    /// batch calls it for every key before finishing any search with
    /// [`gallop_last_ge`](Self::gallop_last_ge) from the fence it returns,
    /// so that the keys' misses overlap.
    pub fn point_group(&self, target: &[u8]) -> usize {
        let g = match self.prefix_of(target) {
            Some(t) => {
                let s = self.supers.partition_point(|&p| p < t) * GROUP;
                let window = self.groups.get(s..(s + GROUP).min(self.groups.len()));
                s + window.map_or(0, |w| count_below(w, t))
            }
            None => 0,
        };
        let first = g * GROUP;
        if let Some(prefixes) = self
            .prefixes
            .get(first..(first + GROUP).min(self.prefixes.len()))
        {
            for line in prefixes.chunks(8) {
                slsm_skiplist::prefetch(line.as_ptr().cast());
            }
        }
        first
    }

    /// Starts loading the block ends [`handle`](Self::handle) will read for
    /// whichever fence of group `g` the search lands on (and the end before
    /// the group), so that the miss overlaps the search within the group
    /// instead of following it (~3% of a lookup that misses the cache).
    fn prefetch_group_ends(&self, g: usize) {
        let first = (g * GROUP).saturating_sub(1);
        let last = (g * GROUP + GROUP - 1).min(self.block_ends.len().saturating_sub(1));
        let Some(ends) = self.block_ends.get(first..=last) else {
            return;
        };
        for line in ends.chunks(8) {
            slsm_skiplist::prefetch(line.as_ptr().cast());
        }
        if let Some(end) = ends.last() {
            slsm_skiplist::prefetch((end as *const u64).cast());
        }
    }

    /// Index of the first block at or after `from` whose last key is `>=
    /// target` (`len()` if none): found among the [`GROUP`] prefixes from
    /// `from` on when one of them is above the target's (a point lookup's
    /// group always has one unless prefixes tie), else by galloping then
    /// binary search.
    pub fn gallop_last_ge(&self, target: &[u8], from: usize) -> usize {
        let n = self.len();
        let target_prefix = self.prefix_of(target);
        if let Some(t) = target_prefix {
            let end = from.saturating_add(GROUP).min(n);
            if let Some(window) = self.prefixes.get(from..end) {
                // Fences before `i` are below the target (smaller prefixes);
                // a larger prefix at `i` puts its fence above it.
                let i = from + count_below(window, t);
                if self.prefixes.get(i).is_some_and(|&p| p > t) && i < end {
                    return i;
                }
            }
        }
        let below = |i: usize| match target_prefix.map(|t| self.prefixes[i].cmp(&t)) {
            Some(Ordering::Less) => true,
            Some(Ordering::Greater) => false,
            _ => key::compare(self.last_key(i), target) == Ordering::Less,
        };
        let (mut lo, mut step) = (from.min(n), 1usize);
        let mut hi = lo;
        while hi < n && below(hi) {
            lo = hi + 1;
            hi = hi.saturating_add(step).min(n);
            step = step.saturating_mul(2);
        }
        // Binary search in [lo, hi) for the first fence not below the target.
        let (mut a, mut b) = (lo, hi);
        while a < b {
            let mid = a + (b - a) / 2;
            if below(mid) {
                a = mid + 1;
            } else {
                b = mid;
            }
        }
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{encode, Kind};

    fn index_of(keys: &[Vec<u8>], len: u64) -> Vec<u8> {
        let mut out = Vec::new();
        put_varint(&mut out, keys.len() as u64);
        put_varint(&mut out, 0);
        for k in keys {
            put_entry(&mut out, k, len, false);
        }
        out
    }

    /// Checks both searches for `target` against a scan of `keys`, the
    /// galloping one from several fences.
    fn check_searches(index: &Index, keys: &[Vec<u8>], target: &[u8]) {
        let n = keys.len();
        let want = keys.partition_point(|k| key::compare(k, target) == Ordering::Less);
        assert_eq!(index.point_last_ge(target, |_, _| {}), want, "{target:?}");
        for from in [
            0,
            want.saturating_sub(17),
            want.saturating_sub(3),
            want,
            want + 5,
        ] {
            let got = index.gallop_last_ge(target, from);
            assert_eq!(got, want.max(from).min(n), "{target:?} from {from}");
        }
    }

    #[test]
    fn searches_agree_with_a_scan() {
        // Sizes within one window of `supers` and past several.
        for n in [100u64, 3000] {
            let keys: Vec<Vec<u8>> = (0..n)
                .map(|i| encode(&(i * 10).to_be_bytes(), 5, Kind::Value))
                .collect();
            let index = Index::decode(&index_of(&keys, 100), 0, n * 100).unwrap();
            assert_eq!(index.len(), n as usize);
            assert_eq!(
                index.handle(3),
                Handle {
                    offset: 300,
                    len: 100
                }
            );
            for t in 0..n * 10 + 10 {
                check_searches(&index, &keys, &encode(&t.to_be_bytes(), 5, Kind::Value));
            }
        }
        // Runs of seven fences whose prefixes tie (their user keys differ
        // only past the prefix's 8 bytes), each target at its own key's
        // versions too.
        let user_key = |i: u64| [(i / 7).to_be_bytes(), i.to_be_bytes()].concat();
        let keys: Vec<Vec<u8>> = (0..3000)
            .map(|i| encode(&user_key(i), 5, Kind::Value))
            .collect();
        let index = Index::decode(&index_of(&keys, 100), 0, 3000 * 100).unwrap();
        for i in 0..3001 {
            for seq in [1, 5, 9] {
                check_searches(&index, &keys, &encode(&user_key(i), seq, Kind::Value));
            }
        }
    }

    #[test]
    fn targets_past_the_last_group_find_no_block() {
        for n in [
            1u64,
            GROUP as u64 - 1,
            GROUP as u64,
            2 * GROUP as u64,
            2 * GROUP as u64 + 1,
        ] {
            let keys: Vec<Vec<u8>> = (0..n)
                .map(|i| encode(&(i * 10).to_be_bytes(), 5, Kind::Value))
                .collect();
            let index = Index::decode(&index_of(&keys, 100), 0, n * 100).unwrap();
            let past = encode(&(n * 10).to_be_bytes(), 5, Kind::Value);
            assert_eq!(
                index.point_last_ge(&past, |_, _| {}),
                n as usize,
                "{n} fences"
            );
            let first = encode(&0u64.to_be_bytes(), 9, Kind::Value);
            assert_eq!(index.point_last_ge(&first, |_, _| {}), 0, "{n} fences");
        }
    }

    proptest::proptest! {
        /// Fences sharing long prefixes (or not), targets inside and
        /// outside them: both searches agree with a scan.
        #[test]
        fn searches_agree_with_a_scan_whatever_the_shared_prefix(
            stem in proptest::collection::vec(0u8..3, 0..12),
            tails in proptest::collection::btree_set(proptest::collection::vec(0u8..3, 0..10), 1..80),
            targets in proptest::collection::vec(proptest::collection::vec(0u8..3, 0..22), 1..40),
        ) {
            let keys: Vec<Vec<u8>> = tails
                .iter()
                .map(|t| encode(&[&stem[..], t].concat(), 5, Kind::Value))
                .collect();
            let index = Index::decode(&index_of(&keys, 100), 0, 100 * keys.len() as u64).unwrap();
            let own: Vec<Vec<u8>> = tails.iter().map(|t| [&stem[..], t].concat()).collect();
            for t in targets.iter().chain(&own).chain([&stem]) {
                for seq in [1, 5, 9] {
                    let target = encode(t, seq, Kind::Value);
                    let want = keys.partition_point(|k| key::compare(k, &target) == Ordering::Less);
                    proptest::prop_assert_eq!(index.point_last_ge(&target, |_, _| {}), want);
                    proptest::prop_assert_eq!(index.gallop_last_ge(&target, 0), want);
                }
            }
        }
    }

    #[test]
    fn damaged_indexes_are_rejected() {
        let a = encode(b"a", 1, Kind::Value);
        let b = encode(b"b", 1, Kind::Value);
        assert!(
            Index::decode(&index_of(&[b.clone(), a.clone()], 100), 0, 200).is_err(),
            "order"
        );
        assert!(
            Index::decode(&index_of(&[a.clone(), b.clone()], 100), 0, 300).is_err(),
            "cover"
        );
        assert!(
            Index::decode(&index_of(std::slice::from_ref(&a), 3), 0, 3).is_err(),
            "tiny block"
        );
        assert!(
            Index::decode(&index_of(&[b"x".to_vec()], 100), 0, 100).is_err(),
            "bad key"
        );
        assert!(Index::decode(&[0xff], 0, 0).is_err(), "truncated");
        let ok = index_of(&[a, b], 100);
        assert!(Index::decode(&ok, 0, 200).is_ok());
    }

    #[test]
    fn padded_blocks_start_on_the_next_multiple_of_the_alignment() {
        let keys: Vec<Vec<u8>> = (0..3u64)
            .map(|i| encode(&i.to_be_bytes(), 5, Kind::Value))
            .collect();
        let mut payload = Vec::new();
        put_varint(&mut payload, 3);
        put_varint(&mut payload, 4096);
        put_entry(&mut payload, &keys[0], 4000, false);
        put_entry(&mut payload, &keys[1], 4096, true);
        put_entry(&mut payload, &keys[2], 100, false);
        let index = Index::decode(&payload, 0, 4096 + 4096 + 100).unwrap();
        let h = |i| index.handle(i);
        assert_eq!(
            h(0),
            Handle {
                offset: 0,
                len: 4000
            }
        );
        assert_eq!(
            h(1),
            Handle {
                offset: 4096,
                len: 4096
            }
        );
        assert_eq!(
            h(2),
            Handle {
                offset: 8192,
                len: 100
            }
        );
        // Padding that is not needed, or no alignment, is corruption.
        let mut bad = Vec::new();
        put_varint(&mut bad, 1);
        put_varint(&mut bad, 4096);
        put_entry(&mut bad, &keys[0], 4000, true);
        assert!(Index::decode(&bad, 0, 4000).is_err());
        let mut bad = Vec::new();
        put_varint(&mut bad, 1);
        put_varint(&mut bad, 3000);
        put_entry(&mut bad, &keys[0], 4000, false);
        assert!(Index::decode(&bad, 0, 4000).is_err());
    }
}
