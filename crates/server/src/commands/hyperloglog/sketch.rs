//! Redis's HyperLogLog, byte for byte: a string of a 16-byte header
//! ("HYLL", the encoding, three zero bytes, the cached cardinality little
//! endian with its top bit set when stale) then 16,384 6-bit registers,
//! dense (12,288 bytes) or sparse (run-length opcodes: ZERO `00xxxxxx`,
//! XZERO `01xxxxxx yyyyyyyy`, VAL `1vvvvvxx`). The same hash (MurmurHash64A,
//! seed `0xadc83b19`), the same in-place sparse updates (so the string
//! `GET` returns is Redis's), the same promotion to dense past 3,000 bytes
//! (`hll-sparse-max-bytes`) or a register above 32, and Ertl's estimator
//! as Redis 7 computes it, so `PFCOUNT` answers Redis's number.
//!
//! Ported from Redis 7.0's `hyperloglog.c` (BSD-3-Clause) because only the
//! same algorithm gives the same strings and counts; no crate does.

/// Registers, and the bits a register holds.
pub const REGISTERS: usize = 1 << 14;
const BITS: usize = 6;
const HDR: usize = 16;
const DENSE_SIZE: usize = HDR + (REGISTERS * BITS).div_ceil(8);
const DENSE: u8 = 0;
const SPARSE: u8 = 1;
/// Redis's `hll-sparse-max-bytes` default.
const SPARSE_MAX_BYTES: usize = 3000;
/// The hash bits left after the register index: counts run to 51.
const Q: usize = 64 - 14;

/// A sparse representation that does not add up to 16,384 registers.
#[derive(Debug)]
pub struct Corrupt;

/// Whether `data` is a HyperLogLog Redis would take (its header, and a
/// dense one's exact length).
pub fn is_hll(data: &[u8]) -> bool {
    data.len() >= HDR
        && &data[..4] == b"HYLL"
        && data[4] <= SPARSE
        && (data[4] != DENSE || data.len() == DENSE_SIZE)
}

pub fn is_dense(data: &[u8]) -> bool {
    data[4] == DENSE
}

/// An empty HyperLogLog: sparse, one XZERO covering every register.
pub fn empty() -> Vec<u8> {
    let mut out = b"HYLL".to_vec();
    out.extend_from_slice(&[SPARSE, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    out.extend_from_slice(&xzero(REGISTERS));
    out
}

/// The cached cardinality, if it is current.
pub fn cached(data: &[u8]) -> Option<u64> {
    let card = u64::from_le_bytes(data[8..16].try_into().ok()?);
    (data[15] & 0x80 == 0).then_some(card)
}

pub fn set_cached(data: &mut [u8], card: u64) {
    data[8..16].copy_from_slice(&card.to_le_bytes());
}

pub fn invalidate(data: &mut [u8]) {
    data[15] |= 0x80;
}

/// Redis's MurmurHash2, 64-bit version (endian neutral).
fn murmur64a(key: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4a7935bd1e995;
    let mut h = seed ^ (key.len() as u64).wrapping_mul(M);
    let mut words = key.chunks_exact(8);
    for w in &mut words {
        let mut k = u64::from_le_bytes(w.try_into().unwrap_or_default());
        k = k.wrapping_mul(M);
        k ^= k >> 47;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        for (i, b) in tail.iter().enumerate() {
            h ^= (*b as u64) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> 47;
    h = h.wrapping_mul(M);
    h ^= h >> 47;
    h
}

/// The register `ele` hashes to, and the length of its `0...1` pattern.
fn pattern(ele: &[u8]) -> (usize, u8) {
    let hash = murmur64a(ele, 0xadc83b19);
    let index = (hash as usize) & (REGISTERS - 1);
    let rest = (hash >> 14) | (1 << Q);
    (index, rest.trailing_zeros() as u8 + 1)
}

fn dense_get(regs: &[u8], i: usize) -> u8 {
    let (byte, fb) = (i * BITS / 8, (i * BITS) & 7);
    let b0 = regs[byte] as usize;
    let b1 = regs.get(byte + 1).copied().unwrap_or(0) as usize;
    (((b0 >> fb) | (b1 << (8 - fb))) & 63) as u8
}

fn dense_put(regs: &mut [u8], i: usize, v: u8) {
    let (byte, fb) = (i * BITS / 8, (i * BITS) & 7);
    let v = v as usize;
    regs[byte] = ((regs[byte] as usize & !(63 << fb)) | (v << fb)) as u8;
    if let Some(next) = regs.get_mut(byte + 1) {
        *next = ((*next as usize & !(63 >> (8 - fb))) | (v >> (8 - fb))) as u8;
    }
}

/// Sets a dense register to `count` if that raises it; true if it did.
fn dense_set(regs: &mut [u8], i: usize, count: u8) -> bool {
    if count > dense_get(regs, i) {
        dense_put(regs, i, count);
        return true;
    }
    false
}

/// One sparse opcode at `p`: (registers it covers, its bytes, its value
/// (0 for the zero runs)). A XZERO cut off at the end reads a zero byte,
/// as Redis reads its string's terminator.
fn opcode(s: &[u8], p: usize) -> (usize, usize, u8) {
    let op = s[p];
    match op & 0xc0 {
        0 => ((op & 0x3f) as usize + 1, 1, 0),
        0x40 => {
            let low = s.get(p + 1).copied().unwrap_or(0) as usize;
            ((((op & 0x3f) as usize) << 8 | low) + 1, 2, 0)
        }
        _ => ((op & 3) as usize + 1, 1, ((op >> 2) & 0x1f) + 1),
    }
}

/// A sparse HyperLogLog's opcodes in order, as (registers covered,
/// value).
fn runs(data: &[u8]) -> impl Iterator<Item = (usize, u8)> + '_ {
    let mut p = HDR;
    std::iter::from_fn(move || {
        let (run, len, value) = (p < data.len()).then(|| opcode(data, p))?;
        p += len;
        Some((run, value))
    })
}

fn val(value: u8, len: usize) -> u8 {
    ((value - 1) << 2 | (len as u8 - 1)) | 0x80
}

fn xzero(len: usize) -> [u8; 2] {
    let l = len - 1;
    [(l >> 8) as u8 | 0x40, (l & 0xff) as u8]
}

/// A run of `len` zero registers: ZERO up to 64, else XZERO.
fn zeros(len: usize, out: &mut Vec<u8>) {
    if len > 64 {
        out.extend_from_slice(&xzero(len));
    } else {
        out.push((len - 1) as u8);
    }
}

/// Rewrites a sparse HyperLogLog as dense (Redis's `hllSparseToDense`).
pub fn to_dense(data: &mut Vec<u8>) -> Result<(), Corrupt> {
    if data[4] == DENSE {
        return Ok(());
    }
    let mut dense = vec![0u8; DENSE_SIZE];
    dense[..HDR].copy_from_slice(&data[..HDR]);
    dense[4] = DENSE;
    let mut idx = 0;
    for (run, value) in runs(data) {
        if value > 0 {
            if run + idx > REGISTERS {
                break;
            }
            for i in idx..idx + run {
                dense_put(&mut dense[HDR..], i, value);
            }
        }
        idx += run;
    }
    if idx != REGISTERS {
        return Err(Corrupt);
    }
    *data = dense;
    Ok(())
}

/// Raises register `index` to `count`, in place as Redis does
/// (`hllSparseSet`/`hllDenseSet`); true if the register changed.
pub fn set(data: &mut Vec<u8>, index: usize, count: u8) -> Result<bool, Corrupt> {
    if data[4] == DENSE {
        return Ok(dense_set(&mut data[HDR..], index, count));
    }
    if count > 32 {
        return promote(data, index, count);
    }
    // Find the opcode covering `index`.
    let (mut p, mut first, mut prev, mut span) = (HDR, 0, None, 0);
    while p < data.len() {
        let (run, len, _) = opcode(data, p);
        span = run;
        if index < first + span {
            break;
        }
        prev = Some(p);
        p += len;
        first += span;
    }
    let (run, oplen, value) = match p < data.len() && span > 0 {
        true => opcode(data, p),
        false => return Err(Corrupt),
    };
    if p + oplen > data.len() {
        return Err(Corrupt);
    }
    if value > 0 && value >= count {
        return Ok(false);
    }
    if run == 1 && oplen == 1 {
        // A lone VAL below `count`, or a lone ZERO: one byte.
        data[p] = val(count, 1);
        merge_adjacent(data, prev.unwrap_or(HDR));
        invalidate(data);
        return Ok(true);
    }
    let last = first + span - 1;
    let mut seq = Vec::with_capacity(5);
    if index != first {
        match value {
            0 => zeros(index - first, &mut seq),
            v => seq.push(val(v, index - first)),
        }
    }
    seq.push(val(count, 1));
    if index != last {
        match value {
            0 => zeros(last - index, &mut seq),
            v => seq.push(val(v, last - index)),
        }
    }
    if seq.len() > oplen && data.len() + seq.len() - oplen > SPARSE_MAX_BYTES {
        return promote(data, index, count);
    }
    data.splice(p..p + oplen, seq);
    merge_adjacent(data, prev.unwrap_or(HDR));
    invalidate(data);
    Ok(true)
}

/// Redis's step 4: up to five opcodes from `p` on, adjacent VALs of one
/// value merged while their runs fit one opcode.
fn merge_adjacent(data: &mut Vec<u8>, mut p: usize) {
    let mut scan = 5;
    while p < data.len() && scan > 0 {
        scan -= 1;
        let (_, len, value) = opcode(data, p);
        if value == 0 {
            p += len;
            continue;
        }
        if let Some(&next) = data.get(p + 1) {
            let (run2, _, value2) = opcode(data, p + 1);
            let run = opcode(data, p).0 + run2;
            if next & 0x80 != 0 && value2 == value && run <= 4 {
                data[p + 1] = val(value, run);
                data.remove(p);
                continue;
            }
        }
        p += 1;
    }
}

fn promote(data: &mut Vec<u8>, index: usize, count: u8) -> Result<bool, Corrupt> {
    to_dense(data)?;
    Ok(dense_set(&mut data[HDR..], index, count))
}

/// Adds `ele`: true if a register changed (Redis's `hllAdd`).
pub fn add(data: &mut Vec<u8>, ele: &[u8]) -> Result<bool, Corrupt> {
    let (index, count) = pattern(ele);
    set(data, index, count)
}

/// `max[i] = max(max[i], register i)` (Redis's `hllMerge`).
pub fn merge_into(max: &mut [u8], data: &[u8]) -> Result<(), Corrupt> {
    if data[4] == DENSE {
        for (i, m) in max.iter_mut().enumerate().take(REGISTERS) {
            *m = (*m).max(dense_get(&data[HDR..], i));
        }
        return Ok(());
    }
    let mut i = 0;
    for (run, value) in runs(data) {
        if value > 0 {
            if run + i > REGISTERS {
                break;
            }
            for m in &mut max[i..i + run] {
                *m = (*m).max(value);
            }
        }
        i += run;
    }
    match i == REGISTERS {
        true => Ok(()),
        false => Err(Corrupt),
    }
}

/// The estimate of a HyperLogLog's cardinality (Redis's `hllCount`).
pub fn count(data: &[u8]) -> Result<u64, Corrupt> {
    let mut histo = [0u32; 64];
    if data[4] == DENSE {
        for i in 0..REGISTERS {
            histo[dense_get(&data[HDR..], i) as usize] += 1;
        }
        return Ok(estimate(&histo));
    }
    let mut idx = 0;
    for (run, value) in runs(data) {
        histo[value as usize] += run as u32;
        idx += run;
    }
    match idx == REGISTERS {
        true => Ok(estimate(&histo)),
        false => Err(Corrupt),
    }
}

/// The estimate over raw registers, one byte each (`PFCOUNT` of keys).
pub fn count_registers(regs: &[u8]) -> u64 {
    let mut histo = [0u32; 64];
    for r in regs {
        histo[(*r & 63) as usize] += 1;
    }
    estimate(&histo)
}

/// Ertl's estimator ("New cardinality estimation algorithms for
/// HyperLogLog sketches", arXiv:1702.01284), computed as Redis does.
fn estimate(histo: &[u32; 64]) -> u64 {
    let m = REGISTERS as f64;
    let mut z = m * tau((m - histo[Q + 1] as f64) / m);
    for j in (1..=Q).rev() {
        z += histo[j] as f64;
        z *= 0.5;
    }
    z += m * sigma(histo[0] as f64 / m);
    let e = (0.721_347_520_444_481_7 * m * m / z).round();
    // C's `llroundl` out of range (all registers at their maximum: z is
    // 0) gives x86's "integer indefinite", as Redis then answers.
    match e.is_finite() && e.abs() < 9.2e18 {
        true => e as i64 as u64,
        false => 1 << 63,
    }
}

fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let (mut y, mut z) = (1.0, x);
    loop {
        x *= x;
        let before = z;
        z += x * y;
        y += y;
        if before == z {
            return z;
        }
    }
}

fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let (mut y, mut z) = (1.0, 1.0 - x);
    loop {
        x = x.sqrt();
        let before = z;
        y *= 0.5;
        z -= (1.0 - x) * (1.0 - x) * y;
        if before == z {
            return z / 3.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The registers of a HyperLogLog, one byte each.
    fn registers(data: &[u8]) -> Vec<u8> {
        let mut regs = vec![0; REGISTERS];
        merge_into(&mut regs, data).unwrap();
        regs
    }

    /// A tiny deterministic generator (xorshift), so the test needs no
    /// crate and fails the same way every time.
    fn elements(seed: u64, n: usize, range: u64) -> Vec<Vec<u8>> {
        let mut x = seed | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % range).to_string().into_bytes()
            })
            .collect()
    }

    /// Against a model (each register the highest pattern length of the
    /// elements hashed to it): every add reports whether the model
    /// changed, the registers match it through sparse and dense, the
    /// sparse form stays within Redis's bound, and a dense copy made at
    /// any point holds the same registers.
    #[test]
    fn registers_follow_a_model_through_sparse_and_dense() {
        for seed in 1..6u64 {
            let mut model = vec![0u8; REGISTERS];
            let mut hll = empty();
            for (i, ele) in elements(seed, 6000, 40_000).iter().enumerate() {
                let (index, run) = pattern(ele);
                let raises = run > model[index];
                model[index] = model[index].max(run);
                assert_eq!(add(&mut hll, ele).unwrap(), raises, "seed {seed} add {i}");
                if i % 500 == 0 {
                    assert_eq!(registers(&hll), model, "seed {seed} add {i}");
                    let mut dense = hll.clone();
                    to_dense(&mut dense).unwrap();
                    assert_eq!(dense.len(), DENSE_SIZE);
                    assert_eq!(registers(&dense), model);
                    assert_eq!(count(&dense).unwrap(), count(&hll).unwrap());
                }
                if !is_dense(&hll) {
                    assert!(hll.len() <= SPARSE_MAX_BYTES);
                }
            }
            assert!(is_dense(&hll), "6,000 elements make it dense");
            assert_eq!(registers(&hll), model);
        }
    }

    /// The estimate is within a few percent (Redis's standard error is
    /// 0.81%) from tens to a million distinct elements.
    #[test]
    fn counts_are_close() {
        for n in [10usize, 1000, 20_000, 1_000_000] {
            let mut hll = empty();
            for i in 0..n {
                add(&mut hll, format!("element:{i}").as_bytes()).unwrap();
            }
            let got = count(&hll).unwrap() as f64;
            let error = (got - n as f64).abs() / n as f64;
            assert!(error < 0.03, "{n} elements counted as {got}");
        }
    }

    #[test]
    fn the_hash_is_redis_s() {
        // MurmurHash64A with Redis's seed, for inputs of every tail length.
        let mut hll = empty();
        for ele in [&b"a"[..], b"ab", b"abcdefgh", b"abcdefghi"] {
            add(&mut hll, ele).unwrap();
        }
        assert_eq!(count(&hll).unwrap(), 4);
        assert_eq!(murmur64a(b"", 0), 0);
    }

    #[test]
    fn corrupt_sparse_data_is_an_error_not_a_panic() {
        let mut header = empty();
        header.truncate(HDR);
        for tail in [
            &[0x7f][..],
            &[0x7f, 0xff, 0x7f, 0xff],
            &[0xff; 10],
            &[],
            &[0x7f, 0xfe],
        ] {
            let mut data = [&header[..], tail].concat();
            assert!(count(&data).is_err(), "{tail:?}");
            assert!(merge_into(&mut vec![0; REGISTERS], &data).is_err());
            let _ = add(&mut data, b"x");
            let _ = to_dense(&mut data);
        }
    }
}
