//! Random tower heights: one draw from a thread-local wyrand generator and a
//! find-first-set (`trailing_zeros`), no shared state.

use std::cell::Cell;

thread_local! {
    static RNG: Cell<u64> = Cell::new(seed());
}

/// Per-thread seed: the thread-local's own address mixed with a hash of the
/// thread id and the process' randomised hasher keys. No shared counter.
fn seed() -> u64 {
    use std::hash::{BuildHasher, Hash, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    std::thread::current().id().hash(&mut h);
    let local = 0u8;
    (std::ptr::addr_of!(local) as usize).hash(&mut h);
    h.finish() | 1
}

/// wyrand step.
#[inline]
fn next_u64() -> u64 {
    RNG.with(|s| {
        let x = s.get().wrapping_add(0xa076_1d64_78bd_642f);
        s.set(x);
        let t = (x as u128).wrapping_mul((x ^ 0xe703_7ed1_a0b4_28db) as u128);
        ((t >> 64) as u64) ^ (t as u64)
    })
}

/// A tower height in `1..=max_height` with `P(h > k) = branching^-k`.
///
/// `shift` is `log2(branching)` (1 for p = 1/2, 2 for p = 1/4): the number of
/// trailing zero bits of one random word divided by `shift` is the number of
/// successful coin flips.
#[inline]
pub(crate) fn random_height(shift: u32, max_height: usize) -> usize {
    let r = next_u64();
    let h = 1 + (r.trailing_zeros() / shift) as usize;
    h.min(max_height)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distribution_is_geometric() {
        let n = if cfg!(miri) { 2_000 } else { 200_000 };
        let mut counts = [0usize; 33];
        for _ in 0..n {
            counts[random_height(2, 12)] += 1;
        }
        assert_eq!(counts[0], 0);
        let frac1 = counts[1] as f64 / n as f64;
        assert!((frac1 - 0.75).abs() < 0.05, "{frac1}");
        for _ in 0..1000 {
            let h = random_height(1, 5);
            assert!((1..=5).contains(&h));
        }
    }
}
