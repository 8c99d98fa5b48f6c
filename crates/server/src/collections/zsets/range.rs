//! The sorted-set commands that read ranges: ZRANGE, its older forms and
//! ZRANGESTORE.

use super::counts;
use super::lex::{by_lex, lex_arg};
use super::limit::{Limit, Mode, Order};
use super::members::{order_end, order_start, store_result, strtod, Picked};
use super::walk::{walk_down, walk_from, Cursor};
use crate::access::Access;
use crate::collections::{positions, Coll};
use crate::commands::{fail, int_arg, syntax_error, Fail, Outcome};
use crate::resp::Reply;
use crate::store::Kind;

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

/// The command a range comes from: `ZRANGE` and `ZRANGESTORE` choose the
/// mode and the order in their options, and only the first takes
/// `WITHSCORES`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    Zrange,
    Store,
    Older,
}

/// The options after a range: `BYSCORE` or `BYLEX`, `REV`, `LIMIT o c`,
/// `WITHSCORES`.
struct RangeOptions {
    order: Order,
    mode: Mode,
    limit: Option<(i64, i64)>,
    with_scores: bool,
}

/// The options of request `a` (the range's key at `a[1]`, options from
/// `a[4]`), in Redis's order of checks.
fn range_options(
    a: &[Vec<u8>],
    form: Form,
    order: Order,
    mode: Mode,
) -> Result<RangeOptions, Fail> {
    let mut o = RangeOptions {
        order,
        mode,
        limit: None,
        with_scores: false,
    };
    let chooses = form != Form::Older;
    let (mut mode_given, mut rev_given) = (false, false);
    let mut i = 4;
    while i < a.len() {
        match a[i].to_ascii_lowercase().as_slice() {
            b"withscores" if form != Form::Store => o.with_scores = true,
            b"byscore" if chooses && !mode_given => (o.mode, mode_given) = (Mode::Score, true),
            b"bylex" if chooses && !mode_given => (o.mode, mode_given) = (Mode::Lex, true),
            b"rev" if chooses && !rev_given => (o.order, rev_given) = (Order::Desc, true),
            b"limit" if i + 2 < a.len() => {
                o.limit = Some((int_arg(&a[i + 1])?, int_arg(&a[i + 2])?));
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
    if o.with_scores && o.mode == Mode::Lex {
        return Err(fail(
            "ERR syntax error, WITHSCORES not supported in combination with BYLEX",
        ));
    }
    Ok(o)
}

pub(super) fn zrange(a: &[Vec<u8>], acc: &mut dyn Access, order: Order, mode: Mode) -> Outcome {
    let form = match a[0].eq_ignore_ascii_case(b"zrange") {
        true => Form::Zrange,
        false => Form::Older,
    };
    let (picked, o) = range_of(a, acc, form, order, mode)?;
    Ok(members_reply(picked, o.with_scores))
}

/// `ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT o c]`: the
/// range replaces what `dst` held; an empty one deletes it.
pub(super) fn zrangestore(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    // From `dst` on, the request reads as a ZRANGE whose name is `dst`.
    let (picked, _) = range_of(&a[1..], acc, Form::Store, Order::Asc, Mode::Rank)?;
    store_result(acc, &a[1], picked, Some("zrangestore"))
}

/// The members request `a` selects (the key at `a[1]`, the range at
/// `a[2..4]`, options after), and its options.
fn range_of(
    a: &[Vec<u8>],
    acc: &mut dyn Access,
    form: Form,
    order: Order,
    mode: Mode,
) -> Result<(Picked, RangeOptions), Fail> {
    let o = range_options(a, form, order, mode)?;
    let picked = match o.mode {
        Mode::Rank => {
            let (start, stop) = (int_arg(&a[2])?, int_arg(&a[3])?);
            let Some(z) = Coll::load(acc, &a[1], Kind::ZSet)? else {
                return Ok((Vec::new(), o));
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
                return Ok((Vec::new(), o));
            };
            by_score(acc, &z, min, max, o.order, o.limit)?
        }
        Mode::Lex => {
            let (x, y) = (lex_arg(&a[2]), lex_arg(&a[3]));
            let (Ok(x), Ok(y)) = (x, y) else {
                return Err(fail("ERR min or max not valid string range item"));
            };
            let (min, max) = match o.order {
                Order::Asc => (x, y),
                Order::Desc => (y, x),
            };
            let Some(z) = Coll::load(acc, &a[1], Kind::ZSet)? else {
                return Ok((Vec::new(), o));
            };
            by_lex(acc, &z, &min, &max, o.order, o.limit)?
        }
    };
    Ok((picked, o))
}

pub(super) fn members_reply(picked: Vec<(f64, Vec<u8>)>, with_scores: bool) -> Reply {
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
    let Some(mut picks) = Limit::new(limit) else {
        return Ok(Vec::new());
    };
    let mut take = |s: f64, m: &[u8]| picks.take(s, m);
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
    Ok(picks.out)
}

/// Every member with its score, in the set's order or (`descending`)
/// from the highest score down.
pub(crate) fn all_members(
    acc: &mut dyn Access,
    z: &Coll,
    descending: bool,
) -> Result<Vec<(f64, Vec<u8>)>, Fail> {
    let order = match descending {
        true => Order::Desc,
        false => Order::Asc,
    };
    by_rank(acc, z, 0, -1, order)
}

/// The member at rank `r` (ascending), through the rank index.
pub(crate) fn member_at_rank(
    acc: &mut dyn Access,
    z: &Coll,
    r: i64,
) -> Result<Option<(f64, Vec<u8>)>, Fail> {
    Ok(by_rank(acc, z, r, r, Order::Asc)?.pop())
}
