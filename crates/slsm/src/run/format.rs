//! The run file's framing: block checksums, block handles, the footer, and
//! the properties and range-tombstone blocks (byte codecs: [`crate::codec`]).

use super::{RangeTombstone, RunProperties};
pub(crate) use crate::codec::{masked_crc, put_bytes, put_varint, varint_len, Reader};

/// Magic number at the end of every run file ("sLSMrun1").
pub(crate) const MAGIC: u64 = u64::from_le_bytes(*b"sLSMrun1");
/// Format version written to the footer and the properties block.
pub(crate) const FORMAT_VERSION: u32 = 1;
/// Size of the trailing checksum of every block.
pub(crate) const CRC_LEN: usize = 4;
/// Fixed size of the footer.
pub(crate) const FOOTER_LEN: usize = 4 * 16 + 4 + 8 + 4;

/// A structural problem found while decoding: where and what. Turned into
/// `Error::Corruption` (with the file's path) by the reader.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Corrupt {
    /// Offset in the file of the damaged block.
    pub offset: u64,
    /// What check failed.
    pub reason: String,
}

/// Result of decoding.
pub(crate) type Decoded<T> = std::result::Result<T, Corrupt>;

/// Builds a [`Corrupt`].
pub(crate) fn corrupt(offset: u64, reason: impl Into<String>) -> Corrupt {
    Corrupt {
        offset,
        reason: reason.into(),
    }
}

/// Appends the masked CRC of everything in `buf` (from `start`) to `buf`.
pub(crate) fn seal_block(buf: &mut Vec<u8>, start: usize) {
    let crc = masked_crc(&buf[start..]);
    buf.extend_from_slice(&crc.to_le_bytes());
}

/// Checks the trailing CRC of `block` (which starts at `offset` in the file)
/// and returns the payload before the CRC.
pub(crate) fn check_block<'a>(block: &'a [u8], offset: u64, what: &str) -> Decoded<&'a [u8]> {
    let Some(split) = block.len().checked_sub(CRC_LEN) else {
        return Err(corrupt(
            offset,
            format!("{what} block shorter than its checksum"),
        ));
    };
    let (payload, crc) = block.split_at(split);
    let stored = u32::from_le_bytes([crc[0], crc[1], crc[2], crc[3]]);
    if masked_crc(payload) != stored {
        return Err(corrupt(offset, format!("{what} block checksum mismatch")));
    }
    Ok(payload)
}

/// Position and length of a block in the file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Handle {
    /// Offset of the block's first byte.
    pub offset: u64,
    /// Length including the trailing checksum.
    pub len: u64,
}

impl Handle {
    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.offset.to_le_bytes());
        out.extend_from_slice(&self.len.to_le_bytes());
    }

    fn read(r: &mut Reader<'_>) -> Option<Handle> {
        Some(Handle {
            offset: r.u64()?,
            len: r.u64()?,
        })
    }

    /// The block's bytes in `file`, if the handle lies inside `limit`.
    pub fn slice<'a>(&self, file: &'a [u8], limit: usize) -> Option<&'a [u8]> {
        let start = usize::try_from(self.offset).ok()?;
        let end = start.checked_add(usize::try_from(self.len).ok()?)?;
        if end > limit {
            return None;
        }
        file.get(start..end)
    }
}

/// The fixed-size footer: handles of the meta blocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Footer {
    pub index: Handle,
    pub filter: Handle,
    pub range_dels: Handle,
    pub properties: Handle,
}

impl Footer {
    /// Encodes the footer ([`FOOTER_LEN`] bytes).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(FOOTER_LEN);
        for h in [self.index, self.filter, self.range_dels, self.properties] {
            h.put(&mut out);
        }
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&MAGIC.to_le_bytes());
        seal_block(&mut out, 0);
        out
    }

    /// Decodes and checks the footer at `offset` (its magic, version, CRC).
    pub fn decode(bytes: &[u8], offset: u64) -> Decoded<Footer> {
        if bytes.len() != FOOTER_LEN {
            return Err(corrupt(offset, "file too short for a run footer"));
        }
        let mut r = Reader::new(&bytes[..FOOTER_LEN - CRC_LEN]);
        let bad = || corrupt(offset, "truncated footer");
        let handles = [(); 4].map(|_| Handle::read(&mut r));
        let version = r.u32().ok_or_else(bad)?;
        let magic = r.u64().ok_or_else(bad)?;
        if magic != MAGIC {
            return Err(corrupt(offset, "bad magic number: not a run file"));
        }
        check_block(bytes, offset, "footer")?;
        if version != FORMAT_VERSION {
            return Err(corrupt(
                offset,
                format!("unsupported run format version {version}"),
            ));
        }
        let [Some(index), Some(filter), Some(range_dels), Some(properties)] = handles else {
            return Err(bad());
        };
        Ok(Footer {
            index,
            filter,
            range_dels,
            properties,
        })
    }
}

/// Encodes the properties block payload (without its CRC).
pub(crate) fn encode_properties(p: &RunProperties, out: &mut Vec<u8>) {
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    for v in [
        p.entries,
        p.tombstones,
        p.range_tombstones,
        p.min_seq,
        p.max_seq,
        p.data_bytes,
    ] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    put_bytes(out, &p.min_user_key);
    put_bytes(out, &p.max_user_key);
}

/// Decodes a properties payload; `file_size` is filled from the caller.
pub(crate) fn decode_properties(payload: &[u8], file_size: u64) -> Option<RunProperties> {
    let mut r = Reader::new(payload);
    if r.u32()? != FORMAT_VERSION {
        return None;
    }
    let mut ints = [0u64; 6];
    for v in &mut ints {
        *v = r.u64()?;
    }
    let [entries, tombstones, range_tombstones, min_seq, max_seq, data_bytes] = ints;
    let min_user_key = r.length_prefixed()?.to_vec();
    let max_user_key = r.length_prefixed()?.to_vec();
    if !r.is_empty() {
        return None;
    }
    Some(RunProperties {
        file_number: 0,
        entries,
        tombstones,
        range_tombstones,
        min_user_key,
        max_user_key,
        min_seq,
        max_seq,
        file_size,
        data_bytes,
    })
}

/// Encodes the range-tombstone block payload (without its CRC).
pub(crate) fn encode_range_tombstones(list: &[RangeTombstone], out: &mut Vec<u8>) {
    put_varint(out, list.len() as u64);
    for t in list {
        put_bytes(out, &t.start);
        put_bytes(out, &t.end);
        out.extend_from_slice(&t.seq.to_le_bytes());
    }
}

/// Decodes a range-tombstone payload.
pub(crate) fn decode_range_tombstones(payload: &[u8]) -> Option<Vec<RangeTombstone>> {
    let mut r = Reader::new(payload);
    let n = r.varint_usize()?;
    // Each entry takes at least 10 bytes: never trust `n` for allocation.
    let mut list = Vec::with_capacity(n.min(payload.len() / 10));
    for _ in 0..n {
        let start = r.length_prefixed()?.to_vec();
        let end = r.length_prefixed()?.to_vec();
        let seq = r.u64()?;
        list.push(RangeTombstone { start, end, seq });
    }
    r.is_empty().then_some(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footer_round_trip() {
        let f = Footer {
            index: Handle { offset: 1, len: 2 },
            filter: Handle { offset: 3, len: 4 },
            range_dels: Handle { offset: 5, len: 6 },
            properties: Handle { offset: 7, len: 8 },
        };
        let bytes = f.encode();
        assert_eq!(bytes.len(), FOOTER_LEN);
        assert_eq!(Footer::decode(&bytes, 0), Ok(f));
        assert!(Footer::decode(&bytes[1..], 0).is_err());
        assert!(Footer::decode(&[0; FOOTER_LEN], 0).is_err());
    }
}
