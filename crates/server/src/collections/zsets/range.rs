//! The sorted-set commands that read ranges: ZRANGE and its older forms,
//! ZRANK, ZREVRANK, ZPOPMIN, ZPOPMAX.

use super::{order_key, order_start, remove_scored, score_of, strtod, walk, walk_from};
use crate::collections::{positions, positive_count, Coll};
use crate::commands::{fail, int_arg, syntax_error, Fail, Outcome};
use crate::resp::Reply;
use crate::store::{Access, Kind};

/// One end of a score range (`1.5`, `(1.5`, `-inf`, `+inf`).
#[derive(Clone, Copy)]
pub(super) struct Bound {
    pub(super) score: f64,
    exclusive: bool,
}

impl Bound {
    /// True if `s` is past this bound taken as a minimum.
    pub(super) fn above(self, s: f64) -> bool {
        if self.exclusive {
            s > self.score
        } else {
            s >= self.score
        }
    }

    /// True if `s` is past this bound taken as a maximum.
    pub(super) fn below(self, s: f64) -> bool {
        if self.exclusive {
            s >= self.score
        } else {
            s > self.score
        }
    }
}

/// A range end as Redis parses one: laxer than a score (`strtod` up to a
/// NUL, so "" is 0 and " 1" is 1; only NaN and trailing text refused).
pub(super) fn bound_arg(arg: &[u8]) -> Result<Bound, Fail> {
    let (exclusive, text) = match arg.strip_prefix(b"(") {
        Some(rest) => (true, rest),
        None => (false, arg),
    };
    match strtod(text) {
        (score, true, _) if !score.is_nan() => Ok(Bound { score, exclusive }),
        _ => Err(fail("ERR min or max is not a float")),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Order {
    Asc,
    Desc,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    Rank,
    Score,
}

/// The options after a range: `BYSCORE`, `REV`, `LIMIT o c`, `WITHSCORES`
/// (`ZRANGE` takes all four; the older commands `LIMIT` and `WITHSCORES`).
struct RangeOptions {
    order: Order,
    mode: Mode,
    limit: Option<(i64, i64)>,
    with_scores: bool,
}

fn range_options(
    a: &[Vec<u8>],
    zrange: bool,
    order: Order,
    mode: Mode,
) -> Result<RangeOptions, Fail> {
    let mut o = RangeOptions {
        order,
        mode,
        limit: None,
        with_scores: false,
    };
    let mut i = 4;
    while i < a.len() {
        match a[i].to_ascii_lowercase().as_slice() {
            b"withscores" => o.with_scores = true,
            b"byscore" if zrange => o.mode = Mode::Score,
            b"rev" if zrange => o.order = Order::Desc,
            b"limit" => {
                let (Some(off), Some(count)) = (a.get(i + 1), a.get(i + 2)) else {
                    return Err(syntax_error());
                };
                o.limit = Some((int_arg(off)?, int_arg(count)?));
                i += 2;
            }
            _ => return Err(syntax_error()),
        }
        i += 1;
    }
    if o.limit.is_some() && o.mode == Mode::Rank {
        return Err(fail(
            "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
        ));
    }
    Ok(o)
}

pub(super) fn zrange(a: &[Vec<u8>], acc: &mut dyn Access, order: Order, mode: Mode) -> Outcome {
    let zrange = a[0].eq_ignore_ascii_case(b"zrange");
    let o = range_options(a, zrange, order, mode)?;
    let picked = match o.mode {
        Mode::Rank => {
            let (start, stop) = (int_arg(&a[2])?, int_arg(&a[3])?);
            let Some(z) = Coll::load(acc, &a[1], Kind::ZSet)? else {
                return Ok(Reply::Array(Vec::new()));
            };
            by_rank(acc, &z, start, stop, o.order)?
        }
        Mode::Score => {
            // With REV (and in ZREVRANGEBYSCORE) the maximum comes first.
            let (x, y) = (bound_arg(&a[2])?, bound_arg(&a[3])?);
            let (min, max) = match o.order {
                Order::Asc => (x, y),
                Order::Desc => (y, x),
            };
            let Some(z) = Coll::load(acc, &a[1], Kind::ZSet)? else {
                return Ok(Reply::Array(Vec::new()));
            };
            by_score(acc, &z, min, max, o.order, o.limit)?
        }
    };
    Ok(members_reply(picked, o.with_scores))
}

fn members_reply(picked: Vec<(f64, Vec<u8>)>, with_scores: bool) -> Reply {
    match with_scores {
        true => Reply::Pairs(
            picked
                .into_iter()
                .map(|(s, m)| (Reply::Bulk(m), Reply::Double(s)))
                .collect(),
        ),
        false => Reply::Array(picked.into_iter().map(|(_, m)| Reply::Bulk(m)).collect()),
    }
}

fn by_rank(
    acc: &mut dyn Access,
    z: &Coll,
    start: i64,
    stop: i64,
    order: Order,
) -> Result<Vec<(f64, Vec<u8>)>, Fail> {
    let len = z.count();
    let Some((start, stop)) = positions(start, stop, len) else {
        return Ok(Vec::new());
    };
    // Ranks counted from the top are these from the bottom.
    let (lo, hi) = match order {
        Order::Asc => (start, stop),
        Order::Desc => (len - 1 - stop, len - 1 - start),
    };
    let mut out = Vec::with_capacity((hi - lo + 1).min(1 << 16) as usize);
    let mut rank = 0;
    walk(acc, z, |s, m| {
        if rank >= lo {
            out.push((s, m.to_vec()));
        }
        rank += 1;
        rank <= hi
    })?;
    if order == Order::Desc {
        out.reverse();
    }
    Ok(out)
}

fn by_score(
    acc: &mut dyn Access,
    z: &Coll,
    min: Bound,
    max: Bound,
    order: Order,
    limit: Option<(i64, i64)>,
) -> Result<Vec<(f64, Vec<u8>)>, Fail> {
    let mut out = Vec::new();
    walk_from(acc, z, &order_start(min.score), |s, m| {
        if max.below(s) {
            return false;
        }
        if min.above(s) {
            out.push((s, m.to_vec()));
        }
        true
    })?;
    if order == Order::Desc {
        out.reverse();
    }
    if let Some((offset, count)) = limit {
        if offset < 0 {
            return Ok(Vec::new());
        }
        let offset = offset as usize;
        out = out.into_iter().skip(offset).collect();
        if count >= 0 {
            out.truncate(count as usize);
        }
    }
    Ok(out)
}

pub(super) fn rank(name: &str, a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let Some(z) = Coll::load(acc, &a[1], Kind::ZSet)? else {
        return Ok(Reply::Null);
    };
    let Some(score) = score_of(acc, &z, &a[2])? else {
        return Ok(Reply::Null);
    };
    let target = order_key(score, &a[2]);
    let mut below = 0;
    walk(acc, &z, |s, m| {
        if order_key(s, m) >= target {
            return false;
        }
        below += 1;
        true
    })?;
    Ok(Reply::Int(match name {
        "zrank" => below,
        _ => z.count() - 1 - below,
    }))
}

pub(super) fn pop(name: &str, a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    if a.len() > 3 {
        return Err(syntax_error());
    }
    let count = a.get(2).map(|c| positive_count(c)).transpose()?;
    let Some(mut z) = Coll::load(acc, &a[1], Kind::ZSet)? else {
        return Ok(Reply::Array(Vec::new()));
    };
    let n = count.unwrap_or(1).min(z.count() as usize);
    let popped = match name {
        _ if n == 0 => Vec::new(),
        "zpopmin" => by_rank(acc, &z, 0, n as i64 - 1, Order::Asc)?,
        _ => by_rank(acc, &z, 0, n as i64 - 1, Order::Desc)?,
    };
    for (score, m) in &popped {
        remove_scored(acc, &mut z, m, *score)?;
    }
    if let (Some((score, m)), "zpopmin") = (popped.last(), name) {
        // Nothing is left below what was popped.
        z.mark = order_key(*score, m)[1..].to_vec();
    }
    if !popped.is_empty() {
        z.save(acc)?;
    }
    Ok(match count {
        Some(_) => members_reply(popped, true),
        None => Reply::Array(
            popped
                .into_iter()
                .flat_map(|(s, m)| [Reply::Bulk(m), Reply::Double(s)])
                .collect(),
        ),
    })
}
