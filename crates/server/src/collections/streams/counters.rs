//! Redis 7's logical read counters: a group's `entries_read` (how many of
//! the entries ever added to the stream it has read) and its `lag` (how
//! many it has yet to read), kept and estimated as Redis 7.0 does, so that
//! `XINFO GROUPS` answers what Redis answers. A deletion inside the range
//! a group has yet to read makes both unknowable until the group reads
//! past it (Redis answers null then, and so does this).

use super::groups::Group;
use super::id::{StreamId, MAX};
use super::stream::Stream;
use crate::access::Access;
use crate::commands::Fail;

/// What the counters need of a stream, read once per command: its first
/// entry's ID is read only when a deletion makes it matter.
pub struct Counters<'a> {
    s: &'a Stream,
    first: Option<StreamId>,
}

impl<'a> Counters<'a> {
    pub fn of(s: &'a Stream) -> Counters<'a> {
        Counters { s, first: None }
    }

    /// The stream's first entry's ID (0-0 when it is empty), as Redis's
    /// `first_id`.
    pub fn first(&mut self, acc: &mut dyn Access) -> Result<StreamId, Fail> {
        if let Some(first) = self.first {
            return Ok(first);
        }
        let first = match self.s.coll.len {
            0 => StreamId::default(),
            _ => self
                .s
                .entries(acc, self.s.low, MAX, 1)?
                .first()
                .map_or(StreamId::default(), |(id, _)| *id),
        };
        self.first = Some(first);
        Ok(first)
    }

    /// Whether a deleted entry may lie at or after `start` (Redis's
    /// `streamRangeHasTombstones` with no end).
    fn tombstones_from(&mut self, acc: &mut dyn Access, start: StreamId) -> Result<bool, Fail> {
        let deleted = self.s.max_deleted;
        if self.s.coll.len == 0 || deleted == StreamId::default() {
            return Ok(false);
        }
        if self.first(acc)? > deleted {
            return Ok(false);
        }
        Ok(start <= deleted)
    }

    /// How many entries ever added lie at or before `id`, if that can be
    /// known (Redis's `streamEstimateDistanceFromFirstEverEntry`).
    fn distance(&mut self, acc: &mut dyn Access, id: StreamId) -> Result<Option<u64>, Fail> {
        let s = self.s;
        if s.added == 0 {
            return Ok(Some(0));
        }
        if s.coll.len == 0 && id <= s.last {
            return Ok(Some(s.added));
        }
        if id == s.last {
            return Ok(Some(s.added));
        }
        if id > s.last {
            return Ok(None);
        }
        let first = self.first(acc)?;
        let deleted = s.max_deleted;
        if deleted == StreamId::default() || deleted < first {
            if id < first {
                return Ok(Some(s.added.wrapping_sub(s.coll.len as u64)));
            }
            if id == first {
                return Ok(Some(
                    s.added.wrapping_sub(s.coll.len as u64).wrapping_add(1),
                ));
            }
        }
        Ok(None)
    }

    /// `g` after entry `id` (above its last ID) is delivered to it.
    pub fn delivered(
        &mut self,
        acc: &mut dyn Access,
        g: &mut Group,
        id: StreamId,
    ) -> Result<(), Fail> {
        match g.entries_read {
            Some(read) if !self.tombstones_from(acc, id)? => {
                g.entries_read = Some(read.wrapping_add(1))
            }
            _ if self.s.added > 0 => g.entries_read = self.distance(acc, id)?,
            _ => {}
        }
        g.last = id;
        Ok(())
    }

    /// How many entries `g` has yet to read, if that can be known
    /// (negative after an `ENTRIESREAD` beyond the entries added, as in
    /// Redis).
    pub fn lag(&mut self, acc: &mut dyn Access, g: &Group) -> Result<Option<i64>, Fail> {
        if self.s.added == 0 {
            return Ok(Some(0));
        }
        if let Some(read) = g.entries_read {
            if !self.tombstones_from(acc, g.last)? {
                return Ok(Some(self.s.added as i64 - read as i64));
            }
        }
        Ok(self
            .distance(acc, g.last)?
            .map(|read| self.s.added as i64 - read as i64))
    }
}
