//! A batched lookup: the keys are sorted once, then every source newest to
//! oldest is searched for the keys still unresolved, in key order: finger
//! search in a memory run's skiplist (the technique of RocksDB pull request
//! #14428, "memtable MultiGet finger search"), one forward sweep over a run
//! file's fence pointers.

use super::{answer_of, check_key, value_of, ReadView};
use crate::bloom::hash_key;
use crate::error::Result;
use crate::key;
use crate::memtable::{newest_version, MemRun};
use crate::slice::Slice;
use crate::version::{DiskRun, Source};

/// The keys of one batch, with what every source needs of them.
struct Batch<'a> {
    keys: &'a [&'a [u8]],
    lookups: Vec<Vec<u8>>,
    hashes: Vec<u64>,
    /// Unresolved keys (indexes into `keys`), in key order.
    pending: Vec<usize>,
    results: Vec<Option<Slice>>,
    /// Resolved in the current source (a run file resolves after its sweep).
    resolved: Vec<bool>,
}

/// The values of `keys` (any order, duplicates allowed), in the caller's
/// order, as of the view's sequence number.
pub(crate) fn multi_get(view: &ReadView<'_>, keys: &[&[u8]]) -> Result<Vec<Option<Slice>>> {
    keys.iter().try_for_each(|k| check_key(k))?;
    let mut pending: Vec<usize> = (0..keys.len()).collect();
    pending.sort_by(|&a, &b| keys[a].cmp(keys[b]));
    let mut b = Batch {
        keys,
        lookups: keys
            .iter()
            .map(|k| key::lookup_key(k, view.snapshot))
            .collect(),
        hashes: keys.iter().map(|k| hash_key(k)).collect(),
        pending,
        results: vec![None; keys.len()],
        resolved: vec![false; keys.len()],
    };
    for source in view.version.sources() {
        if b.pending.is_empty() {
            break;
        }
        match source {
            Source::Mem(mem) => search_mem(view, mem, &mut b),
            Source::Disk(run) => search_run(view, run, &mut b)?,
        }
        let resolved = &b.resolved;
        b.pending.retain(|&i| !resolved[i]);
    }
    Ok(b.results)
}

/// Finger search for the pending keys in one memory run.
fn search_mem(view: &ReadView<'_>, mem: &MemRun, b: &mut Batch<'_>) {
    let mut finger = mem.finger();
    for &i in &b.pending {
        let key = b.keys[i];
        let range_del = mem.covering_range_del(key, view.snapshot);
        let hit = if mem.may_contain(key, b.hashes[i]) {
            finger
                .seek_ge(&b.lookups[i])
                .and_then(|(k, v)| newest_version(key, k, v))
        } else {
            None
        };
        if let Some(found) = answer_of(hit, range_del) {
            b.results[i] = value_of(found);
            b.resolved[i] = true;
        }
    }
}

/// One sorted sweep over a run file's fence pointers for the pending keys
/// its key range and filter do not rule out.
fn search_run(view: &ReadView<'_>, run: &DiskRun, b: &mut Batch<'_>) -> Result<()> {
    let file = &run.file;
    let c = view.counters;
    let mut range_dels: Vec<Option<u64>> = Vec::with_capacity(b.pending.len());
    let mut probe: Vec<usize> = Vec::new();
    for &i in &b.pending {
        let key = b.keys[i];
        let range_del = run.covering_range_del(key, view.snapshot);
        range_dels.push(range_del);
        if range_del.is_some() {
            // Deleted here unless this run has a newer version.
            b.results[i] = None;
            b.resolved[i] = true;
        }
        if !file.overlaps_user_key(key) {
            continue;
        }
        c.bloom_checks.add(1);
        if file.may_contain_hash(b.hashes[i]) {
            probe.push(range_dels.len() - 1);
        } else {
            c.bloom_negatives.add(1);
        }
    }
    if probe.is_empty() {
        return Ok(());
    }
    let sorted: Vec<&[u8]> = probe
        .iter()
        .map(|&p| b.lookups[b.pending[p]].as_slice())
        .collect();
    let mut misses = 0u64;
    let pending = &b.pending;
    let (keys, results, resolved) = (b.keys, &mut b.results, &mut b.resolved);
    file.multi_seek(&sorted, &mut |j, hit| {
        let p = probe[j];
        let i = pending[p];
        let hit = hit.and_then(|(k, v)| newest_version(keys[i], k, v));
        if hit.is_none() {
            misses += 1;
        }
        if let Some(found) = answer_of(hit, range_dels[p]) {
            results[i] = value_of(found);
            resolved[i] = true;
        }
    })?;
    c.bloom_false_positives.add(misses);
    Ok(())
}
