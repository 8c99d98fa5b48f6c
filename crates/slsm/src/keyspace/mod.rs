//! Keyspaces (column families): named, separate key spaces in one
//! database. They share the tree: every stored key starts with its
//! keyspace's [`tag`], so one commit pipeline, WAL and version set serve
//! them all, a batch across keyspaces is one atomic WAL record, snapshots
//! see every keyspace at one point, and recovery is unchanged.
//!
//! * **Owns**: the tag encoding, the catalog format (recorded in the
//!   manifest by the version set) and the state of open handles.
//! * **Dropping** a keyspace removes it from the catalog (one manifest
//!   write), deletes at once the run files holding only its keys, and
//!   leaves the rest to merges, which drop entries of keyspaces that no
//!   longer exist. Ids are never reused.
//!
//! The [`Keyspace`] handle itself is part of the facade (`db/keyspace.rs`).

mod catalog;
pub(crate) mod rules;
pub(crate) mod tag;

pub(crate) use catalog::check_name;
pub use catalog::{Catalog, KeyspaceRecord, DEFAULT_KEYSPACE};
pub use rules::{CompactionFilter, FilterDecision, KeyspaceOptions};

use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::Error;
use tag::Tag;

/// What every handle of one keyspace shares.
#[derive(Debug)]
pub(crate) struct KeyspaceState {
    pub id: u32,
    pub name: String,
    pub tag: Tag,
    /// Values expire this many milliseconds after they are written (0:
    /// never); see `rules`.
    pub ttl_millis: u64,
    dropped: AtomicBool,
}

impl KeyspaceState {
    pub fn new(id: u32, name: &str, ttl_millis: u64) -> KeyspaceState {
        KeyspaceState {
            id,
            name: name.to_string(),
            tag: Tag::of(id),
            ttl_millis,
            dropped: AtomicBool::new(false),
        }
    }

    /// The value to store for the user's `value`.
    pub fn stored_value<'v>(&self, value: &'v [u8]) -> std::borrow::Cow<'v, [u8]> {
        match self.ttl_millis {
            0 => std::borrow::Cow::Borrowed(value),
            ttl => std::borrow::Cow::Owned(rules::with_expiry(value, ttl)),
        }
    }

    #[inline]
    pub fn is_dropped(&self) -> bool {
        self.dropped.load(Ordering::Acquire)
    }

    pub fn mark_dropped(&self) {
        self.dropped.store(true, Ordering::Release);
    }

    pub fn dropped_error(&self) -> Error {
        Error::InvalidArgument(format!("keyspace {:?} was dropped", self.name))
    }
}
