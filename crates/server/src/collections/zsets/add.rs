//! ZADD and its flags (NX XX GT LT CH INCR), in Redis 7.0's order of
//! checks.

use super::members::{score_arg, score_of, set_score};
use crate::access::Access;
use crate::collections::Coll;
use crate::commands::{fail, syntax_error, Outcome};
use crate::resp::Reply;
use crate::store::Kind;

/// ZADD's flags.
#[derive(Default)]
struct AddFlags {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
    ch: bool,
    incr: bool,
}

pub(super) fn zadd(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let mut f = AddFlags::default();
    let mut i = 2;
    while i < a.len() {
        match a[i].to_ascii_lowercase().as_slice() {
            b"nx" => f.nx = true,
            b"xx" => f.xx = true,
            b"gt" => f.gt = true,
            b"lt" => f.lt = true,
            b"ch" => f.ch = true,
            b"incr" => f.incr = true,
            _ => break,
        }
        i += 1;
    }
    let rest = &a[i..];
    if rest.is_empty() || !rest.len().is_multiple_of(2) {
        return Err(syntax_error());
    }
    if f.nx && f.xx {
        return Err(fail(
            "ERR XX and NX options at the same time are not compatible",
        ));
    }
    if ((f.gt || f.lt) && f.nx) || (f.gt && f.lt) {
        return Err(fail(
            "ERR GT, LT, and/or NX options at the same time are not compatible",
        ));
    }
    if f.incr && rest.len() > 2 {
        return Err(fail(
            "ERR INCR option supports a single increment-element pair",
        ));
    }
    let mut pairs = Vec::with_capacity(rest.len() / 2);
    for p in rest.chunks_exact(2) {
        pairs.push((score_arg(&p[0])?, &p[1]));
    }
    let mut z = Coll::load_or_new(acc, &a[1], Kind::ZSet)?;
    let (mut added, mut changed) = (0, 0);
    let mut incr_result = None;
    for (score, member) in pairs {
        let old = score_of(acc, &z, member)?;
        let new = match (old, f.incr) {
            (Some(old), true) => old + score,
            _ => score,
        };
        if new.is_nan() {
            return Err(fail("ERR resulting score is not a number (NaN)"));
        }
        let skip = match old {
            Some(old) => f.nx || (f.gt && new <= old) || (f.lt && new >= old),
            None => f.xx,
        };
        if skip {
            continue;
        }
        incr_result = Some(new);
        if old != Some(new) {
            set_score(acc, &mut z, member, old, new)?;
            match old {
                None => added += 1,
                Some(_) => changed += 1,
            }
        }
    }
    if added + changed > 0 {
        z.save_and_tell(
            acc,
            crate::notify::ZSET,
            if f.incr { "zincr" } else { "zadd" },
        )?;
    }
    Ok(match f.incr {
        true => incr_result.map_or(Reply::Null, Reply::Double),
        false => Reply::Int(added + if f.ch { changed } else { 0 }),
    })
}
