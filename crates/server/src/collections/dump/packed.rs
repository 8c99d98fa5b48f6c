//! The packed encodings inside Redis's `DUMP` payloads: listpacks (Redis
//! 7), ziplists (Redis 3.2 to 6) and intsets. Each decodes to its
//! elements as strings (integers in their decimal form, as Redis reads
//! them back), or `None` if the blob is not well formed: lengths are
//! checked against the blob before anything is read or allocated.

/// Reads `n` bytes at `*at`, moving past them.
fn take<'a>(blob: &'a [u8], at: &mut usize, n: usize) -> Option<&'a [u8]> {
    let bytes = blob.get(*at..at.checked_add(n)?)?;
    *at += n;
    Some(bytes)
}

/// A little-endian signed integer of `bytes.len()` bytes.
fn le_signed(bytes: &[u8]) -> i64 {
    let mut v: u64 = 0;
    for (i, b) in bytes.iter().enumerate() {
        v |= u64::from(*b) << (8 * i);
    }
    let bits = 8 * bytes.len() as u32;
    match bits {
        64 => v as i64,
        _ => ((v << (64 - bits)) as i64) >> (64 - bits),
    }
}

fn int_element(v: i64) -> Vec<u8> {
    v.to_string().into_bytes()
}

/// A listpack's elements.
pub fn listpack(blob: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut at = 0;
    let total = u32::from_le_bytes(take(blob, &mut at, 4)?.try_into().ok()?) as usize;
    let count = u16::from_le_bytes(take(blob, &mut at, 2)?.try_into().ok()?);
    if total != blob.len() || blob.last() != Some(&0xFF) {
        return None;
    }
    let mut out = Vec::new();
    loop {
        let start = at;
        let enc = *blob.get(at)?;
        if enc == 0xFF {
            break;
        }
        at += 1;
        let element = match enc {
            0x00..=0x7F => int_element(i64::from(enc)),
            0x80..=0xBF => take(blob, &mut at, usize::from(enc & 0x3F))?.to_vec(),
            0xC0..=0xDF => {
                let raw =
                    (i64::from(enc & 0x1F) << 8) | i64::from(*take(blob, &mut at, 1)?.first()?);
                int_element(if raw >= 1 << 12 { raw - (1 << 13) } else { raw })
            }
            0xE0..=0xEF => {
                let len =
                    (usize::from(enc & 0x0F) << 8) | usize::from(*take(blob, &mut at, 1)?.first()?);
                take(blob, &mut at, len)?.to_vec()
            }
            0xF0 => {
                let len = u32::from_le_bytes(take(blob, &mut at, 4)?.try_into().ok()?) as usize;
                take(blob, &mut at, len)?.to_vec()
            }
            0xF1..=0xF4 => {
                let width = [2, 3, 4, 8][usize::from(enc - 0xF1)];
                int_element(le_signed(take(blob, &mut at, width)?))
            }
            _ => return None,
        };
        let entry_len = at - start;
        take(blob, &mut at, backlen_size(entry_len))?;
        out.push(element);
    }
    // 65535 means "too many to count"; otherwise the header must agree.
    if at + 1 != blob.len() || (count != u16::MAX && usize::from(count) != out.len()) {
        return None;
    }
    Some(out)
}

/// How many bytes a listpack entry's back-length takes (`lpEncodeBacklen`).
fn backlen_size(len: usize) -> usize {
    match len {
        0..=127 => 1,
        128..=16382 => 2,
        16383..=2097150 => 3,
        2097151..=268435454 => 4,
        _ => 5,
    }
}

/// A ziplist's elements.
pub fn ziplist(blob: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut at = 0;
    let total = u32::from_le_bytes(take(blob, &mut at, 4)?.try_into().ok()?) as usize;
    take(blob, &mut at, 4)?; // the tail's offset
    let count = u16::from_le_bytes(take(blob, &mut at, 2)?.try_into().ok()?);
    if total != blob.len() || blob.last() != Some(&0xFF) {
        return None;
    }
    let mut out = Vec::new();
    loop {
        let prevlen = *blob.get(at)?;
        if prevlen == 0xFF {
            break;
        }
        take(blob, &mut at, if prevlen < 0xFE { 1 } else { 5 })?;
        let enc = *take(blob, &mut at, 1)?.first()?;
        let element = match enc >> 6 {
            0 => take(blob, &mut at, usize::from(enc & 0x3F))?.to_vec(),
            1 => {
                let len =
                    (usize::from(enc & 0x3F) << 8) | usize::from(*take(blob, &mut at, 1)?.first()?);
                take(blob, &mut at, len)?.to_vec()
            }
            2 => {
                let len = u32::from_be_bytes(take(blob, &mut at, 4)?.try_into().ok()?) as usize;
                take(blob, &mut at, len)?.to_vec()
            }
            _ => {
                let width = match enc {
                    0xC0 => 2,
                    0xD0 => 4,
                    0xE0 => 8,
                    0xF0 => 3,
                    0xFE => 1,
                    0xF1..=0xFD => 0,
                    _ => return None,
                };
                match width {
                    0 => int_element(i64::from(enc & 0x0F) - 1),
                    w => int_element(le_signed(take(blob, &mut at, w)?)),
                }
            }
        };
        out.push(element);
    }
    // 65535 means "count them"; otherwise the header must agree.
    if at + 1 != blob.len() || (count != u16::MAX && usize::from(count) != out.len()) {
        return None;
    }
    Some(out)
}

/// An intset's members: sorted, distinct integers of 2, 4 or 8 bytes.
pub fn intset(blob: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut at = 0;
    let width = u32::from_le_bytes(take(blob, &mut at, 4)?.try_into().ok()?) as usize;
    let len = u32::from_le_bytes(take(blob, &mut at, 4)?.try_into().ok()?) as usize;
    if !matches!(width, 2 | 4 | 8) || blob.len() != 8 + len.checked_mul(width)? {
        return None;
    }
    let values: Vec<i64> = blob[8..].chunks_exact(width).map(le_signed).collect();
    values
        .windows(2)
        .all(|w| w[0] < w[1])
        .then(|| values.into_iter().map(int_element).collect())
}

/// A listpack being built (Redis 7's `lpAppend`): an element that reads as
/// a canonical integer is stored as one, as Redis stores it.
#[derive(Default)]
pub struct ListpackWriter {
    entries: Vec<u8>,
    count: usize,
}

impl ListpackWriter {
    pub fn push(&mut self, element: &[u8]) {
        let int = (element.len() <= 20)
            .then(|| crate::commands::canonical_int(element))
            .flatten();
        match int {
            Some(v) => self.push_int(v),
            None => {
                let start = self.entries.len();
                let len = element.len();
                match len {
                    0..=63 => self.entries.push(0x80 | len as u8),
                    64..=4095 => self.entries.extend([0xE0 | (len >> 8) as u8, len as u8]),
                    _ => {
                        self.entries.push(0xF0);
                        self.entries.extend((len as u32).to_le_bytes());
                    }
                }
                self.entries.extend_from_slice(element);
                self.end_entry(start);
            }
        }
    }

    pub fn push_int(&mut self, v: i64) {
        let start = self.entries.len();
        match v {
            0..=127 => self.entries.push(v as u8),
            -4096..=4095 => {
                let raw = (v & 0x1FFF) as u16;
                self.entries.extend([0xC0 | (raw >> 8) as u8, raw as u8]);
            }
            _ => {
                let (enc, width) = match v {
                    -32_768..=32_767 => (0xF1, 2),
                    -8_388_608..=8_388_607 => (0xF2, 3),
                    _ if i32::try_from(v).is_ok() => (0xF3, 4),
                    _ => (0xF4, 8),
                };
                self.entries.push(enc);
                self.entries.extend(&v.to_le_bytes()[..width]);
            }
        }
        self.end_entry(start);
    }

    /// Appends the back-length of the entry that began at `start`.
    fn end_entry(&mut self, start: usize) {
        let len = self.entries.len() - start;
        let groups = backlen_size(len);
        for i in (0..groups).rev() {
            let bits = ((len >> (7 * i)) & 0x7F) as u8;
            // Every byte but the first written carries the high bit.
            self.entries
                .push(if i == groups - 1 { bits } else { bits | 0x80 });
        }
        self.count += 1;
    }

    pub fn finish(self) -> Vec<u8> {
        let total = 6 + self.entries.len() + 1;
        let mut blob = Vec::with_capacity(total);
        blob.extend((total as u32).to_le_bytes());
        blob.extend((self.count.min(usize::from(u16::MAX)) as u16).to_le_bytes());
        blob.extend(self.entries);
        blob.push(0xFF);
        blob
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listpack_elements_of_every_encoding() {
        // Built by hand: 7-bit 5, 6-bit string "ab", 13-bit -3, int16
        // 1000, int64 -1, each followed by its back-length.
        let mut entries: Vec<u8> = Vec::new();
        entries.extend([0x05, 1]);
        entries.extend([0x82, b'a', b'b', 3]);
        let m13 = (1u16 << 13) - 3;
        entries.extend([0xC0 | (m13 >> 8) as u8, m13 as u8, 2]);
        entries.extend([0xF1, 0xE8, 0x03, 3]);
        entries.extend([0xF4, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 9]);
        let total = 6 + entries.len() + 1;
        let mut blob = (total as u32).to_le_bytes().to_vec();
        blob.extend(5u16.to_le_bytes());
        blob.extend(&entries);
        blob.push(0xFF);
        let got = listpack(&blob).unwrap();
        assert_eq!(got, [&b"5"[..], b"ab", b"-3", b"1000", b"-1"]);
        // A wrong count, a truncation and a bad total are refused.
        let mut bad = blob.clone();
        bad[4] = 4;
        assert!(listpack(&bad).is_none());
        assert!(listpack(&blob[..blob.len() - 3]).is_none());
        for cut in 0..blob.len() {
            let _ = listpack(&blob[..cut]);
        }
    }

    #[test]
    fn ziplist_elements() {
        // prevlen 0, 6-bit string "hi"; prevlen 4, immediate 7; prevlen
        // 2, int16 -2.
        let entries = [0, 0x02, b'h', b'i', 4, 0xF8, 2, 0xC0, 0xFE, 0xFF];
        let total = 10 + entries.len() + 1;
        let mut blob = (total as u32).to_le_bytes().to_vec();
        blob.extend(0u32.to_le_bytes());
        blob.extend(3u16.to_le_bytes());
        blob.extend(entries);
        blob.push(0xFF);
        assert_eq!(ziplist(&blob).unwrap(), [&b"hi"[..], b"7", b"-2"]);
    }

    #[test]
    fn intset_members_sorted_and_distinct() {
        let mut blob = 2u32.to_le_bytes().to_vec();
        blob.extend(3u32.to_le_bytes());
        for v in [-5i16, 1, 300] {
            blob.extend(v.to_le_bytes());
        }
        assert_eq!(intset(&blob).unwrap(), [&b"-5"[..], b"1", b"300"]);
        blob[10] = 0xFB; // 1 becomes -5's twin: -5, -5... not sorted
        blob[11] = 0xFF;
        assert!(intset(&blob).is_none());
    }
}
