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

/// How long after its call an operation of unknown outcome may still take
/// effect, in the histories' unit (nanoseconds). In the cluster an entry a
/// client gave up on is committed by its leader or a successor, or
/// truncated away, within an election or two of the fault (about 2 s
/// measured; the fault test's faults are 3 s or more apart). The bound
/// only ever makes the check stricter: a history accepted with it is
/// linearizable without it (an effect later than this is a false alarm,
/// never a missed violation).
pub const UNKNOWN_EFFECT_WINDOW: u64 = 10_000_000_000;

/// An operation as the search sees it.
struct Entry {
    call: u64,
    /// Its return, or for an unknown outcome the last moment it may take
    /// effect.
    by: u64,
    /// Unknown outcome: it took effect once, or never.
    optional: bool,
    kind: Kind,
}

/// The register's value after `e` from `state`, if `e` is consistent
/// with it.
fn step(state: Option<i64>, e: &Entry) -> Option<Option<i64>> {
    match &e.kind {
        Kind::Set(v) => Some(Some(*v)),
        Kind::Get(seen) => (*seen == state).then_some(state),
        Kind::Incr(seen) => {
            let next = state.unwrap_or(0).checked_add(1)?;
            match seen {
                Some(v) if !e.optional && *v != next => None,
                _ => Some(Some(next)),
            }
        }
    }
}

/// Whether `ops` (one key's, starting from an absent value) is
/// linearizable.
///
/// The history is cut where no operation is in flight (every one called
/// before has returned, or passed [`UNKNOWN_EFFECT_WINDOW`]); each piece
/// is searched on its own, from a value the pieces before may leave, and
/// what failed is remembered by piece and value, so the search's memory
/// and backtracking are a piece's, not the whole history's.
pub fn linearizable(ops: &[Op]) -> bool {
    // A read whose outcome is unknown constrains nothing.
    let mut entries: Vec<Entry> = ops
        .iter()
        .filter(|o| !(o.ret.is_none() && matches!(o.kind, Kind::Get(_))))
        .map(|o| Entry {
            call: o.call,
            by: o
                .ret
                .unwrap_or(o.call.saturating_add(UNKNOWN_EFFECT_WINDOW)),
            optional: o.ret.is_none(),
            kind: o.kind.clone(),
        })
        .collect();
    entries.sort_by_key(|e| e.call);
    // The search goes one call deeper per operation: a long history needs
    // more than a test thread's 2 MiB of stack (the reservation is address
    // space; pages are taken as used).
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(1 << 30)
            .spawn_scoped(scope, || {
                let pieces = pieces(&entries);
                from_piece(&pieces, 0, None, &mut HashSet::new())
            })
            .expect("a thread for the search")
            .join()
            .unwrap_or(false)
    })
}

/// Whether `pieces[i..]` linearize from `state` (`failed`: the pieces and
/// values known not to).
fn from_piece(
    pieces: &[&[Entry]],
    i: usize,
    state: Option<i64>,
    failed: &mut HashSet<(usize, Option<i64>)>,
) -> bool {
    let Some(piece) = pieces.get(i) else {
        return true;
    };
    if failed.contains(&(i, state)) {
        return false;
    }
    let mut search = Search::new(piece);
    let ok = search.run(state, 0, &mut |end| from_piece(pieces, i + 1, end, failed));
    if !ok {
        failed.insert((i, state));
    }
    ok
}

/// Operation `i`'s random word for [`Search::done`] (SplitMix64, twice).
fn word(i: usize) -> u128 {
    let mix = |mut z: u64| {
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let i = i as u64;
    (u128::from(mix(i)) << 64) | u128::from(mix(i ^ 0xD1B5_4A32_D192_ED03))
}

/// `entries` (by call) cut where nothing called before is still in flight.
fn pieces(entries: &[Entry]) -> Vec<&[Entry]> {
    let mut out = Vec::new();
    let (mut start, mut open_until) = (0, 0);
    for (i, e) in entries.iter().enumerate() {
        if i > start && e.call > open_until {
            out.push(&entries[start..i]);
            start = i;
        }
        open_until = open_until.max(e.by);
    }
    if start < entries.len() {
        out.push(&entries[start..]);
    }
    out
}

/// The search's state: the operations not yet linearized as a doubly
/// linked list in call order (unlinked and relinked in O(1) as the search
/// goes down and back), so each step looks only at the operations that
/// may go next (called before the first pending return), not at all.
struct Search<'a> {
    ops: &'a [Entry],
    next: Vec<usize>,
    prev: Vec<usize>,
    /// The set of operations linearized, as the XOR of a random 128-bit
    /// word per operation (Zobrist hashing): with the state, the key of
    /// `seen` (a configuration met before fails again). 16 bytes whatever
    /// the history's length: a bit set per configuration took 24 GB on a
    /// 100-fault soak. Two sets sharing a word would make the search skip
    /// one it has not tried, so a collision could only reject a history,
    /// never accept one (and at 2^-128 a pair, does not).
    done: u128,
    /// Pending operations whose return is known: with none left the piece
    /// may end (the rest, unknown outcomes, may never have happened).
    known_left: usize,
    seen: HashSet<(u128, Option<i64>)>,
}

impl<'a> Search<'a> {
    fn new(ops: &'a [Entry]) -> Search<'a> {
        let n = ops.len();
        // Node `n` is the list's head.
        Search {
            ops,
            next: (0..=n).map(|i| (i + 1) % (n + 1)).collect(),
            prev: (0..=n).map(|i| (i + n) % (n + 1)).collect(),
            done: 0,
            known_left: ops.iter().filter(|e| !e.optional).count(),
            seen: HashSet::new(),
        }
    }

    /// The pending operations that may be linearized next: called before
    /// the first pending known return.
    fn candidates(&self) -> Vec<usize> {
        let head = self.ops.len();
        let mut out = Vec::new();
        let mut first_return = u64::MAX;
        let mut i = self.next[head];
        while i != head && self.ops[i].call <= first_return {
            out.push(i);
            if !self.ops[i].optional {
                first_return = first_return.min(self.ops[i].by);
            }
            i = self.next[i];
        }
        out.retain(|&i| self.ops[i].call <= first_return);
        out
    }

    /// Whether the rest linearizes from `state`, `latest` being the
    /// latest call linearized so far (the linearization point is past
    /// it), with `end` deciding whether a value the piece may end with
    /// lets the pieces after it linearize.
    fn run(
        &mut self,
        state: Option<i64>,
        latest: u64,
        end: &mut dyn FnMut(Option<i64>) -> bool,
    ) -> bool {
        if self.known_left == 0 && end(state) {
            return true;
        }
        for i in self.candidates() {
            let e = &self.ops[i];
            // An unknown outcome takes effect within its window or never.
            if e.optional && latest > e.by {
                continue;
            }
            let Some(next) = step(state, e) else {
                continue;
            };
            let latest = latest.max(e.call);
            self.take(i);
            if self.seen.insert((self.done, next)) && self.run(next, latest, end) {
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
        self.done ^= word(i);
        if !self.ops[i].optional {
            self.known_left -= 1;
        }
    }

    fn put_back(&mut self, i: usize) {
        let (p, n) = (self.prev[i], self.next[i]);
        self.next[p] = i;
        self.prev[n] = i;
        self.done ^= word(i);
        if !self.ops[i].optional {
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
        // Pieces: an unknown increment leaves 0 or 1 for the next piece;
        // 2 is neither.
        let late = UNKNOWN_EFFECT_WINDOW * 2;
        for (seen, ok) in [(None, true), (Some(1), true), (Some(2), false)] {
            let history = [
                op(0, None, Kind::Incr(None)),
                op(late, Some(late + 1), Kind::Get(seen)),
                op(late + 2, Some(late + 3), Kind::Get(seen)),
            ];
            assert_eq!(linearizable(&history), ok, "{seen:?}");
        }
        // Past its window an unknown write may no longer take effect.
        assert!(!linearizable(&[
            op(0, None, Kind::Set(7)),
            op(late, Some(late + 1), Kind::Get(None)),
            op(late + 2, Some(late + 3), Kind::Get(Some(7))),
        ]));
        // A long history of many pieces, each overlapping and with
        // unknowns, is checked quickly (the pieces keep it small).
        let mut long = Vec::new();
        for round in 0..2_000u64 {
            let t = round * (UNKNOWN_EFFECT_WINDOW + 100);
            long.push(op(t, Some(t + 10), Kind::Set(round as i64)));
            long.push(op(t + 1, None, Kind::Incr(None)));
            long.push(op(t + 2, Some(t + 20), Kind::Incr(None)));
            long.push(op(t + 30, Some(t + 40), Kind::Get(None)));
        }
        assert!(!linearizable(&long), "reading nothing after a SET");
        for round in 0..2_000u64 {
            long[round as usize * 4 + 3].kind = Kind::Get(Some(round as i64 + 1));
        }
        assert!(linearizable(&long));
        // Two increments acknowledged with the same value: a lost update.
        assert!(!linearizable(&[
            op(0, Some(5), Kind::Incr(Some(1))),
            op(1, Some(6), Kind::Incr(Some(1))),
        ]));
    }
}
