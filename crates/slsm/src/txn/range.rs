//! Ranges of stored keys, as transactions read and write them (a leaf of
//! `txn/`: the conflict tracker and the transactions' gate both use it).

use std::ops::Bound;

/// A range of stored keys.
pub(crate) type KeyRange = (Bound<Vec<u8>>, Bound<Vec<u8>>);

/// False for bounds no key satisfies (`start > end`, or equal and not
/// both included).
pub(crate) fn admits_keys(range: &KeyRange) -> bool {
    match range {
        (Bound::Included(l), Bound::Included(u)) => l <= u,
        (Bound::Included(l) | Bound::Excluded(l), Bound::Included(u) | Bound::Excluded(u)) => l < u,
        _ => true,
    }
}
