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
mod stream;
mod trim;
pub mod xgroup;

pub use groups::{Group, Pending};
pub use id::StreamId;
use id::MAX;
pub use stream::Stream;
use stream::{encode_fields, strict_ids};
use trim::{trim_args, trim_stream, xtrim, AddArgs};

use crate::access::Access;
use crate::commands::{fail, Fail, Outcome};
use crate::cursors::Cursors;
use crate::resp::Reply;
use crate::store::now_ms;

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
