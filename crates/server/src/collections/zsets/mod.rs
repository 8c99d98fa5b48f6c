//! Sorted-set commands: ZADD ZINCRBY ZSCORE ZMSCORE ZCARD ZREM ZCOUNT
//! ZRANK ZREVRANK ZRANGE (by rank, BYSCORE or BYLEX, REV, LIMIT,
//! WITHSCORES) ZRANGESTORE ZREVRANGE ZRANGEBYSCORE ZREVRANGEBYSCORE
//! ZRANGEBYLEX ZREVRANGEBYLEX ZLEXCOUNT ZPOPMIN ZPOPMAX ZREMRANGEBYRANK
//! ZREMRANGEBYSCORE ZREMRANGEBYLEX; the algebra (`algebra.rs`): ZUNION
//! ZINTER ZDIFF, their STORE forms, ZINTERCARD; the geo commands
//! (`geo/`), whose sets are sorted sets scored by geohash.
//!
//! A member is two elements: `m` + member holding its score (the `f64`'s
//! bits), and `s` + the score in an order-preserving form + member, empty,
//! so that the `s` range is the set in Redis's order (score, then member
//! bytes). Walks go up from the lowest score or down from the highest
//! (`REV`, `ZPOPMAX`), each starting inside the marks pops leave (`Coll`),
//! so a range costs what it reads and a pop what it takes. Ranks
//! (`ZRANK`, `ZREVRANK`, a `ZRANGE` from deep inside) go through the rank
//! index (`counts.rs`): O(n / 1024 + 1024) entries read (Redis's skiplist:
//! log n).

mod add;
mod algebra;
mod counts;
mod geo;
pub(crate) use geo::store_key as geo_store_key;
mod lex;
mod limit;
pub(crate) mod members;
pub(crate) mod range;
mod rank;
mod remove_range;
pub(crate) mod walk;

use super::Coll;
use crate::access::Access;
use crate::commands::{fail, Outcome};
use crate::cursors::Cursors;
use crate::notify::ZSET;
use crate::resp::Reply;
use crate::store::Kind;
use limit::{Mode, Order};
use members::*;
use range::bound_arg;
use walk::walk_from;

pub fn run(name: &str, a: &[Vec<u8>], acc: &mut dyn Access, _: &Cursors) -> Outcome {
    match name {
        "zadd" => add::zadd(a, acc),
        "zrandmember" => super::random::zrandmember(a, acc),
        "zincrby" => {
            let by = score_arg(&a[2])?;
            let mut z = Coll::load_or_new(acc, &a[1], Kind::ZSet)?;
            let old = score_of(acc, &z, &a[3])?;
            let score = old.map_or(by, |s| s + by);
            if score.is_nan() {
                return Err(fail("ERR resulting score is not a number (NaN)"));
            }
            set_score(acc, &mut z, &a[3], old, score)?;
            z.save_and_tell(acc, ZSET, "zincr")?;
            Ok(Reply::Double(score))
        }
        "zscore" => Ok(match Coll::load(acc, &a[1], Kind::ZSet)? {
            Some(z) => score_of(acc, &z, &a[2])?.map_or(Reply::Null, Reply::Double),
            None => Reply::Null,
        }),
        "zmscore" => {
            let z = Coll::load(acc, &a[1], Kind::ZSet)?;
            let mut out = Vec::with_capacity(a.len() - 2);
            for m in &a[2..] {
                out.push(match &z {
                    Some(z) => score_of(acc, z, m)?.map_or(Reply::Null, Reply::Double),
                    None => Reply::Null,
                });
            }
            Ok(Reply::Array(out))
        }
        "zcard" => Ok(Reply::Int(
            Coll::load(acc, &a[1], Kind::ZSet)?.map_or(0, |z| z.count()),
        )),
        "zrem" => {
            let Some(mut z) = Coll::load(acc, &a[1], Kind::ZSet)? else {
                return Ok(Reply::Int(0));
            };
            let mut removed = 0;
            for m in &a[2..] {
                removed += remove(acc, &mut z, m)? as i64;
            }
            if removed > 0 {
                z.save_and_tell(acc, ZSET, "zrem")?;
            }
            Ok(Reply::Int(removed))
        }
        "zcount" => {
            let (min, max) = (bound_arg(&a[2])?, bound_arg(&a[3])?);
            let Some(z) = Coll::load(acc, &a[1], Kind::ZSet)? else {
                return Ok(Reply::Int(0));
            };
            let mut n = 0;
            walk_from(acc, &z, &order_start(min.score), |s, _| {
                if max.below(s) {
                    return false;
                }
                n += min.above(s) as i64;
                true
            })?;
            Ok(Reply::Int(n))
        }
        "zrank" | "zrevrank" => rank::rank(name, a, acc),
        "zrange" => range::zrange(a, acc, Order::Asc, Mode::Rank),
        "zrevrange" => range::zrange(a, acc, Order::Desc, Mode::Rank),
        "zrangebyscore" => range::zrange(a, acc, Order::Asc, Mode::Score),
        "zrevrangebyscore" => range::zrange(a, acc, Order::Desc, Mode::Score),
        "zrangebylex" => range::zrange(a, acc, Order::Asc, Mode::Lex),
        "zrevrangebylex" => range::zrange(a, acc, Order::Desc, Mode::Lex),
        "zrangestore" => range::zrangestore(a, acc),
        "zlexcount" => {
            let (min, max) = (lex::lex_arg(&a[2]), lex::lex_arg(&a[3]));
            let (Ok(min), Ok(max)) = (min, max) else {
                return Err(fail("ERR min or max not valid string range item"));
            };
            Ok(Reply::Int(match Coll::load(acc, &a[1], Kind::ZSet)? {
                Some(z) => lex::count(acc, &z, &min, &max)?,
                None => 0,
            }))
        }
        "zunion" | "zinter" | "zdiff" | "zunionstore" | "zinterstore" | "zdiffstore"
        | "zintercard" => algebra::run(name, a, acc),
        "zpopmin" | "zpopmax" => remove_range::pop(name, a, acc),
        "zremrangebyrank" => remove_range::by_rank_command(a, acc),
        "zremrangebyscore" => remove_range::by_score_command(a, acc),
        "zremrangebylex" => remove_range::by_lex_command(a, acc),
        _ if name.starts_with("geo") => geo::run(name, a, acc),
        _ => Err(fail("ERR unknown command")),
    }
}
