//! [`BlockBuilder`]: the raw form of one data block, its keys' shared
//! prefix stored once.
//!
//! The user keys of a block share the prefix of its first and last key
//! (every key between them in byte order does): zero-padded numbers,
//! `"user:…"`, a keyspace's tag. Stored once in the block instead of in
//! every entry, that prefix leaves room for more entries in a 4 KiB block,
//! so the block cache holds more of the data in the same memory (1M keys
//! `b"%016d"` + 100 bytes: 14 of each key's 24 bytes, ~10% of what the
//! cache holds per entry). LevelDB and RocksDB get the same saving by
//! delta-encoding each key against the one before it; one prefix per
//! block keeps every entry addressable on its own, so the binary search
//! and the prefix index (`prefixes.rs`) still jump straight to an entry.

use crate::codec::{put_varint, varint_len};
use crate::key;

/// Flag in the block's entry count: the block stores its keys' shared
/// prefix once.
pub(crate) const PREFIXED: u32 = 1 << 31;
/// Flag in the block's entry count: the offsets take two bytes each (the
/// entries end within 64 KiB, as in every block of the default 4 KiB).
/// A block with neither flag has the layout of format version 2.
pub(crate) const SHORT_OFFSETS: u32 = 1 << 30;

/// Longest prefix stored (its length is one byte); keys that share more
/// store the rest in every entry.
pub(crate) const MAX_PREFIX: usize = u8::MAX as usize;

/// Accumulates the entries of one data block.
#[derive(Debug, Default)]
pub(crate) struct BlockBuilder {
    /// Entries with their keys whole: `varint key_len | varint value_len |
    /// key | value`.
    buf: Vec<u8>,
    offsets: Vec<u32>,
    /// Each entry's key and value lengths.
    lens: Vec<(u32, u32)>,
    first_key: Vec<u8>,
    last_key: Vec<u8>,
    /// Bytes every user key so far shares with the first (at most
    /// [`MAX_PREFIX`]).
    shared: usize,
    /// The finished block.
    out: Vec<u8>,
}

impl BlockBuilder {
    /// Number of entries buffered.
    pub fn count(&self) -> usize {
        self.offsets.len()
    }

    /// Size of the raw block if it were finished now (at most a few bytes
    /// more: the key lengths' varints may shrink with the prefix).
    pub fn size(&self) -> usize {
        raw_size(self.buf.len(), self.count(), self.shared)
    }

    /// Size of the raw block if `key` and `value` were added and it were
    /// finished then.
    pub fn size_with(&self, ikey: &[u8], value: &[u8]) -> usize {
        let shared = self.shared_with(ikey);
        let entry = varint_len(ikey.len() as u64)
            + varint_len(value.len() as u64)
            + ikey.len()
            + value.len();
        raw_size(self.buf.len() + entry, self.count() + 1, shared)
    }

    /// The prefix length the block would have with `ikey` added.
    fn shared_with(&self, ikey: &[u8]) -> usize {
        let user_key = key::user_key(ikey);
        match self.count() {
            0 => user_key.len().min(MAX_PREFIX),
            _ => key::common_prefix_len(key::user_key(&self.first_key), user_key).min(self.shared),
        }
    }

    /// Appends one entry (the caller enforces ordering and size limits).
    pub fn add(&mut self, ikey: &[u8], value: &[u8]) {
        self.shared = self.shared_with(ikey);
        if self.count() == 0 {
            self.first_key.clear();
            self.first_key.extend_from_slice(ikey);
        }
        self.offsets.push(self.buf.len() as u32);
        self.lens.push((ikey.len() as u32, value.len() as u32));
        put_varint(&mut self.buf, ikey.len() as u64);
        put_varint(&mut self.buf, value.len() as u64);
        self.buf.extend_from_slice(ikey);
        self.buf.extend_from_slice(value);
        self.last_key.clear();
        self.last_key.extend_from_slice(ikey);
    }

    /// Last key of the buffered block.
    pub fn last_key(&self) -> &[u8] {
        &self.last_key
    }

    /// Returns the raw block (see the [format](super)). Call
    /// [`BlockBuilder::reset`] after storing it.
    pub fn finish(&mut self) -> &[u8] {
        let shared = self.shared;
        if shared > 0 {
            self.strip_prefix_into_out(shared);
        } else {
            // Keys sharing nothing: the entries stay where they are.
            std::mem::swap(&mut self.buf, &mut self.out);
        }
        let mut count = self.offsets.len() as u32;
        if short_offsets(self.out.len()) {
            count |= SHORT_OFFSETS;
            for off in &self.offsets {
                self.out.extend_from_slice(&(*off as u16).to_le_bytes());
            }
        } else {
            for off in &self.offsets {
                self.out.extend_from_slice(&off.to_le_bytes());
            }
        }
        if shared > 0 {
            count |= PREFIXED;
            self.out.extend_from_slice(&self.first_key[..shared]);
            self.out.push(shared as u8);
        }
        self.out.extend_from_slice(&count.to_le_bytes());
        &self.out
    }

    /// Writes every entry into `out` without the keys' first `shared`
    /// bytes, and points the offsets at them there.
    fn strip_prefix_into_out(&mut self, shared: usize) {
        self.out.clear();
        self.out.reserve(self.size());
        for (off, &(klen, vlen)) in self.offsets.iter_mut().zip(&self.lens) {
            let (klen, vlen) = (klen as usize, vlen as usize);
            let key_at = *off as usize + varint_len(klen as u64) + varint_len(vlen as u64);
            let ikey = &self.buf[key_at..key_at + klen];
            let value = &self.buf[key_at + klen..key_at + klen + vlen];
            *off = self.out.len() as u32;
            put_varint(&mut self.out, (klen - shared) as u64);
            put_varint(&mut self.out, vlen as u64);
            self.out.extend_from_slice(&ikey[shared..]);
            self.out.extend_from_slice(value);
        }
    }

    /// Empties the builder for the next block (keeps the allocations, but
    /// frees a buffer that a huge value made very large).
    pub fn reset(&mut self) {
        for buf in [&mut self.buf, &mut self.out] {
            buf.clear();
            if buf.capacity() > 4 << 20 {
                *buf = Vec::new();
            }
        }
        self.offsets.clear();
        self.lens.clear();
        self.shared = 0;
    }
}

/// Size of a raw block of `count` entries whose keys, whole, and values
/// take `entries` bytes (with their lengths), when its keys share
/// `shared` bytes.
fn raw_size(entries: usize, count: usize, shared: usize) -> usize {
    let data = entries - count * shared;
    let offset = match short_offsets(data) {
        true => 2,
        false => 4,
    };
    let prefix = match shared {
        0 => 0,
        n => n + 1,
    };
    data + offset * count + prefix + 4
}

/// Whether a block whose entries take `data` bytes stores its offsets in
/// two bytes (every entry starts below 64 KiB).
fn short_offsets(data: usize) -> bool {
    data <= 1 << 16
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{encode, Kind};
    use crate::sst::block::{Block, BlockBytes};

    fn block_of(keys: &[Vec<u8>]) -> (Vec<u8>, usize) {
        let mut b = BlockBuilder::default();
        for (i, k) in keys.iter().enumerate() {
            b.add(k, &[i as u8; 3]);
        }
        let estimate = b.size();
        (b.finish().to_vec(), estimate)
    }

    #[test]
    fn keys_sharing_a_prefix_store_it_once() {
        let keys: Vec<Vec<u8>> = (0..20u64)
            .map(|i| encode(format!("user:{i:08}").as_bytes(), 100 - i, Kind::Value))
            .collect();
        let (raw, estimate) = block_of(&keys);
        assert_eq!(raw.len(), estimate);
        let count = u32::from_le_bytes(raw[raw.len() - 4..].try_into().unwrap());
        assert_eq!(count, 20 | PREFIXED | SHORT_OFFSETS);
        let block = Block::decode(BlockBytes::Owned(raw.into()), 0).unwrap();
        assert_eq!(block.key_prefix(), b"user:000000");
        let mut key = Vec::new();
        for (i, want) in keys.iter().enumerate() {
            block.key_into(i, &mut key).unwrap();
            assert_eq!(&key, want);
            let (rest, value) = block.stored_entry(i).unwrap();
            assert_eq!(rest, &want[11..]);
            assert_eq!(value, &[i as u8; 3]);
        }
    }

    #[test]
    fn keys_sharing_nothing_store_no_prefix() {
        let keys = vec![
            encode(b"apple", 1, Kind::Value),
            encode(b"pear", 1, Kind::Value),
        ];
        let (raw, estimate) = block_of(&keys);
        assert_eq!(raw.len(), estimate);
        assert_eq!(&raw[raw.len() - 4..], &(2 | SHORT_OFFSETS).to_le_bytes());
        let block = Block::decode(BlockBytes::Owned(raw.into()), 0).unwrap();
        assert_eq!(block.key_prefix(), b"");
        assert_eq!(block.stored_entry(1).unwrap().0, &keys[1][..]);
    }

    #[test]
    fn entries_past_64_kib_take_four_byte_offsets() {
        let mut b = BlockBuilder::default();
        let keys: Vec<Vec<u8>> = (0..3u8)
            .map(|i| encode(&[b'k', i], 1, Kind::Value))
            .collect();
        for k in &keys {
            b.add(k, &[9; 40_000]);
        }
        let estimate = b.size();
        let raw = b.finish().to_vec();
        assert_eq!(raw.len(), estimate);
        assert_eq!(&raw[raw.len() - 4..], &(3 | PREFIXED).to_le_bytes());
        let block = Block::decode(BlockBytes::Owned(raw.into()), 0).unwrap();
        let mut key = Vec::new();
        for (i, want) in keys.iter().enumerate() {
            block.key_into(i, &mut key).unwrap();
            assert_eq!(&key, want);
            assert_eq!(block.stored_entry(i).unwrap().1, &[9; 40_000][..]);
        }
    }

    /// A block of format version 2 (no flags: four-byte offsets, keys
    /// whole) reads as it always did.
    #[test]
    fn blocks_of_version_2_still_read() {
        let keys = [
            encode(b"k1", 3, Kind::Value),
            encode(b"k2", 3, Kind::Delete),
        ];
        let mut raw = Vec::new();
        let mut offsets = Vec::new();
        for k in &keys {
            offsets.push(raw.len() as u32);
            put_varint(&mut raw, k.len() as u64);
            put_varint(&mut raw, 1);
            raw.extend_from_slice(k);
            raw.push(b'v');
        }
        for o in offsets {
            raw.extend_from_slice(&o.to_le_bytes());
        }
        raw.extend_from_slice(&2u32.to_le_bytes());
        let block = Block::decode(BlockBytes::Owned(raw.into()), 0).unwrap();
        assert_eq!(block.key_prefix(), b"");
        assert_eq!(block.stored_entry(1).unwrap(), (&keys[1][..], &b"v"[..]));
        assert_eq!(block.lower_bound(&keys[1], 0).unwrap(), 1);
    }

    #[test]
    fn a_block_cut_by_its_size_with_the_prefix_fills_its_room() {
        // 16-byte zero-padded numbers: the prefix makes room for more
        // entries in the same bytes, and `size_with` says so.
        let keys: Vec<Vec<u8>> = (0..200u64)
            .map(|i| encode(format!("{i:016}").as_bytes(), 1, Kind::Value))
            .collect();
        let mut b = BlockBuilder::default();
        let mut n = 0;
        while n < keys.len() && b.size_with(&keys[n], &[0; 100]) <= 4096 {
            b.add(&keys[n], &[0; 100]);
            n += 1;
        }
        let len = b.finish().len();
        assert!(len <= 4096 && len > 4096 - 130, "{len}");
        // 14 of each 24-byte key are shared: 35 entries where 31 fit whole.
        assert_eq!(n, 35);
    }

    #[test]
    fn damaged_prefixes_are_corruption() {
        let keys: Vec<Vec<u8>> = (0..3u64)
            .map(|i| encode(&[7, 7, i as u8], 1, Kind::Value))
            .collect();
        let (raw, _) = block_of(&keys);
        let len_at = raw.len() - 5;
        assert_eq!(raw[len_at], 2);
        assert_eq!(
            &raw[len_at + 1..],
            &(3 | PREFIXED | SHORT_OFFSETS).to_le_bytes()
        );
        let mut too_long = raw.clone();
        too_long[len_at] = 255;
        assert!(Block::decode(BlockBytes::Owned(too_long.into()), 0).is_err());
        // A stored key shorter than the trailer: the prefix ate part of it.
        let mut short = raw.clone();
        short[0] = 3;
        let block = Block::decode(BlockBytes::Owned(short.into()), 0).unwrap();
        assert!(block.stored_entry(0).is_err());
        let mut key = Vec::new();
        assert!(block.key_into(0, &mut key).is_err());
        assert!(block.key_into(1, &mut key).is_ok());
    }

    proptest::proptest! {
        /// Any sorted keys: every key comes back whole, the size estimate
        /// is never below the block, and a lookup of each key finds it.
        #[test]
        fn every_key_comes_back_whole(
            stem in proptest::collection::vec(0u8..3, 0..300),
            tails in proptest::collection::btree_set((proptest::collection::vec(0u8..3, 0..6), 1u64..4), 1..50),
        ) {
            let mut keys: Vec<Vec<u8>> = tails
                .iter()
                .map(|(t, seq)| encode(&[&stem[..], t].concat(), *seq, Kind::Value))
                .collect();
            keys.sort_by(|a, b| key::compare(a, b));
            let (raw, estimate) = block_of(&keys);
            proptest::prop_assert!(raw.len() <= estimate);
            let block = Block::decode(BlockBytes::Owned(raw.into()), 0).unwrap();
            proptest::prop_assert!(block.key_prefix().len() <= MAX_PREFIX);
            let mut key = Vec::new();
            for (i, want) in keys.iter().enumerate() {
                block.key_into(i, &mut key).unwrap();
                proptest::prop_assert_eq!(&key, want);
                proptest::prop_assert_eq!(block.lower_bound(want, 0).unwrap(), i);
                proptest::prop_assert_eq!(block.last_at_or_before(want).unwrap(), Some(i));
            }
        }
    }
}
