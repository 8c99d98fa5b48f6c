//! The run files' part of a batch: every pending key walks the runs newest
//! to oldest, all keys a phase at a time so that their cache misses (and
//! their reads) overlap, with the memory runs' searches stepped between
//! the phases (see `mems`).

use std::sync::Arc;

use super::keys::{report, Batch};
use super::mems::MemSearch;
use crate::answer::newest_stored_version;
use crate::error::Result;
use crate::read::view::{answer_of, ReadView};
use crate::sst::RunFile;
use crate::version::DiskRun;

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
/// round issued together. The memory runs' answers are taken (`finish`)
/// before the first answer of a run file is reported.
pub(super) fn search_runs(
    view: &ReadView<'_>,
    runs: &[&Arc<DiskRun>],
    b: &mut Batch<'_>,
    mems: &mut MemSearch<'_, '_>,
) -> Result<()> {
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
    mems.step();
    while !walks.is_empty() {
        // Each key to the first run its filters let through (or an
        // answer), then to the block of that run that may hold it: every
        // key's search of the top index first, which starts loading the
        // fences it ends among, then the searches among them.
        walks.retain_mut(|w| !advance(view, runs, b, w));
        mems.step();
        for w in &mut walks {
            let file = &runs[w.run].file;
            w.block = file.start_block_for_point(b.lookups.get(w.key));
        }
        mems.step();
        for w in &mut walks {
            let file = &runs[w.run].file;
            w.block = file.finish_block_for_point(b.lookups.get(w.key), w.block);
        }
        mems.step();
        if walks.len() > 1 && crate::cache::fetch_wanted() {
            // A read costs more than the memory runs' remaining misses: a
            // key they answer is not read for.
            mems.finish(view, b);
            walks.retain(|w| !mems.answered(w.key));
            fetch_blocks(runs, &walks);
        }
        // Every key's block first (each starts loading into the CPU's
        // cache as it is found), then the searches: the cache misses of
        // different keys overlap instead of following one another.
        let wanted: Vec<(&RunFile, usize)> = walks
            .iter()
            .map(|w| (&*runs[w.run].file, w.block))
            .collect();
        // Blocks the cache lacks are read first; then the cached ones are
        // borrowed while pinned (`BatchBlock`).
        let read = RunFile::uncached_of_batch(&wanted)?;
        let guard = crossbeam_epoch::pin();
        let blocks = RunFile::blocks_of_batch(&wanted, read, &guard)?;
        mems.step();
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
        mems.finish(view, b);
        // A false positive walks on.
        for (w, place) in walks.iter_mut().zip(places) {
            if mems.answered(w.key) {
                w.run = runs.len(); // done
                continue;
            }
            let (key, run) = (b.keys[w.key], runs[w.run]);
            let range_del = run.covering_range_del(key, view.snapshot);
            let entry = match &place {
                Some((block, range)) => {
                    let lookup = b.lookups.get(w.key);
                    Some(run.file.stored_entry_within(block, lookup, range.clone())?)
                }
                None => None,
            };
            let hit = entry.and_then(|(parts, value)| newest_stored_version(key, parts, value));
            if hit.is_none() {
                b.tally.false_positives += 1;
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
    // No key reached a block (no run files, or no filter let a key in).
    mems.finish(view, b);
    Ok(())
}

/// Reads the blocks `walks` need concurrently (see `cache::fetch`).
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
        crate::cache::fetch(&reads);
    }
}

/// Moves `w` to the first run (from `w.run` on) that may hold its key, or
/// resolves it: a covering range tombstone in a run that cannot hold the
/// key deletes it; no run left means absent. True if resolved.
fn advance(view: &ReadView<'_>, runs: &[&Arc<DiskRun>], b: &mut Batch<'_>, w: &mut Walk) -> bool {
    let key = b.keys[w.key];
    while let Some(run) = runs.get(w.run) {
        let file = &run.file;
        if file.overlaps_user_key(key) {
            b.tally.checks += 1;
            if file.may_contain_hash(b.hashes[w.key]) {
                return false;
            }
            b.tally.negatives += 1;
        }
        if run.covering_range_del(key, view.snapshot).is_some() {
            return true; // deleted
        }
        w.run += 1;
    }
    true
}
