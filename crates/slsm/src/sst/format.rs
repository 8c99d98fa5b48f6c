//! The run file's framing: the trailer every stored block carries (codec and
//! checksum), block handles, the footer, and the properties and
//! range-tombstone blocks (byte codecs: [`crate::codec`]).

use super::properties::RunProperties;
use crate::codec::{masked_crc, put_bytes, put_u64, u32_at, Reader};
use crate::db_id::DbId;
use crate::rangedel::RangeTombstone;

/// Magic number at the end of every run file ("sLSMrun1").
pub(crate) const MAGIC: u64 = u64::from_le_bytes(*b"sLSMrun1");
/// Format version written to the footer and the properties block. Version
/// 3 added data blocks that store their keys' shared prefix once (see
/// `block`); a build reads every version from [`OLDEST_READ_VERSION`] on,
/// and an older build refuses version 3 files by their version instead of
/// misreading their blocks.
pub(crate) const FORMAT_VERSION: u32 = 3;
/// The oldest format version this build reads: version 2's blocks are
/// version 3's blocks without a prefix.
pub(crate) const OLDEST_READ_VERSION: u32 = 2;

/// Whether this build reads run files of format `version`.
fn readable(version: u32) -> bool {
    (OLDEST_READ_VERSION..=FORMAT_VERSION).contains(&version)
}
/// Bytes after every stored block's payload: the codec byte and the CRC.
pub(crate) const TRAILER_LEN: usize = 5;
/// Fixed size of the footer.
pub(crate) const FOOTER_LEN: usize = 4 * 16 + 4 + 4 + 8 + 4;

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

/// Appends the trailer of a stored block whose payload is `buf[start..]`:
/// the codec byte, then the masked CRC of payload and codec.
pub(crate) fn seal_block(buf: &mut Vec<u8>, start: usize, codec: u8) {
    buf.push(codec);
    let crc = masked_crc(&buf[start..]);
    buf.extend_from_slice(&crc.to_le_bytes());
}

/// Checks the trailer of the stored block `block` (which starts at `offset`
/// in the file); returns the codec byte and the payload.
pub(crate) fn check_block<'a>(block: &'a [u8], offset: u64, what: &str) -> Decoded<(u8, &'a [u8])> {
    let Some(split) = block.len().checked_sub(TRAILER_LEN) else {
        return Err(corrupt(
            offset,
            format!("{what} block shorter than its trailer"),
        ));
    };
    let covered = &block[..split + 1];
    if masked_crc(covered) != u32_at(block, split + 1) {
        return Err(corrupt(offset, format!("{what} block checksum mismatch")));
    }
    Ok((block[split], &block[..split]))
}

/// Position and length of a stored block in the file (trailer included).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Handle {
    /// Offset of the block's first byte.
    pub offset: u64,
    /// Length including the trailer.
    pub len: u64,
}

impl Handle {
    fn put(&self, out: &mut Vec<u8>) {
        put_u64(out, self.offset);
        put_u64(out, self.len);
    }

    fn read(r: &mut Reader<'_>) -> Option<Handle> {
        Some(Handle {
            offset: r.u64()?,
            len: r.u64()?,
        })
    }

    /// True if the block lies inside `[0, limit)`.
    pub fn within(&self, limit: u64) -> bool {
        self.offset
            .checked_add(self.len)
            .is_some_and(|end| end <= limit)
            && self.len >= TRAILER_LEN as u64
    }
}

/// The fixed-size footer: handles of the meta blocks and the checksum of
/// everything before the footer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Footer {
    pub index: Handle,
    pub filter: Handle,
    pub range_dels: Handle,
    pub properties: Handle,
    /// CRC32C of every byte before the footer (checked by `verify`).
    pub body_crc: u32,
}

impl Footer {
    /// Encodes the footer ([`FOOTER_LEN`] bytes).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(FOOTER_LEN);
        for h in [self.index, self.filter, self.range_dels, self.properties] {
            h.put(&mut out);
        }
        out.extend_from_slice(&self.body_crc.to_le_bytes());
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        put_u64(&mut out, MAGIC);
        let crc = masked_crc(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// Decodes and checks the footer at `offset` (its magic, version, CRC).
    pub fn decode(bytes: &[u8], offset: u64) -> Decoded<Footer> {
        if bytes.len() != FOOTER_LEN {
            return Err(corrupt(offset, "file too short for a run footer"));
        }
        let mut r = Reader::new(&bytes[..FOOTER_LEN - 4]);
        let bad = || corrupt(offset, "truncated footer");
        let handles = [(); 4].map(|_| Handle::read(&mut r));
        let body_crc = r.u32().ok_or_else(bad)?;
        let version = r.u32().ok_or_else(bad)?;
        let magic = r.u64().ok_or_else(bad)?;
        if magic != MAGIC {
            return Err(corrupt(offset, "bad magic number: not a run file"));
        }
        if masked_crc(&bytes[..FOOTER_LEN - 4]) != u32_at(bytes, FOOTER_LEN - 4) {
            return Err(corrupt(offset, "footer checksum mismatch"));
        }
        if !readable(version) {
            return Err(corrupt(
                offset,
                format!(
                    "unsupported run format version {version} (this build reads \
                     {OLDEST_READ_VERSION} to {FORMAT_VERSION})"
                ),
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
            body_crc,
        })
    }
}

/// What the properties block holds beyond [`RunProperties`]: the identity
/// of the database the file belongs to, and the largest raw data block.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct FileProperties {
    pub props: RunProperties,
    pub db_id: DbId,
    /// Largest raw (uncompressed) data block, in bytes: what a compressed
    /// block may claim at most.
    pub max_block_raw: u64,
}

/// Encodes the properties block payload.
pub(crate) fn encode_properties(f: &FileProperties, out: &mut Vec<u8>) {
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&f.db_id);
    let p = &f.props;
    for v in [
        p.file_number,
        p.entries,
        p.tombstones,
        p.range_tombstones,
        p.min_seq,
        p.max_seq,
        p.data_bytes,
        p.raw_data_bytes,
        f.max_block_raw,
    ] {
        put_u64(out, v);
    }
    put_bytes(out, &p.min_user_key);
    put_bytes(out, &p.max_user_key);
}

/// Decodes a properties payload; the file's size and checksum come from
/// the caller (the file itself and its footer).
pub(crate) fn decode_properties(
    payload: &[u8],
    file_size: u64,
    checksum: u32,
) -> Option<FileProperties> {
    let mut r = Reader::new(payload);
    if !readable(r.u32()?) {
        return None;
    }
    let db_id: DbId = r.bytes(16)?.try_into().ok()?;
    let mut ints = [0u64; 9];
    for v in &mut ints {
        *v = r.u64()?;
    }
    let [file_number, entries, tombstones, range_tombstones, min_seq, max_seq, data_bytes, raw_data_bytes, max_block_raw] =
        ints;
    let min_user_key = r.length_prefixed()?.to_vec();
    let max_user_key = r.length_prefixed()?.to_vec();
    if !r.is_empty() {
        return None;
    }
    Some(FileProperties {
        props: RunProperties {
            file_number,
            checksum,
            entries,
            tombstones,
            range_tombstones,
            min_user_key,
            max_user_key,
            min_seq,
            max_seq,
            file_size,
            data_bytes,
            raw_data_bytes,
        },
        db_id,
        max_block_raw,
    })
}

/// Encodes the range-tombstone block payload.
pub(crate) fn encode_range_tombstones(list: &[RangeTombstone], out: &mut Vec<u8>) {
    crate::codec::put_varint(out, list.len() as u64);
    for t in list {
        put_bytes(out, &t.start);
        put_bytes(out, &t.end);
        put_u64(out, t.seq);
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

    fn sample_footer() -> Footer {
        Footer {
            index: Handle { offset: 1, len: 2 },
            filter: Handle { offset: 3, len: 4 },
            range_dels: Handle { offset: 5, len: 6 },
            properties: Handle { offset: 7, len: 8 },
            body_crc: 9,
        }
    }

    #[test]
    fn footer_round_trip() {
        let f = sample_footer();
        let bytes = f.encode();
        assert_eq!(bytes.len(), FOOTER_LEN);
        assert_eq!(Footer::decode(&bytes, 0), Ok(f));
        assert!(Footer::decode(&bytes[1..], 0).is_err());
        assert!(Footer::decode(&[0; FOOTER_LEN], 0).is_err());
    }

    /// Files of format version 2 (blocks without prefixes) are still read;
    /// versions this build does not know are refused by their number.
    #[test]
    fn footers_of_every_readable_version_decode() {
        let f = sample_footer();
        let with_version = |v: u32| {
            let mut bytes = f.encode();
            let at = FOOTER_LEN - 4 - 8 - 4;
            bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
            let crc = masked_crc(&bytes[..FOOTER_LEN - 4]);
            bytes[FOOTER_LEN - 4..].copy_from_slice(&crc.to_le_bytes());
            Footer::decode(&bytes, 0)
        };
        assert_eq!(with_version(2), Ok(f));
        assert_eq!(with_version(FORMAT_VERSION), Ok(f));
        for v in [0, 1, FORMAT_VERSION + 1] {
            let err = with_version(v).unwrap_err();
            assert!(
                err.reason.contains("unsupported run format version"),
                "{err:?}"
            );
        }
        let mut props = Vec::new();
        encode_properties(&FileProperties::default(), &mut props);
        assert!(decode_properties(&props, 0, 0).is_some());
        props[..4].copy_from_slice(&2u32.to_le_bytes());
        assert!(decode_properties(&props, 0, 0).is_some());
        props[..4].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
        assert!(decode_properties(&props, 0, 0).is_none());
    }

    #[test]
    fn block_trailer_covers_payload_and_codec() {
        let mut b = b"payload".to_vec();
        seal_block(&mut b, 0, 1);
        assert_eq!(check_block(&b, 0, "data"), Ok((1, &b"payload"[..])));
        for i in 0..b.len() {
            let mut bad = b.clone();
            bad[i] ^= 0x10;
            assert!(check_block(&bad, 0, "data").is_err(), "byte {i}");
        }
        assert!(check_block(&b[..4], 0, "data").is_err());
    }

    #[test]
    fn properties_round_trip() {
        let f = FileProperties {
            props: RunProperties {
                file_number: 7,
                checksum: 3,
                entries: 10,
                tombstones: 2,
                range_tombstones: 1,
                min_user_key: b"a".to_vec(),
                max_user_key: b"z".to_vec(),
                min_seq: 4,
                max_seq: 9,
                file_size: 500,
                data_bytes: 300,
                raw_data_bytes: 600,
            },
            db_id: *b"0123456789abcdef",
            max_block_raw: 4096,
        };
        let mut out = Vec::new();
        encode_properties(&f, &mut out);
        assert_eq!(decode_properties(&out, 500, 3), Some(f));
        assert_eq!(decode_properties(&out[..out.len() - 1], 500, 3), None);
    }
}
