//! Snapshots: the handle a user reads a point in time through
//! ([`Snapshot`], `handle.rs`), and the sequence numbers the live ones hold
//! (`list.rs`), so that merges keep every version one of them can see.
//!
//! `list.rs` is a leaf the jobs read (they import it by its own path);
//! `handle.rs` is part of the facade, over the database's components.

mod handle;
pub(crate) mod list;

pub use handle::Snapshot;
