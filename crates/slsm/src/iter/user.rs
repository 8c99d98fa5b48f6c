//! The user-facing range iterator: hides versions newer than the snapshot,
//! older versions of a key, and tombstones.

use std::ops::Bound;

use super::{run_cursor, InternalIter, MergingIter};
use crate::error::{Error, Result};
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
    done: bool,
}

impl Iter {
    pub(crate) fn new(
        sources: Vec<Source>,
        snapshot: u64,
        lower: Bound<Vec<u8>>,
        upper: Bound<Vec<u8>>,
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
            done: empty,
        }
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

    /// Advances the front cursor to the next visible entry.
    fn step_front(&mut self) -> Result<Option<(Slice, Slice)>> {
        let mut it = match self.front.take() {
            Some(it) => it,
            None => self.start_front(),
        };
        let result = self.scan_forward(&mut it);
        self.front = Some(it);
        result
    }

    fn scan_forward(&mut self, it: &mut MergingIter) -> Result<Option<(Slice, Slice)>> {
        while it.valid() {
            let parsed = key::parse(it.key()).ok_or_else(|| Self::corrupt_key(it.key()))?;
            let skip = parsed.seq > self.snapshot
                || self.front_last.as_deref() == Some(parsed.user_key)
                || !self.above_lower(parsed.user_key);
            if skip {
                it.next();
                continue;
            }
            if !self.below_upper(parsed.user_key)
                || self
                    .back_last
                    .as_deref()
                    .is_some_and(|b| parsed.user_key >= b)
            {
                break;
            }
            key::remember(&mut self.front_last, parsed.user_key);
            if parsed.kind == Kind::Value && !self.range_deleted(parsed.user_key, parsed.seq) {
                let item = (
                    Slice::copy_from(parsed.user_key),
                    Slice::copy_from(it.value()),
                );
                it.next();
                return Ok(Some(item));
            }
            it.next();
        }
        it.status()?;
        Ok(None)
    }

    /// Moves the back cursor to the previous visible entry.
    fn step_back(&mut self) -> Result<Option<(Slice, Slice)>> {
        let mut it = match self.back.take() {
            Some(it) => it,
            None => self.start_back(),
        };
        let result = self.scan_backward(&mut it);
        self.back = Some(it);
        result
    }

    /// Going backward, the versions of one user key arrive oldest first: the
    /// last one at or below the snapshot decides.
    fn scan_backward(&mut self, it: &mut MergingIter) -> Result<Option<(Slice, Slice)>> {
        loop {
            if !it.valid() {
                it.status()?;
                return Ok(None);
            }
            let parsed = key::parse(it.key()).ok_or_else(|| Self::corrupt_key(it.key()))?;
            let user_key = parsed.user_key.to_vec();
            if !self.below_upper(&user_key) {
                it.prev();
                continue;
            }
            if !self.above_lower(&user_key)
                || self
                    .front_last
                    .as_deref()
                    .is_some_and(|f| user_key.as_slice() <= f)
            {
                return Ok(None);
            }
            let mut newest: Option<(Kind, u64, Slice)> = None;
            while it.valid() {
                let p = key::parse(it.key()).ok_or_else(|| Self::corrupt_key(it.key()))?;
                if p.user_key != user_key.as_slice() {
                    break;
                }
                if p.seq <= self.snapshot {
                    newest = Some((p.kind, p.seq, Slice::copy_from(it.value())));
                }
                it.prev();
            }
            it.status()?;
            let key_slice = Slice::from(user_key.clone());
            self.back_last = Some(user_key);
            if let Some((Kind::Value, seq, value)) = newest {
                if !self.range_deleted(&key_slice, seq) {
                    return Ok(Some((key_slice, value)));
                }
            }
        }
    }

    fn finish<T>(&mut self, r: Result<Option<T>>) -> Option<Result<T>> {
        match r {
            Ok(Some(item)) => Some(Ok(item)),
            Ok(None) => {
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

impl Iterator for Iter {
    type Item = Result<(Slice, Slice)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = self.step_front();
        self.finish(r)
    }
}

impl DoubleEndedIterator for Iter {
    fn next_back(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let r = self.step_back();
        self.finish(r)
    }
}

impl std::iter::FusedIterator for Iter {}
