//! Data blocks: building them and decoding them with bounds checks.
//!
//! ```text
//! entry*  = varint key_len | varint value_len | key | value
//! offsets = u32 LE offset (from the block start) of each entry
//! count   = u32 LE number of entries (>= 1)
//! crc     = u32 LE masked CRC32C of everything above
//! ```

use std::cmp::Ordering;
use std::ops::Range;

use super::format::{corrupt, put_varint, seal_block, Decoded, Reader, CRC_LEN};
use crate::key;

/// Accumulates the entries of one data block.
#[derive(Debug, Default)]
pub(crate) struct BlockBuilder {
    buf: Vec<u8>,
    offsets: Vec<u32>,
    first_key: Vec<u8>,
    last_key: Vec<u8>,
}

impl BlockBuilder {
    /// Number of entries buffered.
    pub fn count(&self) -> usize {
        self.offsets.len()
    }

    /// Size of the block if it were finished now.
    pub fn size(&self) -> usize {
        self.buf.len() + 4 * self.offsets.len() + 4 + CRC_LEN
    }

    /// Size an entry adds to the block.
    pub fn entry_size(key: &[u8], value: &[u8]) -> usize {
        super::format::varint_len(key.len() as u64)
            + super::format::varint_len(value.len() as u64)
            + key.len()
            + value.len()
            + 4
    }

    /// Appends one entry (the caller enforces ordering and size limits).
    pub fn add(&mut self, key: &[u8], value: &[u8]) {
        if self.offsets.is_empty() {
            self.first_key.clear();
            self.first_key.extend_from_slice(key);
        }
        self.offsets.push(self.buf.len() as u32);
        put_varint(&mut self.buf, key.len() as u64);
        put_varint(&mut self.buf, value.len() as u64);
        self.buf.extend_from_slice(key);
        self.buf.extend_from_slice(value);
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
    }

    /// First key of the buffered block.
    pub fn first_key(&self) -> &[u8] {
        &self.first_key
    }

    /// Last key of the buffered block.
    pub fn last_key(&self) -> &[u8] {
        &self.last_key
    }

    /// Appends offsets, count and checksum and returns the finished block.
    /// Call [`BlockBuilder::reset`] after writing it.
    pub fn finish(&mut self) -> &[u8] {
        for off in &self.offsets {
            self.buf.extend_from_slice(&off.to_le_bytes());
        }
        self.buf
            .extend_from_slice(&(self.offsets.len() as u32).to_le_bytes());
        seal_block(&mut self.buf, 0);
        &self.buf
    }

    /// Empties the builder for the next block (keeps the allocations, but
    /// frees a buffer that a huge value made very large).
    pub fn reset(&mut self) {
        self.buf.clear();
        if self.buf.capacity() > 4 << 20 {
            self.buf = Vec::new();
        }
        self.offsets.clear();
    }
}

/// Positions (absolute, in the file) of one entry's key and value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub key: Range<usize>,
    pub value: Range<usize>,
}

/// A checksum-verified data block, described by absolute file offsets so it
/// can be kept by cursors that own an `Arc` of the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Block {
    start: usize,
    offsets_at: usize,
    count: usize,
}

impl Block {
    /// Verifies the checksum of the block at `start..start + len` of `file`
    /// and decodes its trailer.
    pub fn open(file: &[u8], start: usize, len: usize) -> Decoded<Block> {
        Block::decode(file, start, len, true)
    }

    /// [`Block::open`] without the checksum, for a block verified before.
    /// Decoding keeps every bounds check, so even damaged bytes give errors
    /// or wrong answers, never undefined behaviour.
    pub fn open_verified(file: &[u8], start: usize, len: usize) -> Decoded<Block> {
        Block::decode(file, start, len, false)
    }

    fn decode(file: &[u8], start: usize, len: usize, check: bool) -> Decoded<Block> {
        let off = start as u64;
        let bytes = start
            .checked_add(len)
            .and_then(|end| file.get(start..end))
            .ok_or_else(|| corrupt(off, "data block outside the file"))?;
        let payload = if check {
            super::format::check_block(bytes, off, "data")?
        } else {
            bytes
                .len()
                .checked_sub(CRC_LEN)
                .map(|n| &bytes[..n])
                .ok_or_else(|| corrupt(off, "data block shorter than its checksum"))?
        };
        let bad = || corrupt(off, "malformed data block trailer");
        let count_at = payload.len().checked_sub(4).ok_or_else(bad)?;
        let count = Reader::new(&payload[count_at..]).u32().ok_or_else(bad)? as usize;
        let offsets_len = count.checked_mul(4).ok_or_else(bad)?;
        let offsets_rel = count_at.checked_sub(offsets_len).ok_or_else(bad)?;
        if count == 0 {
            return Err(corrupt(off, "empty data block"));
        }
        Ok(Block {
            start,
            offsets_at: start + offsets_rel,
            count,
        })
    }

    /// Number of entries (at least one).
    pub fn count(&self) -> usize {
        self.count
    }

    /// Offset of the block in the file.
    pub fn offset(&self) -> u64 {
        self.start as u64
    }

    /// Decodes entry `i` (`i < count`).
    pub fn entry(&self, file: &[u8], i: usize) -> Decoded<Entry> {
        let bad = || corrupt(self.start as u64, "malformed data block entry");
        if i >= self.count {
            return Err(bad());
        }
        let at = self.offsets_at + 4 * i;
        let rel = Reader::new(file.get(at..at + 4).ok_or_else(bad)?)
            .u32()
            .ok_or_else(bad)? as usize;
        let entry_start = self.start.checked_add(rel).ok_or_else(bad)?;
        let region = file.get(entry_start..self.offsets_at).ok_or_else(bad)?;
        let mut r = Reader::new(region);
        let klen = r.varint_usize().ok_or_else(bad)?;
        let vlen = r.varint_usize().ok_or_else(bad)?;
        let key_start = entry_start + r.pos();
        r.bytes(klen).ok_or_else(bad)?;
        r.bytes(vlen).ok_or_else(bad)?;
        let value_start = key_start + klen;
        Ok(Entry {
            key: key_start..value_start,
            value: value_start..value_start + vlen,
        })
    }

    /// Key of entry `i`.
    pub fn key<'a>(&self, file: &'a [u8], i: usize) -> Decoded<&'a [u8]> {
        let e = self.entry(file, i)?;
        Ok(&file[e.key])
    }

    /// Index of the first entry at or after `lo` whose key is `>= target`
    /// (`count` if none).
    pub fn lower_bound(&self, file: &[u8], target: &[u8], lo: usize) -> Decoded<usize> {
        let (mut lo, mut hi) = (lo.min(self.count), self.count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if key::compare(self.key(file, mid)?, target) == Ordering::Less {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(lo)
    }

    /// Index of the last entry whose key is `<= target`, if any.
    pub fn last_at_or_before(&self, file: &[u8], target: &[u8]) -> Decoded<Option<usize>> {
        let (mut lo, mut hi) = (0, self.count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if key::compare(self.key(file, mid)?, target) == Ordering::Greater {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        Ok(lo.checked_sub(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{encode, Kind};

    fn build(n: u64) -> Vec<u8> {
        let mut b = BlockBuilder::default();
        for i in 0..n {
            b.add(&encode(&i.to_be_bytes(), 1, Kind::Value), &[i as u8; 3]);
        }
        b.finish().to_vec()
    }

    #[test]
    fn block_round_trip_and_search() {
        let bytes = build(10);
        let block = Block::open(&bytes, 0, bytes.len()).unwrap();
        assert_eq!(block.count(), 10);
        for i in 0..10u64 {
            let e = block.entry(&bytes, i as usize).unwrap();
            assert_eq!(&bytes[e.value], &[i as u8; 3]);
            let k = encode(&i.to_be_bytes(), 1, Kind::Value);
            assert_eq!(block.lower_bound(&bytes, &k, 0).unwrap(), i as usize);
            assert_eq!(
                block.last_at_or_before(&bytes, &k).unwrap(),
                Some(i as usize)
            );
        }
        let past = encode(&99u64.to_be_bytes(), 1, Kind::Value);
        assert_eq!(block.lower_bound(&bytes, &past, 0).unwrap(), 10);
        let before = encode(b"", 1, Kind::Value);
        assert_eq!(block.last_at_or_before(&bytes, &before).unwrap(), None);
        assert!(block.entry(&bytes, 10).is_err());
    }

    #[test]
    fn bad_trailers_are_corruption() {
        let bytes = build(3);
        assert!(Block::open(&bytes, 0, bytes.len() + 1).is_err());
        assert!(Block::open(&bytes, 0, 3).is_err());
        let mut empty = BlockBuilder::default();
        let e = empty.finish().to_vec();
        assert!(Block::open(&e, 0, e.len()).is_err());
    }
}
