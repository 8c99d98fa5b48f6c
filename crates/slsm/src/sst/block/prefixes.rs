//! [`KeyPrefixes`]: a compact search index over a cached block's keys.
//!
//! A binary search over a raw block reads, per probe, an offset, two
//! varints and a key, each on its own cache line: for a 4 KiB block of
//! ~30 entries that is five probes and a dozen dependent misses, 39% of a
//! cached point lookup (perf, 1M keys all cached). The user keys of one
//! block share a prefix (all keys between the first and the last do, in
//! byte order), so four bytes past it tell most entries apart. Those four
//! bytes of every entry, big-endian, sit in one small array: the search
//! runs over two or three cache lines and compares a full key only among
//! entries whose four bytes equal the target's (usually one).
//!
//! Built when a block in the block cache is asked for again (it is then
//! likely to be searched many times), not for blocks read once by a merge
//! or read in place from a file held in memory. It is derived from the
//! block and charged with it from the start.
//!
//! Why it is exact: truncating two byte strings to the same length and
//! padding them with zeros never reverses their order, so a smaller word
//! means a smaller user key (hence a smaller internal key, whatever the
//! sequence numbers), a larger word a larger one; only equal words need
//! the full comparison. A damaged block (keys out of order) gives wrong
//! answers, as the plain search would, never a panic.

use std::ops::Range;

use crate::key;

/// Longest shared prefix kept: keys sharing more are still searched
/// correctly, with more full comparisons.
const MAX_SHARED: usize = 24;

/// Blocks with fewer entries are searched directly.
pub(super) const MIN_ENTRIES: usize = 8;

/// The shared user-key prefix of a block and four bytes past it per entry.
#[derive(Debug)]
pub(crate) struct KeyPrefixes {
    shared: [u8; MAX_SHARED],
    shared_len: usize,
    words: Box<[u32]>,
}

impl KeyPrefixes {
    /// The index of a block of `count` entries whose user keys, in order,
    /// `user_key` gives (`None`, for a damaged entry, gives no index).
    pub fn build<'a>(count: usize, user_key: impl Fn(usize) -> Option<&'a [u8]>) -> Option<Self> {
        let (first, last) = (user_key(0)?, user_key(count.checked_sub(1)?)?);
        let shared_len = key::common_prefix_len(first, last).min(MAX_SHARED);
        let mut shared = [0; MAX_SHARED];
        shared[..shared_len].copy_from_slice(&first[..shared_len]);
        let mut words = Vec::with_capacity(count);
        for i in 0..count {
            words.push(word_at(user_key(i)?, shared_len));
        }
        Some(KeyPrefixes {
            shared,
            shared_len,
            words: words.into_boxed_slice(),
        })
    }

    /// Bytes the index of a block of `count` entries occupies beyond the
    /// block.
    pub fn heap_bytes_for(count: usize) -> usize {
        4 * count
    }

    /// The words, for prefetching.
    pub fn words(&self) -> &[u32] {
        &self.words
    }

    /// Narrows the search for the internal key `target` among entries
    /// `from..` to the entries whose full keys must be compared: every
    /// entry before the range is smaller than the target, every entry from
    /// its end on is larger. `None` if the target does not share the
    /// block's prefix (search it all).
    pub fn narrow(&self, target: &[u8], from: usize) -> Option<Range<usize>> {
        let user_key = key::user_key(target);
        if user_key.get(..self.shared_len) != Some(&self.shared[..self.shared_len]) {
            return None;
        }
        let t = word_at(user_key, self.shared_len);
        let from = from.min(self.words.len());
        // Counted over all the words rather than searched: branch-free and
        // vectorized, where a binary search is a chain of dependent loads.
        let below = self.words[from..].iter().map(|&w| usize::from(w < t));
        let start = from + below.sum::<usize>();
        let end = start + self.words[start..].iter().take_while(|&&w| w == t).count();
        Some(start..end)
    }
}

/// Bytes `at..at + 4` of `k`, zero-padded, big-endian.
fn word_at(k: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    if let Some(tail) = k.get(at..) {
        let n = tail.len().min(4);
        w[..n].copy_from_slice(&tail[..n]);
    }
    u32::from_be_bytes(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The words never contradict the order of the keys they come
        /// from, and `narrow` brackets every target's lower bound.
        #[test]
        fn narrowing_brackets_the_lower_bound(
            mut keys in prop::collection::vec(prop::collection::vec(0u8..4, 0..12), 1..60),
            target in prop::collection::vec(0u8..4, 0..12),
            from in 0usize..70,
        ) {
            keys.sort();
            keys.dedup();
            let p = KeyPrefixes::build(keys.len(), |i| keys.get(i).map(|k| k.as_slice())).unwrap();
            let ikey = key::lookup_key(&target, 5);
            let from = from.min(keys.len());
            let lower = from + keys[from..].partition_point(|k| k.as_slice() < target.as_slice());
            match p.narrow(&ikey, from) {
                Some(Range { start, end }) => {
                    prop_assert!(from <= start && start <= lower && lower <= end, "{start} {lower} {end}");
                    prop_assert!(end <= keys.len());
                }
                None => prop_assert!(!target.starts_with(&p.shared[..p.shared_len])),
            }
        }
    }

    #[test]
    fn words_are_four_bytes_past_the_shared_prefix() {
        let keys: [&[u8]; 3] = [b"user:0001", b"user:0002x", b"user:0005"];
        let p = KeyPrefixes::build(3, |i| keys.get(i).copied()).unwrap();
        assert_eq!(&p.shared[..p.shared_len], b"user:000");
        assert_eq!(
            &*p.words,
            &[
                u32::from_be_bytes(*b"1\0\0\0"),
                u32::from_be_bytes(*b"2x\0\0"),
                u32::from_be_bytes(*b"5\0\0\0")
            ]
        );
        assert_eq!(p.narrow(&key::lookup_key(b"user:1", 1), 0), None);
        assert_eq!(p.narrow(&key::lookup_key(b"user:0002", 1), 0), Some(1..1));
        assert_eq!(p.narrow(&key::lookup_key(b"user:0002x", 1), 0), Some(1..2));
    }
}
