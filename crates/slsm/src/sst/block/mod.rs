//! Data blocks: building their raw form (`build.rs`), and reading a raw
//! block with bounds checks.
//!
//! ```text
//! entry*  = varint key_len | varint value_len | key | value
//! offsets = offset (from the block start) of each entry: u16 LE if
//!           the count has bit 30 set, else u32 LE
//! [prefix = the bytes every key of the block starts with
//!  u8       the prefix's length (>= 1)]  if the count has bit 31 set
//! count   = u32 LE number of entries (>= 1) in bits 0-29, the flags above
//! ```
//!
//! In a block with a prefix, each entry's key is the rest of its internal
//! key: the prefix is part of the user key, never of the 8-byte trailer,
//! so the rest holds the whole trailer. Blocks of format version 2 have
//! neither flag. The searches take a target whole and compare it to the
//! prefix once, then only the rests.
//!
//! On disk a block is then compressed or not and sealed with its trailer
//! (codec byte, checksum): see `compress.rs` and `format.rs`.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::sync::{Arc, OnceLock};

mod build;
mod prefixes;
mod search;

pub(crate) use self::build::BlockBuilder;
use self::build::{PREFIXED, SHORT_OFFSETS};
use self::prefixes::{KeyPrefixes, MIN_ENTRIES};
use super::format::{corrupt, Decoded};
use crate::cache::pages::{Page, PAGE};
use crate::codec::Reader;
use crate::key;

/// Longest key prefix a [`Block`] keeps a copy of.
const INLINE_PREFIX: usize = 24;

/// The first [`INLINE_PREFIX`] bytes of `raw[prefix]`, zero-padded.
fn inline_copy(raw: &[u8], prefix: &Range<usize>) -> [u8; INLINE_PREFIX] {
    let mut copy = [0; INLINE_PREFIX];
    let n = prefix.len().min(INLINE_PREFIX);
    copy[..n].copy_from_slice(&raw[prefix.start..prefix.start + n]);
    copy
}

/// The bytes of a raw block: its own, or a range of a file held in memory.
#[derive(Debug)]
pub(crate) enum BlockBytes {
    /// Read (and maybe decompressed) into memory of its own.
    Owned(Box<[u8]>),
    /// The first bytes of a page of the pool (a block read for the cache).
    Page(Page, usize),
    /// A range of a file that lives in memory.
    Shared(Arc<Vec<u8>>, Range<usize>),
}

impl BlockBytes {
    fn as_slice(&self) -> &[u8] {
        match self {
            BlockBytes::Owned(b) => b,
            BlockBytes::Page(page, len) => &page[..*len],
            BlockBytes::Shared(file, r) => &file[r.clone()],
        }
    }

    /// The memory the bytes take: a page is taken whole.
    fn charge(&self) -> usize {
        match self {
            BlockBytes::Page(..) => PAGE,
            _ => self.as_slice().len(),
        }
    }
}

/// A decoded raw data block: its entry count and where its offsets are,
/// checked once; every entry access is bounds-checked, so even damaged bytes
/// give errors or wrong answers, never undefined behaviour.
#[derive(Debug)]
pub(crate) struct Block {
    bytes: BlockBytes,
    offsets_at: usize,
    /// Bytes per offset: 2 or 4.
    offset_width: usize,
    count: usize,
    /// Where the keys' shared prefix is (empty if the block has none).
    prefix: Range<usize>,
    /// A copy of the prefix when it is at most [`INLINE_PREFIX`] bytes
    /// (the usual case): every search compares it first, and the copy is
    /// on the lines of this struct the search reads anyway, where the
    /// block's own is at the far end of its page, a line of its own (a
    /// cached `get` stalled on it: 10% of its time, perf).
    inline_prefix: [u8; INLINE_PREFIX],
    /// Offset of the stored block in its file (for error messages).
    file_offset: u64,
    /// Built the second time a cached block is searched (see
    /// [`Block::index_prefixes`]); unset for blocks read once.
    prefixes: OnceLock<Option<KeyPrefixes>>,
    /// Cached ahead of its first search (see [`Block::note_reuse`]).
    prefetched: AtomicBool,
}

impl Block {
    /// Decodes the trailer of the raw block `bytes`, stored at `file_offset`.
    pub fn decode(bytes: BlockBytes, file_offset: u64) -> Decoded<Block> {
        let raw = bytes.as_slice();
        let bad = || corrupt(file_offset, "malformed data block trailer");
        let count_at = raw.len().checked_sub(4).ok_or_else(bad)?;
        let word = Reader::at(raw, count_at).u32().ok_or_else(bad)?;
        let count = (word & !(PREFIXED | SHORT_OFFSETS)) as usize;
        let offset_width = match word & SHORT_OFFSETS {
            0 => 4,
            _ => 2,
        };
        let prefix = match word & PREFIXED {
            0 => count_at..count_at,
            _ => {
                let len_at = count_at.checked_sub(1).ok_or_else(bad)?;
                let start = len_at.checked_sub(raw[len_at] as usize).ok_or_else(bad)?;
                start..len_at
            }
        };
        let offsets_len = count.checked_mul(offset_width).ok_or_else(bad)?;
        let offsets_at = prefix.start.checked_sub(offsets_len).ok_or_else(bad)?;
        if count == 0 {
            return Err(corrupt(file_offset, "empty data block"));
        }
        let inline_prefix = inline_copy(raw, &prefix);
        Ok(Block {
            bytes,
            offsets_at,
            offset_width,
            count,
            inline_prefix,
            prefix,
            file_offset,
            prefixes: OnceLock::new(),
            prefetched: AtomicBool::new(false),
        })
    }

    /// The bytes every key of the block starts with, stored once (empty
    /// for a block without them). An entry's stored key is the rest.
    #[inline]
    pub fn key_prefix(&self) -> &[u8] {
        match self.inline_prefix.get(..self.prefix.len()) {
            Some(copy) => copy,
            None => &self.bytes.as_slice()[self.prefix.clone()],
        }
    }

    /// Builds the block's [`KeyPrefixes`] (once) so that later searches run
    /// over them. Reads call it (through [`Block::note_reuse`]) when the
    /// cache hands out a block it already held, not when a block enters
    /// it: the build is one pass over the entries, and while the data is
    /// several times the cache most blocks are never asked for again (5M
    /// keys over a 72 MiB cache: ~6% of lookups hit), so building on entry
    /// was work thrown away (~4% of a lookup, perf). The block just read is
    /// in the CPU's cache anyway, where the plain search is cheap. A block
    /// whose entries do not parse keeps the plain search, which reports the
    /// damage when it reaches it. Warming (`cache::warm`) builds it for the
    /// blocks it caches, which are meant to be searched again.
    pub fn index_prefixes(&self) {
        if self.count < MIN_ENTRIES {
            return;
        }
        self.prefixes.get_or_init(|| {
            KeyPrefixes::build(self.count, |i| self.key_rest(i).ok().map(key::user_key))
        });
    }

    /// Says the block entered the cache before any search used it (a
    /// batch's fetch): its first use from the cache is not a reuse.
    pub fn mark_prefetched(&self) {
        self.prefetched.store(true, AtomicOrdering::Relaxed);
    }

    /// Called when the cache hands the block out again: a block asked for
    /// a second time is likely to be asked for often, so its
    /// [`KeyPrefixes`] are built now (see [`Block::index_prefixes`]).
    pub fn note_reuse(&self) {
        // Loads only on the common path: a hot block is handed to many
        // threads, and a write here would bounce its cache line.
        if self.count < MIN_ENTRIES || self.prefixes.get().is_some() {
            return;
        }
        if self.prefetched.load(AtomicOrdering::Relaxed) {
            self.prefetched.store(false, AtomicOrdering::Relaxed);
            return;
        }
        self.index_prefixes();
    }

    /// Whether the block's [`KeyPrefixes`] are built (for tests).
    #[cfg(test)]
    pub fn is_indexed(&self) -> bool {
        self.prefixes().is_some()
    }

    fn prefixes(&self) -> Option<&KeyPrefixes> {
        self.prefixes.get().and_then(Option::as_ref)
    }

    /// Number of entries (at least one).
    pub fn count(&self) -> usize {
        self.count
    }

    /// Offset of the stored block in its file.
    pub fn offset(&self) -> u64 {
        self.file_offset
    }

    /// Bytes of the raw block (the whole page, for a block in a page) and
    /// of its search index, built or not (what a cache holding it is
    /// charged: the index may be built while it is there).
    pub fn len(&self) -> usize {
        let index = match self.count >= MIN_ENTRIES {
            true => KeyPrefixes::heap_bytes_for(self.count),
            false => 0,
        };
        self.bytes.charge() + index
    }

    /// Starts loading what a binary search of the block reads first into
    /// the CPU's cache, so that those misses overlap instead of following
    /// one another (a block in the block cache is usually not in the CPU's
    /// cache): the offsets, and the entries at a quarter, half and three
    /// quarters of the data, where the first probes land. Not the whole
    /// block: 64 prefetches for a 4 KiB block fill the core's miss
    /// buffers, and the prefetch loop itself stalled (7% of a cached
    /// lookup's time, measured).
    ///
    /// With [`KeyPrefixes`], their words and the offsets are what the
    /// search reads before the one entry it lands on.
    pub fn prefetch(&self) {
        let raw = self.bytes.as_slice();
        for line in raw[self.offsets_at..].chunks(64) {
            slsm_skiplist::prefetch(line.as_ptr());
        }
        if let Some(p) = self.prefixes() {
            for line in p.words().chunks(16) {
                slsm_skiplist::prefetch(line.as_ptr().cast());
            }
            return;
        }
        for quarter in 1..4 {
            slsm_skiplist::prefetch(raw[self.offsets_at * quarter / 4..].as_ptr());
        }
    }

    /// Starts loading every line of this struct and of the reference
    /// counts before it (an `Arc`'s), so that a batch's reads of many
    /// blocks' fields miss together.
    pub fn prefetch_struct(&self) {
        let start = (self as *const Block).cast::<u8>().wrapping_sub(16);
        for at in (0..std::mem::size_of::<Block>() + 16).step_by(64) {
            slsm_skiplist::prefetch(start.wrapping_add(at));
        }
        slsm_skiplist::prefetch(start.wrapping_add(std::mem::size_of::<Block>() + 15));
    }

    /// Starts loading entry `i`'s first bytes (its lengths, its key and the
    /// start of its value: three cache lines) into the CPU's cache. A batch
    /// finds every key's entry first and reads them after, so that their
    /// cache misses overlap instead of following one another. Out of range
    /// (a damaged block) it does nothing: the read reports the damage.
    pub fn prefetch_entry(&self, i: usize) {
        if i >= self.count {
            return;
        }
        let raw = self.bytes.as_slice();
        let Some(rel) = self.entry_offset(i) else {
            return;
        };
        for line in (rel..self.offsets_at).step_by(64).take(3) {
            slsm_skiplist::prefetch(raw[line..].as_ptr());
        }
    }

    /// Positions of entry `i`'s stored key (its internal key without the
    /// block's [prefix](Self::key_prefix)) and value (`i < count`).
    pub fn entry_ranges(&self, i: usize) -> Decoded<(Range<usize>, Range<usize>)> {
        let raw = self.bytes.as_slice();
        let bad = || corrupt(self.file_offset, "malformed data block entry");
        if i >= self.count {
            return Err(bad());
        }
        let rel = self.entry_offset(i).ok_or_else(bad)?;
        let region = raw.get(rel..self.offsets_at).ok_or_else(bad)?;
        let mut r = Reader::new(region);
        let klen = r.varint_usize().ok_or_else(bad)?;
        let vlen = r.varint_usize().ok_or_else(bad)?;
        if !self.prefix.is_empty() && klen < key::TRAILER_LEN {
            // The prefix is part of the user key: the rest holds the trailer.
            return Err(bad());
        }
        let key_start = rel + r.pos();
        r.bytes(klen).ok_or_else(bad)?;
        r.bytes(vlen).ok_or_else(bad)?;
        let value_start = key_start + klen;
        Ok((key_start..value_start, value_start..value_start + vlen))
    }

    /// Where entry `i` starts, as its offset says (`None` past the
    /// offsets).
    #[inline]
    fn entry_offset(&self, i: usize) -> Option<usize> {
        let mut r = Reader::at(
            self.bytes.as_slice(),
            self.offsets_at + self.offset_width * i,
        );
        match self.offset_width {
            2 => r.u16().map(usize::from),
            _ => r.u32().map(|o| o as usize),
        }
    }

    /// Entry `i`'s stored key (without the block's
    /// [prefix](Self::key_prefix)) and value.
    pub fn stored_entry(&self, i: usize) -> Decoded<(&[u8], &[u8])> {
        let (k, v) = self.entry_ranges(i)?;
        let raw = self.bytes.as_slice();
        Ok((&raw[k], &raw[v]))
    }

    /// Entry `i`'s internal key without the block's prefix.
    fn key_rest(&self, i: usize) -> Decoded<&[u8]> {
        Ok(self.stored_entry(i)?.0)
    }

    /// Entry `i`'s whole internal key, written over `out`.
    pub fn key_into(&self, i: usize, out: &mut Vec<u8>) -> Decoded<()> {
        let (key, _) = self.entry_ranges(i)?;
        self.stored_key_into(key, out);
        Ok(())
    }

    /// The whole internal key of the entry whose stored key is at `rest`
    /// (a range [`entry_ranges`](Self::entry_ranges) gave), written over
    /// `out`.
    pub fn stored_key_into(&self, rest: Range<usize>, out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(self.key_prefix());
        out.extend_from_slice(self.slice(rest));
    }

    /// The bytes of `range` (a range [`entry_ranges`](Self::entry_ranges) gave).
    pub fn slice(&self, range: Range<usize>) -> &[u8] {
        &self.bytes.as_slice()[range]
    }
}

#[cfg(test)]
mod tests {
    use std::cmp::Ordering;

    use super::*;
    use crate::key::{encode, Kind};

    fn build(n: u64) -> Block {
        let mut b = BlockBuilder::default();
        for i in 0..n {
            b.add(&encode(&i.to_be_bytes(), 1, Kind::Value), &[i as u8; 3]);
        }
        let raw: Box<[u8]> = b.finish().into();
        Block::decode(BlockBytes::Owned(raw), 0).unwrap()
    }

    #[test]
    fn block_round_trip_and_search() {
        let block = build(10);
        assert_eq!(block.count(), 10);
        for i in 0..10u64 {
            let (_, v) = block.stored_entry(i as usize).unwrap();
            assert_eq!(v, &[i as u8; 3]);
            let k = encode(&i.to_be_bytes(), 1, Kind::Value);
            assert_eq!(block.lower_bound(&k, 0).unwrap(), i as usize);
            assert_eq!(block.last_at_or_before(&k).unwrap(), Some(i as usize));
        }
        let past = encode(&99u64.to_be_bytes(), 1, Kind::Value);
        assert_eq!(block.lower_bound(&past, 0).unwrap(), 10);
        let before = encode(b"", 1, Kind::Value);
        assert_eq!(block.last_at_or_before(&before).unwrap(), None);
        assert!(block.stored_entry(10).is_err());
    }

    proptest::proptest! {
        /// With its key prefixes built, a block answers every search as
        /// the plain search does: keys sharing long prefixes or none,
        /// several versions of a key, targets inside and outside the block.
        #[test]
        fn prefix_search_agrees_with_the_plain_search(
            stem in proptest::collection::vec(0u8..3, 0..30),
            tails in proptest::collection::btree_set((proptest::collection::vec(0u8..3, 0..7), 1u64..4), 1..70),
            targets in proptest::collection::vec((proptest::collection::vec(0u8..3, 0..40), 0u64..5), 1..30),
            from in 0usize..80,
        ) {
            let mut keys: Vec<Vec<u8>> = tails
                .iter()
                .map(|(t, seq)| encode(&[&stem[..], t].concat(), *seq, Kind::Value))
                .collect();
            keys.sort_by(|a, b| key::compare(a, b));
            let mut b = BlockBuilder::default();
            for k in &keys {
                b.add(k, b"v");
            }
            let raw: Box<[u8]> = b.finish().into();
            let plain = Block::decode(BlockBytes::Owned(raw.clone()), 0).unwrap();
            let indexed = Block::decode(BlockBytes::Owned(raw), 0).unwrap();
            indexed.index_prefixes();
            proptest::prop_assert_eq!(indexed.prefixes().is_some(), keys.len() >= MIN_ENTRIES);
            let own = tails.iter().map(|(t, seq)| ([&stem[..], t].concat(), *seq));
            for (t, seq) in targets.into_iter().chain(own) {
                let target = key::lookup_key(&t, seq);
                let want = from.min(keys.len())
                    + keys[from.min(keys.len())..].partition_point(|k| key::compare(k, &target) == Ordering::Less);
                proptest::prop_assert_eq!(plain.lower_bound(&target, from).unwrap(), want);
                proptest::prop_assert_eq!(indexed.lower_bound(&target, from).unwrap(), want);
            }
        }
    }

    #[test]
    fn prefetching_an_entry_of_a_damaged_block_reads_nothing_past_it() {
        let mut b = BlockBuilder::default();
        for i in 0..4u64 {
            b.add(&encode(&i.to_be_bytes(), 1, Kind::Value), &[7; 200]);
        }
        let mut raw = b.finish().to_vec();
        // The keys share 7 bytes, stored once before the count; the
        // offsets take two bytes each.
        let offsets_at = raw.len() - 4 - 1 - 7 - 2 * 4;
        // Entry 1's offset points past the entries, entry 2's far past the
        // block: hints only, no panic and no read out of bounds.
        raw[offsets_at + 2..offsets_at + 4].copy_from_slice(&(offsets_at as u16 + 2).to_le_bytes());
        raw[offsets_at + 4..offsets_at + 6].copy_from_slice(&u16::MAX.to_le_bytes());
        let block = Block::decode(BlockBytes::Owned(raw.into()), 0).unwrap();
        for i in 0..8 {
            block.prefetch_entry(i);
        }
        assert!(block.stored_entry(0).is_ok());
        assert!(block.stored_entry(1).is_err() && block.stored_entry(2).is_err());
    }

    #[test]
    fn bad_trailers_are_corruption() {
        let owned = |b: &[u8]| BlockBytes::Owned(b.into());
        assert!(Block::decode(owned(&[1, 2, 3]), 0).is_err());
        assert!(
            Block::decode(owned(&[0, 0, 0, 0]), 0).is_err(),
            "no entries"
        );
        assert!(
            Block::decode(owned(&[9, 0, 0, 0]), 0).is_err(),
            "count too big"
        );
        let mut empty = BlockBuilder::default();
        assert!(Block::decode(owned(empty.finish()), 0).is_err());
        let shared = Arc::new(vec![0u8; 8]);
        assert!(Block::decode(BlockBytes::Shared(shared, 2..6), 0).is_err());
    }
}
