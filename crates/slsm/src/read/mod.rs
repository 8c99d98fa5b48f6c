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
pub(crate) mod view;

pub(crate) use batch::{multi_get, multi_get_with};
pub(crate) use point::get;
pub(crate) use view::{check_key, ReadView};

use std::ops::Bound;
use std::sync::Arc;

use crate::iter::Iter;
use crate::version::Version;

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
