//! slsm: an embedded key-value storage engine built on skiplists: a
//! skiplist-based LSM tree after "The Skiplist-Based LSM Tree" (sLSM),
//! made durable with a write-ahead log, checksums and crash recovery.
//!
//! ```
//! # let dir = tempfile::tempdir().unwrap();
//! use slsm::{Db, Options};
//! let db = Db::open(dir.path(), Options::default())?;
//! db.put(b"hello", b"world")?;
//! assert_eq!(db.get(b"hello")?.as_deref(), Some(&b"world"[..]));
//! for item in db.range(&b"a"[..]..&b"z"[..]) {
//!     let (key, value) = item?;
//!     println!("{key:?} = {value:?}");
//! }
//! # Ok::<(), slsm::Error>(())
//! ```
//!
//! `ARCHITECTURE.md` (beside this crate's `Cargo.toml`) follows one put
//! and one get through the modules below.
#![warn(missing_docs)]

// Formats and building blocks, public for tools and tests.
pub mod bloom;
pub mod error;
pub mod files;
pub mod fs;
pub mod key;
pub mod manifest;
pub mod sst;
pub mod wal;

// The engine's components, in the order data flows through them.
mod answer;
mod background;
mod batch;
mod budget;
mod buffer;
mod cache;
mod checkpoint;
mod codec;
mod commit;
mod counter;
mod db;
mod db_id;
mod iter;
mod jobs;
mod keyspace;
mod memtable;
mod merge;
mod read;
mod recovery;
mod snapshot;
mod txn;
mod version;

mod options;
mod os_memory;
mod rangedel;
mod reaper;
mod slice;
mod stats;

pub use batch::WriteBatch;
pub use budget::MemoryUsage;
pub use db::{CheckReport, Db};
pub use error::{Error, Result};
pub use iter::Iter;
pub use keyspace::{
    Catalog, CompactionFilter, FilterDecision, Keyspace, KeyspaceOptions, KeyspaceRecord,
    DEFAULT_KEYSPACE,
};
pub use options::{Compression, Options, WriteOptions, MIN_MEMORY_BUDGET};
pub use slice::Slice;
pub use snapshot::Snapshot;
pub use sst::{CacheStats, Codec};
pub use stats::{LevelStats, Stats};
pub use txn::{Transaction, TxIter};
pub use wal::RecoveryMode;

/// The crate README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
