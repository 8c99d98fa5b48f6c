//! Block compression: the codecs a run file may store a block with, and the
//! per-block framing that records which one it used.
//!
//! A stored block is `payload | codec: u8 | crc: u32`, the CRC32C (masked)
//! covering the payload and the codec byte. For a compressed codec the
//! payload is `varint raw_len | compressed bytes`; a block that does not
//! shrink by at least an eighth is stored raw. Decompression never trusts
//! the stored length beyond the limit the reader gives (the largest raw
//! block the file's properties admit): corrupt input is an error, never a
//! panic or an unbounded allocation.

use crate::codec::{put_varint, Reader};

/// How a block is stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Codec {
    /// As it is.
    #[default]
    None,
    /// LZ4 (the reference library's block format): fast, about 2x on typical
    /// values.
    Lz4,
    /// Zstandard at the given level (1-22; 3 is zstd's default).
    Zstd(i32),
}

/// Codec bytes in the file.
const RAW: u8 = 0;
const LZ4: u8 = 1;
const ZSTD: u8 = 2;

impl Codec {
    /// Parses a name: `none`, `lz4`, `zstd` or `zstd:LEVEL`.
    pub fn parse(name: &str) -> Option<Codec> {
        match name.to_ascii_lowercase().as_str() {
            "none" => Some(Codec::None),
            "lz4" => Some(Codec::Lz4),
            "zstd" => Some(Codec::Zstd(3)),
            other => {
                let level = other.strip_prefix("zstd:")?.parse().ok()?;
                (1..=22).contains(&level).then_some(Codec::Zstd(level))
            }
        }
    }

    /// The name [`parse`](Self::parse) reads.
    pub fn name(&self) -> String {
        match self {
            Codec::None => "none".into(),
            Codec::Lz4 => "lz4".into(),
            Codec::Zstd(3) => "zstd".into(),
            Codec::Zstd(level) => format!("zstd:{level}"),
        }
    }
}

/// Appends `raw` to `out` as `codec` stores it (or raw, if that does not
/// pay) and returns the codec byte to record in the block's trailer.
pub(crate) fn compress_into(codec: Codec, raw: &[u8], out: &mut Vec<u8>) -> u8 {
    let start = out.len();
    let stored = match codec {
        Codec::None => None,
        Codec::Lz4 => {
            put_varint(out, raw.len() as u64);
            // Straight into `out` (the builder reuses it block after block):
            // no buffer of its own per block.
            let at = out.len();
            // An input too large for LZ4 has no bound: it is stored raw.
            let bound = lz4::block::compress_bound(raw.len()).unwrap_or(0);
            out.resize(at + bound, 0);
            let mode = Some(lz4::block::CompressionMode::DEFAULT);
            match lz4::block::compress_to_buffer(raw, mode, false, &mut out[at..]) {
                Ok(n) => {
                    out.truncate(at + n);
                    Some(LZ4)
                }
                Err(_) => None,
            }
        }
        Codec::Zstd(level) => {
            put_varint(out, raw.len() as u64);
            match zstd::bulk::compress(raw, level) {
                Ok(bytes) => {
                    out.extend_from_slice(&bytes);
                    Some(ZSTD)
                }
                Err(_) => None,
            }
        }
    };
    match stored {
        Some(byte) if out.len() - start < raw.len() - raw.len() / 8 => byte,
        _ => {
            out.truncate(start);
            out.extend_from_slice(raw);
            RAW
        }
    }
}

/// The raw block of a stored `payload` with codec byte `codec`: borrowed
/// when it was stored raw. `max_raw` bounds the size a compressed payload
/// may claim. `Err` names what is wrong.
pub(crate) fn decompress(
    codec: u8,
    payload: &[u8],
    max_raw: usize,
) -> Result<std::borrow::Cow<'_, [u8]>, &'static str> {
    if codec == RAW {
        return Ok(std::borrow::Cow::Borrowed(payload));
    }
    let (raw_len, _) = frame(payload, max_raw)?;
    let mut raw = vec![0u8; raw_len];
    match decompress_into(codec, payload, max_raw, &mut raw)? {
        Some(_) => Ok(std::borrow::Cow::Owned(raw)),
        None => Err("compressed block claims an impossible size"),
    }
}

/// Decompresses the stored `payload` of a compressed codec into the start
/// of `out`, returning the raw length, or `None` if the raw block would not
/// fit in `out` (the caller decompresses it with [`decompress`] instead).
/// `max_raw` bounds the size a payload may claim, as for [`decompress`].
pub(crate) fn decompress_into(
    codec: u8,
    payload: &[u8],
    max_raw: usize,
    out: &mut [u8],
) -> Result<Option<usize>, &'static str> {
    let (raw_len, body) = frame(payload, max_raw)?;
    let Some(out) = out.get_mut(..raw_len) else {
        return Ok(None);
    };
    // Both decoders stop at the end of `out` and report input that does not
    // fit it, or is malformed, as an error: a frame whose stored length lies
    // is corrupt input, never a panic or a write past the buffer.
    let written = match codec {
        LZ4 => i32::try_from(raw_len)
            .ok()
            .and_then(|len| lz4::block::decompress_to_buffer(body, Some(len), out).ok()),
        ZSTD => zstd::bulk::decompress_to_buffer(body, out).ok(),
        _ => return Err("unknown block codec"),
    };
    match (written == Some(raw_len), codec) {
        (true, _) => Ok(Some(raw_len)),
        (false, LZ4) => Err("LZ4 block does not decompress"),
        (false, _) => Err("Zstandard block does not decompress"),
    }
}

/// The raw length a compressed `payload` claims (checked against
/// `max_raw`) and its compressed bytes.
fn frame(payload: &[u8], max_raw: usize) -> Result<(usize, &[u8]), &'static str> {
    let mut r = Reader::new(payload);
    let raw_len = r
        .varint_usize()
        .ok_or("malformed compressed block length")?;
    if raw_len > max_raw {
        return Err("compressed block claims an impossible size");
    }
    Ok((raw_len, &payload[r.pos()..]))
}

/// Whether `codec` (a stored codec byte) is the raw one.
pub(crate) fn is_raw(codec: u8) -> bool {
    codec == RAW
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn compressible(n: usize) -> Vec<u8> {
        (0..n).map(|i| b"slsm block "[i % 11]).collect()
    }

    #[test]
    fn every_codec_round_trips_and_incompressible_data_stays_raw() {
        for codec in [Codec::None, Codec::Lz4, Codec::Zstd(3), Codec::Zstd(19)] {
            let raw = compressible(10_000);
            let mut out = Vec::new();
            let byte = compress_into(codec, &raw, &mut out);
            if codec != Codec::None {
                assert_ne!(byte, RAW, "{codec:?}");
                assert!(out.len() < raw.len() / 4, "{codec:?}: {}", out.len());
            }
            assert_eq!(&*decompress(byte, &out, raw.len()).unwrap(), &raw[..]);
            // Random bytes do not shrink: stored raw.
            let mut x = 0x9e37_79b9_7f4a_7c15u64;
            let noise: Vec<u8> = (0..4096)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x >> 32) as u8
                })
                .collect();
            let mut out = Vec::new();
            assert_eq!(compress_into(codec, &noise, &mut out), RAW);
            assert_eq!(out, noise);
        }
    }

    #[test]
    fn decompressing_into_a_buffer_agrees_with_decompress() {
        for codec in [Codec::Lz4, Codec::Zstd(3)] {
            let raw = compressible(3000);
            let mut stored = Vec::new();
            let byte = compress_into(codec, &raw, &mut stored);
            let mut out = vec![0xAAu8; 4096];
            let n = decompress_into(byte, &stored, 4096, &mut out).unwrap();
            assert_eq!(n, Some(3000));
            assert_eq!(&out[..3000], &raw[..]);
            assert_eq!(
                decompress_into(byte, &stored, 4096, &mut out[..2999]),
                Ok(None)
            );
            assert!(decompress_into(byte, &stored, 2999, &mut out).is_err());
            let mut damaged = stored.clone();
            let mid = damaged.len() / 2;
            damaged.truncate(mid);
            assert!(decompress_into(byte, &damaged, 4096, &mut out).is_err());
        }
    }

    #[test]
    fn names_parse_back() {
        for codec in [Codec::None, Codec::Lz4, Codec::Zstd(3), Codec::Zstd(7)] {
            assert_eq!(Codec::parse(&codec.name()), Some(codec));
        }
        assert_eq!(Codec::parse("snappy"), None);
        assert_eq!(Codec::parse("zstd:99"), None);
    }

    #[test]
    fn lies_about_the_size_are_errors() {
        let raw = compressible(5000);
        for codec in [Codec::Lz4, Codec::Zstd(3)] {
            let mut out = Vec::new();
            let byte = compress_into(codec, &raw, &mut out);
            assert!(decompress(byte, &out, 4999).is_err(), "above the limit");
            let mut bigger = Vec::new();
            put_varint(&mut bigger, 6000);
            bigger.extend_from_slice(&out[2..]);
            assert!(decompress(byte, &bigger, 1 << 20).is_err(), "wrong length");
            let mut smaller = Vec::new();
            put_varint(&mut smaller, 4000);
            smaller.extend_from_slice(&out[2..]);
            assert!(decompress(byte, &smaller, 1 << 20).is_err(), "short length");
        }
        assert!(decompress(9, b"x", 10).is_err(), "unknown codec");
    }

    proptest! {
        /// Damaged compressed blocks are errors or the original bytes, never
        /// a panic.
        #[test]
        fn damaged_blocks_never_panic(seed in any::<u64>(), at in any::<prop::sample::Index>(), mask in 1u8..=255, zstd in any::<bool>()) {
            let raw: Vec<u8> = (0..3000u64).map(|i| (i.wrapping_mul(seed | 1) % 5) as u8).collect();
            let codec = if zstd { Codec::Zstd(3) } else { Codec::Lz4 };
            let mut out = Vec::new();
            let byte = compress_into(codec, &raw, &mut out);
            let i = at.index(out.len());
            out[i] ^= mask;
            if let Ok(got) = decompress(byte, &out, raw.len()) {
                prop_assert_eq!(got.len(), raw.len());
            }
            let mut buf = vec![0u8; 4096];
            if let Ok(Some(n)) = decompress_into(byte, &out, raw.len(), &mut buf) {
                prop_assert_eq!(n, raw.len());
            }
        }
    }
}
