//! The read path: every read consults the sources of one version newest to
//! oldest ([`Version::sources`]: memory runs, then run files level by level)
//! at one sequence number, and stops at the first source that knows the
//! key. A point lookup ([`get`]), a batch ([`multi_get`]) and an iterator
//! ([`iter`]) differ only in how they search each source (Pebble's
//! `get_iter.go` is the model of one view over memtables and levels).
//!
//! * **Owns**: nothing; it reads a version the caller loaded.
//! * **Calls**: memory runs (skiplist, Bloom filter, key bounds), run files
//!   (filter, fence pointers, blocks), the range-tombstone fragments.
//! * **Thread safety**: any number of reads run at once, with writes,
//!   flushes and merges; a version's runs stay alive while a read holds it.
//!
//! The sequence number is read *after* the version is loaded, so every
//! version of a key the read may need is in the loaded version's runs.

mod batch;
mod point;

pub(crate) use batch::{multi_get, multi_get_with};
pub(crate) use point::get;

use std::ops::Bound;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::iter::Iter;
use crate::key::{MAX_KEY_SIZE, MAX_STORED_KEY_SIZE};
use crate::memtable::{Answer, NewestVersion};
use crate::slice::Slice;
use crate::stats::Counters;
use crate::version::{Source, Version};

/// What a read needs besides its keys: the version, the sequence number it
/// reads at, and the counters it bumps.
pub(crate) struct ReadView<'a> {
    pub version: &'a Version,
    pub snapshot: u64,
    pub counters: &'a Counters,
}

/// A read's filter counts, added to the engine's counters once at its
/// end: a locked add per run probed is a fence that keeps the read's next
/// cache misses (a batch's next key's) from starting early.
#[derive(Default)]
pub(crate) struct Tally {
    pub checks: u64,
    pub negatives: u64,
    pub false_positives: u64,
}

impl Tally {
    pub fn add_to(&self, c: &Counters) {
        for (counter, n) in [
            (&c.bloom_checks, self.checks),
            (&c.bloom_negatives, self.negatives),
            (&c.bloom_false_positives, self.false_positives),
        ] {
            if n > 0 {
                counter.add(n);
            }
        }
    }
}

/// Checks a stored key (tag and user key), defensively: the facade has
/// checked the user's key already.
pub(crate) fn check_stored_key(key: &[u8]) -> Result<()> {
    match key.len() > MAX_STORED_KEY_SIZE {
        true => check_key(key),
        false => Ok(()),
    }
}

/// Checks a user's key.
pub(crate) fn check_key(key: &[u8]) -> Result<()> {
    if key.len() > MAX_KEY_SIZE {
        return Err(Error::InvalidArgument(format!(
            "key of {} bytes exceeds the limit of {MAX_KEY_SIZE} bytes",
            key.len()
        )));
    }
    Ok(())
}

impl Source {
    /// The highest sequence number `<= snapshot` of a range tombstone of
    /// this source covering `user_key`.
    #[inline]
    pub fn covering_range_del(&self, user_key: &[u8], snapshot: u64) -> Option<u64> {
        match self {
            Source::Mem(m) => m.covering_range_del(user_key, snapshot),
            Source::Disk(r) => r.covering_range_del(user_key, snapshot),
        }
    }

    /// Starts loading the filter block a probe for `hash` reads, so that a
    /// lookup waits for the filters of all sources at once.
    #[inline]
    fn prefetch_filter(&self, user_key: &[u8], hash: u64) {
        match self {
            Source::Mem(m) => m.prefetch_filter(hash),
            Source::Disk(r) if r.file.overlaps_user_key(user_key) => r.file.prefetch_filter(hash),
            Source::Disk(_) => {}
        }
    }
}

/// The answer a source gives, from its newest visible version (`hit`) and
/// its newest covering range tombstone: `None` means "ask older sources".
#[inline]
pub(crate) fn answer_of(
    hit: Option<NewestVersion<'_>>,
    range_del: Option<u64>,
) -> Option<Answer<'_>> {
    match hit {
        Some(h) => Some(h.unless_deleted_by(range_del)),
        None => range_del.map(|_| Answer::Deleted),
    }
}

/// The value a reader gets for an answer.
#[inline]
pub(crate) fn value_of(found: Answer<'_>) -> Option<Slice> {
    match found {
        Answer::Value(v) => Some(Slice::copy_from(v)),
        Answer::Deleted => None,
    }
}

/// An iterator over the stored keys between `lower` and `upper` in
/// `version` at `snapshot`, returning keys without their keyspace `tag`.
pub(crate) fn iter(
    version: Arc<Version>,
    snapshot: u64,
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    tag: &[u8],
) -> Iter {
    Iter::new(
        version.sources().to_vec(),
        snapshot,
        lower,
        upper,
        tag.to_vec(),
    )
}

/// The smallest key greater than every key starting with `prefix`, if any.
pub(crate) fn prefix_end(prefix: &[u8]) -> Bound<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xFF {
            end.push(last + 1);
            return Bound::Excluded(end);
        }
    }
    Bound::Unbounded
}

/// The range of every key starting with `prefix`.
pub(crate) fn prefix_range(prefix: &[u8]) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    (Bound::Included(prefix.to_vec()), prefix_end(prefix))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_end_increments_last_byte() {
        assert_eq!(prefix_end(b"ab"), Bound::Excluded(b"ac".to_vec()));
        assert_eq!(prefix_end(b"a\xff"), Bound::Excluded(b"b".to_vec()));
        assert_eq!(prefix_end(b"\xff\xff"), Bound::Unbounded);
        assert_eq!(prefix_end(b""), Bound::Unbounded);
    }
}
