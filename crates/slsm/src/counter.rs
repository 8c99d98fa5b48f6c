//! A counter many threads bump at once without sharing a cache line.
//!
//! * **Owns**: nothing beyond its stripes.
//! * **Calls**: nothing of the engine (a leaf: the block cache, the read
//!   path and the stats all count with it).
//! * **Thread safety**: `add` and `get` from any thread; `get` sums the
//!   stripes without stopping writers, so it is exact only at rest.

use std::sync::atomic::{AtomicU64, Ordering};

const STRIPES: usize = 16;

#[repr(align(128))]
#[derive(Default)]
struct Padded(AtomicU64);

/// A counter bumped from many threads: one cache line per stripe, so that
/// readers on different cores do not fight over it; summed when read.
#[derive(Default)]
pub(crate) struct StripedCounter([Padded; STRIPES]);

thread_local! {
    static STRIPE: usize = {
        let x = 0u8;
        // Spread threads by the address of a thread-local.
        ((&x as *const u8 as usize) >> 12) % STRIPES
    };
}

impl StripedCounter {
    #[inline]
    pub fn add(&self, n: u64) {
        let i = STRIPE.with(|s| *s);
        self.0[i].0.fetch_add(n, Ordering::Relaxed);
    }

    pub fn get(&self) -> u64 {
        self.0.iter().map(|p| p.0.load(Ordering::Relaxed)).sum()
    }
}
