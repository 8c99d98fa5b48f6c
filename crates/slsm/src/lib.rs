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
#![warn(missing_docs)]

pub mod bloom;
pub mod error;
pub mod fs;
pub mod fsutil;
pub mod key;
pub mod manifest;
mod reaper;
pub mod run;
pub mod wal;

#[cfg(not(formats_only))]
mod batch;
#[cfg(not(formats_only))]
mod db;
#[cfg(not(formats_only))]
mod iter;
#[cfg(not(formats_only))]
mod memtable;
#[cfg(not(formats_only))]
mod merge;
#[cfg(not(formats_only))]
mod options;
#[cfg(not(formats_only))]
mod rangedel;
#[cfg(not(formats_only))]
mod slice;
#[cfg(not(formats_only))]
mod stats;
#[cfg(not(formats_only))]
mod version;

#[cfg(not(formats_only))]
pub use batch::WriteBatch;
#[cfg(not(formats_only))]
pub use db::{CheckReport, Db, Snapshot};
pub use error::{Error, Result};
#[cfg(not(formats_only))]
pub use iter::Iter;
#[cfg(not(formats_only))]
pub use options::{Options, WriteOptions};
#[cfg(not(formats_only))]
pub use slice::Slice;
#[cfg(not(formats_only))]
pub use stats::{LevelStats, Stats};
pub use wal::RecoveryMode;
