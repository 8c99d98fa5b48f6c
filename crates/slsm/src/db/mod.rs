//! [`Db`]: the facade over the engine's components. It wires them at open
//! and hands each call to the one component that serves it; it holds no
//! logic of its own.
//!
//! | call | component |
//! | --- | --- |
//! | `put`, `delete`, `delete_range`, `write` | the commit pipeline (`commit`) |
//! | `get`, `multi_get`, `range`, `prefix`, `iter`, `snapshot` | the read path (`read`) over the current version (`version`) |
//! | `flush`, `compact`, `wait_for_compaction` | the commit pipeline (sealing), the jobs (`jobs`), the background threads (`background`) |
//! | `check`, `stats` | the current version's run files, the counters (`stats`) |
//!
//! Data flows one way: write -> commit -> WAL -> memory run -> flush -> run
//! file -> merge; reads go newest to oldest.
//!
//! Files: the handle (`handle.rs`) and the record of components every
//! handle reaches them through (`components.rs`, wired by `open.rs` in the
//! directory `dir.rs` prepares); the default keyspace's calls on `Db`
//! (`default_space.rs`), `check` and `stats` (`inspect.rs`). Keyspaces,
//! snapshots and transactions have homes of their own (`keyspace/`,
//! `snapshot/`, `txn/`), their handles over these components.

pub(crate) mod components;
mod default_space;
mod dir;
pub(crate) mod handle;
mod inspect;
mod open;

pub use handle::Db;
pub use inspect::CheckReport;
