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
mod units;

use super::add;
use super::members::score_of;
use crate::access::Access;
use crate::collections::Coll;
use crate::commands::{syntax_error, Fail, Outcome};
use crate::resp::Reply;
use crate::store::Kind;

pub use args::store_key;
use units::{coordinates, distance_reply, long_lat, unit};

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
