//! [`TxIter`]: a transaction's range read, its own writes overlaid on its
//! snapshot, from either end (ascending with `next`, descending with
//! `next_back`, both on one iterator).
//!
//! * **Owns**: a snapshot iterator over the range and a copy of the
//!   transaction's writes in it, taken when the range was opened (later
//!   writes of the transaction are not seen, as with any snapshot read).
//! * **Thread safety**: one thread at a time (`Send`).

use crate::error::Result;
use crate::iter::Iter;
use crate::slice::Slice;

/// A transaction's own write: key (without tag), value or `None` for a
/// delete.
pub(super) type OwnWrite = (Vec<u8>, Option<Vec<u8>>);

/// The iterator of [`Transaction::range`](super::Transaction::range): keys
/// and values of the range, the transaction's own writes overlaid on its
/// snapshot; ascending, or descending through `.rev()` / `next_back`.
pub struct TxIter {
    base: Ends<Iter>,
    own: Ends<std::vec::IntoIter<OwnWrite>>,
}

/// Which end of the range a step takes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    Front,
    Back,
}

impl TxIter {
    pub(super) fn new(base: Iter, own: Vec<OwnWrite>) -> TxIter {
        TxIter {
            base: Ends::new(base),
            own: Ends::new(own.into_iter()),
        }
    }

    /// The next entry from `end`: the nearer of the snapshot's and the
    /// transaction's own (which wins a tie and hides the snapshot's entry
    /// for that key); own deletions are skipped.
    fn step(&mut self, end: End) -> Option<Result<(Slice, Slice)>> {
        loop {
            let own_first = match (self.base.peek(end), self.own.peek(end)) {
                (Some(Err(_)), _) | (_, None) => return self.base.take(end),
                (None, Some(_)) => true,
                (Some(Ok((b, _))), Some((o, _))) => match end {
                    End::Front => o.as_slice() <= &**b,
                    End::Back => o.as_slice() >= &**b,
                },
            };
            if !own_first {
                return self.base.take(end);
            }
            let (key, value) = self.own.take(end)?;
            if matches!(self.base.peek(end), Some(Ok((b, _))) if **b == *key) {
                self.base.take(end);
            }
            if let Some(v) = value {
                return Some(Ok((Slice::from(key), Slice::from(v))));
            }
        }
    }
}

impl Iterator for TxIter {
    type Item = Result<(Slice, Slice)>;

    fn next(&mut self) -> Option<Self::Item> {
        self.step(End::Front)
    }
}

impl DoubleEndedIterator for TxIter {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.step(End::Back)
    }
}

/// A double-ended iterator that can look at the next item from either
/// end (`std`'s `Peekable` peeks at the front only). When the two ends
/// meet, an item one end looked at is still the other end's last item.
struct Ends<I: DoubleEndedIterator> {
    inner: I,
    front: Option<I::Item>,
    back: Option<I::Item>,
}

impl<I: DoubleEndedIterator> Ends<I> {
    fn new(inner: I) -> Self {
        Ends {
            inner,
            front: None,
            back: None,
        }
    }

    fn peek(&mut self, end: End) -> Option<&I::Item> {
        let (near, far) = match end {
            End::Front => (&mut self.front, &mut self.back),
            End::Back => (&mut self.back, &mut self.front),
        };
        if near.is_none() {
            *near = match end {
                End::Front => self.inner.next(),
                End::Back => self.inner.next_back(),
            };
        }
        near.as_ref().or(far.as_ref())
    }

    fn take(&mut self, end: End) -> Option<I::Item> {
        let (near, far) = match end {
            End::Front => (&mut self.front, &mut self.back),
            End::Back => (&mut self.back, &mut self.front),
        };
        near.take()
            .or_else(|| match end {
                End::Front => self.inner.next(),
                End::Back => self.inner.next_back(),
            })
            .or_else(|| far.take())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_meet_without_losing_or_repeating_an_item() {
        for split in 0..=5 {
            let mut e = Ends::new(1..=5);
            let mut got = Vec::new();
            for step in 0..5 {
                let end = if step < split { End::Front } else { End::Back };
                // Look at both ends first: what one end holds must still
                // be reachable from the other.
                e.peek(End::Front);
                e.peek(End::Back);
                got.push(e.take(end).unwrap());
            }
            assert_eq!(e.take(End::Front), None);
            assert_eq!(e.take(End::Back), None);
            got.sort();
            assert_eq!(got, [1, 2, 3, 4, 5], "split {split}");
        }
    }
}
