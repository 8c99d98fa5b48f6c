//! Geo commands: GEOADD GEOPOS GEOHASH GEODIST, and the searches
//! (`search.rs`) GEORADIUS GEORADIUSBYMEMBER (and their `_RO` forms)
//! GEOSEARCH GEOSEARCHSTORE, as Redis 7.0's `geo.c` runs them.
//!
//! A geo set is a sorted set whose scores are 52-bit geohashes
//! (`hash.rs`), so `TYPE` says `zset` and every sorted-set command works
//! on it, as in Redis. A search reads the score ranges of the nine boxes
//! around its center (what it reads is about what it returns, not the
//! set's size), keeps the points inside the shape, and sorts them as
//! Redis does (`sort.rs`), so points at equal distances come out in
//! Redis's order too.

mod args;
mod hash;
mod search;
mod shape;
mod sort;

use super::add;
use super::members::score_of;
use crate::access::Access;
use crate::collections::Coll;
use crate::commands::{fail, syntax_error, Fail, Outcome};
use crate::resp::Reply;
use crate::store::Kind;

pub use args::store_key;

pub fn run(name: &str, a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    match name {
        "geoadd" => geoadd(a, acc),
        "geopos" => geopos(a, acc),
        "geohash" => geohash(a, acc),
        "geodist" => geodist(a, acc),
        _ => search::run(name, a, acc),
    }
}

/// `GEOADD key [NX|XX] [CH] lon lat member ...`: ZADD of each member at
/// its point's geohash.
fn geoadd(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let mut first = 2;
    let (mut nx, mut xx) = (false, false);
    while let Some(opt) = a.get(first) {
        match opt.to_ascii_lowercase().as_slice() {
            b"nx" => nx = true,
            b"xx" => xx = true,
            b"ch" => {}
            _ => break,
        }
        first += 1;
    }
    if !(a.len() - first).is_multiple_of(3) || (nx && xx) {
        return Err(syntax_error());
    }
    let mut zadd = a[..first].to_vec();
    for point in a[first..].chunks_exact(3) {
        let [x, y] = long_lat(&point[..2])?;
        let score = hash::encode_wgs84(x, y, hash::STEP_MAX)
            .map_or(0, |h| h.align52())
            .to_string();
        zadd.push(score.into_bytes());
        zadd.push(point[2].clone());
    }
    add::zadd(&zadd, acc)
}

/// `GEOPOS key member ...`: each member's point, nil for a missing one.
fn geopos(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let z = Coll::load(acc, &a[1], Kind::ZSet)?;
    let mut out = Vec::with_capacity(a.len() - 2);
    for member in &a[2..] {
        out.push(match score(acc, z.as_ref(), member)? {
            Some(s) => coordinates(hash::decode_score(s)),
            None => Reply::NullArray,
        });
    }
    Ok(Reply::Array(out))
}

/// `GEOHASH key member ...`: each member's standard 11-character geohash.
fn geohash(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let z = Coll::load(acc, &a[1], Kind::ZSet)?;
    let mut out = Vec::with_capacity(a.len() - 2);
    for member in &a[2..] {
        let text = score(acc, z.as_ref(), member)?.and_then(hash::standard_string);
        out.push(text.map_or(Reply::Null, |t| Reply::Bulk(t.to_vec())));
    }
    Ok(Reply::Array(out))
}

/// `GEODIST key m1 m2 [unit]`.
fn geodist(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let to_meters = match a.len() {
        5 => unit(&a[4])?,
        4 => 1.0,
        _ => return Err(syntax_error()),
    };
    let Some(z) = Coll::load(acc, &a[1], Kind::ZSet)? else {
        return Ok(Reply::Null);
    };
    let (Some(s1), Some(s2)) = (score_of(acc, &z, &a[2])?, score_of(acc, &z, &a[3])?) else {
        return Ok(Reply::Null);
    };
    let ([x1, y1], [x2, y2]) = (hash::decode_score(s1), hash::decode_score(s2));
    Ok(distance_reply(shape::distance(x1, y1, x2, y2) / to_meters))
}

/// `member`'s score in `z`, if both exist.
fn score(acc: &mut dyn Access, z: Option<&Coll>, member: &[u8]) -> Result<Option<f64>, Fail> {
    match z {
        Some(z) => score_of(acc, z, member),
        None => Ok(None),
    }
}

/// A float argument as Redis reads one (`getDoubleFromObjectOrReply`),
/// with `what` as the error's text.
fn float_arg(arg: &[u8], what: &str) -> Result<f64, Fail> {
    super::members::parse_score(arg).ok_or_else(|| fail(what))
}

/// A longitude and a latitude (`extractLongLatOrReply`).
fn long_lat(args: &[Vec<u8>]) -> Result<[f64; 2], Fail> {
    let x = float_arg(&args[0], "ERR value is not a valid float")?;
    let y = float_arg(&args[1], "ERR value is not a valid float")?;
    if !(hash::LONG_MIN..=hash::LONG_MAX).contains(&x)
        || !(hash::LAT_MIN..=hash::LAT_MAX).contains(&y)
    {
        return Err(fail(&format!(
            "ERR invalid longitude,latitude pair {x:.6},{y:.6}"
        )));
    }
    Ok([x, y])
}

/// A unit's size in meters (`extractUnitOrReply`).
fn unit(arg: &[u8]) -> Result<f64, Fail> {
    Ok(match arg.to_ascii_lowercase().as_slice() {
        b"m" => 1.0,
        b"km" => 1000.0,
        b"ft" => 0.3048,
        b"mi" => 1609.34,
        _ => {
            return Err(fail(
                "ERR unsupported unit provided. please use M, KM, FT, MI",
            ))
        }
    })
}

/// A distance as Redis prints one (`addReplyDoubleDistance`): rounded
/// half to even at four decimals, always four shown.
fn distance_reply(d: f64) -> Reply {
    Reply::Bulk(distance_text(d).into_bytes())
}

fn distance_text(d: f64) -> String {
    if d == 0.0 {
        return "0.0000".into();
    }
    // `llrint` of the scaled value (past i64's range C's answer is
    // i64::MIN, which prints as this).
    let v = hash::c_double_to_i64((d * 10000.0).round_ties_even());
    let sign = if v < 0 { "-" } else { "" };
    let u = v.unsigned_abs();
    format!("{sign}{}.{:04}", u / 10000, u % 10000)
}

/// A point as `GEOPOS` and `WITHCOORD` give it: two doubles in Redis's
/// human form (`addReplyHumanLongDouble`).
fn coordinates([x, y]: [f64; 2]) -> Reply {
    Reply::Array(vec![
        Reply::DoubleText(human(x)),
        Reply::DoubleText(human(y)),
    ])
}

/// C's `%.17Lf` of `d`, trailing zeros (and a bare point) removed, `-0`
/// as `0` (Redis's `LD_STR_HUMAN`).
fn human(d: f64) -> String {
    let text = format!("{d:.17}");
    let trimmed = match text.contains('.') {
        true => text.trim_end_matches('0').trim_end_matches('.'),
        false => &text,
    };
    match trimmed {
        "-0" => "0".into(),
        t => t.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_print_as_redis_does() {
        assert_eq!(distance_text(0.0), "0.0000");
        assert_eq!(distance_text(0.775), "0.7750");
        assert_eq!(distance_text(166274.15156960033), "166274.1516");
        assert_eq!(distance_text(1e-9), "0.0000");
        assert_eq!(distance_text(123.45675), "123.4568");
    }

    #[test]
    fn coordinates_print_as_redis_does() {
        assert_eq!(human(13.361389338970184), "13.36138933897018433");
        assert_eq!(human(-0.0), "0");
        assert_eq!(human(-1e-30), "0");
        assert_eq!(human(180.0), "180");
        assert_eq!(human(-85.05112878), "-85.0511287799999991");
    }
}
