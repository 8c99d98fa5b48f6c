//! Trimming a stream from its oldest entry: `XTRIM`, and `XADD`'s
//! `MAXLEN`/`MINID` options (with Redis 7.0's parsing of both).
//!
//! With `~`, Redis removes only whole nodes of its radix tree, each
//! holding `stream-node-max-entries` entries as they were appended, so it
//! may keep more than asked; clients and tests count on how many it keeps.
//! slsm stores each entry on its own, so it trims `~` by the same nodes,
//! reckoned from the entries' order of arrival: the `k`-th entry ever
//! added (`Stream::added` counts them) is in node `k / size`, and the
//! oldest live entry is the `added - len`-th (exact while nothing was
//! deleted from the middle with `XDEL`, an estimate after: a node is only
//! removed while what stays is at least the threshold, which is all `~`
//! promises). Without `LIMIT`, `~` removes at most 100 nodes, as Redis.

use super::id::{parse_strict, AddId, StreamId, MAX};
use super::stream::Stream;
use crate::access::Access;
use crate::commands::{fail, int_arg, syntax_error, Fail, Outcome};
use crate::resp::Reply;

/// How `XADD` or `XTRIM` trims.
#[derive(Default)]
pub(super) struct Trim {
    strategy: Option<Strategy>,
    /// At most this many entries go (0: no limit).
    limit: i64,
    /// `~`: whole nodes only.
    approx: bool,
    /// `LIMIT` was given (else `~`'s limit is 100 nodes).
    limit_given: bool,
}

enum Strategy {
    MaxLen(i64),
    MinId(StreamId),
}

/// What `XADD` or `XTRIM` asks besides its key.
pub(super) struct AddArgs {
    pub(super) trim: Trim,
    pub(super) no_mkstream: bool,
    /// `XADD`'s ID (`None`: `*`, or none given).
    pub(super) id: Option<AddId>,
    /// Where the ID is (`XADD`; its fields follow).
    pub(super) at: usize,
}

/// Redis 7.0's `streamParseAddOrTrimArgsOrReply`: the trimming options
/// (and `XADD`'s `NOMKSTREAM` and ID) from `a[2]` on, in its order of
/// checks.
pub(super) fn trim_args(a: &[Vec<u8>], xadd: bool) -> Result<AddArgs, Fail> {
    let mut t = Trim::default();
    let mut given = None;
    let (mut approx, mut limit_given, mut no_mkstream) = (false, false, false);
    let mut i = 2;
    while i < a.len() {
        let more = a.len() - 1 - i;
        let opt = a[i].to_ascii_lowercase();
        match opt.as_slice() {
            b"*" if xadd => break,
            b"maxlen" | b"minid" if more > 0 => {
                if t.strategy.is_some() {
                    return Err(fail("ERR syntax error, MAXLEN and MINID options at the same time are not compatible"));
                }
                approx = false;
                if more >= 2 && (a[i + 1] == b"~" || a[i + 1] == b"=") {
                    approx = a[i + 1] == b"~";
                    i += 1;
                }
                let arg = &a[i + 1];
                t.strategy = Some(match opt.as_slice() {
                    b"maxlen" => match int_arg(arg)? {
                        n if n < 0 => return Err(fail("ERR The MAXLEN argument must be >= 0.")),
                        n => Strategy::MaxLen(n),
                    },
                    _ => Strategy::MinId(parse_strict(arg, 0, false)?.id),
                });
                i += 1;
            }
            b"limit" if more > 0 => {
                t.limit = int_arg(&a[i + 1])?;
                if t.limit < 0 {
                    return Err(fail("ERR The LIMIT argument must be >= 0."));
                }
                limit_given = true;
                i += 1;
            }
            b"nomkstream" if xadd => no_mkstream = true,
            _ if xadd => {
                given = Some(parse_strict(&a[i], 0, true)?);
                break;
            }
            _ => return Err(syntax_error()),
        }
        i += 1;
    }
    if t.limit != 0 && t.strategy.is_none() {
        return Err(fail(
            "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy",
        ));
    }
    if !xadd && t.strategy.is_none() {
        return Err(fail(
            "ERR syntax error, XTRIM must be called with a trimming strategy",
        ));
    }
    if limit_given && !approx {
        return Err(fail(
            "ERR syntax error, LIMIT cannot be used without the special ~ option",
        ));
    }
    t.approx = approx;
    t.limit_given = limit_given;
    Ok(AddArgs {
        trim: t,
        no_mkstream,
        id: given,
        at: i,
    })
}

pub(super) fn xtrim(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let trim = trim_args(a, false)?.trim;
    let Some(mut s) = Stream::load(acc, &a[1])? else {
        return Ok(Reply::Int(0));
    };
    let removed = trim_stream(acc, &mut s, &trim)?;
    if removed > 0 {
        s.save_and_tell(acc, "xtrim")?;
    }
    Ok(Reply::Int(removed))
}

/// Trims from the oldest entry on; the count removed. The low mark moves
/// past what goes.
pub(super) fn trim_stream(acc: &mut dyn Access, s: &mut Stream, t: &Trim) -> Result<i64, Fail> {
    let Some(strategy) = &t.strategy else {
        return Ok(0);
    };
    let node = acc
        .tuning()
        .stream_node_entries
        .load(std::sync::atomic::Ordering::Relaxed) as i64;
    if !t.approx || node <= 0 {
        // Redis's nodes of size 0 are bounded by bytes alone: trimmed
        // exactly here, as `~` allows.
        return trim_exactly(acc, s, strategy, t.limit);
    }
    let limit = match t.limit_given {
        true => t.limit,
        false => node.saturating_mul(100),
    };
    match strategy {
        Strategy::MaxLen(n) => {
            let going = whole_nodes_over(s, node, *n, limit);
            trim_exactly(acc, s, &Strategy::MaxLen(s.coll.len - going), 0)
        }
        Strategy::MinId(min) => trim_nodes_below(acc, s, node, *min, limit),
    }
}

/// The entries in the node of the oldest live entry, by the nodes the
/// module's doc describes (`first`: that entry's place in arrival order).
fn in_node(s: &Stream, node: i64, first: i64) -> i64 {
    let end = (first / node + 1) * node;
    (end.min(s.added as i64) - first).max(0)
}

/// How many entries whole head nodes hold that can go with at least `keep`
/// staying and at most `limit` going (0: no limit).
fn whole_nodes_over(s: &Stream, node: i64, keep: i64, limit: i64) -> i64 {
    let mut first = (s.added as i64 - s.coll.len).max(0);
    let (mut len, mut going) = (s.coll.len, 0);
    loop {
        let n = in_node(s, node, first);
        if n == 0 || len - n < keep || (limit > 0 && going + n > limit) {
            return going;
        }
        going += n;
        len -= n;
        first += n;
    }
}

/// Removes whole head nodes whose entries are all below `min`, at most
/// `limit` entries (0: no limit).
fn trim_nodes_below(
    acc: &mut dyn Access,
    s: &mut Stream,
    node: i64,
    min: StreamId,
    limit: i64,
) -> Result<i64, Fail> {
    let mut removed = 0;
    loop {
        let first = (s.added as i64 - s.coll.len).max(0);
        let n = in_node(s, node, first);
        if n == 0 || (limit > 0 && removed + n > limit) {
            return Ok(removed);
        }
        let batch = s.entries(acc, s.low, MAX, n as usize)?;
        match batch.last() {
            Some((last, _)) if *last < min => {}
            _ => return Ok(removed),
        }
        for (id, _) in batch {
            s.remove(acc, id)?;
            s.low = id.next().unwrap_or(MAX);
            removed += 1;
        }
    }
}

/// Removes entries from the oldest on while `strategy` says they go, at
/// most `limit` (0: no limit).
fn trim_exactly(
    acc: &mut dyn Access,
    s: &mut Stream,
    strategy: &Strategy,
    limit: i64,
) -> Result<i64, Fail> {
    let mut removed = 0;
    // Read what is about to go, not more: a capped log trims one entry per
    // append, and a read of a few hundred for it cost 10x the append.
    let mut step = 1;
    loop {
        if let Strategy::MaxLen(n) = strategy {
            step = usize::try_from(s.coll.len - n).unwrap_or(0).clamp(1, 256);
        }
        let batch = s.entries(acc, s.low, MAX, step)?;
        let full = batch.len() == step;
        step = (step * 8).min(256);
        for (id, _) in batch {
            let keep = match strategy {
                Strategy::MaxLen(n) => s.coll.len <= *n,
                Strategy::MinId(min) => id >= *min,
            };
            if keep || (limit > 0 && removed >= limit) {
                return Ok(removed);
            }
            s.remove(acc, id)?;
            s.low = id.next().unwrap_or(MAX);
            removed += 1;
        }
        if !full {
            return Ok(removed);
        }
    }
}
