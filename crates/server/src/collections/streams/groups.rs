//! Consumer groups' state. The commands: `XGROUP` and `XACK` in
//! `xgroup.rs`, reading through a group in `read.rs`, `XPENDING` and the
//! claims in `claim.rs`.
//!
//! A group lives among its stream's elements (the entries are under `e`):
//! - `g` + name: the last ID delivered to it;
//! - `p` + the group's name (length first) + entry ID: a pending entry
//!   (delivered, not acknowledged): its last delivery time, its delivery
//!   count and its consumer;
//! - `k` + the group's name (length first) + consumer: a consumer and the
//!   last time it was seen.
//!
//! So `DEL`, `RENAME`, `COPY` and expiry take the groups with the stream,
//! a group's pending entries are one range in ID order, and its consumers
//! one range in name order (Redis's orders).

use super::id::StreamId;
use super::stream::Stream;
use crate::access::Access;
use crate::commands::{fail, Fail};
use crate::notify::STREAM;
use crate::store::now_ms;

/// A pending entry of a group.
#[derive(Clone, Debug, PartialEq)]
pub struct Pending {
    pub id: StreamId,
    pub delivered_at: u64,
    pub count: u64,
    pub consumer: Vec<u8>,
}

/// A group's element sub-key prefix for `kind` (`p` or `k`).
fn scoped(kind: u8, group: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(5 + group.len() + 16);
    k.push(kind);
    k.extend_from_slice(&(group.len() as u32).to_be_bytes());
    k.extend_from_slice(group);
    k
}

fn group_key(group: &[u8]) -> Vec<u8> {
    [&b"g"[..], group].concat()
}

fn pending_key(group: &[u8], id: StreamId) -> Vec<u8> {
    let mut k = scoped(b'p', group);
    k.extend_from_slice(&id.sub_key()[1..]);
    k
}

pub(super) fn consumer_key(group: &[u8], consumer: &[u8]) -> Vec<u8> {
    [scoped(b'k', group), consumer.to_vec()].concat()
}

/// The end (exclusive) of the range of sub-keys starting with `prefix`.
fn range_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0xff; prefix.len() + 1]
}

fn u64_at(v: &[u8], i: usize) -> u64 {
    v.get(i..i + 8)
        .map_or(0, |w| u64::from_be_bytes(w.try_into().unwrap_or_default()))
}

/// A group's position: the last ID delivered to it and Redis 7's logical
/// read counter (`entries_read`: how many of the stream's entries ever
/// added lie at or before that ID, `None` when it cannot be known; see
/// `counters.rs`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Group {
    pub last: StreamId,
    pub entries_read: Option<u64>,
}

impl Group {
    /// Stored as the last ID (two words) then the counter, `u64::MAX` for
    /// none. A group written before the counter existed has none.
    fn decode(v: &[u8]) -> Group {
        let read = u64_at(v, 16);
        Group {
            last: StreamId {
                ms: u64_at(v, 0),
                seq: u64_at(v, 8),
            },
            entries_read: (v.len() >= 24 && read != u64::MAX).then_some(read),
        }
    }

    fn encode(&self) -> Vec<u8> {
        let read = self.entries_read.unwrap_or(u64::MAX);
        [self.last.ms, self.last.seq, read]
            .iter()
            .flat_map(|w| w.to_be_bytes())
            .collect()
    }
}

impl Stream {
    /// Group `group`'s last delivered ID, `None` if there is no such group.
    pub fn group_last(&self, acc: &mut dyn Access, group: &[u8]) -> Result<Option<StreamId>, Fail> {
        Ok(self.group(acc, group)?.map(|g| g.last))
    }

    /// Group `group`'s position, `None` if there is no such group.
    pub fn group(&self, acc: &mut dyn Access, group: &[u8]) -> Result<Option<Group>, Fail> {
        let v = acc.item(&self.coll.item_key(&group_key(group)))?;
        Ok(v.map(|v| Group::decode(&v)))
    }

    pub fn set_group(&self, acc: &mut dyn Access, group: &[u8], g: &Group) -> Result<(), Fail> {
        Ok(acc.put_item(&self.coll.item_key(&group_key(group)), &g.encode())?)
    }

    /// Every group, in name order (Redis's).
    pub fn groups(&self, acc: &mut dyn Access) -> Result<Vec<(Vec<u8>, Group)>, Fail> {
        let mut out = Vec::new();
        let mut from = b"g".to_vec();
        loop {
            let batch = self.coll.items(acc, &from, Some(b"h"), 1024)?;
            let done = batch.len() < 1024;
            for (sub, v) in &batch {
                out.push((sub[1..].to_vec(), Group::decode(v)));
            }
            match batch.last() {
                Some((last, _)) if !done => from = [&last[..], &[0]].concat(),
                _ => return Ok(out),
            }
        }
    }

    pub fn pending(
        &self,
        acc: &mut dyn Access,
        group: &[u8],
        id: StreamId,
    ) -> Result<Option<Pending>, Fail> {
        let v = acc.item(&self.coll.item_key(&pending_key(group, id)))?;
        Ok(v.map(|v| Pending {
            id,
            delivered_at: u64_at(&v, 0),
            count: u64_at(&v, 8),
            consumer: v.get(16..).unwrap_or_default().to_vec(),
        }))
    }

    pub fn put_pending(&self, acc: &mut dyn Access, group: &[u8], p: &Pending) -> Result<(), Fail> {
        let v = [
            &p.delivered_at.to_be_bytes()[..],
            &p.count.to_be_bytes(),
            &p.consumer,
        ]
        .concat();
        Ok(acc.put_item(&self.coll.item_key(&pending_key(group, p.id)), &v)?)
    }

    pub fn del_pending(
        &self,
        acc: &mut dyn Access,
        group: &[u8],
        id: StreamId,
    ) -> Result<(), Fail> {
        Ok(acc.del_item(&self.coll.item_key(&pending_key(group, id)))?)
    }

    /// Up to `limit` pending entries of `group` from `from` to `to`
    /// (inclusive), in ID order.
    pub fn pending_range(
        &self,
        acc: &mut dyn Access,
        group: &[u8],
        from: StreamId,
        to: StreamId,
        limit: usize,
    ) -> Result<Vec<Pending>, Fail> {
        if from > to || limit == 0 {
            return Ok(Vec::new());
        }
        let end = match to.next() {
            Some(next) => pending_key(group, next),
            None => range_end(&scoped(b'p', group)),
        };
        let items = self
            .coll
            .items(acc, &pending_key(group, from), Some(&end), limit)?;
        let skip = scoped(b'p', group).len();
        items
            .into_iter()
            .map(|(sub, v)| {
                let raw = sub
                    .get(skip..)
                    .ok_or_else(|| fail("ERR corrupt stream: a bad pending key"))?;
                Ok(Pending {
                    id: StreamId::of_sub_key(&[&b"e"[..], raw].concat())?,
                    delivered_at: u64_at(&v, 0),
                    count: u64_at(&v, 8),
                    consumer: v.get(16..).unwrap_or_default().to_vec(),
                })
            })
            .collect()
    }

    /// Every pending entry of `group` (walked in steps).
    pub fn all_pending(&self, acc: &mut dyn Access, group: &[u8]) -> Result<Vec<Pending>, Fail> {
        self.all_pending_from(acc, group, StreamId::default())
    }

    /// Every pending entry of `group` from `from` on.
    pub fn all_pending_from(
        &self,
        acc: &mut dyn Access,
        group: &[u8],
        mut from: StreamId,
    ) -> Result<Vec<Pending>, Fail> {
        let mut out: Vec<Pending> = Vec::new();
        loop {
            let batch = self.pending_range(acc, group, from, super::id::MAX, 1024)?;
            let done = batch.len() < 1024;
            out.extend(batch);
            match out.last().and_then(|p| p.id.next()) {
                Some(next) if !done => from = next,
                _ => return Ok(out),
            }
        }
    }

    /// The consumers of `group`, in name order, with when each was seen.
    pub fn consumers(
        &self,
        acc: &mut dyn Access,
        group: &[u8],
    ) -> Result<Vec<(Vec<u8>, u64)>, Fail> {
        let prefix = scoped(b'k', group);
        let mut out = Vec::new();
        let mut from = prefix.clone();
        loop {
            let batch = self
                .coll
                .items(acc, &from, Some(&range_end(&prefix)), 1024)?;
            let done = batch.len() < 1024;
            for (sub, v) in &batch {
                out.push((sub[prefix.len()..].to_vec(), u64_at(v, 0)));
            }
            match batch.last() {
                Some((last, _)) if !done => from = [&last[..], &[0]].concat(),
                _ => return Ok(out),
            }
        }
    }

    pub fn has_consumer(
        &self,
        acc: &mut dyn Access,
        group: &[u8],
        consumer: &[u8],
    ) -> Result<bool, Fail> {
        Ok(acc
            .item(&self.coll.item_key(&consumer_key(group, consumer)))?
            .is_some())
    }

    /// Records `consumer` as seen now (creating it); true if it is new.
    pub fn touch_consumer(
        &self,
        acc: &mut dyn Access,
        group: &[u8],
        consumer: &[u8],
    ) -> Result<bool, Fail> {
        let new = !self.has_consumer(acc, group, consumer)?;
        acc.put_item(
            &self.coll.item_key(&consumer_key(group, consumer)),
            &now_ms().to_be_bytes(),
        )?;
        if new {
            acc.notify(STREAM, "xgroup-createconsumer", &self.coll.key);
        }
        Ok(new)
    }

    /// Deletes a group and everything it holds.
    pub(super) fn destroy_group(&self, acc: &mut dyn Access, group: &[u8]) -> Result<(), Fail> {
        for p in self.all_pending(acc, group)? {
            self.del_pending(acc, group, p.id)?;
        }
        for (c, _) in self.consumers(acc, group)? {
            acc.del_item(&self.coll.item_key(&consumer_key(group, &c)))?;
        }
        Ok(acc.del_item(&self.coll.item_key(&group_key(group)))?)
    }
}

/// Redis's error for a missing stream or group.
pub fn no_group(key: &[u8], group: &[u8], suffix: &str) -> Fail {
    fail(&format!(
        "NOGROUP No such key '{}' or consumer group '{}'{suffix}",
        String::from_utf8_lossy(key),
        String::from_utf8_lossy(group)
    ))
}

/// The stream at `key` and its group `group`'s last ID, or Redis's
/// `NOGROUP` error.
pub fn stream_and_group(
    acc: &mut dyn Access,
    key: &[u8],
    group: &[u8],
    suffix: &str,
) -> Result<(Stream, StreamId), Fail> {
    let Some(s) = Stream::load(acc, key)? else {
        return Err(no_group(key, group, suffix));
    };
    match s.group_last(acc, group)? {
        Some(last) => Ok((s, last)),
        None => Err(no_group(key, group, suffix)),
    }
}
