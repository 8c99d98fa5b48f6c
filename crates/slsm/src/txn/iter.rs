//! [`TxIter`]: a transaction's range read, its own writes overlaid on its
//! snapshot, from either end (ascending with `next`, descending with
//! `next_back`, both on one iterator).
//!
//! * **Owns**: a snapshot iterator over the range and a handle on the
//!   transaction's writes as they were when the range was opened (later
//!   writes of the transaction are not seen, as with any snapshot read:
//!   the transaction copies its writes on its next write only while an
//!   iterator still holds them). The writes are read one step at a time,
//!   so opening a range costs a seek, not a copy of every write in it (a
//!   transaction of 20,000 writes that reads ranges between them would
//!   otherwise be quadratic).
//! * **Thread safety**: one thread at a time (`Send`).

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use super::range::admits_keys;
use crate::error::Result;
use crate::iter::Iter;
use crate::keyspace::handle::user_value;
use crate::keyspace::state::KeyspaceState;
use crate::slice::Slice;

/// A transaction's own write: key (without tag), value or `None` for a
/// delete.
pub(super) type OwnWrite = (Vec<u8>, Option<Vec<u8>>);

/// A transaction's writes: stored key (tag + key) to value, `None` for a
/// delete.
pub(super) type Writes = BTreeMap<Vec<u8>, Option<Vec<u8>>>;

/// The transaction's writes in a range, from either end, one seek a step.
pub(super) struct OwnWrites {
    writes: Arc<Writes>,
    /// What is left of the range (stored keys): each step narrows it.
    lo: Bound<Vec<u8>>,
    hi: Bound<Vec<u8>>,
    /// The tag's length, taken off each key.
    skip: usize,
    space: Arc<KeyspaceState>,
}

impl OwnWrites {
    pub(super) fn new(
        writes: Arc<Writes>,
        (lo, hi): (Bound<Vec<u8>>, Bound<Vec<u8>>),
        skip: usize,
        space: Arc<KeyspaceState>,
    ) -> OwnWrites {
        OwnWrites {
            writes,
            lo,
            hi,
            skip,
            space,
        }
    }

    fn step(&mut self, end: End) -> Option<OwnWrite> {
        // `BTreeMap::range` panics on a range that ends before it starts.
        if !admits_keys(&(self.lo.clone(), self.hi.clone())) {
            return None;
        }
        let mut range = self
            .writes
            .range::<Vec<u8>, _>((self.lo.as_ref(), self.hi.as_ref()));
        let (key, value) = match end {
            End::Front => range.next()?,
            End::Back => range.next_back()?,
        };
        let out = (
            key[self.skip..].to_vec(),
            user_value(&self.space, value.as_deref().map(Slice::copy_from)).map(|v| v.to_vec()),
        );
        match end {
            End::Front => self.lo = Bound::Excluded(key.clone()),
            End::Back => self.hi = Bound::Excluded(key.clone()),
        }
        Some(out)
    }
}

impl Iterator for OwnWrites {
    type Item = OwnWrite;

    fn next(&mut self) -> Option<OwnWrite> {
        self.step(End::Front)
    }
}

impl DoubleEndedIterator for OwnWrites {
    fn next_back(&mut self) -> Option<OwnWrite> {
        self.step(End::Back)
    }
}

/// The iterator of [`Transaction::range`](super::Transaction::range): keys
/// and values of the range, the transaction's own writes overlaid on its
/// snapshot; ascending, or descending through `.rev()` / `next_back`.
pub struct TxIter {
    base: Ends<Iter>,
    own: Ends<OwnWrites>,
}

/// Which end of the range a step takes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    Front,
    Back,
}

impl TxIter {
    pub(super) fn new(base: Iter, own: OwnWrites) -> TxIter {
        TxIter {
            base: Ends::new(base),
            own: Ends::new(own),
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
