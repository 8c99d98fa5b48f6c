//! The byte codecs every on-disk format uses (write batches and WAL records,
//! run files, the manifest): little-endian fixed-width integers, LEB128
//! varints, length-prefixed byte strings, masked CRC32C checksums, and a
//! bounds-checked [`Reader`] that answers `None` instead of panicking on
//! short or malformed input.

/// Appends `v` as a little-endian u32.
#[inline]
pub(crate) fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends `v` as a little-endian u64.
#[inline]
pub(crate) fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// Appends `v` as an LEB128 varint (at most 10 bytes).
#[inline]
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Bytes a varint encoding of `v` takes.
pub(crate) fn varint_len(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

/// Appends a varint length followed by the bytes.
#[inline]
pub(crate) fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// The little-endian u32 at `pos` of `data`; the caller guarantees 4 bytes.
#[inline]
pub(crate) fn u32_at(data: &[u8], pos: usize) -> u32 {
    let mut b = [0u8; 4];
    b.copy_from_slice(&data[pos..pos + 4]);
    u32::from_le_bytes(b)
}

/// The little-endian u64 at `pos` of `data`; the caller guarantees 8 bytes.
#[inline]
pub(crate) fn u64_at(data: &[u8], pos: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&data[pos..pos + 8]);
    u64::from_le_bytes(b)
}

/// Masks a CRC for storage (LevelDB's scheme): a rotation plus a constant,
/// so that checksums of data which itself embeds checksums stay well
/// distributed.
#[inline]
pub(crate) fn mask_crc(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(0xa282_ead8)
}

/// The masked CRC32C of `data`.
#[inline]
pub(crate) fn masked_crc(data: &[u8]) -> u32 {
    mask_crc(crc32c::crc32c(data))
}

/// A bounds-checked cursor over a byte slice. Every read returns `None`
/// instead of panicking when the data is too short or malformed.
#[derive(Clone, Debug)]
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// A reader at `pos` of `buf`.
    pub fn at(buf: &'a [u8], pos: usize) -> Self {
        Reader { buf, pos }
    }

    /// Current position.
    pub fn pos(&self) -> usize {
        self.pos
    }

    /// Bytes left to read.
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// True when everything was consumed.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    /// The next `n` bytes.
    #[inline]
    pub fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let out = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(out)
    }

    /// One byte.
    pub fn u8(&mut self) -> Option<u8> {
        Some(self.bytes(1)?[0])
    }

    /// A little-endian u16.
    pub fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.bytes(2)?.try_into().ok()?))
    }

    /// A little-endian u32.
    pub fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.bytes(4)?.try_into().ok()?))
    }

    /// A little-endian u64.
    pub fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.bytes(8)?.try_into().ok()?))
    }

    /// An LEB128 varint of at most 10 bytes without overflow.
    #[inline]
    pub fn varint(&mut self) -> Option<u64> {
        // One byte: lengths of keys and small values, the common case.
        let first = *self.buf.get(self.pos)?;
        if first < 0x80 {
            self.pos += 1;
            return Some(u64::from(first));
        }
        self.varint_long()
    }

    fn varint_long(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for i in 0..10 {
            let b = *self.buf.get(self.pos)?;
            self.pos += 1;
            let part = u64::from(b & 0x7f);
            if i == 9 && part > 1 {
                return None;
            }
            v |= part << (7 * i);
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }

    /// A varint that must fit a `usize`.
    #[inline]
    pub fn varint_usize(&mut self) -> Option<usize> {
        usize::try_from(self.varint()?).ok()
    }

    /// A varint length followed by that many bytes.
    pub fn length_prefixed(&mut self) -> Option<&'a [u8]> {
        let n = self.varint_usize()?;
        self.bytes(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_and_reject_garbage() {
        for v in [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut buf = Vec::new();
            put_varint(&mut buf, v);
            assert_eq!(buf.len(), varint_len(v));
            let mut r = Reader::new(&buf);
            assert_eq!(r.varint(), Some(v));
            assert!(r.is_empty());
            assert_eq!(Reader::new(&buf[..buf.len() - 1]).varint(), None);
        }
        assert_eq!(Reader::new(&[0xff; 11]).varint(), None);
        assert_eq!(
            Reader::new(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02]).varint(),
            None
        );
    }

    #[test]
    fn reader_bounds() {
        let mut r = Reader::new(&[1, 2, 3]);
        assert_eq!(r.u32(), None);
        assert_eq!(r.bytes(usize::MAX), None);
        assert_eq!(r.bytes(3), Some(&[1u8, 2, 3][..]));
        assert_eq!(r.pos(), 3);
        assert!(r.is_empty());
        assert_eq!(Reader::new(&[5, 1]).length_prefixed(), None);
        let mut out = Vec::new();
        put_bytes(&mut out, b"abc");
        put_u32(&mut out, 7);
        put_u64(&mut out, 9);
        let mut r = Reader::new(&out);
        assert_eq!(r.length_prefixed(), Some(&b"abc"[..]));
        assert_eq!((r.u32(), r.u64()), (Some(7), Some(9)));
        assert_eq!(u32_at(&out, 4), 7);
        assert_eq!(u64_at(&out, 8), 9);
    }

    #[test]
    fn masked_crc_is_not_the_plain_crc() {
        let data = b"some bytes";
        assert_ne!(masked_crc(data), crc32c::crc32c(data));
        assert_eq!(masked_crc(data), mask_crc(crc32c::crc32c(data)));
    }
}
