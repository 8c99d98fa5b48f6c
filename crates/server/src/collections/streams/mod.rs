//! Streams: XADD XLEN XDEL (here), XTRIM (`trim.rs`), XRANGE XREVRANGE
//! XREAD XREADGROUP (with `BLOCK`; `read.rs`), consumer groups (their
//! state in `groups.rs`): XGROUP XACK (`xgroup.rs`), XPENDING XCLAIM
//! XAUTOCLAIM (`claim.rs`), their read counters (`counters.rs`); XINFO
//! and XSETID (`info.rs`); a stream whole, for `DUMP` and `RESTORE`
//! (`persist.rs`).
//!
//! A stream is a collection (`collections`): its metadata holds the last
//! ID given out, the highest ID deleted, the count of entries ever added
//! and a low mark (no entry lies below it, so that trimming the head, the
//! capped-log pattern, never walks over the deletion markers of what it
//! trimmed before); each entry is one element under `e` + its ID (both
//! numbers big endian, so element order is ID order), holding its fields
//! and values. As in Redis, a stream stays when its last entry goes
//! (`XDEL`, `XTRIM`): it keeps its last ID, so later IDs still grow.
//!
//! Trimming with `~` removes whole nodes of `stream-node-max-entries`
//! entries, as Redis's radix tree does (`trim.rs` says how slsm reckons
//! them without keeping nodes).

mod claim;
mod counters;
mod groups;
mod id;
pub mod info;
pub mod persist;
pub mod read;
mod trim;
pub mod xgroup;

pub use groups::{Group, Pending};
pub use id::StreamId;
use id::{invalid_id, parse_strict, MAX};
use trim::{trim_args, trim_stream, xtrim, AddArgs};

use super::Coll;
use crate::access::Access;
use crate::commands::{fail, Fail, Outcome};
use crate::cursors::Cursors;
use crate::resp::Reply;
use crate::store::{now_ms, Kind};

pub fn run(name: &str, a: &[Vec<u8>], acc: &mut dyn Access, _: &Cursors) -> Outcome {
    match name {
        "xadd" => xadd(a, acc),
        "xlen" => Ok(Reply::Int(
            Stream::load(acc, &a[1])?.map_or(0, |s| s.coll.len),
        )),
        "xdel" => xdel(a, acc),
        "xtrim" => xtrim(a, acc),
        "xrange" => read::xrange(a, acc, false),
        "xrevrange" => read::xrange(a, acc, true),
        "xgroup" => xgroup::xgroup(a, acc),
        "xack" => xgroup::xack(a, acc),
        "xpending" => claim::xpending(a, acc),
        "xclaim" => claim::xclaim(a, acc),
        "xautoclaim" => claim::xautoclaim(a, acc),
        "xinfo" => info::xinfo(a, acc),
        "xsetid" => info::xsetid(a, acc),
        _ => read::xread(a, acc),
    }
}

/// A stream's metadata (see the module docs).
pub struct Stream {
    pub coll: Coll,
    pub last: StreamId,
    pub(super) max_deleted: StreamId,
    pub(super) added: u64,
    /// No entry's ID is below this.
    pub(super) low: StreamId,
}

impl Stream {
    pub fn load(acc: &mut dyn Access, key: &[u8]) -> Result<Option<Stream>, Fail> {
        Coll::load(acc, key, Kind::Stream)?
            .map(Stream::decode)
            .transpose()
    }

    pub(super) fn load_or_new(acc: &mut dyn Access, key: &[u8]) -> Result<Stream, Fail> {
        Stream::decode(Coll::load_or_new(acc, key, Kind::Stream)?)
    }

    fn decode(coll: Coll) -> Result<Stream, Fail> {
        let m = &coll.mark;
        if !m.is_empty() && m.len() != 56 {
            return Err(fail("ERR corrupt stream metadata"));
        }
        let word = |i: usize| {
            m.get(i * 8..i * 8 + 8)
                .map_or(0, |w| u64::from_be_bytes(w.try_into().unwrap_or_default()))
        };
        let id = |i: usize| StreamId {
            ms: word(i),
            seq: word(i + 1),
        };
        Ok(Stream {
            last: id(0),
            max_deleted: id(2),
            added: word(4),
            low: id(5),
            coll,
        })
    }

    pub(super) fn save(&mut self, acc: &mut dyn Access) -> Result<(), Fail> {
        let mut m = Vec::with_capacity(56);
        for w in [
            self.last.ms,
            self.last.seq,
            self.max_deleted.ms,
            self.max_deleted.seq,
            self.added,
            self.low.ms,
            self.low.seq,
        ] {
            m.extend_from_slice(&w.to_be_bytes());
        }
        self.coll.mark = m;
        self.coll.save(acc)
    }

    /// [`save`](Self::save), then the command's keyspace notification.
    pub(super) fn save_and_tell(
        &mut self,
        acc: &mut dyn Access,
        event: &'static str,
    ) -> Result<(), Fail> {
        self.save(acc)?;
        acc.notify(crate::notify::STREAM, event, &self.coll.key);
        Ok(())
    }

    /// Up to `limit` entries from `from` on (`low` at the least) to `to`
    /// (inclusive), ascending, as (ID, stored fields).
    pub fn entries(
        &self,
        acc: &mut dyn Access,
        from: StreamId,
        to: StreamId,
        limit: usize,
    ) -> Result<Vec<(StreamId, Vec<u8>)>, Fail> {
        let from = from.max(self.low);
        if from > to {
            return Ok(Vec::new());
        }
        let end = to.next().map(|id| id.sub_key().to_vec());
        let end = end.unwrap_or_else(|| b"f".to_vec());
        let items = self.coll.items(acc, &from.sub_key(), Some(&end), limit)?;
        items
            .into_iter()
            .map(|(sub, v)| Ok((StreamId::of_sub_key(&sub)?, v)))
            .collect()
    }

    /// No entry's ID is below this.
    pub fn low_mark(&self) -> StreamId {
        self.low
    }

    /// Deletes entry `id` (which exists).
    pub(super) fn remove(&mut self, acc: &mut dyn Access, id: StreamId) -> Result<(), Fail> {
        acc.del_item(&self.coll.item_key(&id.sub_key()))?;
        self.coll.len -= 1;
        Ok(())
    }
}

/// An entry's fields and values as stored: each a 32-bit big-endian
/// length, then its bytes.
fn encode_fields(pairs: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(pairs.iter().map(|p| p.len() + 4).sum());
    for p in pairs {
        out.extend_from_slice(&(p.len() as u32).to_be_bytes());
        out.extend_from_slice(p);
    }
    out
}

/// An entry's fields and values, alternating, from their stored form.
pub(super) fn decode_fields(stored: &[u8]) -> Result<Vec<Vec<u8>>, Fail> {
    let mut fields = Vec::new();
    let mut rest = stored;
    while !rest.is_empty() {
        let len = rest
            .get(..4)
            .map(|l| u32::from_be_bytes(l.try_into().unwrap_or_default()) as usize);
        match len.and_then(|len| rest.get(4..4 + len)) {
            Some(bytes) => {
                fields.push(bytes.to_vec());
                rest = &rest[4 + bytes.len()..];
            }
            None => return Err(fail("ERR corrupt stream: a bad entry")),
        }
    }
    Ok(fields)
}

/// The reply for one entry: `[id, [field, value, ...]]`.
pub fn entry_reply(id: StreamId, stored: &[u8]) -> Result<Reply, Fail> {
    let fields = decode_fields(stored)?
        .into_iter()
        .map(Reply::Bulk)
        .collect();
    Ok(Reply::Array(vec![
        Reply::Bulk(id.to_bytes()),
        Reply::Array(fields),
    ]))
}

fn xadd(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let AddArgs {
        trim,
        no_mkstream,
        id: given,
        at,
    } = trim_args(a, true)?;
    let fields = a.get(at + 1..).unwrap_or_default();
    if fields.len() < 2 || fields.len() % 2 == 1 {
        return Err(fail("ERR wrong number of arguments for 'xadd' command"));
    }
    if let Some(g) = &given {
        if g.seq_given && g.id == StreamId::default() {
            return Err(fail(
                "ERR The ID specified in XADD must be greater than 0-0",
            ));
        }
    }
    if no_mkstream && Stream::load(acc, &a[1])?.is_none() {
        return Ok(Reply::Null);
    }
    let mut s = Stream::load_or_new(acc, &a[1])?;
    if s.last == MAX {
        return Err(fail(
            "ERR The stream has exhausted the last possible ID, unable to add more items",
        ));
    }
    let id = match given {
        Some(g) if g.seq_given => g.id,
        Some(g) if g.id.ms == s.last.ms => match s.last.seq.checked_add(1) {
            Some(seq) => StreamId { ms: g.id.ms, seq },
            None => return Err(too_small()),
        },
        Some(g) => g.id,
        None => match now_ms() {
            ms if ms > s.last.ms => StreamId { ms, seq: 0 },
            _ => s.last.next().ok_or_else(too_small)?,
        },
    };
    if id <= s.last {
        return Err(too_small());
    }
    acc.put_item(&s.coll.item_key(&id.sub_key()), &encode_fields(fields))?;
    s.coll.len += 1;
    s.added += 1;
    s.last = id;
    let trimmed = trim_stream(acc, &mut s, &trim)?;
    s.save_and_tell(acc, "xadd")?;
    if trimmed > 0 {
        acc.notify(crate::notify::STREAM, "xtrim", &a[1]);
    }
    Ok(Reply::Bulk(id.to_bytes()))
}

fn too_small() -> Fail {
    fail("ERR The ID specified in XADD is equal or smaller than the target stream top item")
}

/// Concrete IDs, all checked before any is used (`XDEL`, `XACK`: all or
/// nothing).
pub(super) fn strict_ids(args: &[Vec<u8>]) -> Result<Vec<StreamId>, Fail> {
    args.iter()
        .map(|arg| Ok(parse_strict(arg, 0, false)?.id))
        .collect()
}

fn xdel(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    // Redis reads the key first, then checks every ID before deleting.
    let Some(mut s) = Stream::load(acc, &a[1])? else {
        return Ok(Reply::Int(0));
    };
    let ids = strict_ids(&a[2..])?;
    let mut removed = 0;
    for id in ids {
        if id < s.low || acc.item(&s.coll.item_key(&id.sub_key()))?.is_none() {
            continue;
        }
        // The oldest entry going moves the low mark past it (the pattern
        // of a consumer deleting what it handled).
        let oldest = s
            .entries(acc, s.low, MAX, 1)?
            .first()
            .map(|(first, _)| *first);
        s.remove(acc, id)?;
        if oldest == Some(id) {
            s.low = id.next().unwrap_or(MAX);
        }
        s.max_deleted = s.max_deleted.max(id);
        removed += 1;
    }
    if removed > 0 {
        s.save_and_tell(acc, "xdel")?;
    }
    Ok(Reply::Int(removed))
}

/// The `XREAD` IDs given as `$` replaced by the stream's last ID (0-0 for
/// a missing stream), so that a client blocked on them waits for entries
/// added after it asked, however often its read is tried again.
pub fn resolve_last_ids(acc: &mut dyn Access, req: &mut [Vec<u8>]) {
    let Some(streams) = req.iter().position(|a| a.eq_ignore_ascii_case(b"streams")) else {
        return;
    };
    let n = (req.len() - streams - 1) / 2;
    for i in 0..n {
        let (key_at, id_at) = (streams + 1 + i, streams + 1 + n + i);
        if req[id_at] != b"$" {
            continue;
        }
        if let Ok(last) =
            Stream::load(acc, &req[key_at]).map(|s| s.map_or(StreamId::default(), |s| s.last))
        {
            req[id_at] = last.to_bytes();
        }
    }
}

/// An error for an ID argument (re-exported for `read.rs`).
pub(crate) fn bad_id() -> Fail {
    invalid_id()
}
