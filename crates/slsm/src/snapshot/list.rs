//! The live snapshots: which sequence numbers readers hold, so that merges
//! keep every version one of them can see.
//!
//! * **Owns**: a count per held sequence number.
//! * **Thread safety**: one short lock; a snapshot's sequence number is
//!   read under it, so a merge that lists snapshots never misses one being
//!   taken.

use std::collections::BTreeMap;

use parking_lot::Mutex;

/// Sequence numbers held by snapshots, with how many hold each.
#[derive(Default)]
pub(crate) struct SnapshotList {
    held: Mutex<BTreeMap<u64, usize>>,
}

impl SnapshotList {
    /// Holds the sequence number `visible()` returns, read under the lock.
    pub fn acquire(&self, visible: impl FnOnce() -> u64) -> u64 {
        let mut held = self.held.lock();
        let seq = visible();
        *held.entry(seq).or_insert(0) += 1;
        seq
    }

    /// Lets go of one hold of `seq`.
    pub fn release(&self, seq: u64) {
        let mut held = self.held.lock();
        if let Some(n) = held.get_mut(&seq) {
            *n -= 1;
            if *n == 0 {
                held.remove(&seq);
            }
        }
    }

    /// Held sequence numbers, ascending.
    pub fn list(&self) -> Vec<u64> {
        self.held.lock().keys().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_are_counted() {
        let s = SnapshotList::default();
        assert_eq!(s.acquire(|| 5), 5);
        assert_eq!(s.acquire(|| 5), 5);
        assert_eq!(s.acquire(|| 9), 9);
        assert_eq!(s.list(), vec![5, 9]);
        s.release(5);
        assert_eq!(s.list(), vec![5, 9]);
        s.release(5);
        s.release(7); // never held: ignored
        assert_eq!(s.list(), vec![9]);
    }
}
