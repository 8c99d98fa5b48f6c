//! [`Coll`]: a collection's metadata, and its elements' keys and ranges
//! in the items keyspace (the layout is in the collections' module docs).

use crate::access::{Access, Item};
use crate::commands::{fail, Fail};
use crate::store::{Kind, Value};

/// Elements read from the engine per step when a whole collection is
/// walked (deleted, renamed, listed).
pub(crate) const STEP: usize = 4096;

/// A sorted set's `tail` with buckets whose number is not known (as the
/// first build with the index saved them: `zsets/counts.rs`).
pub(crate) const COUNTED: i64 = 1;
/// A sorted set's `tail` when the top bucket is the only one; each bucket
/// below it adds one.
pub(crate) const ONE_BUCKET: i64 = 2;

pub fn wrong_type() -> Fail {
    fail("WRONGTYPE Operation against a key holding the wrong kind of value")
}

/// A collection's metadata.
#[derive(Clone, Debug)]
pub struct Coll {
    pub key: Vec<u8>,
    pub kind: Kind,
    pub expires_at: u64,
    /// New for each collection created at the key (see the module docs).
    pub version: u64,
    /// Bumped by every write (see the module docs).
    pub rev: u64,
    /// A list's elements are at indexes `head..tail`. A sorted set's
    /// `tail` describes its rank index (`zsets/counts.rs`): 0 for sets
    /// made before the index, 1 or more for those that keep one.
    pub head: i64,
    pub tail: i64,
    /// Elements of a hash, set or sorted set.
    pub len: i64,
    /// A sorted set's low mark: no element's score-order sub-key (less its
    /// `s`) is below it. Pops from the bottom raise it past what they
    /// took, so the next walk starts after their deletion markers instead
    /// of stepping over every one (the LSM queue pattern); an insert below
    /// it lowers it. Empty for the other kinds.
    pub mark: Vec<u8>,
    /// A sorted set's high mark, the same from the top: no element's
    /// score-order sub-key (less its `s`) is at or above it; empty means
    /// no bound. Pops from the top lower it to what they took last; an
    /// insert at or above it raises it past the insert.
    pub high: Vec<u8>,
}

/// The fixed part of the metadata (the marks follow it: the low mark,
/// then a sorted set's high mark, whose length the list-only `head` word
/// holds for a sorted set; a set saved before the high mark existed has
/// 0 there, so its trailing bytes read as the low mark they are).
const META_LEN: usize = 40;

impl Coll {
    /// The collection of kind `kind` at `key`; `None` if the key is
    /// missing, a `WRONGTYPE` error if it holds another kind.
    pub fn load(acc: &mut dyn Access, key: &[u8], kind: Kind) -> Result<Option<Coll>, Fail> {
        match acc.get(key)? {
            None => Ok(None),
            Some(v) if v.kind != kind => Err(wrong_type()),
            Some(v) => Coll::decode(key, &v).map(Some),
        }
    }

    /// [`load`](Self::load), or a new, empty collection.
    pub fn load_or_new(acc: &mut dyn Access, key: &[u8], kind: Kind) -> Result<Coll, Fail> {
        match Coll::load(acc, key, kind)? {
            Some(c) => Ok(c),
            None => Ok(Coll {
                key: key.to_vec(),
                kind,
                expires_at: 0,
                version: acc.new_version()?,
                rev: 0,
                head: 0,
                tail: match kind {
                    Kind::ZSet => ONE_BUCKET,
                    _ => 0,
                },
                len: 0,
                mark: Vec::new(),
                high: Vec::new(),
            }),
        }
    }

    pub(super) fn decode(key: &[u8], v: &Value) -> Result<Coll, Fail> {
        let d = &v.data;
        if d.len() < META_LEN {
            return Err(fail("ERR corrupt collection metadata"));
        }
        let word = |i: usize| u64::from_be_bytes(d[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
        let marks = &d[META_LEN..];
        let (head, high_len) = match v.kind {
            Kind::ZSet => (0, word(2)),
            _ => (word(2) as i64, 0),
        };
        let Some(split) = (marks.len() as u64).checked_sub(high_len) else {
            return Err(fail("ERR corrupt collection metadata"));
        };
        let (mark, high) = marks.split_at(split as usize);
        Ok(Coll {
            key: key.to_vec(),
            kind: v.kind,
            expires_at: v.expires_at,
            version: word(0),
            rev: word(1),
            head,
            tail: word(3) as i64,
            len: word(4) as i64,
            mark: mark.to_vec(),
            high: high.to_vec(),
        })
    }

    /// The version of the collection `v` holds (`None` for a string).
    pub(super) fn version_in(v: &Value) -> Option<u64> {
        match v.kind {
            Kind::String => None,
            _ => Some(u64::from_be_bytes(v.data.get(..8)?.try_into().ok()?)),
        }
    }

    /// True for a sorted set that keeps a rank index.
    pub fn ranked(&self) -> bool {
        self.kind == Kind::ZSet && self.tail >= COUNTED
    }

    /// Elements held.
    pub fn count(&self) -> i64 {
        match self.kind {
            Kind::List => self.tail - self.head,
            _ => self.len,
        }
    }

    /// [`save`](Self::save), then the command's keyspace notification
    /// (`class`, `event`) and, if the collection went with its last
    /// element, `del` after it, as Redis tells them.
    pub fn save_and_tell(
        &mut self,
        acc: &mut dyn Access,
        class: u32,
        event: &'static str,
    ) -> Result<(), Fail> {
        self.save(acc)?;
        acc.notify(class, event, &self.key);
        if self.count() <= 0 && self.kind != Kind::Stream {
            acc.notify(crate::notify::GENERIC, "del", &self.key);
        }
        Ok(())
    }

    /// Writes the metadata with a new revision; an empty collection is
    /// deleted, as Redis deletes a key whose last element goes (a stream
    /// stays, as in Redis).
    pub fn save(&mut self, acc: &mut dyn Access) -> Result<(), Fail> {
        if self.count() <= 0 && self.kind != Kind::Stream {
            acc.del(&self.key)?;
            return Ok(());
        }
        self.rev += 1;
        let mut data = Vec::with_capacity(META_LEN + self.mark.len() + self.high.len());
        let head = match self.kind {
            Kind::ZSet => self.high.len() as u64,
            _ => self.head as u64,
        };
        for w in [
            self.version,
            self.rev,
            head,
            self.tail as u64,
            self.len as u64,
        ] {
            data.extend_from_slice(&w.to_be_bytes());
        }
        data.extend_from_slice(&self.mark);
        data.extend_from_slice(&self.high);
        let value = Value {
            data,
            expires_at: self.expires_at,
            kind: self.kind,
        };
        acc.set(&self.key, &value)?;
        Ok(())
    }

    /// Where this collection's elements start in the items keyspace.
    pub fn prefix(&self) -> Vec<u8> {
        items_prefix(&self.key, self.version)
    }

    /// The items-keyspace key of element `sub`.
    pub fn item_key(&self, sub: &[u8]) -> Vec<u8> {
        let mut k = self.prefix();
        k.extend_from_slice(sub);
        k
    }

    /// Elements whose sub-keys are in `from..to` (`None`: to the end),
    /// ascending, at most `limit`, as (sub-key, value).
    pub fn items(
        &self,
        acc: &mut dyn Access,
        from: &[u8],
        to: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<Item>, Fail> {
        let (start, end, strip) = self.item_range(from, to);
        Ok(acc.items(&start, &end, limit, strip)?)
    }

    /// The values of [`items`](Self::items), in one buffer.
    pub fn values(
        &self,
        acc: &mut dyn Access,
        from: &[u8],
        to: Option<&[u8]>,
        limit: usize,
    ) -> Result<crate::resp::Bulks, Fail> {
        let (start, end, _) = self.item_range(from, to);
        Ok(acc.values(&start, &end, limit)?)
    }

    /// [`items`](Self::items) descending from the top of the range.
    pub fn items_rev(
        &self,
        acc: &mut dyn Access,
        from: &[u8],
        to: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<Item>, Fail> {
        let (start, end, strip) = self.item_range(from, to);
        Ok(acc.items_rev(&start, &end, limit, strip)?)
    }

    /// The items-keyspace keys of sub-keys `from..to` (`None`: to the
    /// end), and the length of the prefix in front of a sub-key.
    fn item_range(&self, from: &[u8], to: Option<&[u8]>) -> (Vec<u8>, Vec<u8>, usize) {
        let start = self.item_key(from);
        let end = match to {
            Some(to) => self.item_key(to),
            None => items_prefix(&self.key, self.version.saturating_add(1)),
        };
        let strip = start.len() - from.len();
        (start, end, strip)
    }

    /// Calls `f` on every element, ascending, a step at a time; stops
    /// early when `f` returns false.
    pub fn for_each(
        &self,
        acc: &mut dyn Access,
        mut f: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<(), Fail> {
        let mut from = Vec::new();
        loop {
            let batch = self.items(acc, &from, None, STEP)?;
            let done = batch.len() < STEP;
            for (sub, value) in &batch {
                if !f(sub, value) {
                    return Ok(());
                }
            }
            match batch.last() {
                Some((last, _)) if !done => {
                    from = last.clone();
                    from.push(0);
                }
                _ => return Ok(()),
            }
        }
    }

    /// Deletes every element (not the metadata, which the caller deletes
    /// or replaces in the same command): one range deletion of this
    /// version's elements, applied once the command's writes are.
    pub fn drop_items(&self, acc: &mut dyn Access) -> Result<(), Fail> {
        let end = items_prefix(&self.key, self.version.saturating_add(1));
        Ok(acc.drop_elements(&self.prefix(), &end)?)
    }
}

/// The items-keyspace prefix of the elements of version `version` of the
/// collection at `key`.
pub(super) fn items_prefix(key: &[u8], version: u64) -> Vec<u8> {
    let mut p = Vec::with_capacity(4 + key.len() + 8);
    p.extend_from_slice(&(key.len() as u32).to_be_bytes());
    p.extend_from_slice(key);
    p.extend_from_slice(&version.to_be_bytes());
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zset_meta(head: u64, marks: &[u8]) -> Value {
        let mut data = Vec::new();
        for w in [7u64, 3, head, 0, 2] {
            data.extend_from_slice(&w.to_be_bytes());
        }
        data.extend_from_slice(marks);
        Value {
            data,
            expires_at: 0,
            kind: Kind::ZSet,
        }
    }

    fn decoded(v: &Value) -> Coll {
        Coll::decode(b"k", v).unwrap_or_else(|_| panic!("does not decode"))
    }

    #[test]
    fn a_sorted_sets_marks_decode_in_both_layouts() {
        // Saved before the high mark: every trailing byte is the low mark.
        let old = decoded(&zset_meta(0, b"low"));
        assert_eq!(
            (old.mark.as_slice(), old.high.as_slice()),
            (&b"low"[..], &b""[..])
        );
        // The high mark's length in the `head` word splits them.
        let new = decoded(&zset_meta(2, b"lowhi"));
        assert_eq!(
            (new.mark.as_slice(), new.high.as_slice()),
            (&b"low"[..], &b"hi"[..])
        );
        assert_eq!((new.head, new.version, new.len), (0, 7, 2));
        assert!(Coll::decode(b"z", &zset_meta(6, b"lowhi")).is_err());
        // A list keeps its `head`.
        let mut list = zset_meta(5, b"");
        list.kind = Kind::List;
        assert_eq!(decoded(&list).head, 5);
    }
}
