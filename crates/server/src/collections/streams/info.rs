//! `XINFO` (`STREAM [FULL [COUNT n]]`, `GROUPS`, `CONSUMERS`, `HELP`) and
//! `XSETID`, as Redis 7.0 answers them.
//!
//! `radix-tree-keys` and `radix-tree-nodes` describe Redis's memory layout
//! (listpacks of up to 100 entries in a radix tree), which this server
//! does not have: they are reported as that layout would be for the
//! stream's entries packed densely (one key per 100 entries), the same as
//! Redis's for a stream that never lost entries from its middle and whose
//! entries are small. Tools read them as a size hint, nothing more.

use std::collections::HashMap;

use super::counters::Counters;
use super::groups::{Group, Pending};
use super::id::{parse_strict, StreamId, MAX};
use super::stream::{entry_reply, Stream};
use crate::access::Access;
use crate::commands::{fail, int_arg, syntax_error, Fail, Outcome};
use crate::resp::Reply;
use crate::store::now_ms;

const XINFO_HELP: &[&str] = &[
    "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CONSUMERS <key> <groupname>",
    "    Show consumers of <groupname>.",
    "GROUPS <key>",
    "    Show the stream consumer groups.",
    "STREAM <key> [FULL [COUNT <count>]",
    "    Show information about the stream.",
    "HELP",
    "    Prints this help.",
];

fn subcommand_error(a: &[Vec<u8>]) -> Fail {
    crate::registry::subcommand_error("XINFO", a)
}

pub fn xinfo(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    // A script's `redis.call` reaches here without the shape check.
    crate::registry::check_subcommand("xinfo", a)?;
    let sub = a[1].to_ascii_lowercase();
    if sub == b"help" {
        let lines = XINFO_HELP.iter().map(|l| Reply::Simple(l.to_string()));
        return Ok(Reply::Array(lines.collect()));
    }
    let Some(s) = Stream::load(acc, &a[2])? else {
        return Err(fail("ERR no such key"));
    };
    match sub.as_slice() {
        b"consumers" => consumers(acc, &s, &a[2], &a[3]),
        b"groups" => groups(acc, &s),
        _ => stream(acc, &s, a),
    }
}

fn field(name: &str, value: Reply) -> (Reply, Reply) {
    (Reply::bulk(name), value)
}

fn id_reply(id: StreamId) -> Reply {
    Reply::Bulk(id.to_bytes())
}

fn optional(n: Option<i64>) -> Reply {
    n.map_or(Reply::Null, Reply::Int)
}

/// `XINFO CONSUMERS key group`: each consumer's name, pending count and
/// idle time, in name order.
fn consumers(acc: &mut dyn Access, s: &Stream, key: &[u8], group: &[u8]) -> Outcome {
    if s.group(acc, group)?.is_none() {
        return Err(fail(&format!(
            "NOGROUP No such consumer group '{}' for key name '{}'",
            String::from_utf8_lossy(group),
            String::from_utf8_lossy(key)
        )));
    }
    let pending = s.all_pending(acc, group)?;
    let counts = per_consumer(&pending);
    let now = now_ms();
    let out = s.consumers(acc, group)?.into_iter().map(|(name, seen)| {
        let count = counts.get(&name).map_or(0, Vec::len);
        Reply::Map(vec![
            field("name", Reply::Bulk(name)),
            field("pending", Reply::Int(count as i64)),
            field("idle", Reply::Int(now.saturating_sub(seen) as i64)),
        ])
    });
    Ok(Reply::Array(out.collect()))
}

/// `XINFO GROUPS key`: each group's name, consumers, pending count, last
/// delivered ID, read counter and lag, in name order.
fn groups(acc: &mut dyn Access, s: &Stream) -> Outcome {
    let mut counters = Counters::of(s);
    let mut out = Vec::new();
    for (name, g) in s.groups(acc)? {
        let consumers = s.consumers(acc, &name)?.len();
        let pending = s.all_pending(acc, &name)?.len();
        let lag = counters.lag(acc, &g)?;
        out.push(Reply::Map(vec![
            field("name", Reply::Bulk(name)),
            field("consumers", Reply::Int(consumers as i64)),
            field("pending", Reply::Int(pending as i64)),
            field("last-delivered-id", id_reply(g.last)),
            field("entries-read", optional(g.entries_read.map(|r| r as i64))),
            field("lag", optional(lag)),
        ]));
    }
    Ok(Reply::Array(out))
}

/// `XINFO STREAM key [FULL [COUNT n]]`.
fn stream(acc: &mut dyn Access, s: &Stream, a: &[Vec<u8>]) -> Outcome {
    let opts = &a[3..];
    let full = match opts {
        [] => None,
        [f] if f.eq_ignore_ascii_case(b"full") => Some(10),
        [f, c, n] if f.eq_ignore_ascii_case(b"full") && c.eq_ignore_ascii_case(b"count") => {
            // A negative count is the default, as in Redis; 0 is all.
            Some(u64::try_from(int_arg(n)?).unwrap_or(10))
        }
        _ => return Err(subcommand_error(a)),
    };
    let len = s.coll.len;
    let tree_keys = (len + 99) / 100;
    let mut counters = Counters::of(s);
    let mut fields = vec![
        field("length", Reply::Int(len)),
        field("radix-tree-keys", Reply::Int(tree_keys)),
        field("radix-tree-nodes", Reply::Int(tree_keys + 1)),
        field("last-generated-id", id_reply(s.last)),
        field("max-deleted-entry-id", id_reply(s.max_deleted)),
        field("entries-added", Reply::Int(s.added as i64)),
        field("recorded-first-entry-id", id_reply(counters.first(acc)?)),
    ];
    let Some(count) = full else {
        let first = s.entries(acc, s.low, MAX, 1)?.pop();
        let last = last_entry(acc, s)?;
        let entry = |e: Option<(StreamId, Vec<u8>)>| match e {
            Some((id, stored)) => entry_reply(id, &stored),
            None => Ok(Reply::Null),
        };
        fields.push(field("groups", Reply::Int(s.groups(acc)?.len() as i64)));
        fields.push(field("first-entry", entry(first)?));
        fields.push(field("last-entry", entry(last)?));
        return Ok(Reply::Map(fields));
    };
    let limit = if count == 0 {
        usize::MAX
    } else {
        count as usize
    };
    let entries = s.entries(acc, s.low, MAX, limit.min(1 << 20))?;
    let entries: Result<Vec<Reply>, Fail> = entries
        .into_iter()
        .map(|(id, stored)| entry_reply(id, &stored))
        .collect();
    fields.push(field("entries", Reply::Array(entries?)));
    let mut groups = Vec::new();
    for (name, g) in s.groups(acc)? {
        groups.push(full_group(acc, s, &mut counters, (name, g), limit)?);
    }
    fields.push(field("groups", Reply::Array(groups)));
    Ok(Reply::Map(fields))
}

/// One group in `XINFO STREAM ... FULL`: its pending entries and each
/// consumer's, `limit` of each at most.
fn full_group(
    acc: &mut dyn Access,
    s: &Stream,
    counters: &mut Counters<'_>,
    (name, g): (Vec<u8>, Group),
    limit: usize,
) -> Outcome {
    let pending = s.all_pending(acc, &name)?;
    let listed = pending.iter().take(limit).map(|p| {
        Reply::Array(vec![
            id_reply(p.id),
            Reply::Bulk(p.consumer.clone()),
            Reply::Int(p.delivered_at as i64),
            Reply::Int(p.count as i64),
        ])
    });
    let listed = Reply::Array(listed.collect());
    let mut consumers = Vec::new();
    let mut by_consumer = per_consumer(&pending);
    for (consumer, seen) in s.consumers(acc, &name)? {
        let own = by_consumer.remove(&consumer).unwrap_or_default();
        let own_listed = own.iter().take(limit).map(|p| {
            Reply::Array(vec![
                id_reply(p.id),
                Reply::Int(p.delivered_at as i64),
                Reply::Int(p.count as i64),
            ])
        });
        consumers.push(Reply::Map(vec![
            field("name", Reply::Bulk(consumer)),
            field("seen-time", Reply::Int(seen as i64)),
            field("pel-count", Reply::Int(own.len() as i64)),
            field("pending", Reply::Array(own_listed.collect())),
        ]));
    }
    let lag = counters.lag(acc, &g)?;
    Ok(Reply::Map(vec![
        field("name", Reply::Bulk(name)),
        field("last-delivered-id", id_reply(g.last)),
        field("entries-read", optional(g.entries_read.map(|r| r as i64))),
        field("lag", optional(lag)),
        field("pel-count", Reply::Int(pending.len() as i64)),
        field("pending", listed),
        field("consumers", Reply::Array(consumers)),
    ]))
}

/// A group's pending entries by consumer, each in ID order (one pass, not
/// one per consumer).
fn per_consumer(pending: &[Pending]) -> HashMap<Vec<u8>, Vec<&Pending>> {
    let mut out: HashMap<Vec<u8>, Vec<&Pending>> = HashMap::new();
    for p in pending {
        out.entry(p.consumer.clone()).or_default().push(p);
    }
    out
}

/// The stream's last entry, if it has one.
fn last_entry(acc: &mut dyn Access, s: &Stream) -> Result<Option<(StreamId, Vec<u8>)>, Fail> {
    let items = s.coll.items_rev(acc, &s.low.sub_key(), Some(b"f"), 1)?;
    match items.into_iter().next() {
        Some((sub, stored)) => Ok(Some((StreamId::of_sub_key(&sub)?, stored))),
        None => Ok(None),
    }
}

/// `XSETID key last-id [ENTRIESADDED n] [MAXDELETEDID id]`: sets the
/// stream's last ID and counters, in Redis 7.0's order of checks.
pub fn xsetid(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let id = parse_strict(&a[2], 0, false)?.id;
    let (mut added, mut max_deleted) = (None, StreamId::default());
    let mut i = 3;
    while i < a.len() {
        let more = i + 1 < a.len();
        if a[i].eq_ignore_ascii_case(b"entriesadded") && more {
            let n = int_arg(&a[i + 1])?;
            if n < 0 {
                return Err(fail("ERR entries_added must be positive"));
            }
            added = Some(n as u64);
        } else if a[i].eq_ignore_ascii_case(b"maxdeletedid") && more {
            max_deleted = parse_strict(&a[i + 1], 0, false)?.id;
            if id < max_deleted {
                return Err(fail("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id"));
            }
        } else {
            return Err(syntax_error());
        }
        i += 2;
    }
    let Some(mut s) = Stream::load(acc, &a[1])? else {
        return Err(fail("ERR no such key"));
    };
    if s.coll.len > 0 {
        let top = last_entry(acc, &s)?.map_or(StreamId::default(), |(top, _)| top);
        if id < top {
            return Err(fail(
                "ERR The ID specified in XSETID is smaller than the target stream top item",
            ));
        }
        if added.is_some_and(|n| (s.coll.len as u64) > n) {
            return Err(fail("ERR The entries_added specified in XSETID is smaller than the target stream length"));
        }
    } else {
        // No entry lies below any ID now; the next is above `id`.
        s.low = s.low.min(id);
    }
    s.last = id;
    if let Some(n) = added {
        s.added = n;
    }
    if max_deleted != StreamId::default() {
        s.max_deleted = max_deleted;
    }
    s.save_and_tell(acc, "xsetid")?;
    Ok(Reply::ok())
}
