//! One shard of the [`BlockCache`](super::BlockCache): which blocks stay
//! and which go, by S3-FIFO ("FIFO queues are all you need for cache
//! eviction", Yang et al., SOSP 2023).
//!
//! * A block enters the small queue (a tenth of the shard), or the main
//!   queue if its key is in the ghost queue (it was evicted from the small
//!   one lately, so it is being reused at a distance the small queue cannot
//!   see).
//! * Leaving the small queue, a block hit since it entered moves to the main
//!   queue; one never hit is dropped and its key kept in the ghost queue. A
//!   scan's or a merge's blocks, read once, pass through the small queue
//!   and never touch the main one: the working set survives them.
//! * The main queue is a CLOCK: a block at its head that was hit goes back
//!   to its tail with one hit less; one that was not is dropped.
//!
//! Hits do not come here: they are counted in the blocks' slots by readers
//! that take no lock, and read by the shard when a block reaches the head
//! of a queue.
//!
//! * **Owns**: the queues, the ghost keys and the shard's charge; the
//!   blocks are owned by the files' slots ([`CachedBlocks`]).
//! * **Thread safety**: behind the cache's per-shard mutex.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use super::block::Cacheable;
use super::file::CachedBlocks;

/// The small queue's share of the shard's capacity, as the paper sets it.
const SMALL_SHARE: u64 = 10;

/// A block to cache, and how.
pub(super) struct NewBlock<B> {
    pub block: Arc<B>,
    /// Its hit count to start with.
    pub hits: u8,
    /// What it is charged.
    pub weight: u64,
    /// Its key in the ghost queue.
    pub key: u64,
    /// Straight to the main queue.
    pub main: bool,
}

/// A block in one of the queues. `file`'s slot `index` holds the block
/// while the entry is live; once the file's forgetting empties the slot
/// the entry is stale and only waits to be dropped.
struct Entry<B> {
    file: Arc<CachedBlocks<B>>,
    index: u32,
    weight: u32,
}

impl<B: Cacheable> Entry<B> {
    /// Whether [`CachedBlocks::forget`] took the block out of its slot. (Under
    /// the shard's lock only the shard and `forget` change the slot, so an
    /// empty slot means just that; a file being forgotten whose slot still
    /// holds the block is a live entry until `forget` reaches it.)
    fn is_stale(&self) -> bool {
        self.file.slot(self.index as usize).is_empty()
    }

    fn take_hit(&self) -> bool {
        self.file.slot(self.index as usize).take_hit()
    }
}

pub(super) struct Shard<B> {
    capacity: u64,
    /// Bytes of the live blocks (stale entries are not charged).
    usage: u64,
    live: usize,
    /// Entries of forgotten files still in the queues.
    stale: usize,
    small: VecDeque<Entry<B>>,
    /// Bytes of the small queue's entries, stale ones included.
    small_bytes: u64,
    main: VecDeque<Entry<B>>,
    ghost: Ghost,
}

impl<B: Cacheable> Shard<B> {
    pub fn new(capacity: u64) -> Shard<B> {
        Shard {
            capacity,
            usage: 0,
            live: 0,
            stale: 0,
            small: VecDeque::new(),
            small_bytes: 0,
            main: VecDeque::new(),
            ghost: Ghost::default(),
        }
    }

    pub fn usage(&self) -> u64 {
        self.usage
    }

    pub fn entries(&self) -> usize {
        self.live
    }

    /// Entries in the queues, stale ones included.
    #[cfg(test)]
    pub fn queued(&self) -> usize {
        self.small.len() + self.main.len()
    }

    /// Sets the capacity, dropping blocks until they fit.
    pub fn set_capacity(&mut self, capacity: u64) {
        self.capacity = capacity;
        self.make_room(0);
    }

    /// Caches `new` as slot `index` of `file` (empty: the caller checked
    /// under this shard's lock), in the main queue if it says so (else as
    /// S3-FIFO places it). False if it cannot fit at all.
    pub fn insert(&mut self, file: &Arc<CachedBlocks<B>>, index: usize, new: NewBlock<B>) -> bool {
        let NewBlock {
            block,
            hits,
            weight,
            key,
            main,
        } = new;
        if weight > self.capacity || weight > u64::from(u32::MAX) || index > u32::MAX as usize {
            return false;
        }
        self.make_room(weight);
        file.slot(index).fill(block, hits);
        let entry = Entry {
            file: Arc::clone(file),
            index: index as u32,
            weight: weight as u32,
        };
        if self.ghost.remove(key) || main {
            self.main.push_back(entry);
        } else {
            self.small_bytes += weight;
            self.small.push_back(entry);
        }
        self.usage += weight;
        self.live += 1;
        true
    }

    /// Uncharges a block that [`CachedBlocks::forget`] took out of its slot:
    /// its entry is stale from now on.
    pub fn forgot(&mut self, weight: u64) {
        self.usage -= weight;
        self.live -= 1;
        self.stale += 1;
        // Stale entries are dropped as they reach a queue's head; while the
        // cache is not full nothing reaches it, so sweep them in bulk once
        // they outnumber the live ones.
        if self.stale > self.live + 1024 {
            self.drop_stale();
        }
    }

    fn drop_stale(&mut self) {
        self.small.retain(|e| !e.is_stale());
        self.main.retain(|e| !e.is_stale());
        self.small_bytes = self.small.iter().map(|e| u64::from(e.weight)).sum();
        self.stale = 0;
    }

    /// Drops blocks until `weight` more bytes fit.
    fn make_room(&mut self, weight: u64) {
        // Readers count hits without the lock, so a hot main queue could
        // keep earning second chances while this loops: past two rounds
        // of it, the head goes whether it was hit or not.
        let mut chances = 2 * (self.main.len() + self.small.len()) + 16;
        while self.usage + weight > self.capacity && self.live > 0 {
            let small_over = self.small_bytes * SMALL_SHARE > self.capacity;
            let second_chance = chances > 0;
            chances = chances.saturating_sub(1);
            if (small_over || self.main.is_empty()) && !self.small.is_empty() {
                self.evict_small(second_chance);
            } else if !self.main.is_empty() {
                self.evict_main(second_chance);
            } else {
                break;
            }
        }
    }

    /// The small queue's head leaves: to the main queue if it was hit, else
    /// out (its key to the ghost queue).
    fn evict_small(&mut self, second_chance: bool) {
        let Some(entry) = self.pop_live(true) else {
            return;
        };
        if entry.take_hit() && second_chance {
            self.main.push_back(entry);
        } else {
            self.ghost
                .insert(entry.file.key(entry.index as usize), self.live);
            self.remove(entry);
        }
    }

    /// The main queue's head goes round again if it was hit, else out.
    fn evict_main(&mut self, second_chance: bool) {
        let Some(entry) = self.pop_live(false) else {
            return;
        };
        if entry.take_hit() && second_chance {
            self.main.push_back(entry);
        } else {
            self.remove(entry);
        }
    }

    /// The head of the small queue or the main one, unless it is stale
    /// (then it is dropped, and `None`).
    fn pop_live(&mut self, small: bool) -> Option<Entry<B>> {
        let entry = match small {
            true => self.small.pop_front()?,
            false => self.main.pop_front()?,
        };
        if small {
            self.small_bytes -= u64::from(entry.weight);
        }
        if entry.is_stale() {
            self.stale -= 1;
            return None;
        }
        Some(entry)
    }

    fn remove(&mut self, entry: Entry<B>) {
        entry.file.slot(entry.index as usize).empty();
        self.usage -= u64::from(entry.weight);
        self.live -= 1;
    }
}

/// Keys of blocks lately dropped from the small queue, at most as many as
/// the shard holds blocks (the paper's size for it).
#[derive(Default)]
struct Ghost {
    /// Key -> the serial number of its latest entry in `order`.
    keys: HashMap<u64, u64, BuildHasherDefault<KeyHasher>>,
    order: VecDeque<(u64, u64)>,
    serial: u64,
}

impl Ghost {
    fn insert(&mut self, key: u64, limit: usize) {
        self.serial += 1;
        self.keys.insert(key, self.serial);
        self.order.push_back((key, self.serial));
        while self.order.len() > limit.max(64) {
            let Some((old, serial)) = self.order.pop_front() else {
                break;
            };
            if self.keys.get(&old) == Some(&serial) {
                self.keys.remove(&old);
            }
        }
    }

    /// Whether `key` was there (it is not any more).
    fn remove(&mut self, key: u64) -> bool {
        self.keys.remove(&key).is_some()
    }
}

/// The ghost's keys are hashes already.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}
