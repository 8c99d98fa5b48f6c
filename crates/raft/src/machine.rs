//! [`Machine`]: what an application plugs into the state machine so that
//! its own commands ([`Op::App`](crate::Op::App)) are applied on every node
//! — `slsm serve --cluster` runs Redis commands this way.
//!
//! The state machine owns the database and the bookkeeping Raft needs
//! (the last applied id, the membership, the replicated clock); the
//! machine owns what the commands mean. Each application command is
//! applied by one call, which must commit the command's effects together
//! with the entry's [`Stamp`] (`Stamp::put_in_tx` or `Stamp::put_in_batch`
//! before its single commit), so a crash never applies an entry twice or
//! half. A call that writes nothing need not stamp: the state machine
//! writes the stamp alone afterwards.
//!
//! * **Thread safety**: calls come one at a time, in log order, from the
//!   state machine's apply (a blocking thread); `attach` comes at open and
//!   after a snapshot install, never beside `apply`.
//! * **Determinism**: `apply` must depend only on the database, the bytes
//!   and the stamp's `clock` and `index`: every node applies the same
//!   entries to the same state and must reach the same state.

use std::cell::Cell;
use std::sync::Arc;

use slsm::{Db, Keyspace, Transaction, WriteBatch};

/// An application's commands, applied on every node. See the
/// [module docs](self).
pub trait Machine: Send + Sync + 'static {
    /// The engine options the state machine's database opens with.
    fn options(&self) -> slsm::Options {
        slsm::Options::default()
    }

    /// The state machine's database is now `db`, its replicated clock
    /// `clock` (at open, and after a snapshot replaced the database).
    fn attach(&self, db: &Arc<Db>, clock: u64) -> slsm::Result<()>;

    /// Applies one command (`bytes`) and answers it; the effects are
    /// committed with `stamp` (see the [module docs](self)).
    fn apply(&self, db: &Db, bytes: &[u8], stamp: &Stamp<'_>) -> slsm::Result<Vec<u8>>;
}

/// Rows of the state machine's metadata keyspace, by key.
pub(crate) type Rows = Vec<(&'static [u8], Vec<u8>)>;

/// The bookkeeping of one applied entry, to be committed with its effects.
pub struct Stamp<'a> {
    /// The replicated clock as of this entry: the largest leader clock of
    /// any entry up to it (milliseconds since the Unix epoch), so it never
    /// goes back, even across a leader whose clock is behind.
    pub clock: u64,
    /// The entry's log index.
    pub index: u64,
    pub(crate) meta: &'a Keyspace,
    pub(crate) rows: Rows,
    pub(crate) written: Cell<bool>,
}

impl Stamp<'_> {
    /// Puts the stamp into `tx`, to commit with its writes.
    pub fn put_in_tx(&self, tx: &mut Transaction) -> slsm::Result<()> {
        for (k, v) in &self.rows {
            tx.put_in(self.meta, k, v)?;
        }
        self.written.set(true);
        Ok(())
    }

    /// Puts the stamp into `batch`, to commit with its writes.
    pub fn put_in_batch(&self, batch: &mut WriteBatch) {
        for (k, v) in &self.rows {
            batch.put_in(self.meta, k, v);
        }
        self.written.set(true);
    }
}
