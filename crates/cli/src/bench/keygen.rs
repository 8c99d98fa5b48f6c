//! Key and value generation with db_bench's semantics.
//!
//! Keys are integers in `[0, num)` written the way RocksDB's db_bench
//! (`GenerateKeyFromInt`, with `keys_per_prefix == 0`) writes them: the low
//! `min(key_size, 8)` bytes of the integer in big-endian order, then padding
//! with ASCII `'0'` bytes up to `key_size`. Random keys are drawn uniformly
//! from `[0, num)` with replacement, so a `fillrandom` of `num` keys writes
//! about 63% distinct keys, as db_bench does.

/// Writes the db_bench key for `v` into `buf` (whose length is the key size).
#[inline]
pub fn generate_key(v: u64, buf: &mut [u8]) {
    let bytes_to_fill = buf.len().min(8);
    for (i, b) in buf[..bytes_to_fill].iter_mut().enumerate() {
        *b = (v >> ((bytes_to_fill - i - 1) * 8)) as u8;
    }
    for b in &mut buf[bytes_to_fill..] {
        *b = b'0';
    }
}

/// A small, fast, seedable PRNG (xoshiro256**, seeded through splitmix64).
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator seeded from `seed` (any value, including 0).
    pub fn new(seed: u64) -> Self {
        let mut sm = seed;
        let mut next = || {
            sm = sm.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = sm;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        Rng {
            s: [next(), next(), next(), next()],
        }
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// A uniform integer in `[0, n)` (`n > 0`), by multiply-shift.
    #[inline]
    pub fn uniform(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// The order in which a workload visits keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyOrder {
    /// 0, 1, 2, ... (wrapping at `num`).
    Sequential,
    /// Uniform over `[0, num)`, with replacement.
    Random,
    /// Every key of `[0, num)` once per `num` keys, in a random order
    /// (db_bench's `filluniquerandom`).
    UniqueRandom,
}

/// Produces key integers in db_bench order.
#[derive(Clone, Debug)]
pub struct KeyGen {
    order: KeyOrder,
    num: u64,
    next: u64,
    /// `UniqueRandom`: a bijection of `[0, 2^bits)` (see [`KeyGen::permute`]),
    /// its odd multipliers drawn on first use.
    bits: u32,
    mul: [u64; 2],
}

impl KeyGen {
    /// Keys over `[0, num)` in `order` (`num` of 0 is treated as 1).
    pub fn new(order: KeyOrder, num: u64) -> Self {
        let num = num.max(1);
        KeyGen {
            order,
            num,
            next: 0,
            bits: (64 - (num - 1).leading_zeros()).max(2),
            mul: [0, 0],
        }
    }

    /// A bijection of `[0, 2^bits)`: multiplying by an odd number and
    /// xor-shifting right are both invertible modulo `2^bits`. Without a
    /// table, so `num` may be as large as memory allows the database to be.
    fn permute(&self, x: u64) -> u64 {
        let mask = u64::MAX >> (64 - self.bits);
        let half = self.bits / 2;
        let mut x = x.wrapping_mul(self.mul[0]) & mask;
        x ^= x >> half;
        x = x.wrapping_mul(self.mul[1]) & mask;
        x ^ (x >> half)
    }

    /// The next key integer.
    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        match self.order {
            KeyOrder::Sequential => {
                let v = self.next;
                self.next += 1;
                if self.next == self.num {
                    self.next = 0;
                }
                v
            }
            KeyOrder::Random => rng.uniform(self.num),
            KeyOrder::UniqueRandom => {
                if self.mul[0] == 0 {
                    self.mul = [rng.next_u64() | 1, rng.next_u64() | 1];
                }
                // Walk the permutation of [0, 2^bits), skipping values past
                // `num` (fewer than half of them): each key once per cycle.
                loop {
                    let v = self.permute(self.next);
                    self.next = (self.next + 1) & (u64::MAX >> (64 - self.bits));
                    if v < self.num {
                        return v;
                    }
                }
            }
        }
    }
}

/// Values like db_bench's `RandomGenerator`: a 1 MiB pool of bytes built
/// from 100-byte pieces, each `compression_ratio * 100` random printable
/// bytes repeated to fill the piece (db_bench's `CompressibleString`), so
/// that a block compressor shrinks them to about that ratio; handed out as
/// consecutive slices.
#[derive(Clone, Debug)]
pub struct ValueGen {
    data: Vec<u8>,
    pos: usize,
}

impl ValueGen {
    /// A pool large enough for values of `max_len` bytes, compressible to
    /// about `compression_ratio` (in `(0, 1]`).
    pub fn new(seed: u64, max_len: usize, compression_ratio: f64) -> Self {
        const PIECE: usize = 100;
        let mut rng = Rng::new(seed ^ 301);
        let size = (1 << 20).max(max_len * 2);
        let raw = ((PIECE as f64 * compression_ratio) as usize).clamp(1, PIECE);
        let mut data = Vec::with_capacity(size + PIECE);
        while data.len() < size {
            let start = data.len();
            for _ in 0..raw {
                data.push(b' ' + rng.uniform(95) as u8);
            }
            for i in raw..PIECE {
                let b = data[start + i % raw];
                data.push(b);
            }
        }
        data.truncate(size);
        ValueGen { data, pos: 0 }
    }

    /// The byte range within [`ValueGen::pool`] of the next value of `len` bytes.
    #[inline]
    pub fn next_range(&mut self, len: usize) -> std::ops::Range<usize> {
        if self.pos + len > self.data.len() {
            self.pos = 0;
        }
        let r = self.pos..self.pos + len;
        self.pos += len;
        r
    }

    /// The next value of `len` bytes.
    #[inline]
    pub fn next(&mut self, len: usize) -> &[u8] {
        let r = self.next_range(len);
        &self.data[r]
    }

    /// The whole pool (index it with ranges from [`ValueGen::next_range`]).
    pub fn pool(&self) -> &[u8] {
        &self.data
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_match_db_bench() {
        let mut k = [0u8; 16];
        generate_key(0x0102, &mut k);
        assert_eq!(&k[..8], &[0, 0, 0, 0, 0, 0, 1, 2]);
        assert_eq!(&k[8..], b"00000000");
        let mut k4 = [0u8; 4];
        generate_key(0x0A0B_0C0D_0E0F, &mut k4);
        assert_eq!(k4, [0x0C, 0x0D, 0x0E, 0x0F]);
        let mut k8 = [0u8; 8];
        generate_key(u64::MAX - 1, &mut k8);
        assert_eq!(k8, (u64::MAX - 1).to_be_bytes());
    }

    #[test]
    fn random_fill_is_about_63_percent_distinct() {
        let n = 100_000u64;
        let mut rng = Rng::new(7);
        let mut g = KeyGen::new(KeyOrder::Random, n);
        let mut seen = vec![false; n as usize];
        for _ in 0..n {
            let v = g.next(&mut rng);
            assert!(v < n);
            seen[v as usize] = true;
        }
        let distinct = seen.iter().filter(|&&b| b).count() as f64 / n as f64;
        assert!((distinct - 0.632).abs() < 0.01, "{distinct}");
    }

    #[test]
    fn unique_random_visits_every_key_once_per_num() {
        for n in [1u64, 2, 3, 1000, 4097] {
            let mut rng = Rng::new(n);
            let mut g = KeyGen::new(KeyOrder::UniqueRandom, n);
            let first: Vec<u64> = (0..n).map(|_| g.next(&mut rng)).collect();
            let mut sorted = first.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "n = {n}");
            if n >= 1000 {
                let in_order = first.windows(2).filter(|w| w[1] == w[0] + 1).count();
                assert!(in_order < n as usize / 10, "not shuffled: {in_order}");
            }
            let second: Vec<u64> = (0..n).map(|_| g.next(&mut rng)).collect();
            assert_eq!(first, second, "the next pass repeats the permutation");
        }
    }

    #[test]
    fn sequential_wraps() {
        let mut rng = Rng::new(1);
        let mut g = KeyGen::new(KeyOrder::Sequential, 3);
        let v: Vec<u64> = (0..5).map(|_| g.next(&mut rng)).collect();
        assert_eq!(v, [0, 1, 2, 0, 1]);
    }

    #[test]
    fn values_have_the_size_asked() {
        let mut g = ValueGen::new(0, 100, 0.5);
        for len in [0, 1, 100, 4096] {
            assert_eq!(g.next(len).len(), len);
        }
    }

    /// Each 100-byte piece holds `ratio * 100` distinct random bytes, then
    /// repeats them: what db_bench's values look like to a compressor.
    #[test]
    fn values_repeat_as_compressible_as_asked() {
        for (ratio, raw) in [(0.5, 50), (0.25, 25), (1.0, 100)] {
            let g = ValueGen::new(3, 100, ratio);
            for piece in g.pool().chunks(100).take(50) {
                for (i, &b) in piece.iter().enumerate() {
                    assert_eq!(b, piece[i % raw], "ratio {ratio}");
                }
            }
            let first = &g.pool()[..raw];
            let distinct: std::collections::BTreeSet<u8> = first.iter().copied().collect();
            assert!(distinct.len() > raw / 3, "random bytes, ratio {ratio}");
        }
    }
}
