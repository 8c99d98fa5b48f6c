//! The clock and the random numbers of a command applied from the
//! replicated log (`cluster`): while a node's state machine applies an
//! entry, [`now_ms`](crate::store::now_ms) answers the entry's clock and
//! [`random_u64`](crate::collections::random_u64) draws from a generator
//! seeded by the entry, so every node computes the same expiry times, the
//! same `SPOP` and the same script results from the same entry.
//!
//! * **Owns**: a thread-local slot, set only inside [`with`].
//! * **Thread safety**: per thread; the state machine applies on one.

use std::cell::Cell;

thread_local! {
    static APPLYING: Cell<Option<Replay>> = const { Cell::new(None) };
}

#[derive(Clone, Copy)]
struct Replay {
    clock: u64,
    rng: u64,
}

/// Runs `f` with the clock at `clock` (milliseconds since the Unix epoch)
/// and random numbers from `seed`.
pub fn with<T>(clock: u64, seed: u64, f: impl FnOnce() -> T) -> T {
    struct Reset(Option<Replay>);
    impl Drop for Reset {
        fn drop(&mut self) {
            APPLYING.with(|a| a.set(self.0));
        }
    }
    let before = APPLYING.with(|a| {
        a.replace(Some(Replay {
            clock,
            rng: seed | 1,
        }))
    });
    let _reset = Reset(before);
    f()
}

/// The applied entry's clock, if one is being applied on this thread.
pub fn clock() -> Option<u64> {
    APPLYING.with(|a| a.get().map(|r| r.clock))
}

/// Seeds the applied entry's generator (a script's `math.randomseed`):
/// false if no entry is being applied on this thread.
pub fn reseed(seed: u64) -> bool {
    APPLYING.with(|a| match a.get() {
        Some(r) => {
            a.set(Some(Replay { rng: seed | 1, ..r }));
            true
        }
        None => false,
    })
}

/// The next number of the applied entry's generator (xorshift64*), if one
/// is being applied on this thread.
pub fn random() -> Option<u64> {
    APPLYING.with(|a| {
        let mut r = a.get()?;
        r.rng ^= r.rng >> 12;
        r.rng ^= r.rng << 25;
        r.rng ^= r.rng >> 27;
        a.set(Some(r));
        Some(r.rng.wrapping_mul(0x2545_F491_4F6C_DD1D))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_sees_its_own_clock_and_a_repeatable_sequence() {
        assert_eq!(clock(), None);
        assert_eq!(random(), None);
        let draw = || with(42, 7, || (clock(), random(), random()));
        let (a, b) = (draw(), draw());
        assert_eq!(a, b);
        assert_eq!(a.0, Some(42));
        assert_ne!(a.1, a.2);
        assert_ne!(with(42, 8, random), a.1);
        assert_eq!(clock(), None, "the clock is the wall's again after");
    }
}
