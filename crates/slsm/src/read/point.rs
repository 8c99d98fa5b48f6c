//! A point lookup: one key, every source newest to oldest.

use super::{answer_of, check_stored_key, value_of, ReadView};
use crate::bloom::hash_key;
use crate::error::Result;
use crate::key;
use crate::memtable::newest_stored_version;
use crate::run::Entry;
use crate::slice::Slice;
use crate::version::{DiskRun, Source};

/// The value of `user_key` as of the view's sequence number.
pub(crate) fn get(view: &ReadView<'_>, user_key: &[u8]) -> Result<Option<Slice>> {
    check_stored_key(user_key)?;
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
        let answer = match source {
            Source::Mem(mem) if mem.may_contain(user_key, hash) => {
                answer_of(mem.get(user_key, lookup), range_del).map(value_of)
            }
            Source::Mem(_) => answer_of(None, range_del).map(value_of),
            Source::Disk(run) => {
                let entry = probe_run(view, run, user_key, hash, lookup)?;
                let hit = entry
                    .as_ref()
                    .and_then(|e| newest_stored_version(user_key, e.key_parts(), e.value()));
                if entry.is_some() && hit.is_none() {
                    view.counters.bloom_false_positives.add(1);
                }
                answer_of(hit, range_del).map(value_of)
            }
        };
        if let Some(value) = answer {
            return Ok(value);
        }
    }
    Ok(None)
}

/// Looks `user_key` up in one run file: key range and Bloom filter, then
/// fence pointers and one block. Returns the first entry at or after the
/// lookup key, if the filters let the search through.
fn probe_run(
    view: &ReadView<'_>,
    run: &DiskRun,
    user_key: &[u8],
    hash: u64,
    lookup: &[u8],
) -> Result<Option<Entry>> {
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
    file.seek(lookup)
}
