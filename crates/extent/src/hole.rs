//! `insert_hole`: find and atomically claim a free, aligned range
//! (the IOMMU allocator use case from the article).

use crossbeam_epoch::{self as epoch, Guard};

use crate::error::{Error, HoleError};
use crate::leaf::Leaf;
use crate::map::ExtentMap;

#[inline]
fn align_up(x: u64, align: u64) -> Option<u64> {
    debug_assert!(align.is_power_of_two());
    Some(x.checked_add(align - 1)? & !(align - 1))
}

impl<T, const LEAF_CAP: usize> ExtentMap<T, LEAF_CAP>
where
    T: Clone + Send + Sync + 'static,
{
    /// Finds the lowest `align`-aligned address `s >= hint` such that
    /// `[s, s + len)` is free and `s + len <= limit`, inserts `value` there
    /// and returns `s`.
    ///
    /// The search is lock-free (it reads leaf snapshots); the claim is an
    /// ordinary atomic [`insert`](Self::insert). If another thread claimed
    /// an overlapping range in between, the search resumes after the
    /// conflicting extent (the article's `-EAGAIN` retry, done internally),
    /// so two callers are never handed overlapping ranges. The result is the
    /// first fit among the ranges that were free when the claim succeeded,
    /// except that ranges freed during the call behind the search position
    /// may be skipped.
    ///
    /// Errors: [`HoleError::InvalidArgument`] if `len == 0` or `align` is
    /// not a power of two; [`HoleError::NoSpace`] if no such range exists
    /// (including `hint > limit`, `len > limit`, or `hint` rounded up to
    /// `align` overflowing).
    pub fn insert_hole(
        &self,
        hint: u64,
        limit: u64,
        len: u64,
        align: u64,
        value: T,
    ) -> Result<u64, HoleError> {
        if len == 0 || !align.is_power_of_two() {
            return Err(HoleError::InvalidArgument);
        }
        let mut from = align_up(hint, align).ok_or(HoleError::NoSpace)?;
        let mut value = value;
        let guard = &epoch::pin();
        loop {
            let (cand, hint) = self
                .find_hole(from, limit, len, align, guard)
                .ok_or(HoleError::NoSpace)?;
            match self.insert_impl(cand, len, value, hint, guard) {
                Ok(()) => return Ok(cand),
                Err((Error::Overlap { start, len: olen }, v)) => {
                    // Lost a race: every aligned start before the end of the
                    // conflicting extent would overlap it.
                    value = v;
                    let next = align_up(start + olen, align).ok_or(HoleError::NoSpace)?;
                    debug_assert!(next > cand);
                    from = next;
                }
                Err((Error::InvalidRange, _)) => unreachable!("cand + len <= limit"),
            }
        }
    }

    /// Lock-free first-fit search from the aligned address `c`. Returns the
    /// candidate and a leaf that was responsible for it (a hint for the
    /// insert, which re-validates it under the lock).
    fn find_hole<'g>(
        &'g self,
        mut c: u64,
        limit: u64,
        len: u64,
        align: u64,
        guard: &'g Guard,
    ) -> Option<(u64, Option<&'g Leaf<T, LEAF_CAP>>)> {
        let fits = |c: u64| c.checked_add(len).is_some_and(|e| e <= limit);
        if !fits(c) {
            return None;
        }
        enum Step {
            Found(u64),
            NoSpace,
            /// Nothing decided in this leaf; continue from this candidate.
            Next(u64),
        }
        let mut bound = c;
        let mut prev: Option<&'g Leaf<T, LEAF_CAP>> = None;
        loop {
            let snap = self.read(bound, guard, |l| {
                let mut c = c;
                for k in l.first_last_ge(c)..l.len() {
                    let it = l.item(k);
                    if it.last < c {
                        continue;
                    }
                    if it.start >= c + len {
                        return Step::Found(c);
                    }
                    match it.last.checked_add(1).and_then(|e| align_up(e, align)) {
                        Some(n) if fits(n) => c = n,
                        _ => return Step::NoSpace,
                    }
                }
                Step::Next(c)
            });
            let hint = if snap.leaf.key <= c {
                Some(snap.leaf)
            } else {
                prev
            };
            match snap.r {
                Step::Found(c) => return Some((c, hint)),
                Step::NoSpace => return None,
                Step::Next(n) => c = n,
            }
            match snap.next_key {
                None => {
                    return Some((
                        c,
                        if snap.leaf.key <= c {
                            Some(snap.leaf)
                        } else {
                            prev
                        },
                    ))
                }
                Some(k) => {
                    prev = Some(snap.leaf);
                    bound = k.max(c);
                }
            }
        }
    }
}
