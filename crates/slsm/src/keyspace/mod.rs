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
//! Files: the tag encoding (`tag.rs`), the catalog (`catalog.rs`), TTL and
//! compaction filters (`rules.rs`) and the state handles share
//! (`state.rs`), which lower layers (batches, merges, the manifest) name by
//! their own paths; and the facade's part: the [`Keyspace`] handle
//! (`handle.rs`) and opening and dropping keyspaces (`open.rs`).

pub(crate) mod catalog;
pub(crate) mod handle;
mod open;
pub(crate) mod rules;
pub(crate) mod state;
pub(crate) mod tag;

pub use catalog::{Catalog, KeyspaceRecord, DEFAULT_KEYSPACE};
pub use handle::Keyspace;
pub use rules::{CompactionFilter, FilterDecision, KeyspaceOptions};
