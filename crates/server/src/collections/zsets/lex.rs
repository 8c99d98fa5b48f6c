//! Ranges by member (`BYLEX`): ZRANGEBYLEX, ZREVRANGEBYLEX, ZLEXCOUNT,
//! ZREMRANGEBYLEX and `ZRANGE ... BYLEX`.
//!
//! Redis defines these for a sorted set whose members all have one score
//! (autocomplete, secondary indexes), where the score order is the member
//! order; on a set with several scores its answer is unspecified. Here a
//! range is read from the lowest score's members up (or the highest's
//! down): the walk seeks straight to `min` among the members of the lowest
//! score and stops at the first member past `max`, so it reads what it
//! returns, as Redis's skiplist search does. With several scores the walk
//! goes on into the higher scores until a member past `max`, as Redis's
//! does.

use super::limit::{Limit, Order};
use super::members::order_start;
use super::walk::first_from;
use super::walk::{walk_down, walk_from};
use crate::access::Access;
use crate::collections::Coll;
use crate::commands::{fail, Fail};

/// One end of a member range: `-`, `+`, `[member` (inclusive) or
/// `(member` (exclusive).
#[derive(Clone, Debug)]
pub(super) enum Lex {
    Lowest,
    Highest,
    Inclusive(Vec<u8>),
    Exclusive(Vec<u8>),
}

/// A range end as Redis parses one (`-` and `+` alone: C sees the
/// argument up to its first NUL).
pub(super) fn lex_arg(arg: &[u8]) -> Result<Lex, Fail> {
    let alone = arg.get(1).is_none_or(|&b| b == 0);
    match arg.first() {
        Some(b'-') if alone => Ok(Lex::Lowest),
        Some(b'+') if alone => Ok(Lex::Highest),
        Some(b'[') => Ok(Lex::Inclusive(arg[1..].to_vec())),
        Some(b'(') => Ok(Lex::Exclusive(arg[1..].to_vec())),
        _ => Err(fail("ERR min or max not valid string range item")),
    }
}

impl Lex {
    /// True if `m` is inside this end taken as the minimum.
    fn admits_above(&self, m: &[u8]) -> bool {
        match self {
            Lex::Lowest => true,
            Lex::Highest => false,
            Lex::Inclusive(v) => m >= &v[..],
            Lex::Exclusive(v) => m > &v[..],
        }
    }

    /// True if `m` is inside this end taken as the maximum.
    fn admits_below(&self, m: &[u8]) -> bool {
        match self {
            Lex::Lowest => false,
            Lex::Highest => true,
            Lex::Inclusive(v) => m <= &v[..],
            Lex::Exclusive(v) => m < &v[..],
        }
    }
}

/// Calls `f(score, member)` on the members in `min..max`, ascending or
/// descending, until it returns false.
pub(super) fn walk_lex(
    acc: &mut dyn Access,
    z: &Coll,
    min: &Lex,
    max: &Lex,
    order: Order,
    mut f: impl FnMut(f64, &[u8]) -> bool,
) -> Result<(), Fail> {
    match order {
        Order::Asc => {
            let from = match min {
                Lex::Inclusive(v) | Lex::Exclusive(v) => match lowest_score(acc, z)? {
                    Some(score) => [&order_start(score)[..], v].concat(),
                    None => return Ok(()),
                },
                Lex::Lowest | Lex::Highest => Vec::new(),
            };
            walk_from(acc, z, &from, |s, m| {
                if !max.admits_below(m) {
                    return false;
                }
                !min.admits_above(m) || f(s, m)
            })
        }
        Order::Desc => {
            let below = match max {
                Lex::Inclusive(v) | Lex::Exclusive(v) => match highest_score(acc, z)? {
                    // Below `v`'s key, or below the key right after it.
                    Some(score) => Some(match max {
                        Lex::Inclusive(_) => [&order_start(score)[..], v, &[0]].concat(),
                        _ => [&order_start(score)[..], v].concat(),
                    }),
                    None => return Ok(()),
                },
                Lex::Lowest | Lex::Highest => None,
            };
            walk_down(acc, z, below.as_deref(), |s, m| {
                if !min.admits_above(m) {
                    return false;
                }
                !max.admits_below(m) || f(s, m)
            })
        }
    }
}

/// The members in `min..max` in `order`, after LIMIT's offset and up to its
/// count (Redis's rules: a negative offset selects nothing, a negative
/// count everything after the offset).
pub(super) fn by_lex(
    acc: &mut dyn Access,
    z: &Coll,
    min: &Lex,
    max: &Lex,
    order: Order,
    limit: Option<(i64, i64)>,
) -> Result<Vec<(f64, Vec<u8>)>, Fail> {
    let Some(mut picks) = Limit::new(limit) else {
        return Ok(Vec::new());
    };
    walk_lex(acc, z, min, max, order, |s, m| picks.take(s, m))?;
    Ok(picks.out)
}

/// `ZLEXCOUNT`'s count.
pub(super) fn count(acc: &mut dyn Access, z: &Coll, min: &Lex, max: &Lex) -> Result<i64, Fail> {
    let mut n = 0;
    walk_lex(acc, z, min, max, Order::Asc, |_, _| {
        n += 1;
        true
    })?;
    Ok(n)
}

fn lowest_score(acc: &mut dyn Access, z: &Coll) -> Result<Option<f64>, Fail> {
    match first_from(acc, z, &[])? {
        Some(sub) => Ok(Some(
            super::walk::decode_order(&[&b"s"[..], &sub].concat())?.0,
        )),
        None => Ok(None),
    }
}

fn highest_score(acc: &mut dyn Access, z: &Coll) -> Result<Option<f64>, Fail> {
    let mut top = None;
    walk_down(acc, z, None, |s, _| {
        top = Some(s);
        false
    })?;
    Ok(top)
}
