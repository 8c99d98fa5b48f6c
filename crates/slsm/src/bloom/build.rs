//! Building a run file's filter: the key hashes gathered while the file
//! is written ([`KeyHashes`]) and the serialized filter over them
//! ([`build_filter`]; the layout is in the [parent module](super)).

use super::layout::{
    block_index, block_masks, num_blocks, params, BLOCK_BYTES, FORMAT_BLOCKED_V1, HEADER_LEN,
};
use slsm_skiplist::prefetch;

/// The key hashes a run file's filter is built from, gathered while the
/// file is written, in 4 KiB pages of the block cache's pool
/// (`cache::pages`) rather than one growing vector.
///
/// Why the pool: the engine charges these hashes to its memory budget, and
/// the block cache shrinks by as much while a large merge runs, giving its
/// pages back to the pool; the hashes take those same pages and give them
/// back when the file is done, for the cache to refill. From the heap (8
/// bytes per key, 40 MB for a run of 5M keys) they were fresh memory on
/// top of the cache's, and once freed glibc kept much of it resident where
/// the budget no longer saw it: the default 5M set's peak RSS was 145-156
/// MiB in four runs, 135-150 with the pool (at the same speed).
#[derive(Debug, Default)]
pub struct KeyHashes {
    chunks: Vec<Chunk>,
    len: usize,
}

/// Hashes per chunk: one 4 KiB page.
const HASHES_PER_CHUNK: usize = crate::cache::pages::PAGE / 8;

/// A page of the pool, or of the heap when the pool cannot map one.
enum Chunk {
    Pooled(crate::cache::pages::PageBesideCaches),
    Heap(Box<[u8; crate::cache::pages::PAGE]>),
}

impl Chunk {
    fn new() -> Chunk {
        match crate::cache::pages::page_beside_caches() {
            Some(page) => Chunk::Pooled(page),
            None => Chunk::Heap(Box::new([0; crate::cache::pages::PAGE])),
        }
    }

    fn bytes(&self) -> &[u8] {
        match self {
            Chunk::Pooled(page) => page,
            Chunk::Heap(bytes) => &bytes[..],
        }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        match self {
            Chunk::Pooled(page) => page,
            Chunk::Heap(bytes) => &mut bytes[..],
        }
    }
}

impl std::fmt::Debug for Chunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Chunk")
    }
}

impl KeyHashes {
    /// Adds the hash of one more distinct user key.
    pub fn push(&mut self, h: u64) {
        let at = self.len % HASHES_PER_CHUNK;
        if at == 0 {
            self.chunks.push(Chunk::new());
        }
        if let Some(chunk) = self.chunks.last_mut() {
            chunk.bytes_mut()[at * 8..at * 8 + 8].copy_from_slice(&h.to_ne_bytes());
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
        self.chunks.len() * crate::cache::pages::PAGE
            + self.chunks.capacity() * std::mem::size_of::<Chunk>()
    }

    /// Hashes the pages held have room for.
    pub fn capacity(&self) -> usize {
        self.chunks.len() * HASHES_PER_CHUNK
    }

    /// What [`heap_bytes`](Self::heap_bytes) and [`capacity`](Self::capacity)
    /// will be once one more hash is pushed.
    pub fn after_push(&self) -> (usize, usize) {
        if self.len < self.capacity() {
            return (self.heap_bytes(), self.capacity());
        }
        let slots = match self.chunks.len() == self.chunks.capacity() {
            true => (self.chunks.capacity() * 2).max(4),
            false => self.chunks.capacity(),
        };
        let bytes = (self.chunks.len() + 1) * crate::cache::pages::PAGE
            + slots * std::mem::size_of::<Chunk>();
        (bytes, self.capacity() + HASHES_PER_CHUNK)
    }

    /// Hash `i` (`i < len`).
    fn get(&self, i: usize) -> u64 {
        let at = (i % HASHES_PER_CHUNK) * 8;
        let bytes = &self.chunks[i / HASHES_PER_CHUNK].bytes()[at..at + 8];
        u64::from_ne_bytes(bytes.try_into().unwrap_or([0; 8]))
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

/// [`build_filter`] over `n` hashes, hash `i` being `hash_at(i)`, built in
/// place in the one buffer it is returned in (with room for the block
/// trailer the run file seals it with): [`filter_len`] bytes at most, what
/// the run builder charges the memory budget for it beforehand.
fn filter_over(n: usize, hash_at: impl Fn(usize) -> u64, epsilon: f64) -> Vec<u8> {
    let p = params(epsilon);
    let blocks = if n == 0 {
        0
    } else {
        num_blocks(n, p.bits_per_key)
    };
    let mut out = Vec::with_capacity(HEADER_LEN + blocks * BLOCK_BYTES + SEAL_ROOM);
    out.push(FORMAT_BLOCKED_V1);
    out.push(p.k as u8);
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&(blocks as u32).to_le_bytes());
    out.resize(HEADER_LEN + blocks * BLOCK_BYTES, 0);
    let words = &mut out[HEADER_LEN..];
    // Each key sets bits in a random block of a filter far bigger than the
    // cache: prefetch the block of a key a few places ahead so the misses
    // overlap instead of costing one full memory latency per key.
    const AHEAD: usize = 16;
    for i in 0..n {
        if i + AHEAD < n {
            let ahead = block_index(hash_at(i + AHEAD), blocks) * BLOCK_BYTES;
            prefetch(words[ahead..].as_ptr());
        }
        let h = hash_at(i);
        let base = block_index(h, blocks) * BLOCK_BYTES;
        for (w, m) in block_masks(h, p.k).iter().enumerate() {
            let at = base + w * 8;
            let mut word = [0u8; 8];
            word.copy_from_slice(&words[at..at + 8]);
            let set = u64::from_le_bytes(word) | m;
            words[at..at + 8].copy_from_slice(&set.to_le_bytes());
        }
    }
    out
}

/// Room left after a serialized filter for the trailer its run-file block
/// is sealed with (`sst::format::seal_block`), so sealing never regrows it.
const SEAL_ROOM: usize = 8;

/// The most bytes the serialized filter over `keys` keys at
/// `bits_per_key` takes while it is built (see `filter_over`).
pub fn filter_len(keys: usize, bits_per_key: f64) -> usize {
    match keys {
        0 => HEADER_LEN + SEAL_ROOM,
        n => HEADER_LEN + num_blocks(n, bits_per_key) * BLOCK_BYTES + SEAL_ROOM,
    }
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
