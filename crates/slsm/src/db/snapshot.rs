//! [`Snapshot`]: a point-in-time view of a [`Db`].

use std::ops::RangeBounds;
use std::sync::Arc;

use super::{Components, Db};
use crate::error::Result;
use crate::iter::Iter;
use crate::read;
use crate::slice::Slice;

impl Db {
    /// A consistent, read-only view of the database as of now. Merges keep
    /// every version the snapshot can see until it is dropped.
    pub fn snapshot(&self) -> Snapshot {
        let inner = Arc::clone(&self.inner);
        let seq = inner.snapshots.acquire(|| inner.commit.visible());
        Snapshot { inner, seq }
    }
}

/// A point-in-time view of a [`Db`]: reads through it ignore every write
/// made after it was taken.
///
/// `Snapshot` is `Send + Sync` and may outlive the `Db` handle (it keeps
/// the database files and the directory lock alive until it is dropped).
pub struct Snapshot {
    inner: Arc<Components>,
    seq: u64,
}

impl Snapshot {
    /// The sequence number the snapshot reads at.
    pub fn sequence(&self) -> u64 {
        self.seq
    }

    /// [`Db::get`] as of the snapshot.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Slice>> {
        let key = key.as_ref();
        self.inner.read(Some(self.seq), |view| read::get(view, key))
    }

    /// [`Db::multi_get`] as of the snapshot.
    pub fn multi_get<K: AsRef<[u8]>>(&self, keys: &[K]) -> Result<Vec<Option<Slice>>> {
        let keys: Vec<&[u8]> = keys.iter().map(AsRef::as_ref).collect();
        self.inner
            .read(Some(self.seq), |view| read::multi_get(view, &keys))
    }

    /// [`Db::range`] as of the snapshot.
    pub fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Iter {
        read::iter(self.inner.versions.current_arc(), self.seq, range)
    }

    /// [`Db::prefix`] as of the snapshot.
    pub fn prefix(&self, prefix: impl AsRef<[u8]>) -> Iter {
        let prefix = prefix.as_ref();
        self.range(read::prefix_range(prefix))
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
