//! What one source (a memory run, a run file) answers for a user key: the
//! newest version it holds at or below a read's sequence number, read off
//! the first entry at or after the lookup key. A leaf beside `key.rs`: the
//! memory runs and the read path over run files both answer this way.

use crate::key::{self, Kind};

/// What a read answers for a user key: its value, or that it is deleted.
pub(crate) enum Answer<'a> {
    /// The newest visible version is a value.
    Value(&'a [u8]),
    /// The newest visible version is a tombstone.
    Deleted,
}

/// The newest version of a user key a run holds at or below a read's
/// sequence number.
pub(crate) struct NewestVersion<'a> {
    pub seq: u64,
    pub answer: Answer<'a>,
}

impl<'a> NewestVersion<'a> {
    /// What a reader sees, given the run's covering range tombstone: this
    /// version unless the tombstone is newer.
    #[inline]
    pub fn unless_deleted_by(self, range_del: Option<u64>) -> Answer<'a> {
        match range_del {
            Some(t) if t > self.seq => Answer::Deleted,
            _ => self.answer,
        }
    }
}

/// Interprets the first entry at or after a lookup key: the newest visible
/// version of `user_key` if the entry is a version of it.
#[inline]
pub(crate) fn newest_version<'a>(
    user_key: &[u8],
    ikey: &[u8],
    value: &'a [u8],
) -> Option<NewestVersion<'a>> {
    newest_stored_version(user_key, (&[], ikey), value)
}

/// [`newest_version`] of an entry whose internal key is stored in two
/// parts, `(prefix, rest)`: a run file's block keeps its keys' shared
/// prefix once. The key is not assembled: the lookup compares the parts.
#[inline]
pub(crate) fn newest_stored_version<'a>(
    user_key: &[u8],
    (prefix, rest): (&[u8], &[u8]),
    value: &'a [u8],
) -> Option<NewestVersion<'a>> {
    let parsed = key::parse(rest)?;
    if user_key.strip_prefix(prefix)? != parsed.user_key {
        return None;
    }
    let answer = match parsed.kind {
        Kind::Value => Answer::Value(value),
        Kind::Delete => Answer::Deleted,
    };
    Some(NewestVersion {
        seq: parsed.seq,
        answer,
    })
}
