//! [`Transaction`]: optimistic, serializable transactions over every
//! keyspace. The conflict check lives in `txn.rs`; this is the handle.

use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use super::gate::ReadSet;
use crate::batch::WriteBatch;
use crate::db::components::Components;
use crate::db::handle::Db;
use crate::error::Result;
use crate::keyspace::handle::{as_bytes, get_at, user_value, Keyspace};
use crate::keyspace::state::KeyspaceState;
use crate::keyspace::tag::NO_TAG;
use crate::options::WriteOptions;
use crate::read;
use crate::slice::Slice;
use crate::snapshot::Snapshot;

use super::iter::{OwnWrites, TxIter, Writes};

impl Db {
    /// Begins an optimistic, serializable transaction: it reads every
    /// keyspace as of now plus its own writes, and
    /// [`commit`](Transaction::commit) applies its writes atomically, or
    /// fails with [`Error::Conflict`] if a key or range it read was written
    /// by anyone since it began.
    ///
    /// While any transaction is open, the keys others write are kept for
    /// the check, up to 8 MiB of them (~70,000 writes of 16-byte keys). A
    /// transaction open across more than that fails to commit with
    /// [`Error::Conflict`] if it read anything, as if what it read had
    /// changed: keep transactions short, and retry on a conflict.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = slsm::Db::open(dir.path(), slsm::Options::default())?;
    /// db.put("balance", "10")?;
    /// let mut tx = db.transaction();
    /// let b: i64 = std::str::from_utf8(&tx.get("balance")?.unwrap()).unwrap().parse().unwrap();
    /// tx.put("balance", (b - 3).to_string());
    /// db.put("balance", "100")?; // someone else writes what tx read
    /// assert!(matches!(tx.commit(), Err(slsm::Error::Conflict)));
    /// assert_eq!(&*db.get("balance")?.unwrap(), b"100");
    /// # Ok::<(), slsm::Error>(())
    /// ```
    pub fn transaction(&self) -> Transaction {
        let inner = Arc::clone(&self.inner);
        let snapshot = self.inner.txns.begin(|| {
            let s = Snapshot::take(&inner);
            let seq = s.sequence();
            (s, seq)
        });
        Transaction {
            inner,
            seq: snapshot.sequence(),
            snapshot: Some(snapshot),
            writes: Arc::default(),
            reads: ReadSet::default(),
        }
    }
}

/// An optimistic, serializable transaction (see [`Db::transaction`]).
/// Dropping it without [`commit`](Self::commit) rolls it back. Writes are
/// buffered in the transaction until commit; keys and values are checked
/// when they are written.
pub struct Transaction {
    inner: Arc<Components>,
    /// `None` once committed or rolled back.
    snapshot: Option<Snapshot>,
    /// The snapshot's sequence number.
    seq: u64,
    /// Stored key (tag + key) -> value, `None` for a delete; shared with
    /// the range iterators opened on it (`tx_iter.rs`).
    writes: Arc<Writes>,
    reads: ReadSet,
}

impl Transaction {
    fn space_of(keyspace: &Keyspace) -> Result<Arc<KeyspaceState>> {
        let state = keyspace.state();
        match state.is_dropped() {
            true => Err(state.dropped_error()),
            false => Ok(Arc::clone(state)),
        }
    }

    fn default_space(&self) -> Arc<KeyspaceState> {
        Arc::clone(self.inner.default_space())
    }

    /// The value of `key` in the default keyspace: the transaction's own
    /// write if it made one, else as of its snapshot.
    pub fn get(&mut self, key: impl AsRef<[u8]>) -> Result<Option<Slice>> {
        self.get_tagged(&self.default_space(), key.as_ref())
    }

    /// [`get`](Self::get) in `keyspace`.
    pub fn get_in(&mut self, keyspace: &Keyspace, key: impl AsRef<[u8]>) -> Result<Option<Slice>> {
        self.get_tagged(&*Self::space_of(keyspace)?, key.as_ref())
    }

    /// True if `key` has a value (as [`get`](Self::get) sees it).
    pub fn contains_key(&mut self, key: impl AsRef<[u8]>) -> Result<bool> {
        Ok(self.get(key)?.is_some())
    }

    fn get_tagged(&mut self, space: &KeyspaceState, key: &[u8]) -> Result<Option<Slice>> {
        read::check_key(key)?;
        let stored = space.tag.prefixed(key);
        if let Some(own) = self.writes.get(&stored) {
            return Ok(user_value(space, own.as_deref().map(Slice::copy_from)));
        }
        let value = get_at(&self.inner, Some(self.seq), space, key)?;
        self.reads.keys.push(stored);
        Ok(value)
    }

    /// The values of `keys` in the default keyspace, in the order given
    /// (duplicates allowed): each the transaction's own write if it made
    /// one, else as of its snapshot, the latter read as one batch (as
    /// [`Db::multi_get`]). Every key read joins the commit's conflict check,
    /// as with [`get`](Self::get).
    pub fn multi_get<K: AsRef<[u8]>>(&mut self, keys: &[K]) -> Result<Vec<Option<Slice>>> {
        self.multi_get_tagged(&self.default_space(), keys)
    }

    /// [`multi_get`](Self::multi_get) in `keyspace`.
    pub fn multi_get_in<K: AsRef<[u8]>>(
        &mut self,
        keyspace: &Keyspace,
        keys: &[K],
    ) -> Result<Vec<Option<Slice>>> {
        self.multi_get_tagged(&*Self::space_of(keyspace)?, keys)
    }

    fn multi_get_tagged<K: AsRef<[u8]>>(
        &mut self,
        space: &KeyspaceState,
        keys: &[K],
    ) -> Result<Vec<Option<Slice>>> {
        let mut values = vec![None; keys.len()];
        // (position in `keys`, stored key) of the keys to read.
        let mut unread = Vec::new();
        for (i, key) in keys.iter().enumerate() {
            read::check_key(key.as_ref())?;
            let stored = space.tag.prefixed(key.as_ref());
            match self.writes.get(&stored) {
                Some(own) => values[i] = user_value(space, own.as_deref().map(Slice::copy_from)),
                None => unread.push((i, stored)),
            }
        }
        // The stored keys serve both the read and the read set.
        let wanted: Vec<&[u8]> = unread.iter().map(|(_, stored)| stored.as_slice()).collect();
        let read = self
            .inner
            .read(Some(self.seq), |view| read::multi_get(view, &wanted))?;
        for ((i, stored), value) in unread.into_iter().zip(read) {
            values[i] = user_value(space, value);
            self.reads.keys.push(stored);
        }
        Ok(values)
    }

    /// Sets `key` to `value` in the default keyspace, at commit.
    pub fn put(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        self.write(&self.default_space(), key.as_ref(), Some(value.as_ref()))
    }

    /// [`put`](Self::put) in `keyspace`.
    pub fn put_in(
        &mut self,
        keyspace: &Keyspace,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) -> Result<()> {
        self.write(
            &*Self::space_of(keyspace)?,
            key.as_ref(),
            Some(value.as_ref()),
        )
    }

    /// Deletes `key` in the default keyspace, at commit.
    pub fn delete(&mut self, key: impl AsRef<[u8]>) -> Result<()> {
        self.write(&self.default_space(), key.as_ref(), None)
    }

    /// [`delete`](Self::delete) in `keyspace`.
    pub fn delete_in(&mut self, keyspace: &Keyspace, key: impl AsRef<[u8]>) -> Result<()> {
        self.write(&*Self::space_of(keyspace)?, key.as_ref(), None)
    }

    fn write(&mut self, space: &KeyspaceState, key: &[u8], value: Option<&[u8]>) -> Result<()> {
        let value = value.map(|v| space.stored_value(v).into_owned());
        let mut check = WriteBatch::new();
        match &value {
            Some(v) => check.put_tagged(&space.tag, key, v),
            None => check.delete_tagged(&space.tag, key),
        };
        check.validate()?;
        Arc::make_mut(&mut self.writes).insert(space.tag.prefixed(key), value);
        Ok(())
    }

    /// The keys of `range` in the default keyspace, ascending: the
    /// snapshot's, overlaid with the transaction's own writes.
    pub fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&mut self, range: R) -> TxIter {
        self.range_tagged(
            &self.default_space(),
            as_bytes(range.start_bound()),
            as_bytes(range.end_bound()),
        )
    }

    /// [`range`](Self::range) in `keyspace`.
    pub fn range_in<K: AsRef<[u8]>, R: RangeBounds<K>>(
        &mut self,
        keyspace: &Keyspace,
        range: R,
    ) -> Result<TxIter> {
        let space = Self::space_of(keyspace)?;
        Ok(self.range_tagged(
            &space,
            as_bytes(range.start_bound()),
            as_bytes(range.end_bound()),
        ))
    }

    /// The keys starting with `prefix` in the default keyspace.
    pub fn prefix(&mut self, prefix: impl AsRef<[u8]>) -> TxIter {
        self.range(read::prefix_range(prefix.as_ref()))
    }

    /// [`prefix`](Self::prefix) in `keyspace`.
    pub fn prefix_in(&mut self, keyspace: &Keyspace, prefix: impl AsRef<[u8]>) -> Result<TxIter> {
        self.range_in(keyspace, read::prefix_range(prefix.as_ref()))
    }

    fn range_tagged(
        &mut self,
        space: &Arc<KeyspaceState>,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
    ) -> TxIter {
        let tag = &space.tag;
        let (lo, hi) = tag.bounds(lower, upper);
        let skip = tag.as_bytes().len();
        let own = OwnWrites::new(
            Arc::clone(&self.writes),
            (lo.clone(), hi.clone()),
            skip,
            Arc::clone(space),
        );
        let version = self.inner.versions.current_arc();
        let base = read::iter(version, self.seq, lo.clone(), hi.clone(), tag.as_bytes());
        self.reads.ranges.push((lo, hi));
        TxIter::new(base.expiring(space.ttl_millis > 0), own)
    }

    /// Applies every write of the transaction atomically, if no key or
    /// range it read was written by anyone since it began; otherwise fails
    /// with [`Error::Conflict`] and applies nothing. Reads of a
    /// transaction with no writes are validated too.
    pub fn commit(self) -> Result<()> {
        self.commit_opt(&WriteOptions::default())
    }

    /// [`commit`](Self::commit) with per-write options (`sync`).
    pub fn commit_opt(mut self, opts: &WriteOptions) -> Result<()> {
        let Some(snapshot) = self.snapshot.take() else {
            return Ok(()); // consumed already: unreachable through the API
        };
        let mut batch = WriteBatch::new();
        let writes = std::mem::take(&mut self.writes);
        for (key, value) in Arc::try_unwrap(writes).unwrap_or_else(|shared| (*shared).clone()) {
            match value {
                Some(v) => batch.put_tagged(&NO_TAG, &key, &v),
                None => batch.delete_tagged(&NO_TAG, &key),
            };
        }
        let inner = &self.inner;
        inner.refuse_if_closed()?;
        inner
            .txns
            .commit(snapshot.sequence(), &self.reads, batch, |b, placed| {
                inner.commit_in_order(b, opts, placed)
            })
    }

    /// Discards the transaction's writes (dropping it does the same).
    pub fn rollback(mut self) {
        self.close();
    }

    fn close(&mut self) {
        if let Some(s) = self.snapshot.take() {
            self.inner.txns.rollback(s.sequence());
        }
    }
}

impl Drop for Transaction {
    fn drop(&mut self) {
        self.close();
    }
}

impl std::fmt::Debug for Transaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transaction")
            .field("snapshot", &self.snapshot.as_ref().map(Snapshot::sequence))
            .field("writes", &self.writes.len())
            .finish()
    }
}
