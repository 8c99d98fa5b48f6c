//! ZRANK and ZREVRANK: from the rank index (`counts.rs`), or, for a set
//! saved before it, by walking the score order from both ends.

use super::counts;
use super::members::{order_key, score_of};
use super::walk::Cursor;
use crate::access::Access;
use crate::collections::Coll;
use crate::commands::{Fail, Outcome};
use crate::resp::Reply;
use crate::store::Kind;

pub(super) fn rank(name: &str, a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let Some(z) = Coll::load(acc, &a[1], Kind::ZSet)? else {
        return Ok(Reply::Null);
    };
    let Some(score) = score_of(acc, &z, &a[2])? else {
        return Ok(Reply::Null);
    };
    let target = order_key(score, &a[2]);
    let from_bottom = match z.ranked() {
        true => counts::rank_of(acc, &z, &target[1..])?,
        false => match rank_from_ends(acc, &z, &target)? {
            Some(rank) => rank,
            None => return Ok(Reply::Null), // the order lacks the member: cannot be
        },
    };
    Ok(Reply::Int(match name {
        "zrank" => from_bottom,
        _ => z.count() - 1 - from_bottom,
    }))
}

/// The rank (from the bottom) of order sub-key `target`, walking from both
/// ends in turn (a set without a rank index): twice the walk from the
/// nearer end.
fn rank_from_ends(acc: &mut dyn Access, z: &Coll, target: &[u8]) -> Result<Option<i64>, Fail> {
    let (mut up, mut down) = (Cursor::up(z, &[]), Cursor::down(z, None));
    let (mut below, mut above) = (0, 0);
    loop {
        let batch = up.next_batch(acc, z)?;
        if let Some(i) = first_at(&batch, |sub| sub >= target) {
            return Ok(Some(below + i));
        }
        below += batch.len() as i64;
        let batch = down.next_batch(acc, z)?;
        if let Some(i) = first_at(&batch, |sub| sub <= target) {
            return Ok(Some(z.count() - 1 - (above + i)));
        }
        above += batch.len() as i64;
        if up.done && down.done {
            return Ok(None);
        }
    }
}

/// The position in `batch` of the first sub-key `reached` holds for.
fn first_at(batch: &[crate::access::Item], reached: impl Fn(&[u8]) -> bool) -> Option<i64> {
    batch
        .iter()
        .position(|(sub, _)| reached(sub))
        .map(|i| i as i64)
}
