//! The sorted-set commands that read ranges: ZRANGE and its older forms,
//! ZRANK, ZREVRANK, ZPOPMIN, ZPOPMAX.

use super::{
    counts, order_end, order_key, order_start, remove_scored, score_of, strtod, walk_down,
    walk_from, Cursor,
};
use crate::collections::{positions, positive_count, Coll};
use crate::commands::{fail, int_arg, syntax_error, Fail, Outcome};
use crate::resp::Reply;
use crate::store::{Access, Kind};

/// One end of a score range (`1.5`, `(1.5`, `-inf`, `+inf`).
#[derive(Clone, Copy)]
pub(super) struct Bound {
    pub(super) score: f64,
    pub(super) exclusive: bool,
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

impl Order {
    fn reverse(self) -> Order {
        match self {
            Order::Asc => Order::Desc,
            Order::Desc => Order::Asc,
        }
    }
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

pub(super) fn by_rank(
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
    // Ranks counted from the other end are these, and the picks come out
    // the other way round.
    let (flipped, from_end) = (len - 1 - stop, len - 1 - start);
    if z.ranked() && start.min(flipped) > counts::SPLIT_AT {
        // Deep in the order: from the bucket holding the lowest rank.
        let (lo, hi) = match order {
            Order::Asc => (start, stop),
            Order::Desc => (flipped, from_end),
        };
        let (bucket, skip) = counts::seek_rank(acc, z, lo)?;
        let mut out = take_ranks(acc, z, Cursor::up(z, &bucket), skip, skip + hi - lo)?;
        if order == Order::Desc {
            out.reverse();
        }
        return Ok(out);
    }
    // Near an end: walk from the nearer one.
    let (near, lo, hi) = match flipped < start {
        true => (order.reverse(), flipped, from_end),
        false => (order, start, stop),
    };
    let cursor = match near {
        Order::Asc => Cursor::up(z, &[]),
        Order::Desc => Cursor::down(z, None),
    };
    let mut out = take_ranks(acc, z, cursor, lo, hi)?;
    if near != order {
        out.reverse();
    }
    Ok(out)
}

/// The members at positions `lo..=hi` of `cursor`'s walk.
fn take_ranks(
    acc: &mut dyn Access,
    z: &Coll,
    cursor: Cursor,
    lo: i64,
    hi: i64,
) -> Result<Vec<(f64, Vec<u8>)>, Fail> {
    let mut out = Vec::with_capacity((hi - lo + 1).min(1 << 16) as usize);
    let mut rank = 0;
    cursor.run(acc, z, |s, m| {
        if rank >= lo {
            out.push((s, m.to_vec()));
        }
        rank += 1;
        rank <= hi
    })?;
    Ok(out)
}

pub(super) fn by_score(
    acc: &mut dyn Access,
    z: &Coll,
    min: Bound,
    max: Bound,
    order: Order,
    limit: Option<(i64, i64)>,
) -> Result<Vec<(f64, Vec<u8>)>, Fail> {
    // LIMIT's offset skips matches in the walk's order; a negative count
    // takes the rest, a negative offset nothing (as Redis).
    let (skip, count) = match limit {
        Some((offset, _)) if offset < 0 => return Ok(Vec::new()),
        Some((offset, count)) => (offset as u64, u64::try_from(count).unwrap_or(u64::MAX)),
        None => (0, u64::MAX),
    };
    let (mut out, mut seen) = (Vec::new(), 0u64);
    let mut take = |s: f64, m: &[u8]| {
        if seen >= skip {
            if out.len() as u64 >= count {
                return false;
            }
            out.push((s, m.to_vec()));
        }
        seen += 1;
        true
    };
    match order {
        Order::Asc => walk_from(acc, z, &order_start(min.score), |s, m| {
            if max.below(s) {
                return false;
            }
            !min.above(s) || take(s, m)
        })?,
        Order::Desc => {
            let below = match max.exclusive {
                true => order_start(max.score),
                false => order_end(max.score),
            };
            walk_down(acc, z, Some(&below), |s, m| {
                if !min.above(s) {
                    return false;
                }
                max.below(s) || take(s, m)
            })?
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
    let from_bottom = match z.ranked() {
        true => counts::rank_of(acc, &z, &target[1..])?,
        false => match rank_from_ends(acc, &z, &target)? {
            Some(rank) => rank,
            None => return Ok(Reply::Null), // the order lacks the member: cannot be
        },
    };
    Ok(Reply::Int(match name {
        "zrank" => from_bottom,
        _ => z.count() - 1 - from_bottom,
    }))
}

/// The rank (from the bottom) of order sub-key `target`, walking from both
/// ends in turn (a set without a rank index): twice the walk from the
/// nearer end.
fn rank_from_ends(acc: &mut dyn Access, z: &Coll, target: &[u8]) -> Result<Option<i64>, Fail> {
    let (mut up, mut down) = (Cursor::up(z, &[]), Cursor::down(z, None));
    let (mut below, mut above) = (0, 0);
    loop {
        let batch = up.next_batch(acc, z)?;
        if let Some(i) = first_at(&batch, |sub| sub >= target) {
            return Ok(Some(below + i));
        }
        below += batch.len() as i64;
        let batch = down.next_batch(acc, z)?;
        if let Some(i) = first_at(&batch, |sub| sub <= target) {
            return Ok(Some(z.count() - 1 - (above + i)));
        }
        above += batch.len() as i64;
        if up.done && down.done {
            return Ok(None);
        }
    }
}

/// The position in `batch` of the first sub-key `reached` holds for.
fn first_at(batch: &[crate::store::Item], reached: impl Fn(&[u8]) -> bool) -> Option<i64> {
    batch
        .iter()
        .position(|(sub, _)| reached(sub))
        .map(|i| i as i64)
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
    if let Some((score, m)) = popped.last() {
        // Nothing is left beyond what was popped.
        let taken = order_key(*score, m)[1..].to_vec();
        match name {
            "zpopmin" => z.mark = taken,
            _ => z.high = taken,
        }
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
