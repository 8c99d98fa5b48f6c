//! The blocked filter's geometry: block and header sizes, how many bits
//! and probes a false-positive rate needs, which block a hash picks and
//! which bits it sets there (a leaf of `bloom/`: the filters and their
//! builder share it).

/// Bits in one filter block (one 64-byte cache line).
pub(super) const BLOCK_BITS: usize = 512;
/// Bytes in one filter block.
pub(super) const BLOCK_BYTES: usize = BLOCK_BITS / 8;
/// 64-bit words in one filter block.
pub(super) const BLOCK_WORDS: usize = BLOCK_BITS / 64;
/// Serialized header size.
pub(super) const HEADER_LEN: usize = 8;
/// Serialized format byte.
pub(super) const FORMAT_BLOCKED_V1: u8 = 1;
/// Most probes per key accepted by [`Filter::decode`].
pub(super) const MAX_PROBES: u32 = 32;

/// Filter parameters for a target false-positive rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Params {
    pub(super) bits_per_key: f64,
    pub(super) k: u32,
}

/// Expected false-positive rate of the blocked design with `bits_per_key`
/// bits per key and `k` probes: keys per block are Poisson(512 / bits) and
/// a block holding `n` keys answers yes for an absent key with probability
/// `(1 - (1 - 1/512)^(k n))^k`.
fn blocked_fp_rate(bits_per_key: f64, k: u32) -> f64 {
    let lambda = BLOCK_BITS as f64 / bits_per_key;
    let unset_per_probe = 1.0 - 1.0 / BLOCK_BITS as f64;
    let max_n = (lambda + 12.0 * lambda.sqrt() + 20.0) as u32;
    let mut p_n = (-lambda).exp();
    let mut rate = 0.0;
    for n in 0..=max_n {
        if n > 0 {
            p_n *= lambda / f64::from(n);
        }
        let fill = 1.0 - unset_per_probe.powf(f64::from(k) * f64::from(n));
        rate += p_n * fill.powi(k as i32);
    }
    rate
}

/// Smallest bits-per-key (bisection) reaching `epsilon` with `k` probes.
fn min_bits_for(epsilon: f64, k: u32) -> f64 {
    let (mut lo, mut hi) = (1.0f64, 128.0f64);
    if blocked_fp_rate(lo, k) <= epsilon {
        return lo;
    }
    for _ in 0..40 {
        let mid = (lo + hi) / 2.0;
        if blocked_fp_rate(mid, k) <= epsilon {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// Picks `k` near the textbook optimum and the bits per key it needs
/// (about a millisecond of arithmetic, so results are memoized).
pub(super) fn params(epsilon: f64) -> Params {
    static CACHE: parking_lot::Mutex<Vec<(u64, Params)>> = parking_lot::Mutex::new(Vec::new());
    let epsilon = clamp_epsilon(epsilon);
    if let Some(&(_, p)) = CACHE.lock().iter().find(|(e, _)| *e == epsilon.to_bits()) {
        return p;
    }
    let p = compute_params(epsilon);
    let mut cache = CACHE.lock();
    if cache.len() >= 16 {
        cache.remove(0);
    }
    cache.push((epsilon.to_bits(), p));
    p
}

fn compute_params(epsilon: f64) -> Params {
    let k0 = (-epsilon.log2()).round().max(1.0) as u32;
    let lo = k0.saturating_sub(3).max(1);
    let hi = (k0 + 1).min(MAX_PROBES);
    (lo..=hi)
        .map(|k| Params {
            bits_per_key: min_bits_for(epsilon, k),
            k,
        })
        .min_by(|a, b| a.bits_per_key.total_cmp(&b.bits_per_key))
        .unwrap_or(Params {
            bits_per_key: 10.0,
            k: 6,
        })
}

pub(super) fn clamp_epsilon(epsilon: f64) -> f64 {
    if epsilon.is_nan() {
        return 0.01;
    }
    epsilon.clamp(1e-9, 0.5)
}

/// Bits per key the blocked filter needs so that its real false-positive
/// rate is about `epsilon` (out-of-range values are clamped to
/// `[1e-9, 0.5]`). Roughly 10-20% above the textbook `-ln(eps) / ln(2)^2`.
pub fn bits_per_key(epsilon: f64) -> f64 {
    params(epsilon).bits_per_key
}

/// Number of blocks for `keys` keys at `bits_per_key` (at least one).
pub(super) fn num_blocks(keys: usize, bits_per_key: f64) -> usize {
    let bits = (keys as f64 * bits_per_key).ceil();
    ((bits / BLOCK_BITS as f64).ceil() as usize).max(1)
}

/// The block a hash falls into (multiply-shift range reduction).
#[inline]
pub(super) fn block_index(h: u64, num_blocks: usize) -> usize {
    ((u128::from(h) * num_blocks as u128) >> 64) as usize
}

/// splitmix64 finalizer: a bijective 64-bit mixer.
#[inline]
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The bits a hash sets inside its block, as eight 64-bit word masks. Each
/// probe takes 9 fresh bits of a re-mixed hash (independent of the block
/// choice, which uses the high bits of `h`).
#[inline]
pub(super) fn block_masks(h: u64, k: u32) -> [u64; BLOCK_WORDS] {
    let mut masks = [0u64; BLOCK_WORDS];
    let mut state = h;
    let mut bits = 0u64;
    for i in 0..k {
        if i % 7 == 0 {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            bits = mix64(state);
        }
        let bit = (bits as usize) & (BLOCK_BITS - 1);
        masks[bit / 64] |= 1u64 << (bit % 64);
        bits >>= 9;
    }
    masks
}
