//! The stream commands that read: XRANGE, XREVRANGE and XREAD (one
//! attempt of it; waiting with `BLOCK` is `crate::blocked`'s, as for the
//! blocking pops, which runs the attempt again when an `XADD` to one of
//! its keys commits).

use std::time::Duration;

use super::counters::Counters;
use super::groups::{stream_and_group, Pending};
use super::id::{parse_end, parse_strict, StreamId, MAX};
use super::stream::{bad_id, entry_reply, Stream};
use crate::access::Access;
use crate::collections::wrong_type;
use crate::commands::{fail, int_arg, syntax_error, Fail, Outcome};
use crate::resp::Reply;
use crate::store::Kind;

/// Entries read from the engine per step.
const STEP: usize = 1024;

/// `XRANGE key start end [COUNT n]`, or `XREVRANGE key end start [COUNT
/// n]` (`rev`), in Redis 7.0's order of checks: the range, the options,
/// then the key. A `COUNT` of 0 or less answers a null array.
pub fn xrange(a: &[Vec<u8>], acc: &mut dyn Access, rev: bool) -> Outcome {
    let (start_arg, end_arg) = match rev {
        false => (&a[2], &a[3]),
        true => (&a[3], &a[2]),
    };
    let (start, exclusive) = parse_end(start_arg, 0)?;
    let start = match exclusive {
        true => start
            .next()
            .ok_or_else(|| fail("ERR invalid start ID for the interval"))?,
        false => start,
    };
    let (end, exclusive) = parse_end(end_arg, u64::MAX)?;
    let end = match exclusive {
        true => end
            .prev()
            .ok_or_else(|| fail("ERR invalid end ID for the interval"))?,
        false => end,
    };
    let mut count = None;
    let mut i = 4;
    while i < a.len() {
        match a.get(i + 1) {
            Some(n) if a[i].eq_ignore_ascii_case(b"count") => {
                count = Some(int_arg(n)?.max(0) as u64);
                i += 2;
            }
            _ => return Err(syntax_error()),
        }
    }
    let Some(s) = Stream::load(acc, &a[1])? else {
        return Ok(Reply::Array(Vec::new()));
    };
    if count == Some(0) {
        return Ok(Reply::NullArray);
    }
    let limit = count.unwrap_or(u64::MAX);
    let entries = match rev {
        false => forward(acc, &s, start, end, limit)?,
        true => backward(acc, &s, start, end, limit)?,
    };
    Ok(Reply::Array(entries))
}

/// Up to `limit` entries from `start` to `end` (inclusive), ascending.
fn forward(
    acc: &mut dyn Access,
    s: &Stream,
    mut start: StreamId,
    end: StreamId,
    limit: u64,
) -> Result<Vec<Reply>, Fail> {
    let mut out = Vec::new();
    while (out.len() as u64) < limit && start <= end {
        let want = (limit - out.len() as u64).min(STEP as u64) as usize;
        let batch = s.entries(acc, start, end, want)?;
        let full = batch.len() == want;
        for (id, stored) in &batch {
            out.push(entry_reply(*id, stored)?);
        }
        match batch.last().and_then(|(id, _)| id.next()) {
            Some(next) if full => start = next,
            _ => break,
        }
    }
    Ok(out)
}

/// Up to `limit` entries from `end` down to `start` (inclusive).
fn backward(
    acc: &mut dyn Access,
    s: &Stream,
    start: StreamId,
    mut end: StreamId,
    limit: u64,
) -> Result<Vec<Reply>, Fail> {
    let mut out = Vec::new();
    let low = start.max(s.low_mark());
    while (out.len() as u64) < limit && low <= end {
        let want = (limit - out.len() as u64).min(STEP as u64) as usize;
        let to = end.next().map(|id| id.sub_key().to_vec());
        let to = to.unwrap_or_else(|| b"f".to_vec());
        let batch = s.coll.items_rev(acc, &low.sub_key(), Some(&to), want)?;
        let full = batch.len() == want;
        let mut last = None;
        for (sub, stored) in &batch {
            let id = StreamId::of_sub_key(sub)?;
            out.push(entry_reply(id, stored)?);
            last = Some(id);
        }
        match last.and_then(StreamId::prev) {
            Some(prev) if full => end = prev,
            _ => break,
        }
    }
    Ok(out)
}

/// A parsed `XREAD [COUNT n] [BLOCK ms] STREAMS key... id...`.
struct ReadArgs<'a> {
    count: u64,
    block: Option<Duration>,
    blocks: bool,
    keys: &'a [Vec<u8>],
    ids: &'a [Vec<u8>],
    /// `XREADGROUP`'s group and consumer.
    group: Option<(&'a [u8], &'a [u8])>,
    noack: bool,
}

/// The arguments of `XREAD`, or of `XREADGROUP` (`a[0]` says which), in
/// Redis 7.0's order of checks.
fn read_args(a: &[Vec<u8>]) -> Result<ReadArgs<'_>, Fail> {
    let grouped = a[0].eq_ignore_ascii_case(b"xreadgroup");
    let mut r = ReadArgs {
        count: 0,
        block: None,
        blocks: false,
        keys: &[],
        ids: &[],
        group: None,
        noack: false,
    };
    let mut i = 1;
    while i < a.len() {
        let more = a.len() - 1 - i;
        match a[i].to_ascii_lowercase().as_slice() {
            b"block" if more > 0 => {
                r.block = block_timeout(&a[i + 1])?;
                r.blocks = true;
                i += 1;
            }
            b"count" if more > 0 => {
                r.count = int_arg(&a[i + 1])?.max(0) as u64;
                i += 1;
            }
            b"streams" if more > 0 => {
                let rest = &a[i + 1..];
                if !rest.len().is_multiple_of(2) {
                    // Redis 7.0 names XREAD and `$` for XREADGROUP too.
                    return Err(fail("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified."));
                }
                let (keys, ids) = rest.split_at(rest.len() / 2);
                (r.keys, r.ids) = (keys, ids);
                if grouped && r.group.is_none() {
                    return Err(fail("ERR Missing GROUP option for XREADGROUP"));
                }
                return Ok(r);
            }
            b"group" if grouped && more >= 2 => {
                r.group = Some((&a[i + 1], &a[i + 2]));
                i += 2;
            }
            b"noack" if grouped => r.noack = true,
            b"group" | b"noack"
                if !grouped && (more >= 2 || a[i].eq_ignore_ascii_case(b"noack")) =>
            {
                let option = String::from_utf8_lossy(&a[i]).to_ascii_uppercase();
                return Err(fail(&format!("ERR The {option} option is only supported by XREADGROUP. You called XREAD instead.")));
            }
            _ => return Err(syntax_error()),
        }
        i += 1;
    }
    Err(syntax_error())
}

/// `BLOCK`'s milliseconds as Redis reads them (0: for ever).
fn block_timeout(arg: &[u8]) -> Result<Option<Duration>, Fail> {
    let ms = int_arg(arg).map_err(|_| fail("ERR timeout is not an integer or out of range"))?;
    if ms < 0 {
        return Err(fail("ERR timeout is negative"));
    }
    if ms as u64 > i64::MAX as u64 - crate::store::now_ms() {
        return Err(fail("ERR timeout is out of range"));
    }
    Ok((ms > 0).then(|| Duration::from_millis(ms as u64)))
}

/// True if request `a` is an `XREAD` or `XREADGROUP` that may wait
/// (`BLOCK` given).
pub fn blocks(a: &[Vec<u8>]) -> bool {
    read_args(a).is_ok_and(|r| r.blocks)
}

/// How long `XREAD` or `XREADGROUP` request `a` may wait (`None`: for ever), if it may.
pub fn wait_of(a: &[Vec<u8>]) -> Result<Option<Duration>, Fail> {
    Ok(read_args(a)?.block)
}

/// One attempt of `XREAD`: for each stream holding entries after its ID,
/// `[key, entries]` (a map in RESP3); a null array if none has any.
pub fn xread(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let r = read_args(a)?;
    if let Some(group) = r.group {
        return xreadgroup(acc, &r, group);
    }
    let mut after = Vec::with_capacity(r.ids.len());
    for (key, id) in r.keys.iter().zip(r.ids) {
        let stream = match acc.get(key)? {
            Some(v) if v.kind != Kind::Stream => return Err(wrong_type()),
            _ => Stream::load(acc, key)?,
        };
        after.push(match id.as_slice() {
            b"$" => stream.map_or(StreamId::default(), |s| s.last),
            b">" => return Err(fail("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.")),
            _ => parse_strict(id, 0, false).map_err(|_| bad_id())?.id,
        });
    }
    let limit = if r.count == 0 { u64::MAX } else { r.count };
    let mut served = Vec::new();
    for (key, gt) in r.keys.iter().zip(after) {
        let (Some(s), Some(start)) = (Stream::load(acc, key)?, gt.next()) else {
            continue;
        };
        let entries = forward(acc, &s, start, MAX, limit)?;
        if !entries.is_empty() {
            served.push((Reply::Bulk(key.clone()), Reply::Array(entries)));
        }
    }
    Ok(match served.is_empty() {
        true => Reply::NullArray,
        false => Reply::Keyed(served),
    })
}

/// What a group read asks of one stream: new entries (`>`), or the
/// consumer's pending entries after an ID.
enum Want {
    New,
    History(StreamId),
}

/// One attempt of `XREADGROUP`: new entries are delivered to the consumer
/// (pending until acknowledged, unless `NOACK`) and move the group's last
/// ID; history re-delivers the consumer's pending entries (an entry
/// deleted since comes as `[id, nil]`). Streams with nothing new are left
/// out; history is always answered, empty or not.
fn xreadgroup(
    acc: &mut dyn Access,
    r: &ReadArgs<'_>,
    (group, consumer): (&[u8], &[u8]),
) -> Outcome {
    let mut wants = Vec::with_capacity(r.keys.len());
    for (key, id) in r.keys.iter().zip(r.ids) {
        if acc.get(key)?.is_some_and(|v| v.kind != Kind::Stream) {
            return Err(wrong_type());
        }
        stream_and_group(acc, key, group, " in XREADGROUP with GROUP option")?;
        wants.push(match id.as_slice() {
            b">" => Want::New,
            b"$" => return Err(fail("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.")),
            // Redis holds `>` as the last possible ID, so that ID asks
            // for new entries too.
            _ => match parse_strict(id, 0, false).map_err(|_| bad_id())?.id {
                MAX => Want::New,
                id => Want::History(id),
            },
        });
    }
    let limit = if r.count == 0 { u64::MAX } else { r.count };
    let mut served = Vec::new();
    for (key, want) in r.keys.iter().zip(wants) {
        let (mut s, last) = stream_and_group(acc, key, group, "")?;
        let entries = match want {
            Want::New => {
                let Some(start) = last.next() else { continue };
                let got = s.entries(acc, start, MAX, limit.min(1 << 20) as usize)?;
                if got.is_empty() {
                    continue;
                }
                deliver(acc, &s, group, consumer, &got, r.noack)?
            }
            Want::History(after) => history(acc, &s, group, consumer, after, limit)?,
        };
        s.touch_consumer(acc, group, consumer)?;
        s.save(acc)?;
        served.push((Reply::Bulk(key.clone()), Reply::Array(entries)));
    }
    Ok(match served.is_empty() {
        true => Reply::NullArray,
        false => Reply::Keyed(served),
    })
}

/// Delivers new entries `got` to `consumer`: the group's last ID moves to
/// the last of them, and each becomes pending for the consumer (taken from
/// another consumer that had it, after an `XGROUP SETID` back), and the
/// group's read counter counts them.
fn deliver(
    acc: &mut dyn Access,
    s: &Stream,
    group: &[u8],
    consumer: &[u8],
    got: &[(StreamId, Vec<u8>)],
    noack: bool,
) -> Result<Vec<Reply>, Fail> {
    let now = crate::store::now_ms();
    let mut out = Vec::with_capacity(got.len());
    let mut counters = Counters::of(s);
    let mut g = s.group(acc, group)?.unwrap_or_default();
    for (id, stored) in got {
        if *id > g.last {
            counters.delivered(acc, &mut g, *id)?;
        }
        if !noack {
            let p = Pending {
                id: *id,
                delivered_at: now,
                count: 1,
                consumer: consumer.to_vec(),
            };
            s.put_pending(acc, group, &p)?;
        }
        out.push(entry_reply(*id, stored)?);
    }
    if !got.is_empty() {
        s.set_group(acc, group, &g)?;
    }
    Ok(out)
}

/// The consumer's pending entries after `after`, each delivered again.
fn history(
    acc: &mut dyn Access,
    s: &Stream,
    group: &[u8],
    consumer: &[u8],
    after: StreamId,
    limit: u64,
) -> Result<Vec<Reply>, Fail> {
    let Some(from) = after.next() else {
        return Ok(Vec::new());
    };
    let now = crate::store::now_ms();
    let mut out = Vec::new();
    for mut p in s.all_pending_from(acc, group, from)? {
        if out.len() as u64 >= limit {
            break;
        }
        if p.consumer != consumer {
            continue;
        }
        match s.entries(acc, p.id, p.id, 1)?.pop() {
            Some((id, stored)) => {
                out.push(entry_reply(id, &stored)?);
                p.delivered_at = now;
                p.count += 1;
                s.put_pending(acc, group, &p)?;
            }
            None => out.push(Reply::Array(vec![
                Reply::Bulk(p.id.to_bytes()),
                Reply::NullArray,
            ])),
        }
    }
    Ok(out)
}
