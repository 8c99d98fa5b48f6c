//! A batched lookup. Every key is checked against the filters of every
//! memory run at once; the memory-run searches the filters let through
//! start (by finger search in key order where the keys are dense in a
//! run, as in RocksDB pull request #14428, "memtable MultiGet finger
//! search"; else from the top, all in lockstep), and advance while the
//! run files are searched for every key (`runs`), with the reads of the
//! whole batch issued together. Their answers are taken before the first
//! answer from a run file is: a key a memory run answers is not reported
//! again (see `mems` for why the searches overlap).
//!
//! For the run files each key walks the runs newest to oldest on its own:
//! its key range, range tombstones and Bloom filter (all in memory) pick
//! the first run that may hold it. The blocks those picks need, for every
//! key at once, are fetched concurrently (`cache::fetch`); then each key is
//! searched in its block. A key whose pick was a filter's false positive
//! moves on to its next run in another round (about 1% of keys per run).

mod keys;
mod mems;
mod runs;

use super::view::{check_stored_key, ReadView, Tally};
use crate::bloom::hash_key;
use crate::error::Result;
use crate::slice::Slice;
use crate::version::Source;

use keys::{key_order, Batch, LookupKeys};
use mems::MemSearch;

/// The values of `keys` (any order, duplicates allowed), in the caller's
/// order, as of the view's sequence number.
pub(crate) fn multi_get(view: &ReadView<'_>, keys: &[&[u8]]) -> Result<Vec<Option<Slice>>> {
    let mut values = vec![None; keys.len()];
    multi_get_with(view, keys, &mut |i, v| {
        values[i] = Some(Slice::copy_from(v))
    })?;
    Ok(values)
}

/// The values of `keys` (any order, duplicates allowed) as of the view's
/// sequence number, each handed to `found` with its key's index, borrowed
/// from where it is stored (a memory run, a cached block): the caller
/// copies what it keeps, where it wants (the Python binding, into one
/// buffer for the whole batch instead of an allocation per value). Keys
/// not found are not reported.
pub(crate) fn multi_get_with(
    view: &ReadView<'_>,
    keys: &[&[u8]],
    found: &mut dyn FnMut(usize, &[u8]),
) -> Result<()> {
    keys.iter().try_for_each(|k| check_stored_key(k))?;
    let (mut mems, mut runs) = (Vec::new(), Vec::new());
    for source in view.version.sources() {
        match source {
            Source::Mem(mem) => mems.push(&**mem),
            Source::Disk(run) => runs.push(run),
        }
    }
    // Only a finger search needs the keys in order. Sorting them took
    // 5% of a cached Python `multi_get` of 64 that had no use for it.
    let sorted = mems.iter().any(|m| mems::finger_pays(keys.len(), m.len()));
    let pending = match sorted {
        true => key_order(keys),
        false => (0..keys.len()).collect(),
    };
    let lookups = LookupKeys::new(keys, view.snapshot);
    let hashes: Vec<u64> = keys.iter().map(|k| hash_key(k)).collect();
    let mut b = Batch {
        keys,
        lookups: &lookups,
        hashes: &hashes,
        pending,
        sorted,
        tally: Tally::default(),
        found,
    };
    let mut in_memory = MemSearch::start(view, &mems, &mut b);
    let result = runs::search_runs(view, &runs, &mut b, &mut in_memory);
    b.tally.add_to(view.counters);
    result
}
