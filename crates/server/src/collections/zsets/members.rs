//! What the sorted-set commands share: scores as Redis parses them
//! (`strtod`), the two elements of a member (its score, and its place in
//! the score order), and reading, storing and removing members.

use super::counts;
use crate::access::Access;
use crate::collections::Coll;
use crate::commands::{fail, Fail, Outcome};
use crate::notify::ZSET;
use crate::resp::Reply;
use crate::store::Kind;

/// C's `strtod` over `arg` up to its first NUL (as C sees the string):
/// the value, whether it used all of that text, and whether it overflowed
/// or underflowed.
pub(crate) fn strtod(arg: &[u8]) -> (f64, bool, bool) {
    let text = arg.split(|&b| b == 0).next().unwrap_or_default();
    let Ok(text) = std::ffi::CString::new(text) else {
        return (0.0, false, false);
    };
    let mut end: *mut libc::c_char = std::ptr::null_mut();
    // SAFETY: `text` is NUL-terminated and outlives the call; `end` is a
    // valid place for strtod to store a pointer into it; errno is this
    // thread's.
    let (value, parsed, errno) = unsafe {
        *libc::__errno_location() = 0;
        let value = libc::strtod(text.as_ptr(), &mut end);
        let parsed = end.offset_from(text.as_ptr()) as usize;
        (value, parsed, *libc::__errno_location())
    };
    let all = parsed == text.as_bytes().len();
    (
        value,
        all,
        errno == libc::ERANGE && (value.is_infinite() || value == 0.0),
    )
}

/// A score as Redis parses one (the whole argument, no leading space, no
/// overflow to infinity or underflow to zero, not NaN).
pub fn parse_score(arg: &[u8]) -> Option<f64> {
    if arg.is_empty() || arg[0].is_ascii_whitespace() || arg.contains(&0) {
        return None;
    }
    let (value, all, range_error) = strtod(arg);
    (all && !range_error && !value.is_nan()).then_some(value)
}

pub(crate) fn score_arg(arg: &[u8]) -> Result<f64, Fail> {
    parse_score(arg).ok_or_else(|| fail("ERR value is not a valid float"))
}

/// A score's sub-key bytes: byte order is numeric order (-0 is stored as
/// 0, as Redis prints it).
pub(crate) fn order_bytes(score: f64) -> [u8; 8] {
    let bits = (score + 0.0).to_bits();
    match bits >> 63 {
        1 => !bits,
        _ => bits | (1 << 63),
    }
    .to_be_bytes()
}

pub(crate) fn score_of(acc: &mut dyn Access, z: &Coll, member: &[u8]) -> Result<Option<f64>, Fail> {
    let key = z.item_key(&[b"m", member].concat());
    match acc.item(&key)? {
        None => Ok(None),
        Some(v) => match <[u8; 8]>::try_from(v.as_slice()) {
            Ok(bits) => Ok(Some(f64::from_bits(u64::from_be_bytes(bits)))),
            Err(_) => Err(fail("ERR corrupt sorted set: a score is not 8 bytes")),
        },
    }
}

pub(crate) fn order_key(score: f64, member: &[u8]) -> Vec<u8> {
    [&b"s"[..], &order_bytes(score), member].concat()
}

/// The score order's start for scores from `score` on (less the `s`).
pub(crate) fn order_start(score: f64) -> [u8; 8] {
    order_bytes(score)
}

/// The score order's end (exclusive, less the `s`) for scores up to and
/// including `score`: the next score's start.
pub(crate) fn order_end(score: f64) -> [u8; 8] {
    // No score's bytes are all ones (that would be a NaN's), so this
    // does not wrap.
    u64::from_be_bytes(order_bytes(score))
        .wrapping_add(1)
        .to_be_bytes()
}

/// Members picked from a sorted set, with their scores, in order.
pub(crate) type Picked = Vec<(f64, Vec<u8>)>;

/// Replaces whatever `dst` held (its expiry too) with a sorted set of
/// `picked` (distinct members); an empty one deletes it. The reply is the
/// count stored, as Redis's STORE commands answer; `event`, the command's
/// keyspace notification (`None`: its caller tells).
pub(crate) fn store_result(
    acc: &mut dyn Access,
    dst: &[u8],
    picked: Vec<(f64, Vec<u8>)>,
    event: Option<&'static str>,
) -> Outcome {
    let existed = crate::collections::delete_key(acc, dst)?;
    if picked.is_empty() {
        if existed && event.is_some() {
            acc.notify(crate::notify::GENERIC, "del", dst);
        }
        return Ok(Reply::Int(0));
    }
    let mut z = Coll::load_or_new(acc, dst, Kind::ZSet)?;
    for (score, member) in &picked {
        set_score(acc, &mut z, member, None, *score)?;
    }
    z.save(acc)?;
    if let Some(event) = event {
        acc.notify(ZSET, event, dst);
    }
    Ok(Reply::Int(picked.len() as i64))
}

/// Sets `member`'s score, which was `old` (`None`: a new member).
pub(crate) fn set_score(
    acc: &mut dyn Access,
    z: &mut Coll,
    member: &[u8],
    old: Option<f64>,
    score: f64,
) -> Result<(), Fail> {
    let score = score + 0.0;
    let old_order = old.map(|old| order_key(old, member));
    if let Some(old_order) = &old_order {
        acc.del_item(&z.item_key(old_order))?;
    }
    let member_key = z.item_key(&[b"m", member].concat());
    acc.put_item(&member_key, &score.to_bits().to_be_bytes())?;
    let order = order_key(score, member);
    if order[1..] < z.mark[..] {
        z.mark = order[1..].to_vec();
    }
    if !z.high.is_empty() && order[1..] >= z.high[..] {
        z.high = [&order[1..], &[0]].concat();
    }
    acc.put_item(&z.item_key(&order), b"")?;
    match &old_order {
        Some(old_order) => counts::moved(acc, z, &old_order[1..], &order[1..])?,
        None => counts::count(acc, z, &order[1..], 1)?,
    }
    z.len += old.is_none() as i64;
    Ok(())
}

/// Removes `member`; true if it was there.
pub(crate) fn remove(acc: &mut dyn Access, z: &mut Coll, member: &[u8]) -> Result<bool, Fail> {
    let Some(score) = score_of(acc, z, member)? else {
        return Ok(false);
    };
    remove_scored(acc, z, member, score)?;
    Ok(true)
}

/// Removes `member`, whose score is `score`.
pub(crate) fn remove_scored(
    acc: &mut dyn Access,
    z: &mut Coll,
    member: &[u8],
    score: f64,
) -> Result<(), Fail> {
    acc.del_item(&z.item_key(&[b"m", member].concat()))?;
    let order = order_key(score, member);
    acc.del_item(&z.item_key(&order))?;
    counts::count(acc, z, &order[1..], -1)?;
    z.len -= 1;
    Ok(())
}
