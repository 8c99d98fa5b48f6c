//! A group's pending entries: `XPENDING` (the summary, or the entries with
//! their idle times and delivery counts), and moving them to another
//! consumer: `XCLAIM`, `XAUTOCLAIM`. Redis 7.0's replies and order of
//! checks; an entry deleted from the stream since its delivery leaves the
//! pending list when a claim meets it.

use super::groups::{no_group, stream_and_group, Pending};
use super::id::{parse_end, parse_strict, StreamId, MAX};
use super::stream::{entry_reply, Stream};
use crate::access::Access;
use crate::collections::wrong_type;
use crate::commands::{fail, int_arg, syntax_error, Fail, Outcome};
use crate::resp::Reply;
use crate::store::{now_ms, Kind};

/// A range's start (`(` exclusive) and end, as `XPENDING` and
/// `XAUTOCLAIM` read them.
fn start_arg(arg: &[u8]) -> Result<StreamId, Fail> {
    match parse_end(arg, 0)? {
        (id, true) => id
            .next()
            .ok_or_else(|| fail("ERR invalid start ID for the interval")),
        (id, false) => Ok(id),
    }
}

fn end_arg(arg: &[u8]) -> Result<StreamId, Fail> {
    match parse_end(arg, u64::MAX)? {
        (id, true) => id
            .prev()
            .ok_or_else(|| fail("ERR invalid end ID for the interval")),
        (id, false) => Ok(id),
    }
}

fn idle(now: u64, p: &Pending) -> i64 {
    (now as i64).saturating_sub(p.delivered_at as i64).max(0)
}

/// `XPENDING key group [[IDLE ms] start end count [consumer]]`.
pub fn xpending(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let n = a.len();
    if n != 3 && !(6..=9).contains(&n) {
        return Err(syntax_error());
    }
    let mut range = None;
    if n >= 6 {
        let mut at = 3;
        let mut min_idle = 0;
        if a[3].eq_ignore_ascii_case(b"idle") {
            min_idle = int_arg(&a[4])?;
            if n < 8 {
                return Err(syntax_error());
            }
            at = 5;
        }
        let count = int_arg(&a[at + 2])?.max(0) as u64;
        let (start, end) = (start_arg(&a[at])?, end_arg(&a[at + 1])?);
        range = Some((min_idle, start, end, count, a.get(at + 3)));
    }
    if acc.get(&a[1])?.is_some_and(|v| v.kind != Kind::Stream) {
        return Err(wrong_type());
    }
    let (s, _) = stream_and_group(acc, &a[1], &a[2], "")?;
    let group = &a[2];
    let Some((min_idle, start, end, count, consumer)) = range else {
        return summary(acc, &s, group);
    };
    if let Some(c) = consumer {
        if !s.has_consumer(acc, group, c)? {
            return Ok(Reply::Array(Vec::new()));
        }
    }
    let now = now_ms();
    let mut out = Vec::new();
    for p in s.all_pending_from(acc, group, start)? {
        if out.len() as u64 >= count || p.id > end {
            break;
        }
        if consumer.is_some_and(|c| *c != p.consumer) || (min_idle > 0 && idle(now, &p) < min_idle)
        {
            continue;
        }
        out.push(Reply::Array(vec![
            Reply::Bulk(p.id.to_bytes()),
            Reply::Bulk(p.consumer.clone()),
            Reply::Int(idle(now, &p)),
            Reply::Int(p.count as i64),
        ]));
    }
    Ok(Reply::Array(out))
}

/// `XPENDING`'s summary: the count, the lowest and highest pending IDs,
/// and each consumer's count (in name order).
fn summary(acc: &mut dyn Access, s: &Stream, group: &[u8]) -> Outcome {
    let pending = s.all_pending(acc, group)?;
    let (Some(first), Some(last)) = (pending.first(), pending.last()) else {
        return Ok(Reply::Array(vec![
            Reply::Int(0),
            Reply::Null,
            Reply::Null,
            Reply::NullArray,
        ]));
    };
    let mut per: std::collections::BTreeMap<&[u8], i64> = Default::default();
    for p in &pending {
        *per.entry(&p.consumer).or_default() += 1;
    }
    Ok(Reply::Array(vec![
        Reply::Int(pending.len() as i64),
        Reply::Bulk(first.id.to_bytes()),
        Reply::Bulk(last.id.to_bytes()),
        Reply::Array(
            per.into_iter()
                .map(|(c, n)| {
                    Reply::Array(vec![
                        Reply::Bulk(c.to_vec()),
                        Reply::Bulk(n.to_string().into_bytes()),
                    ])
                })
                .collect(),
        ),
    ]))
}

/// A claimed entry's reply: its ID alone (`JUSTID`), or the entry.
fn claimed(
    acc: &mut dyn Access,
    s: &Stream,
    id: StreamId,
    just_id: bool,
) -> Result<Option<Reply>, Fail> {
    if just_id {
        return Ok(Some(Reply::Bulk(id.to_bytes())));
    }
    match s.entries(acc, id, id, 1)?.pop() {
        Some((id, stored)) => Ok(Some(entry_reply(id, &stored)?)),
        None => Ok(None),
    }
}

fn exists(acc: &mut dyn Access, s: &Stream, id: StreamId) -> Result<bool, Fail> {
    Ok(!s.entries(acc, id, id, 1)?.is_empty())
}

/// The stream and group a claim works on, or Redis's errors.
fn claim_target(acc: &mut dyn Access, a: &[Vec<u8>]) -> Result<Stream, Fail> {
    if acc.get(&a[1])?.is_some_and(|v| v.kind != Kind::Stream) {
        return Err(wrong_type());
    }
    match stream_and_group(acc, &a[1], &a[2], "") {
        Ok((s, _)) => Ok(s),
        Err(_) => Err(no_group(&a[1], &a[2], "")),
    }
}

/// `XCLAIM key group consumer min-idle-time id... [IDLE ms] [TIME ms]
/// [RETRYCOUNT n] [FORCE] [JUSTID] [LASTID id]`.
pub fn xclaim(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let mut s = claim_target(acc, a)?;
    let (group, consumer) = (&a[2], &a[3]);
    let min_idle = int_arg(&a[4])
        .map_err(|_| fail("ERR Invalid min-idle-time argument for XCLAIM"))?
        .max(0);
    let mut ids = Vec::new();
    let mut j = 5;
    while j < a.len() {
        match parse_strict(&a[j], 0, false) {
            Ok(id) => ids.push(id.id),
            Err(_) => break,
        }
        j += 1;
    }
    let now = now_ms() as i64;
    let (mut force, mut just_id, mut retry, mut delivered, mut last_id) =
        (false, false, None, None, None);
    while j < a.len() {
        let more = a.len() - 1 - j;
        let opt = a[j].to_ascii_lowercase();
        let number = |i: usize, what: &str| {
            int_arg(&a[i])
                .map_err(|_| fail(&format!("ERR Invalid {what} option argument for XCLAIM")))
        };
        match opt.as_slice() {
            b"force" => force = true,
            b"justid" => just_id = true,
            b"idle" if more > 0 => {
                delivered = Some(now - number(j + 1, "IDLE")?);
                j += 1;
            }
            b"time" if more > 0 => {
                delivered = Some(number(j + 1, "TIME")?);
                j += 1;
            }
            b"retrycount" if more > 0 => {
                retry = Some(number(j + 1, "RETRYCOUNT")?);
                j += 1;
            }
            b"lastid" if more > 0 => {
                last_id = Some(parse_strict(&a[j + 1], 0, false)?.id);
                j += 1;
            }
            _ => {
                return Err(fail(&format!(
                    "ERR Unrecognized XCLAIM option '{}'",
                    String::from_utf8_lossy(&a[j])
                )))
            }
        }
        j += 1;
    }
    if let Some(l) = last_id {
        if let Some(mut g) = s.group(acc, group)?.filter(|g| l > g.last) {
            // As in Redis, the read counter stays as it was.
            g.last = l;
            s.set_group(acc, group, &g)?;
        }
    }
    let delivered = match delivered {
        Some(t) if t >= 0 && t <= now => t as u64,
        _ => now as u64,
    };
    let mut out = Vec::new();
    let mut touched = false;
    for id in ids {
        let found = s.pending(acc, group, id)?;
        if !exists(acc, &s, id)? {
            if found.is_some() {
                s.del_pending(acc, group, id)?;
            }
            continue;
        }
        // A pending entry `FORCE` creates starts as Redis's does: one
        // delivery, and no idle time to wait for.
        let fresh = found.is_none();
        let mut p = match (found, force) {
            (Some(p), _) => p,
            (None, true) => Pending {
                id,
                delivered_at: 0,
                count: 1,
                consumer: Vec::new(),
            },
            (None, false) => continue,
        };
        if !fresh && min_idle > 0 && idle(now as u64, &p) < min_idle {
            continue;
        }
        if !touched {
            s.touch_consumer(acc, group, consumer)?;
            touched = true;
        }
        p.delivered_at = delivered;
        match retry {
            Some(n) if n >= 0 => p.count = n as u64,
            _ if !just_id => p.count += 1,
            _ => {}
        }
        p.consumer = consumer.clone();
        s.put_pending(acc, group, &p)?;
        out.extend(claimed(acc, &s, id, just_id)?);
    }
    s.save(acc)?;
    Ok(Reply::Array(out))
}

/// `XAUTOCLAIM key group consumer min-idle-time start [COUNT n] [JUSTID]`:
/// `[next start, claimed, deleted IDs]`, looking at up to 10x `COUNT`
/// pending entries (as Redis).
pub fn xautoclaim(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    // Redis 7.0's order: the arguments, then the key's type and group.
    let (group, consumer) = (&a[2], &a[3]);
    let min_idle = int_arg(&a[4])
        .map_err(|_| fail("ERR Invalid min-idle-time argument for XAUTOCLAIM"))?
        .max(0);
    let start = start_arg(&a[5])?;
    let (mut count, mut just_id) = (100i64, false);
    let mut j = 6;
    while j < a.len() {
        let more = a.len() - 1 - j;
        match a[j].to_ascii_lowercase().as_slice() {
            b"count" if more > 0 => {
                count = match int_arg(&a[j + 1]) {
                    Ok(n) if (1..=i64::MAX / 16).contains(&n) => n,
                    _ => return Err(fail("ERR COUNT must be > 0")),
                };
                j += 1;
            }
            b"justid" => just_id = true,
            _ => return Err(syntax_error()),
        }
        j += 1;
    }
    let mut s = claim_target(acc, a)?;
    let now = now_ms();
    let mut attempts = count.saturating_mul(10);
    let (mut out, mut deleted) = (Vec::new(), Vec::new());
    let mut touched = false;
    let look = usize::try_from(attempts.saturating_add(1))
        .unwrap_or(usize::MAX)
        .min(1 << 20);
    let mut candidates = s.pending_range(acc, group, start, MAX, look)?.into_iter();
    while attempts > 0 && count > 0 {
        let Some(mut p) = candidates.next() else {
            break;
        };
        attempts -= 1;
        if !exists(acc, &s, p.id)? {
            s.del_pending(acc, group, p.id)?;
            deleted.push(Reply::Bulk(p.id.to_bytes()));
            count -= 1;
            continue;
        }
        if min_idle > 0 && idle(now, &p) < min_idle {
            continue;
        }
        if !touched {
            s.touch_consumer(acc, group, consumer)?;
            touched = true;
        }
        p.delivered_at = now;
        if !just_id {
            p.count += 1;
        }
        p.consumer = consumer.clone();
        s.put_pending(acc, group, &p)?;
        out.extend(claimed(acc, &s, p.id, just_id)?);
        count -= 1;
    }
    let next = candidates.next().map_or(StreamId::default(), |p| p.id);
    s.save(acc)?;
    Ok(Reply::Array(vec![
        Reply::Bulk(next.to_bytes()),
        Reply::Array(out),
        Reply::Array(deleted),
    ]))
}
