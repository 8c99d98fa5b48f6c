//! What the range reads by rank, score and lex share: the mode and order
//! of a range, and `LIMIT offset count` over its matches.

use super::members::Picked;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Order {
    Asc,
    Desc,
}

impl Order {
    pub(super) fn reverse(self) -> Order {
        match self {
            Order::Asc => Order::Desc,
            Order::Desc => Order::Asc,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    Rank,
    Score,
    Lex,
}

/// `LIMIT offset count` over the matches of a walk, in the walk's order:
/// a negative count takes the rest, a negative offset nothing (as Redis).
pub(super) struct Limit {
    skip: u64,
    count: u64,
    seen: u64,
    pub(super) out: Picked,
}

impl Limit {
    /// `None` if the limit selects nothing.
    pub(super) fn new(limit: Option<(i64, i64)>) -> Option<Limit> {
        let (skip, count) = match limit {
            Some((offset, _)) if offset < 0 => return None,
            Some((offset, count)) => (offset as u64, u64::try_from(count).unwrap_or(u64::MAX)),
            None => (0, u64::MAX),
        };
        Some(Limit {
            skip,
            count,
            seen: 0,
            out: Vec::new(),
        })
    }

    /// Offers the next match; false once the count is reached.
    pub(super) fn take(&mut self, s: f64, m: &[u8]) -> bool {
        if self.seen >= self.skip {
            if self.out.len() as u64 >= self.count {
                return false;
            }
            self.out.push((s, m.to_vec()));
        }
        self.seen += 1;
        true
    }
}
