//! An edit record: the change from one state of the manifest to the next.
//! It carries the counters, the file numbers of every level that changed
//! (every level past the old last one counts as changed), the records of
//! the runs that are new, and the catalog when it changed; applying it to
//! the state before gives the state after exactly (`tests.rs` checks that
//! over random pairs of states).

use std::collections::HashMap;

use super::state::{put_len, Cursor, Manifest, MANIFEST_FORMAT_VERSION};
use crate::codec::{put_u64, Reader};
use crate::error::Result;
use crate::sst::RunProperties;

/// The edit payload that turns `before` into `after`.
pub(super) fn encode(before: &Manifest, after: &Manifest) -> Vec<u8> {
    let mut out = Vec::new();
    put_u64(&mut out, after.next_file_number);
    put_u64(&mut out, after.last_sequence);
    put_u64(&mut out, after.min_wal_number);
    put_len(&mut out, after.levels.len());
    let changed: Vec<usize> = (0..after.levels.len())
        .filter(|&i| {
            before
                .levels
                .get(i)
                .is_none_or(|old| numbers(old).ne(numbers(&after.levels[i])))
        })
        .collect();
    put_len(&mut out, changed.len());
    for &i in &changed {
        put_len(&mut out, i);
        put_len(&mut out, after.levels[i].len());
        for n in numbers(&after.levels[i]) {
            put_u64(&mut out, n);
        }
    }
    let known: HashMap<u64, &RunProperties> = before.runs().map(|r| (r.file_number, r)).collect();
    let added: Vec<&RunProperties> = after
        .runs()
        .filter(|r| known.get(&r.file_number) != Some(r))
        .collect();
    put_len(&mut out, added.len());
    for run in added {
        run.encode_into(&mut out);
    }
    if after.catalog == before.catalog {
        out.push(0);
    } else {
        out.push(1);
        after.catalog.encode_into(&mut out);
    }
    out
}

fn numbers(level: &[RunProperties]) -> impl Iterator<Item = u64> + '_ {
    level.iter().map(|r| r.file_number)
}

/// Applies the edit payload under `cur` (its record starts at `record_at`)
/// to `before`, checking the result's invariants.
pub(super) fn decode_onto(
    before: &Manifest,
    cur: &mut Cursor<'_>,
    record_at: usize,
) -> Result<Manifest> {
    let next_file_number = cur.field("next_file_number", Reader::u64)?;
    let last_sequence = cur.field("last_sequence", Reader::u64)?;
    let min_wal_number = cur.field("min_wal_number", Reader::u64)?;
    let level_count = cur.field("level count", Reader::u32)? as usize;
    let changed_count = cur.field("changed level count", Reader::u32)? as usize;
    // A changed level takes at least 8 bytes of the record, and every level
    // past the old ones is listed: what the levels below allocate is
    // bounded by the record's own size.
    let fits = changed_count <= cur.r.remaining() / 8;
    if !fits || level_count > before.levels.len() + changed_count || changed_count > level_count {
        let at = cur.r.pos();
        return Err(cur.error_at(
            at,
            format!("edit of {level_count} levels lists {changed_count} changed"),
        ));
    }
    let mut levels: Vec<Option<Vec<u64>>> = (0..level_count)
        .map(|i| before.levels.get(i).map(|l| numbers(l).collect()))
        .collect();
    let mut previous = None;
    for _ in 0..changed_count {
        let at = cur.r.pos();
        let level = cur.field("changed level", Reader::u32)? as usize;
        if level >= level_count || previous.is_some_and(|p| level <= p) {
            return Err(cur.error_at(at, format!("changed level {level} out of order or range")));
        }
        previous = Some(level);
        let run_count = cur.field("run count", Reader::u32)? as usize;
        if run_count > cur.r.remaining() / 8 {
            return Err(cur.error_at(
                at,
                format!("level {level} of {run_count} runs is longer than its record"),
            ));
        }
        let mut runs = Vec::with_capacity(run_count);
        for _ in 0..run_count {
            runs.push(cur.field("file number", Reader::u64)?);
        }
        levels[level] = Some(runs);
    }
    let added_count = cur.field("added run count", Reader::u32)?;
    let mut records: HashMap<u64, RunProperties> =
        before.runs().map(|r| (r.file_number, r.clone())).collect();
    let mut added = Vec::new();
    for _ in 0..added_count {
        let run = cur.field("run record", RunProperties::decode_from)?;
        added.push(run.file_number);
        records.insert(run.file_number, run);
    }
    let catalog_at = cur.r.pos();
    let catalog = match cur.field("catalog flag", Reader::u8)? {
        0 => before.catalog.clone(),
        1 => crate::keyspace::catalog::Catalog::decode_from(&mut cur.r)
            .map_err(|r| cur.error_at(catalog_at, r))?,
        other => {
            return Err(cur.error_at(
                catalog_at,
                format!("catalog flag {other} is neither 0 nor 1"),
            ))
        }
    };
    if !cur.r.is_empty() {
        let at = cur.r.pos();
        return Err(cur.error_at(
            at,
            format!("{} unexpected bytes after the edit", cur.r.remaining()),
        ));
    }
    let levels = resolve(levels, &mut records, &added).map_err(|r| cur.error_at(record_at, r))?;
    let after = Manifest {
        format_version: MANIFEST_FORMAT_VERSION,
        db_id: before.db_id,
        next_file_number,
        last_sequence,
        min_wal_number,
        levels,
        catalog,
    };
    after.validate().map_err(|r| {
        cur.error_at(
            record_at,
            format!("the manifest after this edit is inconsistent: {r}"),
        )
    })?;
    Ok(after)
}

/// The levels' runs from their file numbers; every added run must be on
/// one, and every number must name a run.
fn resolve(
    levels: Vec<Option<Vec<u64>>>,
    records: &mut HashMap<u64, RunProperties>,
    added: &[u64],
) -> Result<Vec<Vec<RunProperties>>, String> {
    let mut placed = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(levels.len());
    for (i, numbers) in levels.into_iter().enumerate() {
        let numbers = numbers.ok_or_else(|| format!("new level {i} is not listed"))?;
        let mut level = Vec::with_capacity(numbers.len());
        for n in numbers {
            let run = records.get(&n).ok_or_else(|| {
                format!("level {i} names run {n}, which is neither known nor added")
            })?;
            placed.insert(n);
            level.push(run.clone());
        }
        out.push(level);
    }
    match added.iter().find(|n| !placed.contains(n)) {
        Some(n) => Err(format!("added run {n} is on no level")),
        None => Ok(out),
    }
}
