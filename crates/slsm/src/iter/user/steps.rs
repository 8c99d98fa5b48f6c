//! The steps of a user iterator: moving the front end or the back end of
//! an [`Iter`] to its next visible entry (newest version at or below the
//! snapshot, not deleted, within the bounds and the split), and ending both
//! ends together when they meet.

use super::Iter;
use crate::error::Result;
use crate::iter::internal::InternalIter;
use crate::iter::merging::MergingIter;
use crate::key::{self, Kind};
use crate::slice::Slice;

/// Versions of one key a step walks over before it seeks past the rest
/// (RocksDB's default is 8 as well).
const MAX_SEQUENTIAL_SKIP: usize = 8;

/// One version of a key as a backward step decides it: kind, sequence
/// number and the value it shows, if any.
type Version = (Kind, u64, Option<Slice>);

impl Iter {
    /// Advances the front cursor to the next visible entry and lends its
    /// key and value to `lend`.
    pub(super) fn step_front<R>(
        &mut self,
        lend: impl FnOnce(&[u8], &[u8]) -> R,
    ) -> Result<Option<R>> {
        let mut it = match self.front.take() {
            Some(it) => it,
            None => self.start_front(),
        };
        let result = match self.advance_to_visible(&mut it) {
            Ok(Some(value_at)) => {
                let r = self.lend_front(&it, value_at, lend);
                it.next();
                Ok(Some(r))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(e),
        };
        self.front = Some(it);
        result
    }

    /// The entry the front cursor stands on, visible (see
    /// [`Self::advance_to_visible`]), lent to `lend` as the caller sees it.
    fn lend_front<R>(
        &self,
        it: &MergingIter,
        value_start: usize,
        lend: impl FnOnce(&[u8], &[u8]) -> R,
    ) -> R {
        let user_key = key::user_key(it.key());
        let user_key = &user_key[self.tag.len().min(user_key.len())..];
        // `advance_to_visible` found the value at least `value_start` long.
        lend(user_key, it.value().get(value_start..).unwrap_or_default())
    }

    /// Moves the front cursor onto the next visible entry, leaving it
    /// there: the caller reads it and steps past it. `None` at the end.
    /// Returns where the visible value starts in the stored one.
    fn advance_to_visible(&mut self, it: &mut MergingIter) -> Result<Option<usize>> {
        // Older versions of the key just decided, stepped over one by one.
        let mut older = 0;
        while it.valid() {
            let parsed = key::parse(it.key()).ok_or_else(|| Self::corrupt_key(it.key()))?;
            let decided = self.front_last.as_deref() == Some(parsed.user_key);
            if decided && older >= MAX_SEQUENTIAL_SKIP && parsed.seq > 0 {
                // A key rewritten often has many versions in a memory run:
                // seek past them all instead (RocksDB's
                // `max_sequential_skip_in_iterations`). The seek lands on
                // this key's versions at sequence 0, if any (stepped over
                // one by one: a seek from one of them would not move), or
                // after it.
                it.seek(&key::lookup_key(parsed.user_key, 0));
                older = 0;
                continue;
            }
            older = if decided { older + 1 } else { 0 };
            let skip = parsed.seq > self.snapshot
                || decided
                || !self.above_lower(parsed.user_key)
                || !self.in_front_half(parsed.user_key);
            if skip {
                it.next();
                continue;
            }
            if !self.below_upper(parsed.user_key)
                || (self.split.is_none()
                    && self
                        .back_last
                        .as_deref()
                        .is_some_and(|b| parsed.user_key >= b))
            {
                break;
            }
            key::remember(&mut self.front_last, parsed.user_key);
            if parsed.kind == Kind::Value && !self.range_deleted(parsed.user_key, parsed.seq) {
                if let Some(start) = self.value_start(it.value()) {
                    return Ok(Some(start));
                }
            }
            it.next();
        }
        it.status()?;
        Ok(None)
    }

    /// Moves the back cursor to the previous visible entry.
    pub(super) fn step_back(&mut self) -> Result<Option<(Slice, Slice)>> {
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
            if !self.below_upper(&user_key)
                || (self.split.is_some() && self.in_front_half(&user_key))
            {
                it.prev();
                continue;
            }
            if !self.above_lower(&user_key)
                || (self.split.is_none()
                    && self
                        .front_last
                        .as_deref()
                        .is_some_and(|f| user_key.as_slice() <= f))
            {
                return Ok(None);
            }
            let newest = self.newest_backward(it, &user_key)?;
            let deleted = match &newest {
                Some((Kind::Value, seq, Some(_))) => self.range_deleted(&user_key, *seq),
                _ => true,
            };
            let key_slice = self.visible_key(&user_key);
            self.back_last = Some(user_key);
            if let (false, Some((_, _, Some(value)))) = (deleted, newest) {
                return Ok(Some((key_slice, value)));
            }
        }
    }

    /// Walks the back cursor over every version of `user_key` (oldest
    /// first), leaving it before them, and returns the newest one at or
    /// below the snapshot: its kind, sequence number and visible value.
    fn newest_backward(&self, it: &mut MergingIter, user_key: &[u8]) -> Result<Option<Version>> {
        let mut newest: Option<Version> = None;
        let mut stepped = 0;
        while it.valid() {
            let p = key::parse(it.key()).ok_or_else(|| Self::corrupt_key(it.key()))?;
            if p.user_key != user_key {
                break;
            }
            if stepped >= MAX_SEQUENTIAL_SKIP {
                // Versions arrive oldest first, so a key rewritten often
                // would be walked whole; jump instead (RocksDB's
                // `FindValueForCurrentKeyUsingSeek`). None met so far is at
                // or below the snapshot: no newer one is either.
                if newest.is_some() {
                    newest = self.newest_by_seek(it, user_key)?;
                }
                // Lands on the last entry before every version of the key.
                it.seek_for_prev(&key::lookup_key(user_key, key::MAX_SEQUENCE));
                break;
            }
            if p.seq <= self.snapshot {
                newest = Some(self.version_here(it, p.kind, p.seq));
            }
            stepped += 1;
            it.prev();
        }
        it.status()?;
        Ok(newest)
    }

    /// The newest version of `user_key` at or below the snapshot, found by
    /// a forward seek (the cursor is left wherever that lands).
    fn newest_by_seek(&self, it: &mut MergingIter, user_key: &[u8]) -> Result<Option<Version>> {
        it.seek(&key::lookup_key(user_key, self.snapshot));
        if !it.valid() {
            it.status()?;
            return Ok(None);
        }
        let p = key::parse(it.key()).ok_or_else(|| Self::corrupt_key(it.key()))?;
        if p.user_key != user_key || p.seq > self.snapshot {
            return Ok(None);
        }
        Ok(Some(self.version_here(it, p.kind, p.seq)))
    }

    /// The version the cursor stands on, its value copied out if it has one.
    fn version_here(&self, it: &MergingIter, kind: Kind, seq: u64) -> Version {
        let value = match kind {
            Kind::Value => self.visible_value(it.value()),
            Kind::Delete => None,
        };
        (kind, seq, value)
    }

    /// The item of one step of the front (`front`) or back end. Without a
    /// split, the ends meet: when one runs out, so does the other.
    pub(super) fn finish<T>(&mut self, r: Result<Option<T>>, front: bool) -> Option<Result<T>> {
        match r {
            Ok(Some(item)) => Some(Ok(item)),
            Ok(None) => {
                match (self.split.is_some(), front) {
                    (true, true) => self.front_done = true,
                    (true, false) => self.back_done = true,
                    (false, _) => (self.front_done, self.back_done) = (true, true),
                }
                None
            }
            Err(e) => {
                (self.front_done, self.back_done) = (true, true);
                Some(Err(e))
            }
        }
    }
}
