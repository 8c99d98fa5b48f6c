//! A point lookup: one key, every source newest to oldest.

use super::view::{answer_of, check_stored_key, value_of, ReadView, Tally};
use crate::answer::newest_stored_version;
use crate::bloom::hash_key;
use crate::error::Result;
use crate::key;
use crate::slice::Slice;
use crate::version::{DiskRun, Source};

/// The value of `user_key` as of the view's sequence number.
pub(crate) fn get(view: &ReadView<'_>, user_key: &[u8]) -> Result<Option<Slice>> {
    check_stored_key(user_key)?;
    let mut tally = Tally::default();
    let value = get_counted(view, user_key, &mut tally);
    tally.add_to(view.counters);
    value
}

/// [`get`], its filter probes counted in `tally`.
fn get_counted(view: &ReadView<'_>, user_key: &[u8], tally: &mut Tally) -> Result<Option<Slice>> {
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
            Source::Disk(run) if may_hold(run, user_key, hash, tally) => {
                run.file.seek_with(lookup, |entry| {
                    let hit = entry
                        .and_then(|(parts, value)| newest_stored_version(user_key, parts, value));
                    if entry.is_some() && hit.is_none() {
                        tally.false_positives += 1;
                    }
                    answer_of(hit, range_del).map(value_of)
                })?
            }
            Source::Disk(_) => answer_of(None, range_del).map(value_of),
        };
        if let Some(value) = answer {
            return Ok(value);
        }
    }
    Ok(None)
}

/// Whether `run` may hold `user_key`: its key range and Bloom filter.
fn may_hold(run: &DiskRun, user_key: &[u8], hash: u64, tally: &mut Tally) -> bool {
    let file = &run.file;
    if !file.overlaps_user_key(user_key) {
        return false;
    }
    tally.checks += 1;
    if !file.may_contain_hash(hash) {
        tally.negatives += 1;
        return false;
    }
    true
}
