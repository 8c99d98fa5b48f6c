//! Trimming a stream from its oldest entry: `XTRIM`, and `XADD`'s
//! `MAXLEN`/`MINID` options (with Redis 7.0's parsing of both).

use super::id::{parse_strict, AddId, StreamId, MAX};
use super::Stream;
use crate::commands::{fail, int_arg, syntax_error, Fail, Outcome};
use crate::resp::Reply;
use crate::store::Access;

/// How `XADD` or `XTRIM` trims.
#[derive(Default)]
pub(super) struct Trim {
    strategy: Option<Strategy>,
    /// At most this many entries go (0: no limit).
    limit: i64,
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
    match (limit_given, approx) {
        (true, false) => {
            return Err(fail(
                "ERR syntax error, LIMIT cannot be used without the special ~ option",
            ))
        }
        (false, true) => t.limit = 10_000,
        (false, false) => t.limit = 0,
        (true, true) => {}
    }
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
        s.save(acc)?;
    }
    Ok(Reply::Int(removed))
}

/// Trims from the oldest entry on; the count removed. The low mark moves
/// past what goes.
pub(super) fn trim_stream(acc: &mut dyn Access, s: &mut Stream, t: &Trim) -> Result<i64, Fail> {
    let Some(strategy) = &t.strategy else {
        return Ok(0);
    };
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
            if keep || (t.limit > 0 && removed >= t.limit) {
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
