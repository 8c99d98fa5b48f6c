//! The memory runs' part of a batch ([`MemSearch`]).
//!
//! Every key is checked against every memory run's filter first. A key no
//! filter lets through is answered by the runs' range tombstones (deleted)
//! or goes to the run files. A key some filter lets through is searched
//! for in those runs: by finger search in key order where the batch's keys
//! are dense in the run, else from the top.
//!
//! A search from the top is a chain of dependent cache misses, about
//! twenty in a run of 20,000 entries. Run to their ends before the run
//! files were searched, the few such searches of a batch of 64 random keys
//! (the ~3% of keys the active run's filter lets through) took 8% of a
//! cached Python `multi_get` of 64 (rdtsc per phase). So they start here
//! and advance a miss at a time ([`MemSearch::step`]) between the phases
//! of the run files' search, which is itself a wall of independent misses
//! that theirs overlap; [`MemSearch::finish`] takes their answers before
//! the first answer from a run file is reported. The price: a key a memory
//! run answers is searched for in the run files as well, and that answer
//! dropped.

use super::keys::{report, Batch};
use crate::answer::newest_version;
use crate::key::InternalOrder;
use crate::memtable::MemRun;
use crate::read::view::{answer_of, ReadView};
use slsm_skiplist::LowerBounds;

/// Whether `keys` keys in ascending order are found faster by finger
/// search than from the top in a memory run of `entries`.
///
/// A finger climbs and descends about `2 log d` levels for keys `d`
/// entries apart; a search from the top takes `log n` for a run of `n`.
/// The finger wins only while `d < sqrt(n)`, that is while the batch has
/// more than `sqrt(n)` keys (measured: 64 random keys in a run of 20,000
/// took 30% longer by finger than from the top).
pub(super) fn finger_pays(keys: usize, entries: usize) -> bool {
    keys.saturating_mul(keys) >= entries
}

/// A memory run's first entry at or after a lookup key.
type Hit<'r> = Option<(&'r [u8], &'r [u8])>;

/// The memory-run searches of one batch, from the filters to the answers.
pub(super) struct MemSearch<'r, 'k> {
    mems: &'k [&'r MemRun],
    /// Keys some run's filter let through, in the order of the batch's
    /// pending keys when the search started.
    candidates: Vec<usize>,
    /// For each run (newest first), the candidates its filter let
    /// through, in the order of `candidates`, each with its hit once known.
    hits: Vec<Vec<(usize, Hit<'r>)>>,
    /// Where the answer of each search from the top goes in `hits`.
    slots: Vec<(usize, usize)>,
    /// The searches from the top; `None` once finished.
    searches: Option<LowerBounds<'r, 'k, InternalOrder>>,
    /// The keys the memory runs answered, by index; set by `finish`.
    answered: Vec<bool>,
}

impl<'r, 'k> MemSearch<'r, 'k> {
    /// Checks every pending key of `b` against the filters of `mems`
    /// (newest first), starts the searches they let through, and takes the
    /// keys the runs' range tombstones delete out of the batch.
    pub fn start(view: &ReadView<'_>, mems: &'k [&'r MemRun], b: &mut Batch<'k>) -> Self {
        let (keys, lookups, hashes) = (b.keys, b.lookups, b.hashes);
        // Every key's filter line in every run starts loading at once: the
        // probes wait for one cache-miss latency, not one per key and run.
        for mem in mems {
            for &i in &b.pending {
                mem.prefetch_filter(hashes[i]);
            }
        }
        let mut is_candidate = vec![false; keys.len()];
        let (mut hits, mut searches, mut slots) = (Vec::new(), Vec::new(), Vec::new());
        for (r, mem) in mems.iter().enumerate() {
            let dense = b.sorted && finger_pays(b.pending.len(), mem.len());
            let mut finger = dense.then(|| mem.finger());
            let mut in_run = Vec::new();
            for &i in &b.pending {
                if !mem.may_contain(keys[i], hashes[i]) {
                    continue;
                }
                is_candidate[i] = true;
                let hit = match finger.as_mut() {
                    Some(finger) => finger.seek_ge(lookups.get(i)),
                    None => {
                        searches.push((*mem, lookups.get(i)));
                        slots.push((r, in_run.len()));
                        None
                    }
                };
                in_run.push((i, hit));
            }
            hits.push(in_run);
        }
        let candidates = b.pending.iter().copied().filter(|&i| is_candidate[i]);
        let candidates: Vec<usize> = candidates.collect();
        b.pending.retain(|&i| {
            is_candidate[i]
                || mems
                    .iter()
                    .all(|m| m.covering_range_del(keys[i], view.snapshot).is_none())
        });
        let searches = (!searches.is_empty()).then(|| MemRun::lower_bounds_stepped(searches));
        MemSearch {
            mems,
            candidates,
            hits,
            slots,
            searches,
            answered: Vec::new(),
        }
    }

    /// Advances the searches from the top by one cache miss each.
    #[inline]
    pub fn step(&mut self) {
        if let Some(searches) = &mut self.searches {
            searches.step();
        }
    }

    /// Ends the searches and reports the answers of the memory runs (once;
    /// later calls do nothing).
    pub fn finish(&mut self, view: &ReadView<'_>, b: &mut Batch<'_>) {
        if !self.answered.is_empty() || b.keys.is_empty() {
            return;
        }
        self.answered = vec![false; b.keys.len()];
        if let Some(searches) = self.searches.take() {
            for (&(r, at), hit) in self.slots.iter().zip(searches.finish()) {
                self.hits[r][at].1 = hit;
            }
        }
        for (mem, in_run) in self.mems.iter().zip(&self.hits) {
            let mut in_run = in_run.iter().peekable();
            for &i in &self.candidates {
                let hit = in_run.next_if(|&&(c, _)| c == i).and_then(|&(_, hit)| hit);
                if self.answered[i] {
                    continue;
                }
                let key = b.keys[i];
                let hit = hit.and_then(|(k, v)| newest_version(key, k, v));
                let range_del = mem.covering_range_del(key, view.snapshot);
                if let Some(answer) = answer_of(hit, range_del) {
                    report(b.found, i, answer);
                    self.answered[i] = true;
                }
            }
        }
    }

    /// Whether a memory run answered key `i` (after [`finish`](Self::finish)).
    pub fn answered(&self, i: usize) -> bool {
        self.answered.get(i).copied().unwrap_or(false)
    }
}
