//! The stream commands that read: XRANGE, XREVRANGE and XREAD (one
//! attempt of it; waiting with `BLOCK` is `crate::blocked`'s, as for the
//! blocking pops, which runs the attempt again when an `XADD` to one of
//! its keys commits).

use std::time::Duration;

use super::id::{parse_end, parse_strict, StreamId, MAX};
use super::{bad_id, entry_reply, Stream};
use crate::collections::wrong_type;
use crate::commands::{fail, int_arg, syntax_error, Fail, Outcome};
use crate::resp::Reply;
use crate::store::{Access, Kind};

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
}

fn read_args(a: &[Vec<u8>]) -> Result<ReadArgs<'_>, Fail> {
    let mut r = ReadArgs {
        count: 0,
        block: None,
        blocks: false,
        keys: &[],
        ids: &[],
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
                    return Err(fail("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified."));
                }
                let (keys, ids) = rest.split_at(rest.len() / 2);
                (r.keys, r.ids) = (keys, ids);
                return Ok(r);
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

/// True if request `a` is an `XREAD` that may wait (`BLOCK` given).
pub fn blocks(a: &[Vec<u8>]) -> bool {
    read_args(a).is_ok_and(|r| r.blocks)
}

/// How long `XREAD` request `a` may wait (`None`: for ever), if it may.
pub fn wait_of(a: &[Vec<u8>]) -> Result<Option<Duration>, Fail> {
    Ok(read_args(a)?.block)
}

/// One attempt of `XREAD`: for each stream holding entries after its ID,
/// `[key, entries]` (a map in RESP3); a null array if none has any.
pub fn xread(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let r = read_args(a)?;
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
