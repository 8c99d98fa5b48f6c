//! Warming a new run file into the block cache once a flush or a merge has
//! installed it (RocksDB's `prepopulate_block_cache` does it for flushes).
//!
//! A merge replaces files whose blocks the cache holds; left alone, the
//! first lookups after it all miss, each copying and decompressing one
//! block, and a database that was written and is now read (a load, then
//! queries) starts with an empty cache. So, right after the new version is
//! in place:
//!
//! * the replaced files' blocks leave the cache now (not when their last
//!   reader lets go of them): a reader of an older version still reads
//!   them, from the file;
//! * the new file's blocks that cover the keys of those cached blocks come
//!   in, into the main queue: they take the place, and the standing, of the
//!   blocks lookups were using;
//! * then, while the cache has room nobody uses, the new file's other blocks
//!   in key order, as blocks read ahead (they leave first when reads need
//!   the room).
//!
//! Warming never evicts: it fills at most the room the cache has once the
//! replaced blocks are gone. It reads the new file front to back in large
//! chunks (just written, it is in the page cache) and is skipped where the
//! page cache cannot hold the run files (reading them back would be device
//! reads) and for files held in memory. It is a hint: a block that cannot
//! be read is left for the lookup that needs it, which reports the error.
//!
//! The shape of it after stop 38's attempt, which warmed a merge's output
//! by what overlapped the inputs' cached blocks and was not landed: its
//! blocks went into `quick_cache`'s hot share and pushed out the blocks
//! lookups needed, and their memory came on top of the freed blocks' (the
//! heap kept those). Here replacements inherit the main queue, the rest
//! waits in the small one, and pages go back to the pool (`pages`).

use std::cmp::Ordering;
use std::sync::Arc;

use super::block::{Admission, ENTRY_OVERHEAD};
use super::chunks::ChunkReader;
use super::pages::PAGE;
use super::source::{BlockSource, Want};
use crate::key;

/// A key range of one cached block of a replaced file: above `lo` (the
/// previous block's last key; `None` for the first block), up to `hi`.
struct Span<'a> {
    lo: Option<&'a [u8]>,
    hi: &'a [u8],
}

/// See the [module docs](self): `new` replaced `replaced` (none, for a
/// flush).
pub(crate) fn warm_after<S: BlockSource>(new: &S, replaced: Vec<Arc<S>>) {
    let warms = new.worth_warming();
    let spans = match warms {
        true => owned(&merge_spans(cached_spans(&replaced))),
        false => Vec::new(),
    };
    for file in &replaced {
        file.forget_cached();
    }
    // Where nothing else holds them any more, the replaced files' indexes
    // and filters are freed now, before the new file's blocks take memory,
    // not after: measured with the default set's 5M keys, they were 8 of
    // the ~20 MB by which the process's anonymous memory exceeded what
    // the budget counts in the second after a merge.
    drop(replaced);
    if !warms {
        return;
    }
    let charge = PAGE as u64 + ENTRY_OVERHEAD;
    let mut room = new.cache_room();
    let spans: Vec<Span<'_>> = spans
        .iter()
        .map(|(lo, hi)| Span {
            lo: lo.as_deref(),
            hi,
        })
        .collect();
    let inherited = inherited_blocks(new, &spans);
    let inherited_count = inherited.iter().filter(|&&b| b).count() as u64;
    let mut fill = room.saturating_sub(inherited_count * charge);
    let mut chunks = ChunkReader::new(false);
    for (i, inherits) in inherited.into_iter().enumerate() {
        let how = match inherits {
            true if room >= charge => Admission::Inherited,
            false if fill >= charge => Admission::Ahead,
            _ => continue,
        };
        if new.block(i, Want::Warm(&mut chunks, how)).is_err() {
            return;
        }
        room = room.saturating_sub(charge);
        if how == Admission::Ahead {
            fill -= charge;
        }
        if room < charge {
            return;
        }
    }
}

/// Fills the room the block cache has and nobody uses with the blocks of
/// `files` it lacks (the files in the order given, each in key order), as
/// blocks read ahead: they leave first when reads need the room. Called
/// when the cache grows. Like [`warm_after`], it never evicts, and skips
/// files held in memory and files whose page cache the budget bypasses
/// (reading them would be device reads); a block that cannot be read ends
/// it.
pub(crate) fn warm_room<S: BlockSource>(files: &[Arc<S>]) {
    let charge = PAGE as u64 + ENTRY_OVERHEAD;
    for file in files {
        if !file.worth_warming() {
            continue;
        }
        let mut cached = vec![false; file.blocks()];
        for i in file.cached_blocks() {
            cached[i] = true;
        }
        let mut chunks = ChunkReader::new(false);
        for (n, i) in (0..cached.len()).filter(|&i| !cached[i]).enumerate() {
            // The room is looked at again now and then: writes may have
            // resumed and taken the loan back.
            if n % ROOM_CHECK == 0 && file.cache_room() < charge * ROOM_CHECK as u64 {
                return;
            }
            if file
                .block(i, Want::Warm(&mut chunks, Admission::Ahead))
                .is_err()
            {
                return;
            }
        }
    }
}

/// Blocks [`warm_room`] warms between looks at the cache's room.
const ROOM_CHECK: usize = 32;

/// The key ranges of the blocks of `files` now in the cache.
fn cached_spans<S: BlockSource>(files: &[Arc<S>]) -> Vec<Span<'_>> {
    let mut spans = Vec::new();
    for file in files {
        for i in file.cached_blocks() {
            spans.push(Span {
                lo: i.checked_sub(1).map(|p| file.last_key(p)),
                hi: file.last_key(i),
            });
        }
    }
    spans
}

/// `spans` with keys of their own (so the files they came from can go).
fn owned(spans: &[Span<'_>]) -> Vec<(Option<Vec<u8>>, Vec<u8>)> {
    spans
        .iter()
        .map(|s| (s.lo.map(<[u8]>::to_vec), s.hi.to_vec()))
        .collect()
}

/// `spans` sorted and merged where they overlap.
fn merge_spans(mut spans: Vec<Span<'_>>) -> Vec<Span<'_>> {
    spans.sort_by(|a, b| match (a.lo, b.lo) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(x), Some(y)) => key::compare(x, y),
    });
    let mut merged: Vec<Span<'_>> = Vec::with_capacity(spans.len());
    for span in spans {
        match merged.last_mut() {
            Some(last) if span.lo.is_none_or(|lo| key::compare(lo, last.hi).is_lt()) => {
                if key::compare(span.hi, last.hi).is_gt() {
                    last.hi = span.hi;
                }
            }
            _ => merged.push(span),
        }
    }
    merged
}

/// For each block of `new`, whether its key range overlaps one of `spans`
/// (sorted, disjoint).
fn inherited_blocks<S: BlockSource>(new: &S, spans: &[Span<'_>]) -> Vec<bool> {
    overlaps(new.blocks(), |i| new.last_key(i), spans)
}

/// For each of `n` blocks whose last keys are `last_key(i)`, whether its
/// key range overlaps one of `spans` (sorted, disjoint).
fn overlaps<'a>(n: usize, last_key: impl Fn(usize) -> &'a [u8], spans: &[Span<'_>]) -> Vec<bool> {
    let mut next = 0;
    (0..n)
        .map(|i| {
            let lo = i.checked_sub(1).map(&last_key);
            let hi = last_key(i);
            // Spans that end at or below this block's lower bound are past.
            while let (Some(span), Some(lo)) = (spans.get(next), lo) {
                if key::compare(span.hi, lo).is_gt() {
                    break;
                }
                next += 1;
            }
            spans
                .get(next)
                .is_some_and(|span| span.lo.is_none_or(|s| key::compare(s, hi).is_lt()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{encode, Kind};
    use proptest::prelude::*;

    proptest! {
        /// Against the definition: a block overlaps the cached spans if some
        /// key in its range lies in one of them.
        #[test]
        fn blocks_overlapping_cached_spans_are_found(
            cached in prop::collection::btree_set(0u32..60, 0..20),
            ends in prop::collection::btree_set(0u32..200, 1..30),
        ) {
            // Old blocks end at every 3rd key; those in `cached` are cached.
            let keys: Vec<Vec<u8>> = (0..=200).map(k).collect();
            let spans = cached.iter().map(|&b| Span {
                lo: (b > 0).then(|| keys[(3 * b - 1) as usize].as_slice()),
                hi: &keys[(3 * b + 2) as usize],
            }).collect();
            let ends: Vec<u32> = ends.into_iter().collect();
            let got = overlaps(ends.len(), |i| &keys[ends[i] as usize], &merge_spans(spans));
            for (i, &end) in ends.iter().enumerate() {
                let start = if i == 0 { 0 } else { ends[i - 1] + 1 };
                let want = (start..=end).any(|key| key < 180 && cached.contains(&(key / 3)));
                prop_assert_eq!(got[i], want, "block {} ({}..={})", i, start, end);
            }
        }
    }

    fn k(n: u32) -> Vec<u8> {
        encode(&n.to_be_bytes(), 1, Kind::Value)
    }

    #[test]
    fn overlapping_spans_merge() {
        let keys: Vec<Vec<u8>> = (0..10).map(k).collect();
        let span = |lo: Option<usize>, hi: usize| Span {
            lo: lo.map(|i| keys[i].as_slice()),
            hi: &keys[hi],
        };
        let merged = merge_spans(vec![
            span(Some(5), 7),
            span(Some(1), 3),
            span(Some(2), 4),
            span(None, 0),
            span(Some(8), 9),
        ]);
        let got: Vec<(Option<&[u8]>, &[u8])> = merged.iter().map(|s| (s.lo, s.hi)).collect();
        assert_eq!(
            got,
            vec![
                (None, &keys[0][..]),
                (Some(&keys[1][..]), &keys[4][..]),
                (Some(&keys[5][..]), &keys[7][..]),
                (Some(&keys[8][..]), &keys[9][..]),
            ]
        );
    }
}
