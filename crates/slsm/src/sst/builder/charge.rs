//! What a [`RunBuilder`]'s buffers hold, asked of its memory charge before
//! they grow (the engine's memory budget: see `budget`).

use super::{MemoryCharge, RunBuilder};
use crate::bloom;

/// Bytes the index grows by at once: growth is asked for before it is
/// taken, in steps this size (not by doubling, whose last step could be
/// half the index).
const INDEX_STEP: usize = 4096;

/// The least a builder's memory charge grows by at once.
const CHARGE_STEP: usize = 64 << 10;

/// Bytes a reader of the finished file holds per block beyond the index's
/// stored bytes (decoded fences, a cache slot): charged while the file is
/// built, so opening it asks for nothing more.
const READER_BYTES_PER_BLOCK: usize = 48;

impl RunBuilder {
    /// Asks `charge` for what the builder's buffers (the filter's key
    /// hashes and the filter they become, the index, the write buffer, and
    /// what a reader of the file will hold beyond them) are about to hold,
    /// before they grow; the charge is dropped with the builder.
    pub(crate) fn charge_memory_to(&mut self, mut charge: MemoryCharge) {
        let held = self.held_with(self.hashes.heap_bytes(), self.hashes.capacity(), 0);
        charge(held, true);
        self.charged = held;
        self.memory_charge = Some(charge);
    }

    /// What the buffers hold with `hash_bytes` of hashes (room for
    /// `hash_room` of them) and `index_extra` more index capacity.
    pub(super) fn held_with(
        &self,
        hash_bytes: usize,
        hash_room: usize,
        index_extra: usize,
    ) -> usize {
        let out = self.out.as_ref().map_or(0, |o| o.capacity());
        let filter = bloom::filter_len(hash_room, self.bloom_bits_per_key);
        let reader = (self.blocks as usize + 2) * READER_BYTES_PER_BLOCK;
        // The index twice: `write_tail` stores a copy with its header.
        let index = 2 * (self.index.capacity() + index_extra);
        hash_bytes + filter + index + out + reader
    }

    /// Makes sure the next entry, `ikey`, has its memory: a new page for
    /// its hash, index room for the blocks it may close. Asks the charge
    /// first; false (nothing changed) if it refused and `must` is false.
    pub(super) fn reserve_for(&mut self, ikey: &[u8], new_user_key: bool, must: bool) -> bool {
        let new_page = new_user_key && self.hashes.len() == self.hashes.capacity();
        // Up to two blocks close during one `add`: the one before `ikey`
        // and the one `ikey` may fill.
        let fences = 2 * (ikey.len().max(self.last_key.len()) + 24);
        let index_extra = match self.index.capacity() - self.index.len() < fences {
            true => fences.max(INDEX_STEP),
            false => 0,
        };
        if !new_page && index_extra == 0 {
            return true;
        }
        let (hash_bytes, hash_room) = self.hashes.after_push();
        let held = self.held_with(hash_bytes, hash_room, index_extra);
        if held > self.charged {
            // Asked for in steps of an eighth more (at least 64 KiB): each
            // grant resizes the block cache, which a page's worth of keys
            // at a time made a cost of every flush (fillrandom ~10%).
            let step = held.max(self.charged + (self.charged / 8).max(CHARGE_STEP));
            if let Some(charge) = self.memory_charge.as_mut() {
                let granted = match charge(step, false) {
                    true => step,
                    false if charge(held, must) || must => held,
                    false => {
                        self.refused = held;
                        return false;
                    }
                };
                self.charged = granted;
            } else {
                self.charged = held;
            }
        }
        if index_extra > 0 {
            let room = self.index.capacity() + index_extra - self.index.len();
            self.index.reserve_exact(room);
        }
        true
    }
}
