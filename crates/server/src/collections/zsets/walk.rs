//! Walks over a sorted set's score order (the `s` elements), up from the
//! bottom or down from the top, between the marks pops leave (`Coll`).

use super::super::{Coll, STEP};
use crate::access::Access;
use crate::commands::{fail, Fail};

/// Calls `f(score, member)` in ascending order, from the first element
/// whose order sub-key (less its `s`) is at or after `from`, until it
/// returns false.
pub(super) fn walk_from(
    acc: &mut dyn Access,
    z: &Coll,
    from: &[u8],
    f: impl FnMut(f64, &[u8]) -> bool,
) -> Result<(), Fail> {
    Cursor::up(z, from).run(acc, z, f)
}

/// Calls `f(score, member)` in descending order, from the last element
/// whose order sub-key (less its `s`) is below `below` (`None`: from the
/// top), until it returns false.
pub(super) fn walk_down(
    acc: &mut dyn Access,
    z: &Coll,
    below: Option<&[u8]>,
    f: impl FnMut(f64, &[u8]) -> bool,
) -> Result<(), Fail> {
    Cursor::down(z, below).run(acc, z, f)
}

/// The order sub-key (less its `s`) of the lowest member at or after
/// `from`, if any: one forward read.
pub(super) fn first_from(
    acc: &mut dyn Access,
    z: &Coll,
    from: &[u8],
) -> Result<Option<Vec<u8>>, Fail> {
    let mut cursor = Cursor::up(z, from);
    cursor.step = 1;
    let batch = cursor.next_batch(acc, z)?;
    Ok(batch.into_iter().next().map(|(sub, _)| sub[1..].to_vec()))
}

/// A walk over the score order, one way, between the marks (`Coll`). It
/// reads a few elements first and more at each step, so a walk that stops
/// early (a pop, a rank near its end) reads little.
pub(super) struct Cursor {
    up: bool,
    /// The sub-keys left to read: `lo..hi`.
    lo: Vec<u8>,
    hi: Vec<u8>,
    step: usize,
    pub(super) done: bool,
}

impl Cursor {
    /// From the first element at or after `from` upwards.
    pub(super) fn up(z: &Coll, from: &[u8]) -> Cursor {
        Cursor {
            up: true,
            lo: [&b"s"[..], from.max(&z.mark[..])].concat(),
            hi: top_of(z, None),
            step: 16,
            done: false,
        }
    }

    /// From the last element below `below` (`None`: the top) downwards.
    pub(super) fn down(z: &Coll, below: Option<&[u8]>) -> Cursor {
        Cursor {
            up: false,
            lo: [&b"s"[..], &z.mark].concat(),
            hi: top_of(z, below),
            step: 16,
            done: false,
        }
    }

    /// The next few elements as (order sub-key, value); empty at the end.
    pub(super) fn next_batch(
        &mut self,
        acc: &mut dyn Access,
        z: &Coll,
    ) -> Result<Vec<crate::access::Item>, Fail> {
        if self.done {
            return Ok(Vec::new());
        }
        let batch = match self.up {
            true => z.items(acc, &self.lo, Some(&self.hi), self.step)?,
            false => z.items_rev(acc, &self.lo, Some(&self.hi), self.step)?,
        };
        match batch.last() {
            Some((last, _)) if batch.len() == self.step => {
                match self.up {
                    true => self.lo = [last.as_slice(), &[0]].concat(),
                    false => self.hi = last.clone(),
                }
                self.step = (self.step * 4).min(STEP);
            }
            _ => self.done = true,
        }
        Ok(batch)
    }

    /// Calls `f(score, member)` on each element until it returns false.
    pub(super) fn run(
        mut self,
        acc: &mut dyn Access,
        z: &Coll,
        mut f: impl FnMut(f64, &[u8]) -> bool,
    ) -> Result<(), Fail> {
        loop {
            let batch = self.next_batch(acc, z)?;
            if batch.is_empty() {
                return Ok(());
            }
            for (sub, _) in &batch {
                let (score, member) = decode_order(sub)?;
                if !f(score, member) {
                    return Ok(());
                }
            }
        }
    }
}

/// The exclusive end of the score order's sub-keys: below `below` (less
/// its `s`) if given, and below the high mark if there is one.
fn top_of(z: &Coll, below: Option<&[u8]>) -> Vec<u8> {
    let bound = match (below, z.high.is_empty()) {
        (Some(b), false) => Some(b.min(&z.high[..])),
        (Some(b), true) => Some(b),
        (None, false) => Some(&z.high[..]),
        (None, true) => None,
    };
    match bound {
        Some(b) => [&b"s"[..], b].concat(),
        None => b"t".to_vec(),
    }
}

/// The score and member of an order sub-key (`s`, 8 score bytes, member).
pub(super) fn decode_order(sub: &[u8]) -> Result<(f64, &[u8]), Fail> {
    let Some(bits) = sub.get(1..9) else {
        return Err(fail("ERR corrupt sorted set: a short order key"));
    };
    let mut b = [0; 8];
    b.copy_from_slice(bits);
    let raw = u64::from_be_bytes(b);
    let bits = match raw >> 63 {
        1 => raw & !(1 << 63),
        _ => !raw,
    };
    Ok((f64::from_bits(bits), &sub[9..]))
}
