//! Blocked Bloom filters (paper section 2.3).
//!
//! Every run, in memory or on disk, is paired with a Bloom filter over the
//! *user keys* it holds; a lookup probes the filter first and skips the run
//! when the answer is "definitely absent".
//!
//! The filter is *blocked*: a key's hash picks one 64-byte block (one cache
//! line, 512 bits) and all `k` probe bits of the key fall inside that block,
//! so a query touches a single cache line. Blocking costs accuracy (blocks
//! receive unequal numbers of keys), so [`bits_per_key`] sizes the filter with
//! a model of the blocked design rather than the textbook formula: the number
//! of keys in a block is Poisson distributed and the false-positive rate is
//! averaged over it. The unit tests measure the real rate.
//!
//! The engine computes [`hash_key`] once per lookup and probes every run's
//! filter with that hash (`may_contain_hash`).
//!
//! Serialized layout (used inside run files, see [`build_filter`]):
//!
//! ```text
//! +--------+-----+----------+----------------+-----------------------------+
//! | format | k   | reserved | num_blocks u32 | num_blocks x 64-byte blocks |
//! | u8 = 1 | u8  | 2 bytes  | little endian  | 8 little-endian u64 words   |
//! +--------+-----+----------+----------------+-----------------------------+
//! ```

use std::sync::atomic::{AtomicU64, Ordering};

use slsm_skiplist::prefetch;

mod build;
mod layout;

pub use build::{build_filter, filter_len, KeyHashes};
pub use layout::bits_per_key;
use layout::{
    block_index, block_masks, num_blocks, params, BLOCK_BYTES, BLOCK_WORDS, FORMAT_BLOCKED_V1,
    HEADER_LEN, MAX_PROBES,
};

/// The hash of a user key used by every filter of the engine (xxh3, 64 bit).
#[inline]
pub fn hash_key(user_key: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(user_key)
}

/// A fixed-size blocked Bloom filter that many threads may insert into at
/// once (used by the in-memory runs).
///
/// Inserts use `fetch_or` with `Relaxed` ordering: a reader racing with an
/// insert of the same key may miss it. The engine only relies on a key being
/// found after the insert has been published (the write that inserted the
/// hash happens-before the lookup through the run's own synchronization), so
/// this is sound. If more keys than `expected_keys` are inserted the filter
/// keeps working; its false-positive rate just rises gradually.
pub struct AtomicBloom {
    lines: Box<[AtomicLine]>,
    k: u32,
}

/// One block of an [`AtomicBloom`], aligned to a cache line (see [`Line`]).
#[repr(align(64))]
#[derive(Default)]
struct AtomicLine([AtomicU64; BLOCK_WORDS]);

impl AtomicBloom {
    /// A filter sized for `expected_keys` keys at false-positive rate
    /// `epsilon`.
    pub fn new(expected_keys: usize, epsilon: f64) -> AtomicBloom {
        let p = params(epsilon);
        let lines = (0..num_blocks(expected_keys, p.bits_per_key))
            .map(|_| AtomicLine::default())
            .collect();
        AtomicBloom { lines, k: p.k }
    }

    /// Adds a key by its [`hash_key`] hash. Safe to call from many threads.
    pub fn insert_hash(&self, h: u64) {
        self.set_bits(h, |word, _, m| {
            word.fetch_or(m, Ordering::Relaxed);
        });
    }

    /// [`insert_hash`](Self::insert_hash) for a caller that is the only
    /// thread inserting into this filter until the call returns: plain
    /// atomic stores instead of locked read-modify-writes. Readers may run
    /// concurrently. Were another insert to race with it, one of the two
    /// could lose bits (a false negative), hence the contract.
    pub fn insert_hash_alone(&self, h: u64) {
        self.set_bits(h, |word, old, m| word.store(old | m, Ordering::Relaxed));
    }

    /// Calls `set(word, current bits, mask)` for each word of `h`'s block
    /// missing some of its bits. Skipping words that already have them
    /// saves a locked read-modify-write (~20 cycles) in `insert_hash`: bits
    /// are only ever set, never cleared.
    #[inline(always)]
    fn set_bits(&self, h: u64, set: impl Fn(&AtomicU64, u64, u64)) {
        let line = self.line(h);
        for (word, &m) in line.0.iter().zip(&block_masks(h, self.k)) {
            let old = word.load(Ordering::Relaxed);
            if old & m != m {
                set(word, old, m);
            }
        }
    }

    /// False if the key with hash `h` was definitely never inserted (see the
    /// type's docs for inserts racing with this call).
    pub fn may_contain_hash(&self, h: u64) -> bool {
        let line = self.line(h);
        block_masks(h, self.k)
            .iter()
            .zip(&line.0)
            .all(|(m, word)| word.load(Ordering::Relaxed) & m == *m)
    }

    /// Starts loading the block [`may_contain_hash`](Self::may_contain_hash)
    /// reads for `h` into the cache.
    pub fn prefetch_hash(&self, h: u64) {
        prefetch((self.line(h) as *const AtomicLine).cast());
    }

    /// The block of hash `h` (there is at least one).
    fn line(&self, h: u64) -> &AtomicLine {
        &self.lines[block_index(h, self.lines.len())]
    }

    /// Bytes of memory used by the filter bits.
    pub fn memory_usage(&self) -> usize {
        self.lines.len() * BLOCK_BYTES
    }
}

impl std::fmt::Debug for AtomicBloom {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AtomicBloom")
            .field("num_blocks", &self.lines.len())
            .field("k", &self.k)
            .finish()
    }
}

/// One filter block: a cache line, aligned to one, so that a probe reads
/// one line. A block at any other address straddles two: each probe of a
/// filter kept as the file's bytes (8-byte header, `malloc`'s 16-byte
/// alignment) missed twice.
#[repr(align(64))]
#[derive(Clone, Copy, Default)]
struct Line([u64; BLOCK_WORDS]);

/// A filter serialized by [`build_filter`] (a run file's), decoded into
/// cache-line-aligned blocks of native words.
pub struct Filter {
    lines: Box<[Line]>,
    k: u32,
}

impl Filter {
    /// Checks the header and the length; `None` if `bytes` is not a valid
    /// serialized filter.
    pub fn decode(bytes: &[u8]) -> Option<Filter> {
        let header = bytes.get(..HEADER_LEN)?;
        let k = u32::from(header[1]);
        if header[0] != FORMAT_BLOCKED_V1 || k == 0 || k > MAX_PROBES {
            return None;
        }
        let num_blocks = u32::from_le_bytes(header[4..8].try_into().ok()?) as usize;
        let blocks = &bytes[HEADER_LEN..];
        if num_blocks.checked_mul(BLOCK_BYTES)? != blocks.len() {
            return None;
        }
        let lines = blocks
            .chunks_exact(BLOCK_BYTES)
            .map(|block| {
                let mut line = Line::default();
                for (word, w) in line.0.iter_mut().zip(block.chunks_exact(8)) {
                    *word = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
                }
                line
            })
            .collect();
        Some(Filter { lines, k })
    }

    /// False if no key with hash `h` was in the filter's key set.
    #[inline]
    pub fn may_contain_hash(&self, h: u64) -> bool {
        let Some(line) = self.line(h) else {
            return false;
        };
        block_masks(h, self.k)
            .iter()
            .zip(&line.0)
            .all(|(m, word)| word & m == *m)
    }

    /// Starts loading the block [`may_contain_hash`](Self::may_contain_hash)
    /// reads for `h` into the cache.
    #[inline]
    pub fn prefetch_hash(&self, h: u64) {
        if let Some(line) = self.line(h) {
            prefetch((line as *const Line).cast());
        }
    }

    fn line(&self, h: u64) -> Option<&Line> {
        self.lines.get(block_index(h, self.lines.len()))
    }

    /// Number of 64-byte blocks.
    pub fn num_blocks(&self) -> usize {
        self.lines.len()
    }

    /// Bytes of the serialized filter.
    pub fn serialized_len(&self) -> usize {
        HEADER_LEN + self.lines.len() * BLOCK_BYTES
    }

    /// Bytes of memory the filter holds.
    pub fn memory_usage(&self) -> usize {
        self.lines.len() * BLOCK_BYTES
    }
}

impl std::fmt::Debug for Filter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Filter")
            .field("num_blocks", &self.lines.len())
            .field("k", &self.k)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn key_hashes(range: std::ops::Range<u64>) -> Vec<u64> {
        range.map(|i| hash_key(&i.to_le_bytes())).collect()
    }

    fn observed_fp(epsilon: f64) -> (f64, f64) {
        let present = key_hashes(0..100_000);
        let absent = key_hashes(1_000_000..1_100_000);
        let bytes = build_filter(&present, epsilon);
        let view = Filter::decode(&bytes).unwrap();
        assert!(present.iter().all(|&h| view.may_contain_hash(h)));
        let fp = absent.iter().filter(|&&h| view.may_contain_hash(h)).count();
        let atomic = AtomicBloom::new(present.len(), epsilon);
        present.iter().for_each(|&h| atomic.insert_hash(h));
        let afp = absent
            .iter()
            .filter(|&&h| atomic.may_contain_hash(h))
            .count();
        (fp as f64 / 1e5, afp as f64 / 1e5)
    }

    #[test]
    fn fp_rate_close_to_epsilon() {
        for eps in [0.01, 0.001] {
            let (fp, afp) = observed_fp(eps);
            eprintln!(
                "eps {eps}: bits/key {:.2}, observed {fp}, atomic {afp}",
                bits_per_key(eps)
            );
            assert!(fp < 2.0 * eps, "eps {eps}: observed {fp}");
            assert!(afp < 2.0 * eps, "eps {eps}: atomic observed {afp}");
        }
    }

    #[test]
    fn single_inserter_sets_the_same_bits_as_concurrent_inserts() {
        let hashes = key_hashes(0..20_000);
        let shared = AtomicBloom::new(hashes.len(), 0.01);
        let alone = AtomicBloom::new(hashes.len(), 0.01);
        for &h in &hashes {
            shared.insert_hash(h);
            alone.insert_hash_alone(h);
        }
        assert!(hashes.iter().all(|&h| alone.may_contain_hash(h)));
        let bits = |b: &AtomicBloom| -> Vec<u64> {
            let words = b.lines.iter().flat_map(|line| &line.0);
            words.map(|w| w.load(Ordering::Relaxed)).collect()
        };
        assert_eq!(bits(&shared), bits(&alone));
    }

    #[test]
    fn bits_per_key_above_textbook() {
        for eps in [0.1f64, 0.01, 0.001, 0.0001] {
            let textbook = -eps.ln() / std::f64::consts::LN_2.powi(2);
            let b = bits_per_key(eps);
            assert!(
                b > textbook && b < textbook * 1.6,
                "eps {eps}: {b} vs {textbook}"
            );
        }
        assert!(bits_per_key(f64::NAN).is_finite());
        assert!(bits_per_key(0.0).is_finite() && bits_per_key(2.0) >= 1.0);
    }

    #[test]
    fn empty_filter_answers_absent() {
        let bytes = build_filter(&[], 0.01);
        let view = Filter::decode(&bytes).unwrap();
        assert_eq!(view.num_blocks(), 0);
        assert!(!view.may_contain_hash(hash_key(b"x")));
        let a = AtomicBloom::new(0, 0.01);
        assert!(!a.may_contain_hash(hash_key(b"x")));
        a.insert_hash(hash_key(b"x"));
        assert!(a.may_contain_hash(hash_key(b"x")));
    }

    #[test]
    fn parse_rejects_bad_bytes() {
        let bytes = build_filter(&key_hashes(0..100), 0.01);
        assert!(Filter::decode(&bytes[..bytes.len() - 1]).is_none());
        assert!(Filter::decode(&bytes[..4]).is_none());
        let mut bad = bytes.clone();
        bad[0] = 9;
        assert!(Filter::decode(&bad).is_none());
        let mut bad = bytes;
        bad[1] = 0;
        assert!(Filter::decode(&bad).is_none());
    }

    #[test]
    fn overfull_atomic_filter_degrades_gracefully() {
        let a = AtomicBloom::new(1_000, 0.01);
        let present = key_hashes(0..4_000);
        present.iter().for_each(|&h| a.insert_hash(h));
        assert!(present.iter().all(|&h| a.may_contain_hash(h)));
        let fp = key_hashes(1_000_000..1_010_000)
            .iter()
            .filter(|&&h| a.may_contain_hash(h))
            .count();
        assert!(fp < 9_000, "still filters something: {fp}");
    }

    #[test]
    fn concurrent_inserts_are_all_visible() {
        let a = std::sync::Arc::new(AtomicBloom::new(40_000, 0.01));
        let threads: Vec<_> = (0..4u64)
            .map(|t| {
                let a = a.clone();
                std::thread::spawn(move || {
                    key_hashes(t * 10_000..(t + 1) * 10_000)
                        .into_iter()
                        .for_each(|h| a.insert_hash(h))
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        assert!(key_hashes(0..40_000).iter().all(|&h| a.may_contain_hash(h)));
        assert!(a.memory_usage() >= 40_000 * 9 / 8);
    }

    proptest! {
        #[test]
        fn no_false_negatives(keys in proptest::collection::vec(any::<Vec<u8>>(), 0..300),
                              eps in 0.0001f64..0.5) {
            let hashes: Vec<u64> = keys.iter().map(|k| hash_key(k)).collect();
            let bytes = build_filter(&hashes, eps);
            let view = Filter::decode(&bytes).unwrap();
            let atomic = AtomicBloom::new(keys.len(), eps);
            hashes.iter().for_each(|&h| atomic.insert_hash(h));
            for &h in &hashes {
                prop_assert!(view.may_contain_hash(h));
                prop_assert!(atomic.may_contain_hash(h));
            }
        }
    }
}
