//! Conflict detection for optimistic, serializable transactions (backward
//! validation, as in Badger and fjall's optimistic transactions): a
//! transaction reads at its snapshot and may commit only if nothing it read
//! (keys and ranges) was written after that snapshot.
//!
//! Files: the user's handle ([`Transaction`], `handle.rs`) and its
//! iterator over its own writes merged with the database (`iter.rs`), part
//! of the facade; the gate and validation (`gate.rs`), the tracker of keys
//! written (`tracker.rs`) and key ranges (`range.rs`), which the database's
//! components use by their own paths.
//!
//! * **Owns**: the gate between plain writes and transaction commits, the
//!   count of open transactions, and the keys written since the oldest open
//!   transaction's snapshot (the tracker).
//! * **Calls**: nothing; the facade calls [`Transactions::plain_write`]
//!   around every write and [`Transactions::commit`] for a transaction.
//! * **Thread safety**: plain writes share the gate (they still group-commit
//!   with each other); beginning a transaction and validating one take it
//!   alone. A validated transaction marks its keys *pending* and takes its
//!   place in the commit order (`CommitPipeline::commit`) before
//!   it lets the gate go, so every write after it is ordered after it; it
//!   then logs and inserts beside other writers, in their group, and
//!   replaces the marks with its sequence number once it is visible.
//!   Pending keys conflict with every snapshot: a transaction that began
//!   before the write was visible and read one of them fails, as it must
//!   (one that began just after may fail too: a false conflict, allowed).
//!   The pipeline lets the gate go early only when others could share
//!   the commit (it syncs, or others are committing); otherwise the
//!   transaction holds it to the end, as an unsynced commit alone takes
//!   microseconds. With the whole commit under the gate, no two
//!   transactions ever shared a log write or a sync: on `slsm serve
//!   --appendfsync always`, where each `INCR` is a transaction,
//!   `redis-benchmark -t incr -c 50` served 5,225-5,316 requests/s that
//!   way and 16,145-16,255 this way (2026-11-26; under `everysec` the two
//!   were within the noise). While no transaction is open, writes record
//!   nothing (one atomic load each).
//! * **Durability**: none of its own: a transaction's writes are one batch
//!   of the commit pipeline.

pub(crate) mod gate;
mod handle;
mod iter;
mod range;
mod tracker;

pub use handle::Transaction;
pub use iter::TxIter;
