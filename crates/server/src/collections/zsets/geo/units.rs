//! The arguments and replies the geo commands share, as Redis reads and
//! prints them: floats, a longitude and latitude, units, distances and
//! coordinates.

use super::hash;
use crate::commands::{fail, Fail};
use crate::resp::Reply;

/// A float argument as Redis reads one (`getDoubleFromObjectOrReply`),
/// with `what` as the error's text.
pub(super) fn float_arg(arg: &[u8], what: &str) -> Result<f64, Fail> {
    crate::collections::zsets::members::parse_score(arg).ok_or_else(|| fail(what))
}

/// A longitude and a latitude (`extractLongLatOrReply`).
pub(super) fn long_lat(args: &[Vec<u8>]) -> Result<[f64; 2], Fail> {
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
pub(super) fn unit(arg: &[u8]) -> Result<f64, Fail> {
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
pub(super) fn distance_reply(d: f64) -> Reply {
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
pub(super) fn coordinates([x, y]: [f64; 2]) -> Reply {
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
