//! The key-value calls on [`Db`] itself: those of its default keyspace,
//! each handed to [`Keyspace`](crate::db::Keyspace) (whose methods take the same arguments), and
//! the atomic write of a batch across keyspaces, handed to the commit
//! pipeline.

use super::handle::Db;
use crate::batch::WriteBatch;
use crate::error::Result;
use crate::iter::Iter;
use crate::options::WriteOptions;
use crate::slice::Slice;

impl Db {
    /// Sets `key` to `value`. Durable as described on [`Options`](crate::options::Options).
    pub fn put(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        self.default.put(key, value)
    }

    /// [`put`](Self::put) with per-write options.
    pub fn put_opt(
        &self,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
        opts: &WriteOptions,
    ) -> Result<()> {
        self.default.put_opt(key, value, opts)
    }

    /// Deletes `key` (writes a tombstone).
    pub fn delete(&self, key: impl AsRef<[u8]>) -> Result<()> {
        self.default.delete(key)
    }

    /// [`delete`](Self::delete) with per-write options.
    pub fn delete_opt(&self, key: impl AsRef<[u8]>, opts: &WriteOptions) -> Result<()> {
        self.default.delete_opt(key, opts)
    }

    /// Deletes every key `k` with `start <= k < end` in O(1): one range
    /// tombstone, logged and applied atomically like any write. Requires
    /// `start < end`.
    pub fn delete_range(&self, start: impl AsRef<[u8]>, end: impl AsRef<[u8]>) -> Result<()> {
        self.default.delete_range(start, end)
    }

    /// Applies `batch` atomically, across keyspaces: after a crash, all of
    /// it or none of it.
    pub fn write(&self, batch: WriteBatch) -> Result<()> {
        self.inner.write(batch, &WriteOptions::default())
    }

    /// [`write`](Self::write) with per-write options.
    pub fn write_opt(&self, batch: WriteBatch, opts: &WriteOptions) -> Result<()> {
        self.inner.write(batch, opts)
    }

    /// The value of `key`, or `None` if it is absent or deleted.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Slice>> {
        self.default.get(key)
    }

    /// [`Keyspace::ingest`](crate::db::Keyspace::ingest) into the default keyspace.
    pub fn ingest<K, V>(&self, entries: impl IntoIterator<Item = (K, V)>) -> Result<u64>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        self.default.ingest(entries)
    }

    /// True if `key` has a value.
    pub fn contains_key(&self, key: impl AsRef<[u8]>) -> Result<bool> {
        self.default.contains_key(key)
    }

    /// Looks up many keys at once (any order, duplicates allowed); results
    /// come in the caller's order. The batch is sorted once and searched with
    /// finger search in every memory run and one walk over the run files,
    /// whose block reads are issued concurrently.
    pub fn multi_get<K: AsRef<[u8]>>(&self, keys: &[K]) -> Result<Vec<Option<Slice>>> {
        self.default.multi_get(keys)
    }

    /// [`multi_get`](Self::multi_get) handing each value found to
    /// `found(i, value)`, borrowed, instead of returning a `Slice` per value
    /// (see [`Keyspace::multi_get_with`](crate::db::Keyspace::multi_get_with)).
    pub fn multi_get_with<K: AsRef<[u8]>>(
        &self,
        keys: &[K],
        found: impl FnMut(usize, &[u8]),
    ) -> Result<()> {
        self.default.multi_get_with(keys, found)
    }

    /// An iterator over the keys in `range` (any kind of bounds), as of now.
    pub fn range<K: AsRef<[u8]>, R: std::ops::RangeBounds<K>>(&self, range: R) -> Iter {
        self.default.range(range)
    }

    /// An iterator over every key that starts with `prefix`.
    pub fn prefix(&self, prefix: impl AsRef<[u8]>) -> Iter {
        self.default.prefix(prefix)
    }

    /// An iterator over the whole database.
    pub fn iter(&self) -> Iter {
        self.default.iter()
    }
}
