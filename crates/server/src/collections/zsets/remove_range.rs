//! The sorted-set commands that remove a range: ZREMRANGEBYRANK,
//! ZREMRANGEBYSCORE, ZREMRANGEBYLEX, and the pops from either end,
//! ZPOPMIN and ZPOPMAX.
//!
//! A range that begins at the lowest member moves the low mark past it
//! and one that ends at the highest moves the high mark below it, as pops
//! do: the sliding-window pattern (`ZREMRANGEBYSCORE key -inf now-window`
//! on every request) then never walks over the deletion markers of the
//! members it removed before.

use super::lex::{by_lex, lex_arg};
use super::limit::Order;
use super::members::{order_key, remove_scored};
use super::range::{bound_arg, by_rank, by_score, members_reply};
use super::walk::first_from;
use crate::access::Access;
use crate::collections::{positions, positive_count, Coll};
use crate::commands::{fail, int_arg, syntax_error, Outcome};
use crate::notify::ZSET;
use crate::resp::Reply;
use crate::store::Kind;

pub(super) fn by_rank_command(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let (start, stop) = (int_arg(&a[2])?, int_arg(&a[3])?);
    let Some(mut z) = Coll::load(acc, &a[1], Kind::ZSet)? else {
        return Ok(Reply::Int(0));
    };
    let picked = by_rank(acc, &z, start, stop, Order::Asc)?;
    let ends = match positions(start, stop, z.count()) {
        Some((first, last)) => Ends {
            bottom: Some(first == 0),
            top: Some(last == z.count() - 1),
        },
        None => Ends::default(),
    };
    remove_all(acc, &mut z, picked, ends, "zremrangebyrank")
}

pub(super) fn by_score_command(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let (min, max) = (bound_arg(&a[2])?, bound_arg(&a[3])?);
    let Some(mut z) = Coll::load(acc, &a[1], Kind::ZSet)? else {
        return Ok(Reply::Int(0));
    };
    let picked = by_score(acc, &z, min, max, Order::Asc, None)?;
    // A range open at an end reaches it; otherwise look.
    let ends = Ends {
        bottom: (min.score == f64::NEG_INFINITY && !min.exclusive).then_some(true),
        top: (max.score == f64::INFINITY && !max.exclusive).then_some(true),
    };
    remove_all(acc, &mut z, picked, ends, "zremrangebyscore")
}

pub(super) fn by_lex_command(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let (min, max) = (lex_arg(&a[2]), lex_arg(&a[3]));
    let (Ok(min), Ok(max)) = (min, max) else {
        return Err(fail("ERR min or max not valid string range item"));
    };
    let Some(mut z) = Coll::load(acc, &a[1], Kind::ZSet)? else {
        return Ok(Reply::Int(0));
    };
    let picked = by_lex(acc, &z, &min, &max, Order::Asc, None)?;
    remove_all(acc, &mut z, picked, Ends::default(), "zremrangebylex")
}

/// Whether a removed range begins at the lowest member and ends at the
/// highest, where the command knows (`None`: look).
#[derive(Default)]
struct Ends {
    bottom: Option<bool>,
    top: Option<bool>,
}

/// Removes `picked` (in ascending order) and moves the marks past it where
/// it reaches an end of the set; the count removed, told as `event`.
fn remove_all(
    acc: &mut dyn Access,
    z: &mut Coll,
    picked: Vec<(f64, Vec<u8>)>,
    ends: Ends,
    event: &'static str,
) -> Outcome {
    let (Some(first), Some(last)) = (picked.first(), picked.last()) else {
        return Ok(Reply::Int(0));
    };
    let (first, last) = (order_key(first.0, &first.1), order_key(last.0, &last.1));
    // Forward reads both (a step down the order costs a search).
    let from_bottom = match ends.bottom {
        Some(known) => known,
        None => first_from(acc, z, &[])?.as_deref() == Some(&first[1..]),
    };
    let to_top = match ends.top {
        Some(known) => known,
        None => first_from(acc, z, &[&last[1..], &[0]].concat())?.is_none(),
    };
    for (score, member) in &picked {
        remove_scored(acc, z, member, *score)?;
    }
    // Nothing is left at or below `last` (at or above `first`).
    if from_bottom {
        z.mark = last[1..].to_vec();
    }
    if to_top {
        z.high = first[1..].to_vec();
    }
    z.save_and_tell(acc, ZSET, event)?;
    Ok(Reply::Int(picked.len() as i64))
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
        z.save_and_tell(
            acc,
            ZSET,
            if name == "zpopmin" {
                "zpopmin"
            } else {
                "zpopmax"
            },
        )?;
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
