//! A batched lookup: the keys are sorted once; every memory run is searched
//! for the keys still unresolved, in key order, with finger search (the
//! technique of RocksDB pull request #14428, "memtable MultiGet finger
//! search"); then the run files, with the reads of the whole batch issued
//! together.
//!
//! For the run files each key walks the runs newest to oldest on its own:
//! its key range, range tombstones and Bloom filter (all in memory) pick
//! the first run that may hold it. The blocks those picks need, for every
//! key at once, are fetched concurrently (`run::fetch`); then each key is
//! searched in its block. A key whose pick was a filter's false positive
//! moves on to its next run in another round (about 1% of keys per run).

use std::sync::Arc;

use super::{answer_of, check_stored_key, ReadView};
use crate::bloom::hash_key;
use crate::error::Result;
use crate::key;
use crate::memtable::{newest_stored_version, newest_version, Answer, MemRun};
use crate::run::RunFile;
use crate::slice::Slice;
use crate::version::{DiskRun, Source};

/// The keys of one batch, with what every source needs of them.
struct Batch<'a> {
    keys: &'a [&'a [u8]],
    lookups: LookupKeys,
    hashes: Vec<u64>,
    /// Unresolved keys (indexes into `keys`), in key order.
    pending: Vec<usize>,
    /// Given each value found, with its key's index, once.
    found: &'a mut dyn FnMut(usize, &[u8]),
}

/// Hands `answer`, key `i`'s, to `found` if it is a value.
#[inline]
fn report(found: &mut dyn FnMut(usize, &[u8]), i: usize, answer: Answer<'_>) {
    if let Answer::Value(v) = answer {
        found(i, v);
    }
}

/// The lookup keys of a batch back to back in one buffer: one allocation
/// for the batch instead of one per key (a server's pipelined GETs spent
/// 5% of their time in `malloc` for them).
struct LookupKeys {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl LookupKeys {
    fn new(keys: &[&[u8]], snapshot: u64) -> LookupKeys {
        let total = keys.iter().map(|k| k.len() + key::TRAILER_LEN).sum();
        let mut bytes = Vec::with_capacity(total);
        let ends = keys
            .iter()
            .map(|k| {
                key::append_lookup_key(&mut bytes, k, snapshot);
                bytes.len()
            })
            .collect();
        LookupKeys { bytes, ends }
    }

    /// The lookup key of `keys[i]`.
    fn get(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.bytes[start..self.ends[i]]
    }
}

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
    let pending = key_order(keys);
    let mut b = Batch {
        keys,
        lookups: LookupKeys::new(keys, view.snapshot),
        hashes: keys.iter().map(|k| hash_key(k)).collect(),
        pending,
        found,
    };
    prefetch_mem_filters(view.version.sources(), &b);
    let (mut mems, mut runs) = (Vec::new(), Vec::new());
    for source in view.version.sources() {
        match source {
            Source::Mem(mem) => mems.push(&**mem),
            Source::Disk(run) => runs.push(run),
        }
    }
    search_mems(view, &mems, &mut b);
    search_runs(view, &runs, &mut b)
}

/// The indexes of `keys` in ascending key order. Sorted on the 8 bytes of
/// each key past the prefix the whole batch shares, compared as integers,
/// full keys compared only when those tie. Sorted by `memcmp`, about six
/// calls a key, `memcmp` was 6% of a cached Python `multi_get` of 64
/// (perf); on integers the batch measured 2-3% faster. The shared prefix
/// is skipped because keys that begin alike (a keyspace's tag, an
/// integer's leading zeros) would tie on their first 8 bytes every time.
fn key_order(keys: &[&[u8]]) -> Vec<usize> {
    let shared = match keys.split_first() {
        Some((first, rest)) => rest
            .iter()
            .map(|k| key::common_prefix_len(first, k))
            .fold(first.len(), usize::min),
        None => 0,
    };
    let mut order: Vec<(u64, usize)> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| (slsm_skiplist::key_prefix(&k[shared..]), i))
        .collect();
    order.sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| keys[a.1].cmp(keys[b.1])));
    order.into_iter().map(|(_, i)| i).collect()
}

/// Starts loading the filter line of every key in every memory run, so
/// that `search_mems`' probes wait for one cache-miss latency per batch
/// instead of one per key and run (as `search_runs` does for the run
/// files). Unprefetched, the memory runs' filters took ~8% of a Python
/// `multi_get` of 64 over three memory runs (perf).
fn prefetch_mem_filters(sources: &[Source], b: &Batch<'_>) {
    for source in sources {
        if let Source::Mem(mem) = source {
            for &i in &b.pending {
                mem.prefetch_filter(b.hashes[i]);
            }
        }
    }
}

/// The memory runs, newest first, for every pending key. Each run is
/// searched for the keys its filter lets through: by finger search in key
/// order where they are dense in the run, else by searches from the top,
/// those of every run run in lockstep (`MemRun::lower_bounds_across`); then
/// each key takes the answer of the newest run that has one.
///
/// A finger climbs and descends about `2 log d` levels for keys `d`
/// entries apart; a search from the top takes `log n` for a run of `n`.
/// The finger wins only while `d < sqrt(n)`, that is while the batch has
/// more than `sqrt(n)` keys (measured: 64 random keys in a run of 20,000
/// took 30% longer by finger than from the top). A search from the top is
/// a chain of ~20 dependent cache misses in a run of 20,000 entries: one
/// after the other they were 17% of a Python `multi_get` of 64 over three
/// memory runs (perf). In lockstep their misses overlap; the price is that
/// a key found in a newer run is searched for in the older runs its filters
/// let through as well.
fn search_mems(view: &ReadView<'_>, mems: &[&MemRun], b: &mut Batch<'_>) {
    if mems.is_empty() || b.pending.is_empty() {
        return;
    }
    let (keys, hashes, lookups) = (b.keys, &b.hashes, &b.lookups);
    // For each run, the keys its filter lets through (in the order of
    // `pending`) and the run's first entry at or after each lookup key.
    type Found<'r> = Vec<(usize, Option<(&'r [u8], &'r [u8])>)>;
    let mut found: Vec<Found<'_>> = Vec::with_capacity(mems.len());
    let (mut searches, mut slots) = (Vec::new(), Vec::new());
    for (r, mem) in mems.iter().enumerate() {
        let dense = b.pending.len().saturating_mul(b.pending.len()) >= mem.len();
        let mut finger = dense.then(|| mem.finger());
        let mut in_run = Vec::new();
        for &i in &b.pending {
            if !mem.may_contain(keys[i], hashes[i]) {
                continue;
            }
            let entry = match finger.as_mut() {
                Some(finger) => finger.seek_ge(lookups.get(i)),
                None => {
                    searches.push((*mem, lookups.get(i)));
                    slots.push((r, in_run.len()));
                    None
                }
            };
            in_run.push((i, entry));
        }
        found.push(in_run);
    }
    for ((r, at), entry) in slots
        .into_iter()
        .zip(MemRun::lower_bounds_across(&searches))
    {
        found[r][at].1 = entry;
    }
    let mut resolved = vec![false; keys.len()];
    for (mem, mut in_run) in mems.iter().zip(found) {
        // Keys a newer run answered are no longer pending: skip theirs.
        in_run.retain(|&(c, _)| !resolved[c]);
        let mut in_run = in_run.into_iter().peekable();
        let found = &mut *b.found;
        b.pending.retain(|&i| {
            let key = keys[i];
            let hit = in_run
                .next_if(|&(c, _)| c == i)
                .and_then(|(_, entry)| entry)
                .and_then(|(k, v)| newest_version(key, k, v));
            let range_del = mem.covering_range_del(key, view.snapshot);
            match answer_of(hit, range_del) {
                Some(answer) => {
                    report(found, i, answer);
                    resolved[i] = true;
                    false
                }
                None => true,
            }
        });
    }
}

/// Where one key's walk over the run files stands.
struct Walk {
    key: usize,
    /// The next run to consider.
    run: usize,
    /// The block of that run that may hold the key (once `advance` chose
    /// the run; `num_blocks()` if the key is past the run's last key).
    block: usize,
}

/// The run files, newest first, for every pending key; the reads of each
/// round issued together.
fn search_runs(view: &ReadView<'_>, runs: &[&Arc<DiskRun>], b: &mut Batch<'_>) -> Result<()> {
    let mut walks: Vec<Walk> = b
        .pending
        .iter()
        .map(|&key| Walk {
            key,
            run: 0,
            block: 0,
        })
        .collect();
    // Every filter line the first round may probe starts loading at once:
    // one cache-miss latency for the batch instead of one per key and run.
    for w in &walks {
        for run in runs {
            run.file.prefetch_filter(b.hashes[w.key]);
        }
    }
    while !walks.is_empty() {
        // Each key to the first run its filters let through (or an answer),
        // and to the block of that run that may hold it: every key's search
        // of the top index first, which starts loading the fences it ends
        // among, then the searches among them.
        walks.retain_mut(|w| {
            let resolved = advance(view, runs, b, w);
            if !resolved {
                let file = &runs[w.run].file;
                w.block = file.start_block_for_point(b.lookups.get(w.key));
            }
            !resolved
        });
        for w in &mut walks {
            let file = &runs[w.run].file;
            w.block = file.finish_block_for_point(b.lookups.get(w.key), w.block);
        }
        if walks.len() > 1 && crate::run::fetch_wanted() {
            fetch_blocks(runs, &walks);
        }
        // Every key's block first (each starts loading into the CPU's
        // cache as it is found), then the searches: the cache misses of
        // different keys overlap instead of following one another.
        let wanted: Vec<(&RunFile, usize)> = walks
            .iter()
            .map(|w| (&*runs[w.run].file, w.block))
            .collect();
        let blocks = RunFile::blocks_of_batch(&wanted)?;
        // Every key's candidates in its block from the block's prefix
        // words alone, the first candidate's entry starting to load; then
        // the full comparisons and the entries, once all are on their way.
        // Compared and read one key after the other, each key's entry was a
        // cache miss the next key waited for (a third of a cached
        // `multi_get` of 64, perf).
        let places: Vec<_> = walks
            .iter()
            .zip(blocks)
            .map(|(w, block)| {
                let block = block?;
                let range = RunFile::start_entry(&block, b.lookups.get(w.key));
                Some((block, range))
            })
            .collect();
        // A false positive walks on.
        for (w, place) in walks.iter_mut().zip(places) {
            let (key, run) = (b.keys[w.key], runs[w.run]);
            let range_del = run.covering_range_del(key, view.snapshot);
            let entry = match place {
                Some((block, range)) => {
                    Some(run.file.entry_within(block, b.lookups.get(w.key), range)?)
                }
                None => None,
            };
            let hit = entry
                .as_ref()
                .and_then(|e| newest_stored_version(key, e.key_parts(), e.value()));
            if hit.is_none() {
                view.counters.bloom_false_positives.add(1);
            }
            match answer_of(hit, range_del) {
                Some(answer) => {
                    report(b.found, w.key, answer);
                    w.run = runs.len(); // done
                }
                None => w.run += 1,
            }
        }
        walks.retain(|w| w.run < runs.len());
    }
    Ok(())
}

/// Reads the blocks `walks` need concurrently (see `run::fetch`).
fn fetch_blocks(runs: &[&Arc<DiskRun>], walks: &[Walk]) {
    let mut reads: Vec<(Arc<RunFile>, usize)> = walks
        .iter()
        .map(|w| (&runs[w.run].file, w.block))
        .filter(|(file, block)| *block < file.num_blocks())
        .map(|(file, block)| (Arc::clone(file), block))
        .collect();
    reads.sort_by_key(|(f, i)| (Arc::as_ptr(f) as usize, *i));
    reads.dedup_by(|x, y| Arc::ptr_eq(&x.0, &y.0) && x.1 == y.1);
    if reads.len() > 1 {
        crate::run::fetch(&reads);
    }
}

/// Moves `w` to the first run (from `w.run` on) that may hold its key, or
/// resolves it: a covering range tombstone in a run that cannot hold the
/// key deletes it; no run left means absent. True if resolved.
fn advance(view: &ReadView<'_>, runs: &[&Arc<DiskRun>], b: &mut Batch<'_>, w: &mut Walk) -> bool {
    let key = b.keys[w.key];
    let c = view.counters;
    while let Some(run) = runs.get(w.run) {
        let file = &run.file;
        if file.overlaps_user_key(key) {
            c.bloom_checks.add(1);
            if file.may_contain_hash(b.hashes[w.key]) {
                return false;
            }
            c.bloom_negatives.add(1);
        }
        if run.covering_range_del(key, view.snapshot).is_some() {
            return true; // deleted
        }
        w.run += 1;
    }
    true
}
