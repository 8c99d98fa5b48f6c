//! The user-facing range iterator: hides versions newer than the snapshot,
//! older versions of a key, and tombstones.

mod steps;

use std::ops::Bound;

use crate::error::{Error, Result};
use crate::iter::internal::{run_cursor, InternalIter};
use crate::iter::merging::MergingIter;
use crate::key::{self, Kind, MAX_SEQUENCE};
use crate::rangedel::Fragments;
use crate::slice::Slice;
use crate::version::Source;

/// A cursor over one source of the read path.
fn cursor(source: &Source) -> Box<dyn InternalIter> {
    match source {
        Source::Mem(m) => Box::new(m.cursor()),
        Source::Disk(r) => run_cursor(&r.file),
    }
}

/// An iterator over the user keys in a range, at one point in time.
///
/// It yields `Result<(key, value)>` in ascending key order, or descending
/// through [`DoubleEndedIterator`] (`.rev()`); both ends may be used on one
/// iterator and meet without overlap. It reads the database as of its
/// creation (or its snapshot): writes and merges that happen while it is
/// alive do not change what it returns, and it never blocks them. It holds
/// the run files it reads open until it is dropped. After an `Err` item the
/// iterator ends. `Iter` is `Send`.
///
/// [`seek`](Self::seek) and [`seek_for_prev`](Self::seek_for_prev)
/// reposition it within its bounds, at the same point in time: the key
/// sought splits the range, `next` continues above it and `next_back`
/// below it.
///
/// ```
/// # let dir = tempfile::tempdir().unwrap();
/// let db = slsm::Db::open(dir.path(), slsm::Options::default())?;
/// for k in ["a", "b", "c", "d"] {
///     db.put(k, k)?;
/// }
/// let mut it = db.iter();
/// it.seek("b");
/// assert_eq!(&*it.next().unwrap()?.0, b"b");
/// assert_eq!(&*it.next_back().unwrap()?.0, b"a");
/// it.seek_for_prev("c");
/// assert_eq!(&*it.next_back().unwrap()?.0, b"c");
/// assert_eq!(&*it.next().unwrap()?.0, b"d");
/// # Ok::<(), slsm::Error>(())
/// ```
pub struct Iter {
    sources: Vec<Source>,
    snapshot: u64,
    /// Range tombstones of every source visible at the snapshot.
    range_dels: Fragments,
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    front: Option<MergingIter>,
    back: Option<MergingIter>,
    /// Last user key returned by the front / back, to stop where they meet.
    front_last: Option<Vec<u8>>,
    back_last: Option<Vec<u8>>,
    front_done: bool,
    back_done: bool,
    /// The bounds admit no key.
    empty: bool,
    /// After a seek: the key the range is split at, and whether it belongs
    /// to the back half (`seek_for_prev`). The two halves never meet.
    split: Option<(Vec<u8>, bool)>,
    /// The keyspace tag every internal user key starts with; keys are
    /// returned without it.
    tag: Vec<u8>,
    /// Values carry an expiry time (a TTL keyspace): expired ones are
    /// skipped, the others returned without it. The time is read once.
    expires_after: Option<u64>,
}

impl Iter {
    pub(crate) fn new(
        sources: Vec<Source>,
        snapshot: u64,
        lower: Bound<Vec<u8>>,
        upper: Bound<Vec<u8>>,
        tag: Vec<u8>,
    ) -> Iter {
        let mut tombstones = Vec::new();
        for source in &sources {
            match source {
                Source::Mem(m) => tombstones.extend(m.range_tombstones()),
                Source::Disk(r) => tombstones.extend(r.file.range_tombstones().iter().cloned()),
            }
        }
        tombstones.retain(|t| t.seq <= snapshot);
        let range_dels = Fragments::build(&tombstones);
        let empty = match (&lower, &upper) {
            (Bound::Included(l), Bound::Excluded(u)) => l >= u,
            (Bound::Excluded(l), Bound::Excluded(u)) | (Bound::Excluded(l), Bound::Included(u)) => {
                l >= u
            }
            (Bound::Included(l), Bound::Included(u)) => l > u,
            _ => false,
        };
        Iter {
            sources,
            snapshot,
            range_dels,
            lower,
            upper,
            front: None,
            back: None,
            front_last: None,
            back_last: None,
            front_done: empty,
            back_done: empty,
            empty,
            split: None,
            tag,
            expires_after: None,
        }
    }

    /// Makes the iterator read values of a TTL keyspace.
    pub(crate) fn expiring(mut self, ttl: bool) -> Iter {
        self.expires_after = ttl.then(crate::keyspace::rules::now_millis);
        self
    }

    /// The value a caller sees of a stored one; `None` if it expired.
    fn visible_value(&self, stored: &[u8]) -> Option<Slice> {
        self.value_start(stored)
            .map(|start| Slice::copy_from(&stored[start..]))
    }

    /// Where the value a caller sees starts in a stored one (a value with
    /// an expiry time carries it in front); `None` if it expired.
    fn value_start(&self, stored: &[u8]) -> Option<usize> {
        match self.expires_after {
            None => Some(0),
            Some(now) => crate::keyspace::rules::live_value_start(stored, now),
        }
    }

    /// [`next`](Iterator::next), with the key and value lent to `lend`
    /// rather than copied into [`Slice`]s: a scan that copies them
    /// elsewhere anyway (a language binding's objects, a buffer) allocates
    /// nothing per entry.
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = slsm::Db::open(dir.path(), slsm::Options::default())?;
    /// db.put("a", "1")?;
    /// db.put("b", "22")?;
    /// let mut it = db.iter();
    /// let mut lens = Vec::new();
    /// while let Some(len) = it.next_with(|k, v| k.len() + v.len()) {
    ///     lens.push(len?);
    /// }
    /// assert_eq!(lens, [2, 3]);
    /// # Ok::<(), slsm::Error>(())
    /// ```
    pub fn next_with<R>(&mut self, lend: impl FnOnce(&[u8], &[u8]) -> R) -> Option<Result<R>> {
        if self.front_done {
            return None;
        }
        let r = self.step_front(lend);
        self.finish(r, true)
    }

    /// Repositions the iterator: `next` yields the first key `>= key`
    /// (within the bounds) and continues upward; `next_back` yields the
    /// last key `< key` and continues downward. Same snapshot as before.
    pub fn seek(&mut self, key: impl AsRef<[u8]>) {
        self.split_at(key.as_ref(), false);
    }

    /// Repositions the iterator: `next_back` yields the last key `<= key`
    /// (within the bounds) and continues downward; `next` yields the first
    /// key `> key` and continues upward. Same snapshot as before.
    pub fn seek_for_prev(&mut self, key: impl AsRef<[u8]>) {
        self.split_at(key.as_ref(), true);
    }

    fn split_at(&mut self, key: &[u8], back_inclusive: bool) {
        let mut at = self.tag.clone();
        at.extend_from_slice(key);
        let mut front = self.merged();
        let mut back = self.merged();
        let from = match &self.lower {
            Bound::Included(l) | Bound::Excluded(l) if *l > at => l.clone(),
            _ => at.clone(),
        };
        front.seek(&key::lookup_key(&from, MAX_SEQUENCE));
        match back_inclusive {
            true => back.seek_for_prev(&key::encode(&at, 0, Kind::Delete)),
            false => back.seek_for_prev(&key::lookup_key(&at, MAX_SEQUENCE)),
        }
        self.front = Some(front);
        self.back = Some(back);
        self.front_last = None;
        self.back_last = None;
        self.front_done = self.empty;
        self.back_done = self.empty;
        self.split = Some((at, back_inclusive));
    }

    /// True if `user_key` belongs to the front half of a split range.
    fn in_front_half(&self, user_key: &[u8]) -> bool {
        match &self.split {
            None => true,
            Some((at, true)) => user_key > at.as_slice(),
            Some((at, false)) => user_key >= at.as_slice(),
        }
    }

    /// The key a caller sees: without the keyspace tag.
    fn visible_key(&self, user_key: &[u8]) -> Slice {
        Slice::copy_from(&user_key[self.tag.len().min(user_key.len())..])
    }

    fn merged(&self) -> MergingIter {
        MergingIter::new(self.sources.iter().map(cursor).collect())
    }

    fn below_upper(&self, user_key: &[u8]) -> bool {
        match &self.upper {
            Bound::Unbounded => true,
            Bound::Included(u) => user_key <= u.as_slice(),
            Bound::Excluded(u) => user_key < u.as_slice(),
        }
    }

    fn above_lower(&self, user_key: &[u8]) -> bool {
        match &self.lower {
            Bound::Unbounded => true,
            Bound::Included(l) => user_key >= l.as_slice(),
            Bound::Excluded(l) => user_key > l.as_slice(),
        }
    }

    fn start_front(&self) -> MergingIter {
        let mut it = self.merged();
        match &self.lower {
            Bound::Unbounded => it.seek_to_first(),
            Bound::Included(l) | Bound::Excluded(l) => it.seek(&key::lookup_key(l, MAX_SEQUENCE)),
        }
        it
    }

    fn start_back(&self) -> MergingIter {
        let mut it = self.merged();
        match &self.upper {
            Bound::Unbounded => it.seek_to_last(),
            // Every version of `u` sorts at or before (u, seq 0, Delete).
            Bound::Included(u) | Bound::Excluded(u) => {
                it.seek_for_prev(&key::encode(u, 0, Kind::Delete))
            }
        }
        it
    }

    /// True if a visible range tombstone deletes the version at `seq`.
    fn range_deleted(&self, user_key: &[u8], seq: u64) -> bool {
        !self.range_dels.is_empty()
            && self
                .range_dels
                .covering_seq(user_key, self.snapshot)
                .is_some_and(|t| t > seq)
    }

    fn corrupt_key(ikey: &[u8]) -> Error {
        Error::corruption(
            "<iterator>",
            0,
            format!(
                "undecodable internal key {:02x?}",
                &ikey[..ikey.len().min(32)]
            ),
        )
    }
}

impl Iterator for Iter {
    type Item = Result<(Slice, Slice)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_with(|k, v| (Slice::copy_from(k), Slice::copy_from(v)))
    }
}

impl DoubleEndedIterator for Iter {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.back_done {
            return None;
        }
        let r = self.step_back();
        self.finish(r, false)
    }
}

impl std::iter::FusedIterator for Iter {}
