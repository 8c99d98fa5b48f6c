//! What every read shares: the view it reads (a version at a sequence
//! number), the counts it makes, the checks of its keys, and how a
//! source's answer becomes the reader's (a leaf of `read/`: the point and
//! batch searches build on it).

use crate::answer::{Answer, NewestVersion};
use crate::error::{Error, Result};
use crate::key::{MAX_KEY_SIZE, MAX_STORED_KEY_SIZE};
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
#[inline]
pub(crate) fn check_stored_key(key: &[u8]) -> Result<()> {
    match key.len() > MAX_STORED_KEY_SIZE {
        true => check_key(key),
        false => Ok(()),
    }
}

/// Checks a user's key.
#[inline]
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
    pub(super) fn prefetch_filter(&self, user_key: &[u8], hash: u64) {
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
