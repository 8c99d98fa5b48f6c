//! The forward scan after a bad record: does any record verify after it?
//! If none does, the bad record is a torn tail (a crash cut the last append
//! short); if one does, acknowledged writes follow the damage.
//!
//! A byte-by-byte scan must consider every offset where a record could
//! start, and checksum those whose length field fits in the rest of the
//! file. Checksumming each candidate's payload directly costs its length:
//! behind a torn 8 MiB record of random bytes, about one offset in 500 has
//! a length that fits, so the direct scan checksummed tens of gigabytes and
//! had to give up, calling the torn tail corruption. Here the checksum of
//! any range comes from checksums of the file's prefixes, kept every
//! [`STRIDE`] bytes, with `crc32c_combine` (CRC is linear: the checksum of
//! `A || B` is the checksum of `A` shifted by `|B|` bytes, xor that of `B`),
//! so every candidate costs about the same, whatever its length.

use super::format::{MAX_RECORD_LEN, RECORD_HEADER_LEN};
use crate::codec::{mask_crc, u32_at as le_u32};

/// Bytes between two kept prefix checksums: a candidate checksums at most
/// this many bytes at each end of its range.
const STRIDE: usize = 64;

/// Outcome of the forward scan after a bad record.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Scan {
    /// A record verifies at this offset.
    Found(usize),
    /// No record verifies anywhere after the start.
    NotFound,
    /// The budget of candidates ran out at this offset.
    GaveUp(usize),
}

/// Scans byte by byte from `from` for an offset where a whole record
/// verifies, checking at most `budget` candidates (offsets whose length
/// field fits in the file). Running out is reported, never taken for "not
/// found": the caller then treats the damage as corruption, the safe answer.
pub(super) fn find_valid_record(data: &[u8], from: usize, mut budget: u64) -> Scan {
    // Where the written bytes end: the writer reserves space ahead of its
    // appends, and those bytes stay zero. No record starts in the zeros (a
    // zero header does not verify: the masked checksum of an empty payload
    // is not zero), though one starting earlier may end in them.
    let written = data.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    if from >= written {
        return Scan::NotFound;
    }
    let Some(last_start) = data.len().checked_sub(RECORD_HEADER_LEN) else {
        return Scan::NotFound;
    };
    let crcs = PrefixCrcs::new(data);
    for pos in from..=last_start.min(written) {
        let len = le_u32(data, pos + 4) as usize;
        if len > MAX_RECORD_LEN || len > data.len() - pos - RECORD_HEADER_LEN {
            continue; // cannot be a complete record: no checksum needed
        }
        if budget == 0 {
            return Scan::GaveUp(pos);
        }
        budget -= 1;
        // The record checksum covers the length field and the payload.
        let crc = crcs.range(pos + 4, pos + RECORD_HEADER_LEN + len);
        if le_u32(data, pos) == mask_crc(crc) {
            return Scan::Found(pos);
        }
    }
    Scan::NotFound
}

/// Checksums of every prefix `data[..k * STRIDE]`.
struct PrefixCrcs<'a> {
    data: &'a [u8],
    at_stride: Vec<u32>,
}

impl<'a> PrefixCrcs<'a> {
    fn new(data: &'a [u8]) -> PrefixCrcs<'a> {
        let mut at_stride = Vec::with_capacity(data.len() / STRIDE + 1);
        let mut crc = 0u32;
        at_stride.push(crc);
        for chunk in data.chunks_exact(STRIDE) {
            crc = crc32c::crc32c_append(crc, chunk);
            at_stride.push(crc);
        }
        PrefixCrcs { data, at_stride }
    }

    /// CRC32C of `data[..end]`.
    fn prefix(&self, end: usize) -> u32 {
        let k = end / STRIDE;
        crc32c::crc32c_append(self.at_stride[k], &self.data[k * STRIDE..end])
    }

    /// CRC32C of `data[start..end]`: `prefix(end)` is the combination of
    /// `prefix(start)` with it, and combining is linear in its first
    /// argument, so combining `prefix(start)` with a zero checksum gives
    /// exactly the part to remove.
    fn range(&self, start: usize, end: usize) -> u32 {
        let whole = self.prefix(end);
        let head = self.prefix(start);
        whole ^ crc32c::crc32c_combine(head, 0, end - start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_zero_header_never_verifies() {
        assert_ne!(mask_crc(crc32c::crc32c(&[0u8; 4])), 0);
    }

    #[test]
    fn range_checksums_match_direct_ones() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7919 % 251) as u8).collect();
        let crcs = PrefixCrcs::new(&data);
        for start in [0, 1, 63, 64, 65, 200, 999, 1000] {
            for end in [start, start + 1, start + 64, start + 300, 1000] {
                if end <= data.len() && start <= end {
                    assert_eq!(
                        crcs.range(start, end),
                        crc32c::crc32c(&data[start..end]),
                        "{start}..{end}"
                    );
                }
            }
        }
    }
}
