//! The index block: one fence pointer per data block (paper section 2.4).
//!
//! ```text
//! payload = varint num_blocks
//!           then per block: varint len | first internal key
//!                           varint len | last internal key
//!                           u64 block offset | u32 block length
//! block   = payload | u32 masked CRC32C
//! ```

use std::cmp::Ordering;
use std::ops::Range;

use super::format::{corrupt, put_bytes, Decoded, Reader};
use crate::key;

/// Smallest possible data block: one entry of two one-byte varints, one
/// offset, the count and the checksum.
const MIN_BLOCK_LEN: u64 = 2 + 4 + 4 + 4;

/// Appends the index entry of one data block to an index payload.
pub(crate) fn put_entry(out: &mut Vec<u8>, first: &[u8], last: &[u8], offset: u64, len: u32) {
    put_bytes(out, first);
    put_bytes(out, last);
    out.extend_from_slice(&offset.to_le_bytes());
    out.extend_from_slice(&len.to_le_bytes());
}

/// A fence pointer: a data block's key range and position. Key ranges are
/// absolute offsets in the mapped file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Fence {
    pub first: Range<usize>,
    pub last: Range<usize>,
    pub offset: usize,
    pub len: usize,
}

/// Decodes the index payload located at `payload_at` of `file` and checks
/// that the blocks tile `0..data_bytes` in key order.
pub(crate) fn decode(
    file: &[u8],
    payload_at: usize,
    payload: &[u8],
    data_bytes: u64,
) -> Decoded<Vec<Fence>> {
    let bad = |why: &str| corrupt(payload_at as u64, format!("index block: {why}"));
    let mut r = Reader::new(payload);
    let n = r.varint_usize().ok_or_else(|| bad("truncated"))?;
    let mut fences = Vec::with_capacity(n.min(payload.len() / 14));
    let mut next_offset = 0u64;
    for _ in 0..n {
        let first = abs_range(&mut r, payload_at).ok_or_else(|| bad("truncated key"))?;
        let last = abs_range(&mut r, payload_at).ok_or_else(|| bad("truncated key"))?;
        let offset = r.u64().ok_or_else(|| bad("truncated handle"))?;
        let len = u64::from(r.u32().ok_or_else(|| bad("truncated handle"))?);
        if offset != next_offset || len < MIN_BLOCK_LEN {
            return Err(bad("data blocks are not contiguous"));
        }
        next_offset = offset + len;
        let fence = Fence {
            first,
            last,
            offset: offset as usize,
            len: len as usize,
        };
        check_order(file, fences.last(), &fence).map_err(|_| bad("fence keys out of order"))?;
        fences.push(fence);
    }
    if !r.is_empty() || next_offset != data_bytes {
        return Err(bad("does not cover the data blocks"));
    }
    Ok(fences)
}

fn abs_range(r: &mut Reader<'_>, base: usize) -> Option<Range<usize>> {
    let key = r.length_prefixed()?;
    let end = base + r.pos();
    Some(end - key.len()..end)
}

fn check_order(file: &[u8], prev: Option<&Fence>, cur: &Fence) -> Result<(), ()> {
    let first = &file[cur.first.clone()];
    let last = &file[cur.last.clone()];
    if key::parse(first).is_none() || key::parse(last).is_none() {
        return Err(());
    }
    if key::compare(first, last) == Ordering::Greater {
        return Err(());
    }
    match prev {
        Some(p) if key::compare(&file[p.last.clone()], first) != Ordering::Less => Err(()),
        _ => Ok(()),
    }
}

/// The 8-byte big-endian prefix of the user key of each fence's last key,
/// kept beside the fences so that the search compares integers and touches
/// a dense array (the skiplist's trick, after goleveldb pull request #387); key bytes in the file are
/// read only on a prefix tie.
pub(crate) fn last_prefixes(file: &[u8], fences: &[Fence]) -> Vec<u64> {
    fences
        .iter()
        .map(|f| slsm_skiplist::key_prefix(key::user_key(&file[f.last.clone()])))
        .collect()
}

/// Fences per group of the sampled top index ([`group_lasts`]): 16
/// prefixes are two cache lines.
pub(crate) const GROUP: usize = 16;

/// The last prefix of every group of [`GROUP`] fences: a top index small
/// enough to stay cached (1/16 of the fences), so that a point lookup binary
/// searches it and then touches one or two lines of `prefixes`.
pub(crate) fn group_lasts(prefixes: &[u64]) -> Vec<u64> {
    prefixes.chunks(GROUP).map(|c| c[c.len() - 1]).collect()
}

/// Index of the first fence whose last key is `>= target` (`fences.len()`
/// if none), for one point lookup: the top index narrows the search to
/// the first group whose last prefix is not below the target's, then
/// [`gallop_last_ge`] finishes (fences of earlier groups all have smaller
/// prefixes, so they are below the target).
pub(crate) fn point_last_ge(
    file: &[u8],
    fences: &[Fence],
    prefixes: &[u64],
    groups: &[u64],
    target: &[u8],
) -> usize {
    let target_prefix = slsm_skiplist::key_prefix(key::user_key(target));
    let g = groups.partition_point(|&p| p < target_prefix);
    gallop_last_ge(file, fences, prefixes, target, g * GROUP)
}

/// Index of the first fence at or after `from` whose last key is `>=
/// target`, found by galloping then binary search (`fences.len()` if none).
/// `prefixes` is [`last_prefixes`] of `fences`.
pub(crate) fn gallop_last_ge(
    file: &[u8],
    fences: &[Fence],
    prefixes: &[u64],
    target: &[u8],
    from: usize,
) -> usize {
    let target_prefix = slsm_skiplist::key_prefix(key::user_key(target));
    let below = |i: usize| match prefixes[i].cmp(&target_prefix) {
        Ordering::Less => true,
        Ordering::Greater => false,
        Ordering::Equal => key::compare(&file[fences[i].last.clone()], target) == Ordering::Less,
    };
    let (mut lo, mut step) = (from.min(fences.len()), 1usize);
    let mut hi = lo;
    while hi < fences.len() && below(hi) {
        lo = hi + 1;
        hi = hi.saturating_add(step).min(fences.len());
        step = step.saturating_mul(2);
    }
    // Binary search in [lo, hi) for the first fence not below the target.
    let (mut a, mut b) = (lo, hi);
    while a < b {
        let mid = a + (b - a) / 2;
        if below(mid) {
            a = mid + 1;
        } else {
            b = mid;
        }
    }
    a
}

/// Index of the last fence whose first key is `<= target`, if any.
pub(crate) fn last_first_le(file: &[u8], fences: &[Fence], target: &[u8]) -> Option<usize> {
    fences
        .partition_point(|f| key::compare(&file[f.first.clone()], target) != Ordering::Greater)
        .checked_sub(1)
}
