//! [`Keyspace`]: a handle on one keyspace, with the reads and writes `Db`
//! has; `Db`'s own methods act on the default keyspace through one of
//! these. Opening, listing and dropping keyspaces is here too.

use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use super::{Components, Db};
use crate::batch::WriteBatch;
use crate::commit::take_batch;
use crate::error::{Error, Result};
use crate::iter::Iter;
use crate::keyspace::tag::{Tag, TaggedKey};
use crate::keyspace::{check_name, KeyspaceState, DEFAULT_KEYSPACE};
use crate::options::WriteOptions;
use crate::read;
use crate::slice::Slice;
use crate::version::VersionEdit;

/// A keyspace (column family) of a [`Db`]: its own sorted key space, in the
/// same tree, WAL and snapshots as every other keyspace. Cheap to clone,
/// `Send + Sync`. A write through a handle of a dropped keyspace fails with
/// [`Error::InvalidArgument`]. Like a [`Snapshot`](crate::Snapshot), a
/// handle keeps the database's files and lock until it is dropped; once
/// the `Db` is dropped, writes through it fail.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let db = slsm::Db::open(dir.path(), slsm::Options::default())?;
/// let users = db.keyspace("users")?;
/// users.put("alice", "1")?;
/// assert!(users.contains_key("alice")? && !db.contains_key("alice")?);
/// let mut batch = slsm::WriteBatch::new();
/// batch.put("total", "1").put_in(&users, "bob", "2");
/// db.write(batch)?; // both or neither, across keyspaces
/// assert_eq!(db.keyspace_names(), ["default", "users"]);
/// # Ok::<(), slsm::Error>(())
/// ```
#[derive(Clone)]
pub struct Keyspace {
    inner: Arc<Components>,
    state: Arc<KeyspaceState>,
}

impl Keyspace {
    pub(super) fn new(inner: Arc<Components>, state: Arc<KeyspaceState>) -> Keyspace {
        Keyspace { inner, state }
    }

    pub(crate) fn state(&self) -> &Arc<KeyspaceState> {
        &self.state
    }

    /// The keyspace's name.
    pub fn name(&self) -> &str {
        &self.state.name
    }

    fn live(&self) -> Result<&Tag> {
        match self.state.is_dropped() {
            true => Err(self.state.dropped_error()),
            false => Ok(&self.state.tag),
        }
    }

    /// Sets `key` to `value`. Durable as described on [`Options`](crate::Options).
    pub fn put(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        self.put_opt(key, value, &WriteOptions::default())
    }

    /// [`put`](Self::put) with per-write options.
    pub fn put_opt(
        &self,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
        opts: &WriteOptions,
    ) -> Result<()> {
        let tag = self.live()?;
        let mut batch = take_batch();
        batch.put_tagged(tag, key.as_ref(), value.as_ref());
        self.inner.write(batch, opts)
    }

    /// Deletes `key` (writes a tombstone).
    pub fn delete(&self, key: impl AsRef<[u8]>) -> Result<()> {
        self.delete_opt(key, &WriteOptions::default())
    }

    /// [`delete`](Self::delete) with per-write options.
    pub fn delete_opt(&self, key: impl AsRef<[u8]>, opts: &WriteOptions) -> Result<()> {
        let tag = self.live()?;
        let mut batch = take_batch();
        batch.delete_tagged(tag, key.as_ref());
        self.inner.write(batch, opts)
    }

    /// Deletes every key `k` with `start <= k < end` in O(1): one range
    /// tombstone, logged and applied atomically like any write. Requires
    /// `start < end`.
    pub fn delete_range(&self, start: impl AsRef<[u8]>, end: impl AsRef<[u8]>) -> Result<()> {
        let tag = self.live()?;
        let mut batch = WriteBatch::new();
        batch.delete_range_tagged(tag, start.as_ref(), end.as_ref());
        self.inner.write(batch, &WriteOptions::default())
    }

    /// Bulk-loads `entries` (strictly ascending keys) into this keyspace:
    /// they are written straight into a run file, which joins the tree as
    /// deep as it fits, instead of going through the log and memory runs.
    /// Every entry overwrites what the key held; the load is atomic
    /// (readers see all of it or none) and durable when this returns.
    /// Writers wait while it runs. Returns the number of entries.
    ///
    /// Errors: [`Error::InvalidArgument`] for keys out of order (or
    /// repeated) or too large; the database is then unchanged.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = slsm::Db::open(dir.path(), slsm::Options::default())?;
    /// let n = db.ingest((0..1000u32).map(|i| (i.to_be_bytes(), b"v")))?;
    /// assert_eq!(n, 1000);
    /// assert!(db.ingest([("b", "1"), ("a", "2")]).is_err());
    /// # Ok::<(), slsm::Error>(())
    /// ```
    pub fn ingest<K, V>(&self, entries: impl IntoIterator<Item = (K, V)>) -> Result<u64>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        let tag = *self.live()?;
        let inner = &self.inner;
        inner.refuse_if_closed()?;
        let (start, end) = (tag.as_bytes().to_vec(), tag.end());
        inner.txns.range_write(&start, &end, || {
            let n = inner.commit.exclusive(|ex| {
                ex.seal_active()?;
                inner.jobs.flush_all()?;
                let seq = ex.take_sequence()?;
                inner.jobs.ingest(entries, &tag, seq)
            })?;
            Ok((n, inner.commit.visible()))
        })
    }

    /// The value of `key`, or `None` if it is absent or deleted.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Slice>> {
        get_at(&self.inner, None, self.live()?, key.as_ref())
    }

    /// True if `key` has a value.
    pub fn contains_key(&self, key: impl AsRef<[u8]>) -> Result<bool> {
        Ok(self.get(key)?.is_some())
    }

    /// Looks up many keys at once (any order, duplicates allowed); results
    /// come in the caller's order. The batch is sorted once and searched with
    /// finger search in every memory run and one walk over the run files,
    /// whose block reads are issued concurrently.
    pub fn multi_get<K: AsRef<[u8]>>(&self, keys: &[K]) -> Result<Vec<Option<Slice>>> {
        multi_get_at(&self.inner, None, self.live()?, keys)
    }

    /// An iterator over the keys in `range` (any kind of bounds), as of now.
    pub fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Iter {
        let seq = self.inner.commit.visible();
        iter_at(&self.inner, seq, &self.state.tag, range)
    }

    /// An iterator over every key that starts with `prefix`.
    pub fn prefix(&self, prefix: impl AsRef<[u8]>) -> Iter {
        self.range(read::prefix_range(prefix.as_ref()))
    }

    /// An iterator over the whole keyspace.
    pub fn iter(&self) -> Iter {
        self.range::<&[u8], _>(..)
    }
}

impl std::fmt::Debug for Keyspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keyspace")
            .field("name", &self.state.name)
            .field("id", &self.state.id)
            .finish()
    }
}

/// `key` of the keyspace tagged `tag`, at `snapshot` (or now).
pub(super) fn get_at(
    inner: &Components,
    snapshot: Option<u64>,
    tag: &Tag,
    key: &[u8],
) -> Result<Option<Slice>> {
    read::check_key(key)?;
    let stored = TaggedKey::new(tag, key);
    inner.read(snapshot, |view| read::get(view, stored.as_bytes()))
}

/// [`get_at`] for many keys: the tagged keys share one buffer.
pub(super) fn multi_get_at<K: AsRef<[u8]>>(
    inner: &Components,
    snapshot: Option<u64>,
    tag: &Tag,
    keys: &[K],
) -> Result<Vec<Option<Slice>>> {
    let t = tag.as_bytes();
    let total: usize = keys.iter().map(|k| t.len() + k.as_ref().len()).sum();
    let mut buf = Vec::with_capacity(total);
    let mut ends = Vec::with_capacity(keys.len());
    for k in keys {
        read::check_key(k.as_ref())?;
        buf.extend_from_slice(t);
        buf.extend_from_slice(k.as_ref());
        ends.push(buf.len());
    }
    let mut start = 0;
    let stored: Vec<&[u8]> = ends
        .iter()
        .map(|&end| {
            let k = &buf[start..end];
            start = end;
            k
        })
        .collect();
    inner.read(snapshot, |view| read::multi_get(view, &stored))
}

/// An iterator over `range` of the keyspace tagged `tag` at `seq`.
pub(super) fn iter_at<K: AsRef<[u8]>, R: RangeBounds<K>>(
    inner: &Components,
    seq: u64,
    tag: &Tag,
    range: R,
) -> Iter {
    let (lower, upper) = tag.bounds(as_bytes(range.start_bound()), as_bytes(range.end_bound()));
    read::iter(
        inner.versions.current_arc(),
        seq,
        lower,
        upper,
        tag.as_bytes(),
    )
}

pub(super) fn as_bytes<K: AsRef<[u8]>>(b: Bound<&K>) -> Bound<&[u8]> {
    match b {
        Bound::Included(k) => Bound::Included(k.as_ref()),
        Bound::Excluded(k) => Bound::Excluded(k.as_ref()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

impl Db {
    /// The keyspace `name`, created (durably, before this returns) if it
    /// does not exist. Names are 1 to 255 characters of `a-z A-Z 0-9 _ - .
    /// # $`; `"default"` is the keyspace `Db`'s own methods use.
    ///
    /// Errors: [`Error::InvalidArgument`] for an invalid name,
    /// [`Error::ReadOnly`] to create one in a read-only database.
    pub fn keyspace(&self, name: &str) -> Result<Keyspace> {
        let inner = &self.inner;
        let mut open = inner.keyspaces.lock();
        if let Some(state) = open.get(name) {
            return Ok(Keyspace::new(Arc::clone(inner), Arc::clone(state)));
        }
        check_name(name).map_err(Error::InvalidArgument)?;
        let catalog = inner.versions.catalog();
        let id = match catalog.by_name(name) {
            Some(record) => record.id,
            None => {
                inner.refuse_if_read_only()?;
                let next = catalog.with_new(name, 0).map_err(Error::InvalidArgument)?;
                let id = catalog.next_id;
                inner.versions.apply(VersionEdit {
                    catalog: Some(next),
                    ..VersionEdit::default()
                })?;
                id
            }
        };
        let state = Arc::new(KeyspaceState::new(id, name));
        open.insert(name.to_string(), Arc::clone(&state));
        Ok(Keyspace::new(Arc::clone(inner), state))
    }

    /// The names of every keyspace, `"default"` first, then in order of
    /// creation.
    pub fn keyspace_names(&self) -> Vec<String> {
        let catalog = self.inner.versions.catalog();
        catalog.keyspaces.iter().map(|k| k.name.clone()).collect()
    }

    /// Drops keyspace `name` and every key in it. Its run files that hold
    /// nothing else are deleted at once; its keys in shared files go as
    /// merges rewrite them (no scan now). Handles on it fail from now on;
    /// a new keyspace of the same name starts empty.
    ///
    /// Errors: [`Error::InvalidArgument`] for `"default"` or a keyspace
    /// that does not exist.
    pub fn drop_keyspace(&self, name: &str) -> Result<()> {
        let inner = &self.inner;
        inner.refuse_if_read_only()?;
        if name == DEFAULT_KEYSPACE {
            return Err(Error::InvalidArgument(
                "the default keyspace cannot be dropped".into(),
            ));
        }
        let mut open = inner.keyspaces.lock();
        let catalog = inner.versions.catalog();
        let Some(record) = catalog.by_name(name) else {
            return Err(Error::InvalidArgument(format!("no keyspace {name:?}")));
        };
        let tag = Tag::of(record.id);
        let (start, end) = (tag.as_bytes().to_vec(), tag.end());
        let version = inner.versions.current_arc();
        let removed = version
            .disk_runs_newest_first()
            .filter(|r| {
                let p = r.file.properties();
                p.min_user_key.as_slice() >= start.as_slice() && p.max_user_key < end
            })
            .cloned()
            .collect();
        if let Some(state) = open.remove(name) {
            state.mark_dropped();
        }
        inner.versions.apply(VersionEdit {
            catalog: Some(catalog.without(name)),
            removed,
            ..VersionEdit::default()
        })?;
        crate::reaper::drain();
        Ok(())
    }
}
