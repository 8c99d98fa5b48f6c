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
    let mut ops: Vec<Op> = ops
        .iter()
        .filter(|o| !(o.ret.is_none() && matches!(o.kind, Kind::Get(_))))
        .cloned()
        .collect();
    ops.sort_by_key(|o| o.call);
    // The search goes one call deeper per operation: a soak's history of
    // tens of thousands needs more than a test thread's 2 MiB of stack
    // (the reservation is address space; pages are taken as used).
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(1 << 30)
            .spawn_scoped(scope, || Search::new(&ops).run(None))
            .expect("a thread for the search")
            .join()
            .unwrap_or(false)
    })
}

/// The search's state: the operations not yet linearized as a doubly
/// linked list in call order (unlinked and relinked in O(1) as the search
/// goes down and back), so each step looks only at the operations that
/// may go next (called before the first pending return), not at all.
struct Search<'a> {
    ops: &'a [Op],
    next: Vec<usize>,
    prev: Vec<usize>,
    /// Bit `i`: operation `i` is linearized (with the state, the key of
    /// `seen`: a configuration met before fails again).
    done: Vec<u64>,
    /// Pending operations whose return is known: none left, and the rest
    /// (unknown outcomes) may simply never have happened.
    known_left: usize,
    seen: HashSet<(Vec<u64>, Option<i64>)>,
}

impl<'a> Search<'a> {
    fn new(ops: &'a [Op]) -> Search<'a> {
        let n = ops.len();
        // Node `n` is the list's head.
        Search {
            ops,
            next: (0..=n).map(|i| (i + 1) % (n + 1)).collect(),
            prev: (0..=n).map(|i| (i + n) % (n + 1)).collect(),
            done: vec![0; n.div_ceil(64)],
            known_left: ops.iter().filter(|o| o.ret.is_some()).count(),
            seen: HashSet::new(),
        }
    }

    /// The pending operations that may be linearized next.
    fn candidates(&self) -> Vec<usize> {
        let head = self.ops.len();
        let mut out = Vec::new();
        let mut first_return = u64::MAX;
        let mut i = self.next[head];
        while i != head && self.ops[i].call <= first_return {
            out.push(i);
            if let Some(r) = self.ops[i].ret {
                first_return = first_return.min(r);
            }
            i = self.next[i];
        }
        out.retain(|&i| self.ops[i].call <= first_return);
        out
    }

    fn run(&mut self, state: Option<i64>) -> bool {
        if self.known_left == 0 {
            return true;
        }
        for i in self.candidates() {
            let Some(next) = step(state, &self.ops[i]) else {
                continue;
            };
            self.take(i);
            if self.seen.insert((self.done.clone(), next)) && self.run(next) {
                return true;
            }
            self.put_back(i);
        }
        false
    }

    fn take(&mut self, i: usize) {
        let (p, n) = (self.prev[i], self.next[i]);
        self.next[p] = n;
        self.prev[n] = p;
        self.done[i / 64] |= 1 << (i % 64);
        if self.ops[i].ret.is_some() {
            self.known_left -= 1;
        }
    }

    fn put_back(&mut self, i: usize) {
        let (p, n) = (self.prev[i], self.next[i]);
        self.next[p] = i;
        self.prev[n] = i;
        self.done[i / 64] &= !(1 << (i % 64));
        if self.ops[i].ret.is_some() {
            self.known_left += 1;
        }
    }
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
