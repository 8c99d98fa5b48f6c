//! The geo searches: GEORADIUS GEORADIUS_RO GEORADIUSBYMEMBER
//! GEORADIUSBYMEMBER_RO GEOSEARCH GEOSEARCHSTORE, one function as Redis
//! 7.0's `georadiusGeneric` is, with its order of checks and replies.

use super::args::{check_options, member_point, parse_options, radius, Form, Options};
use super::hash;
use super::shape::{self, Search};
use super::sort::{merge_sort, partial_sort};
use super::units::{coordinates, distance_reply, long_lat};
use crate::access::Access;
use crate::collections::zsets::members::{order_start, store_result};
use crate::collections::zsets::walk::walk_from;
use crate::collections::Coll;
use crate::commands::{fail, Fail, Outcome};
use crate::resp::Reply;
use crate::store::Kind;

/// One point found, as Redis's `geoPoint`.
#[derive(Clone)]
struct Point {
    xy: [f64; 2],
    dist: f64,
    score: f64,
    member: Vec<u8>,
}

pub fn run(name: &str, a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let form = Form::of(name);
    let src = match form {
        Form::Search { store: true } => &a[2],
        _ => &a[1],
    };
    let z = Coll::load(acc, src, Kind::ZSet)?;
    let mut o = Options::default();
    match form {
        Form::Coords { .. } => {
            o.from = Some(long_lat(&a[2..4])?);
            o.shape = Some(radius(&a[4..6])?);
        }
        Form::Member { .. } => {
            if let Some(z) = &z {
                o.from = Some(member_point(acc, z, &a[2])?);
                o.shape = Some(radius(&a[3..5])?);
            }
        }
        Form::Search { store } => {
            if store {
                o.store = Some(a[1].clone());
            }
        }
    }
    parse_options(a, form, acc, z.as_ref(), &mut o)?;
    check_options(a, form, &o)?;
    let Some(z) = z else {
        return Ok(match o.store {
            Some(dst) => store_result(acc, &dst, Vec::new(), Some(form.store_event()))?,
            None => Reply::Array(Vec::new()),
        });
    };
    let (Some(center), Some((shape, conversion))) = (o.from, o.shape) else {
        // Only a GEORADIUSBYMEMBER on a missing key lacks them, and that
        // returned above.
        return Err(fail("ERR could not decode requested zset member"));
    };
    let search = Search {
        center,
        conversion,
        shape,
    };
    if o.count != 0 && o.ascending.is_none() && !o.any {
        o.ascending = Some(true);
    }
    let limit = if o.any { o.count as usize } else { 0 };
    let mut found = points(acc, &z, &search, limit)?;
    if found.is_empty() && o.store.is_none() {
        return Ok(Reply::Array(Vec::new()));
    }
    let returned = match o.count == 0 || (found.len() as i64) < o.count {
        true => found.len(),
        false => o.count as usize,
    };
    if let Some(ascending) = o.ascending {
        sort_points(&mut found, ascending, returned);
    }
    found.truncate(returned);
    for p in &mut found {
        p.dist /= conversion;
    }
    match o.store.take() {
        Some(dst) => store(acc, &dst, found, o.store_dist, form.store_event()),
        None => Ok(reply(found, &o)),
    }
}

/// The points of `z` inside `search`, box by box in Redis's order, up to
/// `limit` of them (0: all).
fn points(
    acc: &mut dyn Access,
    z: &Coll,
    search: &Search,
    limit: usize,
) -> Result<Vec<Point>, Fail> {
    let boxes = search.boxes();
    let mut found = Vec::new();
    let mut last_processed = 0;
    for (i, b) in boxes.iter().enumerate() {
        if b.bits == 0 && b.step == 0 {
            continue;
        }
        // Redis skips a box equal to the one read last, except after the
        // center's (`last_processed` 0 reads as "none").
        if last_processed != 0 && *b == boxes[last_processed] {
            continue;
        }
        if limit != 0 && found.len() >= limit {
            break;
        }
        let (min, max) = shape::score_range(*b);
        let (min, max) = (min as f64, max as f64);
        walk_from(acc, z, &order_start(min), |score, member| {
            if score >= max {
                return false;
            }
            let xy = hash::decode_score(score);
            if let Some(dist) = search.distance_within(xy) {
                found.push(Point {
                    xy,
                    dist,
                    score,
                    member: member.to_vec(),
                });
            }
            limit == 0 || found.len() < limit
        })?;
        last_processed = i;
    }
    Ok(found)
}

/// Sorts by distance as Redis does: glibc's `qsort` when every point is
/// returned, else `pqsort` over the first `returned`.
fn sort_points(found: &mut [Point], ascending: bool, returned: usize) {
    let asc = |a: &Point, b: &Point| match (a.dist > b.dist, a.dist == b.dist) {
        (true, _) => 1,
        (_, true) => 0,
        _ => -1,
    };
    let desc = move |a: &Point, b: &Point| -asc(a, b);
    let cmp: &super::sort::Cmp<Point> = match ascending {
        true => &asc,
        false => &desc,
    };
    match returned == found.len() {
        true => merge_sort(found, cmp),
        false if returned > 0 => partial_sort(found, cmp, 0, returned - 1),
        false => {}
    }
}

/// The search's reply: members, or each member with what was asked.
fn reply(found: Vec<Point>, o: &Options) -> Reply {
    let extras = o.with_dist || o.with_hash || o.with_coords;
    let items = found.into_iter().map(|p| {
        if !extras {
            return Reply::Bulk(p.member);
        }
        let mut item = vec![Reply::Bulk(p.member)];
        if o.with_dist {
            item.push(distance_reply(p.dist));
        }
        if o.with_hash {
            item.push(Reply::Int(hash::c_double_to_i64(p.score)));
        }
        if o.with_coords {
            item.push(coordinates(p.xy));
        }
        Reply::Array(item)
    });
    Reply::Array(items.collect())
}

/// STORE/STOREDIST: the points replace `dst` as a sorted set scored by
/// geohash or by distance; none deletes it.
fn store(
    acc: &mut dyn Access,
    dst: &[u8],
    found: Vec<Point>,
    by_dist: bool,
    event: &'static str,
) -> Outcome {
    let mut seen = std::collections::HashSet::new();
    let picked = found
        .into_iter()
        .filter(|p| seen.insert(p.member.clone()))
        .map(|p| (if by_dist { p.dist } else { p.score }, p.member))
        .collect();
    store_result(acc, dst, picked, Some(event))
}
