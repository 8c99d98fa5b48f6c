//! [`Keyspace`]: a handle on one keyspace, with the reads and writes `Db`
//! has; `Db`'s own methods act on the default keyspace through one of
//! these. Opening, listing and dropping keyspaces is in `keyspaces.rs`.

use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use super::rules;
use super::state::KeyspaceState;
use super::tag::TaggedKey;
use crate::batch::WriteBatch;
use crate::commit::take_batch;
use crate::db::components::Components;
use crate::error::Result;
use crate::iter::Iter;
use crate::options::WriteOptions;
use crate::read;
use crate::slice::Slice;

/// A keyspace (column family) of a [`Db`]: its own sorted key space, in the
/// same tree, WAL and snapshots as every other keyspace. Cheap to clone,
/// `Send + Sync`. A write through a handle of a dropped keyspace fails with
/// [`Error::InvalidArgument`]. Like a [`Snapshot`](crate::snapshot::Snapshot), a
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
    pub(crate) fn new(inner: Arc<Components>, state: Arc<KeyspaceState>) -> Keyspace {
        Keyspace { inner, state }
    }

    pub(crate) fn state(&self) -> &Arc<KeyspaceState> {
        &self.state
    }

    /// The keyspace's name.
    pub fn name(&self) -> &str {
        &self.state.name
    }

    /// How long its values live, if they expire.
    pub fn ttl(&self) -> Option<std::time::Duration> {
        (self.state.ttl_millis > 0).then(|| std::time::Duration::from_millis(self.state.ttl_millis))
    }

    fn live(&self) -> Result<&KeyspaceState> {
        match self.state.is_dropped() {
            true => Err(self.state.dropped_error()),
            false => Ok(&self.state),
        }
    }

    /// Sets `key` to `value`. Durable as described on [`Options`](crate::options::Options).
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
        let space = self.live()?;
        let mut batch = take_batch();
        let value = space.stored_value(value.as_ref());
        batch.put_tagged(&space.tag, key.as_ref(), &value);
        self.inner.write(batch, opts)
    }

    /// Deletes `key` (writes a tombstone).
    pub fn delete(&self, key: impl AsRef<[u8]>) -> Result<()> {
        self.delete_opt(key, &WriteOptions::default())
    }

    /// [`delete`](Self::delete) with per-write options.
    pub fn delete_opt(&self, key: impl AsRef<[u8]>, opts: &WriteOptions) -> Result<()> {
        let tag = &self.live()?.tag;
        let mut batch = take_batch();
        batch.delete_tagged(tag, key.as_ref());
        self.inner.write(batch, opts)
    }

    /// Deletes every key `k` with `start <= k < end` in O(1): one range
    /// tombstone, logged and applied atomically like any write. Requires
    /// `start < end`.
    pub fn delete_range(&self, start: impl AsRef<[u8]>, end: impl AsRef<[u8]>) -> Result<()> {
        let tag = &self.live()?.tag;
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
        let space = Arc::clone(&self.state);
        let tag = self.live()?.tag;
        let inner = &self.inner;
        inner.refuse_if_closed()?;
        let entries = entries
            .into_iter()
            .map(move |(k, v)| (k, space.stored_value(v.as_ref()).into_owned()));
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

    /// [`multi_get`](Self::multi_get) without a `Slice` per value: calls
    /// `found(i, value)` for every key `keys[i]` that has a value (once
    /// each, in no particular order), with the value borrowed from where
    /// the engine keeps it for the length of the call. For callers that
    /// copy the values on anyway (a binding into its own objects, a server
    /// into its reply), it saves an allocation and a copy per value.
    pub fn multi_get_with<K: AsRef<[u8]>>(
        &self,
        keys: &[K],
        mut found: impl FnMut(usize, &[u8]),
    ) -> Result<()> {
        multi_get_at_with(&self.inner, None, self.live()?, keys, &mut found)
    }

    /// An iterator over the keys in `range` (any kind of bounds), as of now.
    pub fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Iter {
        let seq = self.inner.commit.visible();
        iter_at(&self.inner, seq, &self.state, range)
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

/// `key` of the keyspace `space`, at `snapshot` (or now).
pub(crate) fn get_at(
    inner: &Components,
    snapshot: Option<u64>,
    space: &KeyspaceState,
    key: &[u8],
) -> Result<Option<Slice>> {
    read::check_key(key)?;
    let stored = TaggedKey::new(&space.tag, key);
    let value = inner.read(snapshot, |view| read::get(view, stored.as_bytes()))?;
    Ok(user_value(space, value))
}

/// The user's value of a stored one: without its expiry time in a TTL
/// keyspace, and `None` once expired.
pub(crate) fn user_value(space: &KeyspaceState, stored: Option<Slice>) -> Option<Slice> {
    match (space.ttl_millis, stored) {
        (0, stored) => stored,
        (_, None) => None,
        (_, Some(v)) => rules::live_value(&v, rules::now_millis()).map(Slice::copy_from),
    }
}

/// [`get_at`] for many keys: the tagged keys share one buffer.
pub(crate) fn multi_get_at<K: AsRef<[u8]>>(
    inner: &Components,
    snapshot: Option<u64>,
    space: &KeyspaceState,
    keys: &[K],
) -> Result<Vec<Option<Slice>>> {
    let mut values = vec![None; keys.len()];
    multi_get_at_with(inner, snapshot, space, keys, &mut |i, v| {
        values[i] = Some(Slice::copy_from(v));
    })?;
    Ok(values)
}

/// [`multi_get_at`] handing each value found to `found`, borrowed (see
/// [`Keyspace::multi_get_with`]).
pub(crate) fn multi_get_at_with<K: AsRef<[u8]>>(
    inner: &Components,
    snapshot: Option<u64>,
    space: &KeyspaceState,
    keys: &[K],
    found: &mut dyn FnMut(usize, &[u8]),
) -> Result<()> {
    let t = space.tag.as_bytes();
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
    let ttl = space.ttl_millis > 0;
    let now = if ttl { rules::now_millis() } else { 0 };
    inner.read(snapshot, |view| {
        read::multi_get_with(view, &stored, &mut |i, v| match ttl {
            false => found(i, v),
            true => {
                if let Some(v) = rules::live_value(v, now) {
                    found(i, v);
                }
            }
        })
    })
}

/// An iterator over `range` of the keyspace `space` at `seq`.
pub(crate) fn iter_at<K: AsRef<[u8]>, R: RangeBounds<K>>(
    inner: &Components,
    seq: u64,
    space: &KeyspaceState,
    range: R,
) -> Iter {
    let tag = &space.tag;
    let (lower, upper) = tag.bounds(as_bytes(range.start_bound()), as_bytes(range.end_bound()));
    let it = read::iter(
        inner.versions.current_arc(),
        seq,
        lower,
        upper,
        tag.as_bytes(),
    );
    it.expiring(space.ttl_millis > 0)
}

pub(crate) fn as_bytes<K: AsRef<[u8]>>(b: Bound<&K>) -> Bound<&[u8]> {
    match b {
        Bound::Included(k) => Bound::Included(k.as_ref()),
        Bound::Excluded(k) => Bound::Excluded(k.as_ref()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// A batch's writes to a keyspace named by its handle (the batch itself
/// knows keyspaces only by their state, `batch.rs`).
impl WriteBatch {
    /// Sets `key` to `value` in `keyspace`.
    pub fn put_in(
        &mut self,
        keyspace: &Keyspace,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
    ) -> &mut Self {
        let tag = self.note_keyspace(keyspace.state());
        let value = keyspace.state().stored_value(value.as_ref());
        self.put_tagged(&tag, key.as_ref(), &value)
    }

    /// Deletes `key` in `keyspace`.
    pub fn delete_in(&mut self, keyspace: &Keyspace, key: impl AsRef<[u8]>) -> &mut Self {
        let tag = self.note_keyspace(keyspace.state());
        self.delete_tagged(&tag, key.as_ref())
    }

    /// Deletes every key `k` with `start <= k < end` in `keyspace`.
    pub fn delete_range_in(
        &mut self,
        keyspace: &Keyspace,
        start: impl AsRef<[u8]>,
        end: impl AsRef<[u8]>,
    ) -> &mut Self {
        let tag = self.note_keyspace(keyspace.state());
        self.delete_range_tagged(&tag, start.as_ref(), end.as_ref())
    }
}
