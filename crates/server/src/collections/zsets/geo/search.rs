//! The geo searches: GEORADIUS GEORADIUS_RO GEORADIUSBYMEMBER
//! GEORADIUSBYMEMBER_RO GEOSEARCH GEOSEARCHSTORE, one function as Redis
//! 7.0's `georadiusGeneric` is, with its order of checks and replies.

use super::hash;
use super::shape::{self, Search, Shape};
use super::sort::{merge_sort, partial_sort};
use super::{coordinates, distance_reply, float_arg, long_lat, unit};
use crate::collections::zsets::{order_start, score_of, store_result, walk_from};
use crate::collections::Coll;
use crate::commands::{fail, int_arg, syntax_error, Fail, Outcome};
use crate::resp::Reply;
use crate::store::{Access, Kind};

/// Which command runs, and so which arguments it takes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    /// GEORADIUS: `key lon lat radius unit`, STORE allowed unless `_RO`.
    Coords { read_only: bool },
    /// GEORADIUSBYMEMBER: `key member radius unit`.
    Member { read_only: bool },
    /// GEOSEARCH `key`, or GEOSEARCHSTORE `dst key`, then FROM/BY.
    Search { store: bool },
}

impl Form {
    fn of(name: &str) -> Form {
        match name {
            "georadius" => Form::Coords { read_only: false },
            "georadius_ro" => Form::Coords { read_only: true },
            "georadiusbymember" => Form::Member { read_only: false },
            "georadiusbymember_ro" => Form::Member { read_only: true },
            "geosearch" => Form::Search { store: false },
            _ => Form::Search { store: true },
        }
    }

    /// Where the options start.
    fn base_args(self) -> usize {
        match self {
            Form::Coords { .. } => 6,
            Form::Member { .. } => 5,
            Form::Search { store } => 2 + store as usize,
        }
    }

    fn takes_store(self) -> bool {
        matches!(
            self,
            Form::Coords { read_only: false } | Form::Member { read_only: false }
        )
    }
}

/// The key a search request `a` (command `name`, lowercase) stores into,
/// if it stores (for waking blocked pops).
pub fn store_key<'a>(name: &str, a: &'a [Vec<u8>]) -> Option<&'a [u8]> {
    let form = Form::of(name);
    if form == (Form::Search { store: true }) {
        return a.get(1).map(|k| k.as_slice());
    }
    if !form.takes_store() {
        return None;
    }
    let options = a.get(form.base_args()..)?;
    // The last STORE or STOREDIST wins, as in the parse; COUNT's number
    // and the keys are skipped, so a key named "store" is not an option.
    let (mut i, mut key) = (0, None);
    while i < options.len() {
        match options[i].to_ascii_lowercase().as_slice() {
            b"store" | b"storedist" => {
                key = options.get(i + 1).map(|k| k.as_slice());
                i += 2;
            }
            b"count" => i += 2,
            _ => i += 1,
        }
    }
    key
}

/// What the options asked for.
#[derive(Default)]
struct Options {
    with_dist: bool,
    with_hash: bool,
    with_coords: bool,
    /// Ascending (`Some(true)`), descending, or found order.
    ascending: Option<bool>,
    any: bool,
    count: i64,
    store: Option<Vec<u8>>,
    store_dist: bool,
    from: Option<[f64; 2]>,
    from_member: bool,
    shape: Option<(Shape, f64)>,
}

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
            Some(dst) => store_result(acc, &dst, Vec::new())?,
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
        Some(dst) => store(acc, &dst, found, o.store_dist),
        None => Ok(reply(found, &o)),
    }
}

/// The radius arguments `radius unit` (`extractDistanceOrReply`).
fn radius(args: &[Vec<u8>]) -> Result<(Shape, f64), Fail> {
    let radius = float_arg(&args[0], "ERR need numeric radius")?;
    if radius < 0.0 {
        return Err(fail("ERR radius cannot be negative"));
    }
    Ok((Shape::Circle { radius }, unit(&args[1])?))
}

/// The box arguments `width height unit` (`extractBoxOrReply`).
fn rectangle(args: &[Vec<u8>]) -> Result<(Shape, f64), Fail> {
    let width = float_arg(&args[0], "ERR need numeric width")?;
    let height = float_arg(&args[1], "ERR need numeric height")?;
    if height < 0.0 || width < 0.0 {
        return Err(fail("ERR height or width cannot be negative"));
    }
    Ok((Shape::Box { width, height }, unit(&args[2])?))
}

/// A member's point, or Redis's error for a missing member.
fn member_point(acc: &mut dyn Access, z: &Coll, member: &[u8]) -> Result<[f64; 2], Fail> {
    match score_of(acc, z, member)? {
        Some(s) => Ok(hash::decode_score(s)),
        None => Err(fail("ERR could not decode requested zset member")),
    }
}

/// The options after the fixed arguments, each checked as it is read.
fn parse_options(
    a: &[Vec<u8>],
    form: Form,
    acc: &mut dyn Access,
    z: Option<&Coll>,
    o: &mut Options,
) -> Result<(), Fail> {
    let searching = matches!(form, Form::Search { .. });
    let rest = &a[form.base_args().min(a.len())..];
    let mut i = 0;
    let (mut from_loc, mut by_radius, mut by_box) = (false, false, false);
    while i < rest.len() {
        let left = rest.len() - i - 1;
        match rest[i].to_ascii_lowercase().as_slice() {
            b"withdist" => o.with_dist = true,
            b"withhash" => o.with_hash = true,
            b"withcoord" => o.with_coords = true,
            b"any" => o.any = true,
            b"asc" => o.ascending = Some(true),
            b"desc" => o.ascending = Some(false),
            b"count" if left >= 1 => {
                o.count = int_arg(&rest[i + 1])?;
                if o.count <= 0 {
                    return Err(fail("ERR COUNT must be > 0"));
                }
                i += 1;
            }
            opt @ (b"store" | b"storedist") if left >= 1 && form.takes_store() => {
                o.store = Some(rest[i + 1].clone());
                o.store_dist = opt == b"storedist";
                i += 1;
            }
            b"storedist" if form == (Form::Search { store: true }) => o.store_dist = true,
            b"frommember" if left >= 1 && searching && !from_loc => {
                if let Some(z) = z {
                    o.from = Some(member_point(acc, z, &rest[i + 1])?);
                }
                o.from_member = true;
                i += 1;
            }
            b"fromlonlat" if left >= 2 && searching && !o.from_member => {
                o.from = Some(long_lat(&rest[i + 1..i + 3])?);
                from_loc = true;
                i += 2;
            }
            b"byradius" if left >= 2 && searching && !by_box => {
                o.shape = Some(radius(&rest[i + 1..i + 3])?);
                by_radius = true;
                i += 2;
            }
            b"bybox" if left >= 3 && searching && !by_radius => {
                o.shape = Some(rectangle(&rest[i + 1..i + 4])?);
                by_box = true;
                i += 3;
            }
            _ => return Err(syntax_error()),
        }
        i += 1;
    }
    Ok(())
}

/// The checks after the options, in Redis's order.
fn check_options(a: &[Vec<u8>], form: Form, o: &Options) -> Result<(), Fail> {
    let name = String::from_utf8_lossy(&a[0]);
    if o.store.is_some() && (o.with_dist || o.with_hash || o.with_coords) {
        let what = match form {
            Form::Search { store: true } => "GEOSEARCHSTORE",
            _ => "STORE option in GEORADIUS",
        };
        return Err(fail(&format!(
            "ERR {what} is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
        )));
    }
    if let Form::Search { .. } = form {
        if o.from.is_none() && !o.from_member {
            return Err(fail(&format!(
                "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for {name}"
            )));
        }
        if o.shape.is_none() {
            return Err(fail(&format!(
                "ERR exactly one of BYRADIUS and BYBOX can be specified for {name}"
            )));
        }
    }
    if o.any && o.count == 0 {
        return Err(fail("ERR the ANY argument requires COUNT argument"));
    }
    Ok(())
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
            item.push(Reply::Int(c_double_to_i64(p.score)));
        }
        if o.with_coords {
            item.push(coordinates(p.xy));
        }
        Reply::Array(item)
    });
    Reply::Array(items.collect())
}

/// C's `(long long)` of a score: truncation, `i64::MIN` out of range.
fn c_double_to_i64(x: f64) -> i64 {
    match (-9.223372036854776e18..9.223372036854776e18).contains(&x) {
        true => x as i64,
        false => i64::MIN,
    }
}

/// STORE/STOREDIST: the points replace `dst` as a sorted set scored by
/// geohash or by distance; none deletes it.
fn store(acc: &mut dyn Access, dst: &[u8], found: Vec<Point>, by_dist: bool) -> Outcome {
    let mut seen = std::collections::HashSet::new();
    let picked = found
        .into_iter()
        .filter(|p| seen.insert(p.member.clone()))
        .map(|p| (if by_dist { p.dist } else { p.score }, p.member))
        .collect();
    store_result(acc, dst, picked)
}

#[cfg(test)]
mod tests {
    use super::store_key;

    fn req(parts: &[&str]) -> Vec<Vec<u8>> {
        parts.iter().map(|p| p.as_bytes().to_vec()).collect()
    }

    #[test]
    fn the_store_key_is_found_as_the_parse_finds_it() {
        let a = req(&["georadius", "k", "1", "1", "1", "km", "STORE", "store"]);
        assert_eq!(store_key("georadius", &a), Some(&b"store"[..]));
        let a = req(&[
            "georadius",
            "k",
            "1",
            "1",
            "1",
            "km",
            "COUNT",
            "2",
            "STORE",
            "a",
            "STOREDIST",
            "b",
        ]);
        assert_eq!(store_key("georadius", &a), Some(&b"b"[..]));
        let a = req(&["georadius_ro", "k", "1", "1", "1", "km", "STORE", "a"]);
        assert_eq!(store_key("georadius_ro", &a), None);
        let a = req(&[
            "geosearchstore",
            "dst",
            "src",
            "FROMLONLAT",
            "1",
            "1",
            "BYRADIUS",
            "1",
            "km",
        ]);
        assert_eq!(store_key("geosearchstore", &a), Some(&b"dst"[..]));
    }
}
