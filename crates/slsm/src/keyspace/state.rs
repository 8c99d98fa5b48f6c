//! What every handle of one keyspace shares: its id, name, tag, TTL and
//! whether it was dropped (a leaf of `keyspace/`: batches, transactions
//! and the database's components name it by this path).

use std::sync::atomic::{AtomicBool, Ordering};

use super::tag::Tag;
use crate::error::Error;

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
            ttl => std::borrow::Cow::Owned(super::rules::with_expiry(value, ttl)),
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
