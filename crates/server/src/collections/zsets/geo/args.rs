//! A geo search's arguments: which command (and so which fixed
//! arguments and options it takes), the options, and the checks Redis
//! 7.0's `georadiusGeneric` makes on them, each in its order.

use super::hash;
use super::shape::Shape;
use super::units::{float_arg, long_lat, unit};
use crate::access::Access;
use crate::collections::zsets::members::score_of;
use crate::collections::Coll;
use crate::commands::{fail, int_arg, syntax_error, Fail};

/// Which command runs, and so which arguments it takes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Form {
    /// GEORADIUS: `key lon lat radius unit`, STORE allowed unless `_RO`.
    Coords { read_only: bool },
    /// GEORADIUSBYMEMBER: `key member radius unit`.
    Member { read_only: bool },
    /// GEOSEARCH `key`, or GEOSEARCHSTORE `dst key`, then FROM/BY.
    Search { store: bool },
}

impl Form {
    /// The keyspace notification of its `STORE`.
    pub(super) fn store_event(&self) -> &'static str {
        match self {
            Form::Search { .. } => "geosearchstore",
            _ => "georadiusstore",
        }
    }

    pub(super) fn of(name: &str) -> Form {
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
    pub(super) fn base_args(self) -> usize {
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
pub(super) struct Options {
    pub(super) with_dist: bool,
    pub(super) with_hash: bool,
    pub(super) with_coords: bool,
    /// Ascending (`Some(true)`), descending, or found order.
    pub(super) ascending: Option<bool>,
    pub(super) any: bool,
    pub(super) count: i64,
    pub(super) store: Option<Vec<u8>>,
    pub(super) store_dist: bool,
    pub(super) from: Option<[f64; 2]>,
    pub(super) from_member: bool,
    pub(super) shape: Option<(Shape, f64)>,
}

/// The radius arguments `radius unit` (`extractDistanceOrReply`).
pub(super) fn radius(args: &[Vec<u8>]) -> Result<(Shape, f64), Fail> {
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
pub(super) fn member_point(
    acc: &mut dyn Access,
    z: &Coll,
    member: &[u8],
) -> Result<[f64; 2], Fail> {
    match score_of(acc, z, member)? {
        Some(s) => Ok(hash::decode_score(s)),
        None => Err(fail("ERR could not decode requested zset member")),
    }
}

/// The options after the fixed arguments, each checked as it is read.
pub(super) fn parse_options(
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
pub(super) fn check_options(a: &[Vec<u8>], form: Form, o: &Options) -> Result<(), Fail> {
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
