//! [`Snapshot`]: a point-in-time view of a [`Db`].

use std::ops::RangeBounds;
use std::sync::Arc;

use crate::db::components::Components;
use crate::db::handle::Db;
use crate::error::Result;
use crate::iter::Iter;
use crate::keyspace::handle::{get_at, iter_at, multi_get_at, Keyspace};
use crate::read;
use crate::slice::Slice;

impl Db {
    /// A consistent, read-only view of the database as of now. Merges keep
    /// every version the snapshot can see until it is dropped.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot::take(&self.inner)
    }
}

/// A point-in-time view of a [`Db`], every keyspace at one point: reads
/// through it ignore every write made after it was taken. The `*_in`
/// methods read another keyspace than the default one.
///
/// `Snapshot` is `Send + Sync` and may outlive the `Db` handle (it keeps
/// the database files and the directory lock alive until it is dropped).
pub struct Snapshot {
    inner: Arc<Components>,
    seq: u64,
}

impl Snapshot {
    pub(crate) fn take(inner: &Arc<Components>) -> Snapshot {
        let inner = Arc::clone(inner);
        let seq = inner.snapshots.acquire(|| inner.commit.visible());
        Snapshot { inner, seq }
    }

    /// The sequence number the snapshot reads at.
    pub fn sequence(&self) -> u64 {
        self.seq
    }

    /// [`Db::get`] as of the snapshot.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Slice>> {
        get_at(
            &self.inner,
            Some(self.seq),
            self.inner.default_space(),
            key.as_ref(),
        )
    }

    /// [`Db::contains_key`] as of the snapshot.
    pub fn contains_key(&self, key: impl AsRef<[u8]>) -> Result<bool> {
        Ok(self.get(key)?.is_some())
    }

    /// [`Db::multi_get`] as of the snapshot.
    pub fn multi_get<K: AsRef<[u8]>>(&self, keys: &[K]) -> Result<Vec<Option<Slice>>> {
        multi_get_at(
            &self.inner,
            Some(self.seq),
            self.inner.default_space(),
            keys,
        )
    }

    /// [`Db::range`] as of the snapshot.
    pub fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Iter {
        iter_at(&self.inner, self.seq, self.inner.default_space(), range)
    }

    /// [`Db::prefix`] as of the snapshot.
    pub fn prefix(&self, prefix: impl AsRef<[u8]>) -> Iter {
        self.range(read::prefix_range(prefix.as_ref()))
    }

    /// [`Keyspace::get`] as of the snapshot.
    pub fn get_in(&self, keyspace: &Keyspace, key: impl AsRef<[u8]>) -> Result<Option<Slice>> {
        get_at(&self.inner, Some(self.seq), keyspace.state(), key.as_ref())
    }

    /// [`Keyspace::contains_key`] as of the snapshot.
    pub fn contains_key_in(&self, keyspace: &Keyspace, key: impl AsRef<[u8]>) -> Result<bool> {
        Ok(self.get_in(keyspace, key)?.is_some())
    }

    /// [`Keyspace::multi_get`] as of the snapshot.
    pub fn multi_get_in<K: AsRef<[u8]>>(
        &self,
        keyspace: &Keyspace,
        keys: &[K],
    ) -> Result<Vec<Option<Slice>>> {
        multi_get_at(&self.inner, Some(self.seq), keyspace.state(), keys)
    }

    /// [`Keyspace::range`] as of the snapshot.
    pub fn range_in<K: AsRef<[u8]>, R: RangeBounds<K>>(
        &self,
        keyspace: &Keyspace,
        range: R,
    ) -> Iter {
        iter_at(&self.inner, self.seq, keyspace.state(), range)
    }

    /// [`Keyspace::prefix`] as of the snapshot.
    pub fn prefix_in(&self, keyspace: &Keyspace, prefix: impl AsRef<[u8]>) -> Iter {
        self.range_in(keyspace, read::prefix_range(prefix.as_ref()))
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        self.inner.snapshots.release(self.seq);
    }
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot").field("seq", &self.seq).finish()
    }
}
