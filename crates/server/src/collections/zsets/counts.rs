//! A sorted set's rank index: the score order cut into buckets, each with
//! its count of members, so that a rank costs the buckets below it plus a
//! walk inside one bucket, not a walk from an end of the order (Redis's
//! skiplist keeps a span per link for the same purpose).
//!
//! A bucket is one element, `c` + its end (an order sub-key less its `s`,
//! exclusive), holding the count (`u64`) of the members from the end of
//! the bucket below it up to its own end. The top bucket ends at [`TOP`],
//! above every order sub-key, so every member is in exactly one. Keyed by
//! their ends, the bucket holding a member is the first one after it: a
//! forward seek, which reads the newest version of a bucket's count first
//! (counts are rewritten by every write, so a memory run holds many
//! versions of each; a backward step would walk them all).
//!
//! Every write of a member's order entry (`set_score`, `remove_scored`)
//! adds or takes one from its bucket, in the same transaction. A bucket
//! that passes [`SPLIT_AT`] members is split at its middle (one walk of
//! half the bucket, once per `SPLIT_AT / 2` adds); a bucket that empties
//! goes, and the bucket above it takes its range.
//!
//! The metadata's `tail` word (which only lists use otherwise) says how
//! many buckets lie below the top one: `tail` is [`ONE_BUCKET`] plus that
//! number. While the top bucket is the only one, it holds every member,
//! its count is the set's length, and nothing about it is stored or read:
//! a write to a set of up to [`SPLIT_AT`] members (most sets: rate
//! limiters, small leaderboards) touches no bucket at all. Once there are
//! more, every bucket's count is stored, the top one's included. (A set
//! that shrinks back to one bucket leaves the top one's count stale; it is
//! rewritten when the bucket splits again.)
//!
//! Sorted sets saved before the index existed say so with `tail` 0 and
//! have no buckets; their ranks walk the order from its ends, and their
//! writes keep no counts. Those saved by the build that introduced the
//! index have `tail` 1 ([`COUNTED`]): buckets with every count stored, but
//! no number of them; their first write counts them.

use super::walk::{decode_order, Cursor};
use crate::access::Access;
use crate::collections::{Coll, STEP};
use crate::commands::{fail, Fail};

/// The most members a bucket holds before it is split. Debug builds (the
/// tests) split small buckets, so that sets of a few hundred members
/// already have many.
pub(super) const SPLIT_AT: i64 = if cfg!(debug_assertions) { 16 } else { 1024 };

pub(crate) use crate::collections::coll::{COUNTED, ONE_BUCKET};

/// The end of the top bucket: above every order sub-key (whose first
/// eight bytes are a score's; all ones would be a NaN's, and the highest
/// score, infinity, is FF F0 00 ...).
const TOP: [u8; 8] = [0xFF; 8];

/// Adds `delta` to the count of the bucket holding order sub-key `ord`
/// (less its `s`): a member was written there (`1`) or removed (`-1`).
/// Call it before the set's length changes.
pub(super) fn count(
    acc: &mut dyn Access,
    z: &mut Coll,
    ord: &[u8],
    delta: i64,
) -> Result<(), Fail> {
    if !z.ranked() {
        return Ok(());
    }
    number_buckets(acc, z)?;
    if z.tail == ONE_BUCKET {
        let held = z.len + delta;
        return match held > SPLIT_AT {
            true => split(acc, z, &TOP, held),
            false => Ok(()),
        };
    }
    let (end, held) = bucket_of(acc, z, ord)?;
    let held = held + delta;
    if held <= 0 && end != TOP {
        acc.del_item(&z.item_key(&bucket_sub(&end)))?;
        z.tail -= 1;
        return Ok(());
    }
    if held > SPLIT_AT {
        return split(acc, z, &end, held);
    }
    put(acc, z, &end, held)
}

/// A member's order sub-key changed from `from` to `to` (both less their
/// `s`; the elements are written already). A move within one bucket, as
/// most small increments are, leaves the counts as they are.
pub(super) fn moved(
    acc: &mut dyn Access,
    z: &mut Coll,
    from: &[u8],
    to: &[u8],
) -> Result<(), Fail> {
    if !z.ranked() {
        return Ok(());
    }
    number_buckets(acc, z)?;
    if z.tail == ONE_BUCKET {
        return Ok(());
    }
    let (end, _) = bucket_of(acc, z, from)?;
    // Upwards, the first bucket end past `from` is past `to` too if `to`
    // is below it; downwards, `to`'s bucket must be looked up.
    let same = match to > from {
        true => to < &end[..],
        false => bucket_of(acc, z, to)?.0 == end,
    };
    if same {
        return Ok(());
    }
    count(acc, z, from, -1)?;
    count(acc, z, to, 1)
}

/// The rank (from the bottom) of order sub-key `ord`, which is a member's.
pub(super) fn rank_of(acc: &mut dyn Access, z: &Coll, ord: &[u8]) -> Result<i64, Fail> {
    // The buckets ending at or below `ord` hold only members below it.
    let (mut from, to) = (b"c".to_vec(), bucket_sub(&[ord, &[0]].concat()));
    let (mut rank, mut start) = (0, Vec::new());
    loop {
        let batch = z.items(acc, &from, Some(&to), STEP)?;
        for (sub, value) in &batch {
            rank += decode_count(value)?;
            start = sub[1..].to_vec();
        }
        match batch.last() {
            Some((last, _)) if batch.len() == STEP => from = [last.as_slice(), &[0]].concat(),
            _ => break,
        }
    }
    // Then the members of `ord`'s bucket below it.
    let mut cursor = Cursor::up(z, &start);
    loop {
        let batch = cursor.next_batch(acc, z)?;
        if batch.is_empty() {
            return Err(corrupt());
        }
        for (sub, _) in &batch {
            if sub[1..] >= *ord {
                return Ok(rank);
            }
            rank += 1;
        }
    }
}

/// Where rank `r` (from the bottom) is: the start of its bucket (the end
/// of the one below) and how many members of that bucket come before it.
/// The buckets below the top one are read; the rest is in the top one.
pub(super) fn seek_rank(acc: &mut dyn Access, z: &Coll, r: i64) -> Result<(Vec<u8>, i64), Fail> {
    let (mut before, mut start) = (0, Vec::new());
    let (mut from, top) = (b"c".to_vec(), bucket_sub(&TOP));
    loop {
        let batch = z.items(acc, &from, Some(&top), STEP)?;
        for (sub, value) in &batch {
            let held = decode_count(value)?;
            if before + held > r {
                return Ok((start, r - before));
            }
            before += held;
            start = sub[1..].to_vec();
        }
        match batch.last() {
            Some((last, _)) if batch.len() == STEP => from = [last.as_slice(), &[0]].concat(),
            _ if r < z.count() => return Ok((start, r - before)),
            _ => return Err(corrupt()),
        }
    }
}

/// Gives a set saved with [`COUNTED`] its number of buckets (one read of
/// its buckets, once).
fn number_buckets(acc: &mut dyn Access, z: &mut Coll) -> Result<(), Fail> {
    if z.tail != COUNTED {
        return Ok(());
    }
    let (mut from, top, mut below) = (b"c".to_vec(), bucket_sub(&TOP), 0);
    loop {
        let batch = z.items(acc, &from, Some(&top), STEP)?;
        below += batch.len() as i64;
        match batch.last() {
            Some((last, _)) if batch.len() == STEP => from = [last.as_slice(), &[0]].concat(),
            _ => break,
        }
    }
    z.tail = ONE_BUCKET + below;
    Ok(())
}

/// The bucket holding `ord`: its end and count (the top bucket, empty, if
/// the set has none yet).
fn bucket_of(acc: &mut dyn Access, z: &Coll, ord: &[u8]) -> Result<(Vec<u8>, i64), Fail> {
    let after = bucket_sub(&[ord, &[0]].concat());
    match z.items(acc, &after, Some(b"d"), 1)?.first() {
        Some((sub, value)) => Ok((sub[1..].to_vec(), decode_count(value)?)),
        None => Ok((TOP.to_vec(), 0)),
    }
}

/// Splits the bucket ending at `end`, holding `held` members: its top half
/// stays, and a new bucket ending at the lowest of them takes the rest.
fn split(acc: &mut dyn Access, z: &mut Coll, end: &[u8], held: i64) -> Result<(), Fail> {
    let half = held / 2;
    let (mut seen, mut cursor) = (0, Cursor::down(z, Some(end)));
    let middle = loop {
        let batch = cursor.next_batch(acc, z)?;
        if batch.is_empty() {
            return Err(corrupt());
        }
        if let Some((sub, _)) = batch.get((half - 1 - seen) as usize) {
            decode_order(sub)?;
            break sub[1..].to_vec();
        }
        seen += batch.len() as i64;
    };
    put(acc, z, &middle, held - half)?;
    z.tail += 1;
    put(acc, z, end, half)
}

fn put(acc: &mut dyn Access, z: &Coll, end: &[u8], held: i64) -> Result<(), Fail> {
    let key = z.item_key(&bucket_sub(end));
    // Never below 0 (only the top bucket stays when it empties).
    Ok(acc.put_item(&key, &(held.max(0) as u64).to_be_bytes())?)
}

fn bucket_sub(end: &[u8]) -> Vec<u8> {
    [&b"c"[..], end].concat()
}

fn decode_count(value: &[u8]) -> Result<i64, Fail> {
    match <[u8; 8]>::try_from(value) {
        Ok(bytes) => Ok(u64::from_be_bytes(bytes) as i64),
        Err(_) => Err(corrupt()),
    }
}

fn corrupt() -> Fail {
    fail("ERR corrupt sorted set: its rank index disagrees with its members")
}
