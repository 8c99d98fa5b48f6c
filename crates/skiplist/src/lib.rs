//! `slsm-skiplist`: an arena-backed, concurrent, ordered byte-string map.
//!
//! * Nodes live in a sharded bump arena and are never freed before the list
//!   drops, so readers are lock-free and need no epoch pinning.
//! * Each node carries an 8-byte word of its key ([`KeyOrder::prefix`]: by
//!   default the first 8 bytes of its **user** key, big-endian) that is
//!   compared **unsigned** before any key bytes are touched.
//! * Towers are inline in the node; heights come from one thread-local random
//!   word and `trailing_zeros`.
//! * [`SkipList::multi_get`] runs up to [`INTERLEAVE`] searches in lockstep
//!   with software prefetch so their cache misses overlap;
//!   [`SkipList::multi_get_finger`] and [`Finger`] reuse the previous search
//!   path (finger search); [`SkipList::insert_with_hint`] reuses the insert splice.
//! * [`LowerBounds`] advances searches one cache miss at a time between its
//!   caller's own work, so that their misses overlap it.
//! * Large lists take their arena chunks as 2 MiB-aligned transparent huge pages.
//!
//! See the crate README for the layout, measurements and limits.

#![deny(unsafe_op_in_unsafe_fn)]

mod arena;
#[macro_use]
mod cursor;
mod finger;
mod height;
mod insert;
mod iter;
mod list;
mod multi;
mod node;
mod order;
mod search;
mod stepped;

pub use finger::Finger;
pub use insert::InsertHint;
pub use iter::{Iter, OwnedIter};
pub use list::{InsertError, Options, SkipList, MAX_LEN};
pub use multi::INTERLEAVE;
pub use node::{prefetch, MAX_HEIGHT};
pub use order::{key_prefix, key_prefix_past, Bytewise, KeyOrder};
pub use stepped::LowerBounds;
