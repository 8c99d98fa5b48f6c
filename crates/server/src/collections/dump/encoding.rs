//! RDB's primitive encodings, read and written: lengths, strings (plain,
//! integer-encoded or LZF-compressed), and a cursor over a payload.

use super::lzf;

/// No string inside a payload is longer than the protocol's bulk limit.
const MAX_STRING: u64 = 512 * 1024 * 1024;

/// RDB's length encoding.
pub(super) fn put_len(out: &mut Vec<u8>, len: u64) {
    match len {
        0..=63 => out.push(len as u8),
        64..=16383 => out.extend([0x40 | (len >> 8) as u8, len as u8]),
        _ if len <= u64::from(u32::MAX) => {
            out.push(0x80);
            out.extend((len as u32).to_be_bytes());
        }
        _ => {
            out.push(0x81);
            out.extend(len.to_be_bytes());
        }
    }
}

/// A string as Redis writes one: a short canonical integer in 1, 2 or 4
/// bytes (`rdbTryIntegerEncoding`), anything else as its bytes.
pub(super) fn put_string(out: &mut Vec<u8>, s: &[u8]) {
    let int = (s.len() <= 11)
        .then(|| crate::commands::canonical_int(s))
        .flatten();
    match int {
        Some(v) if i8::try_from(v).is_ok() => out.extend([0xC0, v as u8]),
        Some(v) if i16::try_from(v).is_ok() => {
            out.push(0xC1);
            out.extend((v as i16).to_le_bytes());
        }
        Some(v) if i32::try_from(v).is_ok() => {
            out.push(0xC2);
            out.extend((v as i32).to_le_bytes());
        }
        _ => {
            put_len(out, s.len() as u64);
            out.extend_from_slice(s);
        }
    }
}

/// A cursor over a payload's body.
pub(super) struct Reader<'a> {
    pub(super) buf: &'a [u8],
    pub(super) at: usize,
}

impl Reader<'_> {
    pub(super) fn bytes(&mut self, n: usize) -> Option<&[u8]> {
        let b = self.buf.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(b)
    }

    pub(super) fn byte(&mut self) -> Option<u8> {
        self.bytes(1).map(|b| b[0])
    }

    /// A length, or (`Err`) a special string encoding's number.
    fn len_or_encoding(&mut self) -> Option<Result<u64, u8>> {
        let first = self.byte()?;
        Some(match first >> 6 {
            0 => Ok(u64::from(first & 0x3F)),
            1 => Ok((u64::from(first & 0x3F) << 8) | u64::from(self.byte()?)),
            3 => Err(first & 0x3F),
            _ => match first {
                0x80 => Ok(u64::from(u32::from_be_bytes(
                    self.bytes(4)?.try_into().ok()?,
                ))),
                0x81 => Ok(u64::from_be_bytes(self.bytes(8)?.try_into().ok()?)),
                _ => return None,
            },
        })
    }

    pub(super) fn len(&mut self) -> Option<u64> {
        self.len_or_encoding()?.ok()
    }

    /// A count of things each at least one byte long: more than the
    /// bytes left cannot be.
    pub(super) fn count(&mut self) -> Option<usize> {
        let n = self.len()?;
        (n <= (self.buf.len() - self.at) as u64).then_some(n as usize)
    }

    pub(super) fn string(&mut self) -> Option<Vec<u8>> {
        match self.len_or_encoding()? {
            Ok(len) => Some(self.bytes(usize::try_from(len).ok()?)?.to_vec()),
            Err(enc @ 0..=2) => {
                let width = 1 << enc;
                let bytes = self.bytes(width)?;
                let mut v: u64 = 0;
                for (i, b) in bytes.iter().enumerate() {
                    v |= u64::from(*b) << (8 * i);
                }
                let shift = 64 - 8 * width as u32;
                Some((((v << shift) as i64) >> shift).to_string().into_bytes())
            }
            Err(3) => {
                let compressed = self.len()?;
                let len = self.len()?;
                if len > MAX_STRING {
                    return None;
                }
                let input = self.bytes(usize::try_from(compressed).ok()?)?;
                lzf::decompress(input, len as usize)
            }
            Err(_) => None,
        }
    }

    /// A score written as text (`RDB_TYPE_ZSET`, before RDB 8).
    pub(super) fn text_double(&mut self) -> Option<f64> {
        match self.byte()? {
            255 => Some(f64::NEG_INFINITY),
            254 => Some(f64::INFINITY),
            253 => None,
            n => {
                let text = std::str::from_utf8(self.bytes(usize::from(n))?).ok()?;
                text.trim().parse().ok()
            }
        }
    }

    pub(super) fn binary_double(&mut self) -> Option<f64> {
        Some(f64::from_le_bytes(self.bytes(8)?.try_into().ok()?))
    }
}
