//! A Wing–Gong (WGL) linearizability checker for histories of registers
//! with `SET`, `GET` and `INCR`, one key at a time (linearizability is
//! compositional: a history is linearizable iff each key's is).
//!
//! An operation whose outcome is unknown (the client timed out or lost
//! its connection) may have taken effect at any point after its call, or
//! never: it has no return time, and its result is not checked.

use std::collections::HashSet;

/// What an operation did and saw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Set the value to `v`.
    Set(i64),
    /// Read `Some(v)` or nothing.
    Get(Option<i64>),
    /// Added one; read the new value (`None`: unknown outcome).
    Incr(Option<i64>),
}

/// One operation of one key's history.
#[derive(Clone, Debug)]
pub struct Op {
    pub call: u64,
    /// `None`: its outcome is unknown.
    pub ret: Option<u64>,
    pub kind: Kind,
}

/// The register's value after `op` from `state`, if `op` is consistent
/// with it.
fn step(state: Option<i64>, op: &Op) -> Option<Option<i64>> {
    match &op.kind {
        Kind::Set(v) => Some(Some(*v)),
        Kind::Get(seen) => (*seen == state).then_some(state),
        Kind::Incr(seen) => {
            let next = state.unwrap_or(0).checked_add(1)?;
            match (seen, op.ret) {
                (Some(v), Some(_)) if *v != next => None,
                _ => Some(Some(next)),
            }
        }
    }
}

/// Whether `ops` (one key's, starting from an absent value) is
/// linearizable.
pub fn linearizable(ops: &[Op]) -> bool {
    // A read whose outcome is unknown constrains nothing.
    let ops: Vec<Op> = ops
        .iter()
        .filter(|o| !(o.ret.is_none() && matches!(o.kind, Kind::Get(_))))
        .cloned()
        .collect();
    let words = ops.len().div_ceil(64);
    // The search goes one call deeper per operation: a soak's history of
    // tens of thousands needs more than a test thread's 2 MiB of stack
    // (the reservation is address space; pages are taken as used).
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(1 << 30)
            .spawn_scoped(scope, || {
                let mut seen = HashSet::new();
                search(&ops, &mut vec![0u64; words], None, &mut seen)
            })
            .expect("a thread for the search")
            .join()
            .unwrap_or(false)
    })
}

fn is_done(done: &[u64], i: usize) -> bool {
    done[i / 64] & (1 << (i % 64)) != 0
}

fn search(
    ops: &[Op],
    done: &mut Vec<u64>,
    state: Option<i64>,
    seen: &mut HashSet<(Vec<u64>, Option<i64>)>,
) -> bool {
    let pending: Vec<usize> = (0..ops.len()).filter(|&i| !is_done(done, i)).collect();
    if pending.iter().all(|&i| ops[i].ret.is_none()) {
        return true;
    }
    // An op may go next only if it was called before every pending op
    // returned (else that op precedes it in real time).
    let first_return = pending
        .iter()
        .filter_map(|&i| ops[i].ret)
        .min()
        .unwrap_or(u64::MAX);
    for &i in &pending {
        if ops[i].call > first_return {
            continue;
        }
        let Some(next) = step(state, &ops[i]) else {
            continue;
        };
        done[i / 64] |= 1 << (i % 64);
        if seen.insert((done.clone(), next)) && search(ops, done, next, seen) {
            return true;
        }
        done[i / 64] &= !(1 << (i % 64));
    }
    false
}

#[cfg(test)]
pub mod tests {
    use super::*;

    fn op(call: u64, ret: Option<u64>, kind: Kind) -> Op {
        Op { call, ret, kind }
    }

    pub fn checker_accepts_and_rejects() {
        // Sequential, obviously fine.
        assert!(linearizable(&[
            op(0, Some(1), Kind::Set(1)),
            op(2, Some(3), Kind::Get(Some(1))),
            op(4, Some(5), Kind::Incr(Some(2))),
        ]));
        // A stale read after a completed write: not linearizable.
        assert!(!linearizable(&[
            op(0, Some(1), Kind::Set(1)),
            op(2, Some(3), Kind::Set(2)),
            op(4, Some(5), Kind::Get(Some(1))),
        ]));
        // Overlapping: the read may come before or after the write.
        assert!(linearizable(&[
            op(0, Some(10), Kind::Set(2)),
            op(1, Some(2), Kind::Get(None)),
            op(3, Some(4), Kind::Get(Some(2))),
        ]));
        // A read sees the write, a later read does not: not linearizable.
        assert!(!linearizable(&[
            op(0, Some(10), Kind::Set(2)),
            op(1, Some(2), Kind::Get(Some(2))),
            op(3, Some(4), Kind::Get(None)),
        ]));
        // An unknown write may have applied (or not).
        assert!(linearizable(&[
            op(0, None, Kind::Set(5)),
            op(3, Some(4), Kind::Get(Some(5))),
            op(5, Some(6), Kind::Get(Some(5))),
        ]));
        assert!(linearizable(&[
            op(0, None, Kind::Set(5)),
            op(3, Some(4), Kind::Get(None))
        ]));
        // Two increments acknowledged with the same value: a lost update.
        assert!(!linearizable(&[
            op(0, Some(5), Kind::Incr(Some(1))),
            op(1, Some(6), Kind::Incr(Some(1))),
        ]));
    }
}
