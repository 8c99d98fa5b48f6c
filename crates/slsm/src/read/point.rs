//! A point lookup: one key, every source newest to oldest.

use super::{answer_of, check_key, value_of, ReadView};
use crate::bloom::hash_key;
use crate::error::Result;
use crate::key;
use crate::memtable::{newest_version, NewestVersion};
use crate::slice::Slice;
use crate::version::{DiskRun, Source};

/// The value of `user_key` as of the view's sequence number.
pub(crate) fn get(view: &ReadView<'_>, user_key: &[u8]) -> Result<Option<Slice>> {
    check_key(user_key)?;
    let hash = hash_key(user_key);
    let lookup = key::LookupKey::new(user_key, view.snapshot);
    let lookup = lookup.as_bytes();
    let sources = view.version.sources();
    // All filter blocks this lookup may probe load in parallel: one
    // cache-miss latency instead of one per source.
    for source in sources {
        source.prefetch_filter(user_key, hash);
    }
    // A source's range tombstones are checked before its filters: they may
    // delete the key in every older source.
    for source in sources {
        let range_del = source.covering_range_del(user_key, view.snapshot);
        let hit = match source {
            Source::Mem(mem) if mem.may_contain(user_key, hash) => mem.get(user_key, lookup),
            Source::Mem(_) => None,
            Source::Disk(run) => probe_run(view, run, user_key, hash, lookup)?,
        };
        if let Some(found) = answer_of(hit, range_del) {
            return Ok(value_of(found));
        }
    }
    Ok(None)
}

/// Looks `user_key` up in one run file: key range and Bloom filter, then
/// fence pointers and one block.
fn probe_run<'a>(
    view: &ReadView<'_>,
    run: &'a DiskRun,
    user_key: &[u8],
    hash: u64,
    lookup: &[u8],
) -> Result<Option<NewestVersion<'a>>> {
    let file = &run.file;
    if !file.overlaps_user_key(user_key) {
        return Ok(None);
    }
    let c = view.counters;
    c.bloom_checks.add(1);
    if !file.may_contain_hash(hash) {
        c.bloom_negatives.add(1);
        return Ok(None);
    }
    let hit = file
        .seek(lookup)?
        .and_then(|(ikey, value)| newest_version(user_key, ikey, value));
    if hit.is_none() {
        c.bloom_false_positives.add(1);
    }
    Ok(hit)
}
