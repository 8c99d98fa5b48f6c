//! Building a run file's filter: the key hashes gathered while the file
//! is written ([`KeyHashes`]) and the serialized filter over them
//! ([`build_filter`]; the layout is in the [parent module](super)).

use super::{
    block_index, block_masks, num_blocks, params, prefetch, BLOCK_BYTES, BLOCK_WORDS,
    FORMAT_BLOCKED_V1, HEADER_LEN,
};

/// The key hashes a run file's filter is built from, gathered while the
/// file is written, in chunks of 4 KiB rather than one growing vector.
///
/// Why chunks: the engine charges these hashes to its memory budget, and
/// the block cache shrinks by as much while a large merge runs. The blocks
/// it gives back are ~4 KiB pieces of the heap that the allocator keeps;
/// hashes in pieces of the same size reuse them, where one vector (8 bytes
/// per key, 40 MB for a run of 5M keys) would be fresh memory on top.
#[derive(Debug, Default)]
pub struct KeyHashes {
    chunks: Vec<Box<[u64; HASHES_PER_CHUNK]>>,
    len: usize,
}

/// Hashes per chunk: 4 KiB.
const HASHES_PER_CHUNK: usize = 512;

impl KeyHashes {
    /// Adds the hash of one more distinct user key.
    pub fn push(&mut self, h: u64) {
        let at = self.len % HASHES_PER_CHUNK;
        if at == 0 {
            self.chunks.push(Box::new([0; HASHES_PER_CHUNK]));
        }
        if let Some(chunk) = self.chunks.last_mut() {
            chunk[at] = h;
        }
        self.len += 1;
    }

    /// Hashes added.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if none were added.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.chunks.len() * HASHES_PER_CHUNK * 8 + self.chunks.capacity() * 8
    }

    /// Hash `i` (`i < len`).
    fn get(&self, i: usize) -> u64 {
        self.chunks[i / HASHES_PER_CHUNK][i % HASHES_PER_CHUNK]
    }

    /// Serializes a filter over the hashes with false-positive rate
    /// `epsilon` (see [`build_filter`]).
    pub fn build_filter(&self, epsilon: f64) -> Vec<u8> {
        filter_over(self.len, |i| self.get(i), epsilon)
    }
}

/// Serializes a filter over `hashes` (one [`hash_key`] per distinct user
/// key) with false-positive rate `epsilon`. No hashes gives a filter with no
/// blocks that answers "absent" for everything.
pub fn build_filter(hashes: &[u64], epsilon: f64) -> Vec<u8> {
    filter_over(hashes.len(), |i| hashes[i], epsilon)
}

/// [`build_filter`] over `n` hashes, hash `i` being `hash_at(i)`.
fn filter_over(n: usize, hash_at: impl Fn(usize) -> u64, epsilon: f64) -> Vec<u8> {
    let p = params(epsilon);
    let blocks = if n == 0 {
        0
    } else {
        num_blocks(n, p.bits_per_key)
    };
    let mut words = vec![0u64; blocks * BLOCK_WORDS];
    // Each key sets bits in a random block of a filter far bigger than the
    // cache: prefetch the block of a key a few places ahead so the misses
    // overlap instead of costing one full memory latency per key.
    const AHEAD: usize = 16;
    for i in 0..n {
        if i + AHEAD < n {
            prefetch(
                words[block_index(hash_at(i + AHEAD), blocks) * BLOCK_WORDS..]
                    .as_ptr()
                    .cast(),
            );
        }
        let h = hash_at(i);
        let base = block_index(h, blocks) * BLOCK_WORDS;
        for (i, m) in block_masks(h, p.k).iter().enumerate() {
            words[base + i] |= m;
        }
    }
    let mut out = Vec::with_capacity(HEADER_LEN + blocks * BLOCK_BYTES);
    out.push(FORMAT_BLOCKED_V1);
    out.push(p.k as u8);
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&(blocks as u32).to_le_bytes());
    for w in words {
        out.extend_from_slice(&w.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bloom::hash_key;

    fn key_hashes(range: std::ops::Range<u64>) -> Vec<u64> {
        range.map(|i| hash_key(&i.to_le_bytes())).collect()
    }

    #[test]
    fn chunked_hashes_build_the_same_filter_as_a_slice() {
        for n in [0, 1, 511, 512, 513, 5000] {
            let hashes = key_hashes(0..n);
            let mut chunked = KeyHashes::default();
            hashes.iter().for_each(|&h| chunked.push(h));
            assert_eq!(chunked.len(), hashes.len());
            assert_eq!(
                chunked.build_filter(0.01),
                build_filter(&hashes, 0.01),
                "{n} hashes"
            );
        }
    }
}
