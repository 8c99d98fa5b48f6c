//! Bulk load: sorted entries written straight into a run file and added to
//! the version set through the same door as a flush (RocksDB's
//! `IngestExternalFile`, fjall's ingestion).
//!
//! The caller (the facade) holds every writer back while this runs and has
//! flushed the memory runs, so all the ingested entries take one fresh
//! sequence number, newer than everything stored, and the manifest's
//! flushed sequence may move to it. The run goes as deep as it fits: just
//! above the shallowest level holding a key in its range or a range
//! tombstone reaching into it (reads meet it before the older data and
//! deletions it overrides), or onto the deepest level if nothing does.

use std::sync::Arc;

use super::build::{self, Outputs, RunPlan};
use super::Jobs;
use crate::budget::JobKind;
use crate::error::{Error, Result};
use crate::key::{self, Kind};
use crate::keyspace::tag::Tag;
use crate::merge::MergePolicy;
use crate::merge::RunSink;
use crate::version::{DiskRun, Version, VersionEdit};

impl Jobs {
    /// Writes `entries` (strictly ascending keys of the keyspace `tag`) at
    /// sequence number `seq` into a new run and installs it. Returns the
    /// number of entries; nothing changes if the input is empty, unsorted
    /// or invalid.
    pub fn ingest<K, V>(
        &self,
        entries: impl IntoIterator<Item = (K, V)>,
        tag: &Tag,
        seq: u64,
    ) -> Result<u64>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
    {
        let _merge = self.merge_lock.lock();
        let no_room = || {
            Error::InvalidArgument(
                "ingest found no room in the memory budget for its files' filters; \
                 raise Options::memory_budget"
                    .into(),
            )
        };
        let mut charge = self.budget.job_charge(JobKind::Merge);
        let buffers = build::buffers(&mut charge, &self.opts, 0, false).ok_or_else(no_room)?;
        let numbers = || self.versions.new_file_number();
        let plan = RunPlan {
            dir: &self.dir,
            numbers: &numbers,
            opts: &self.opts,
            policy: MergePolicy {
                snapshots: Vec::new(),
                bottommost: false,
                catalog: self.versions.catalog(),
                rules: Default::default(),
                now: 0,
            },
            level: 0,
            db_id: self.versions.db_id(),
            budget: &self.budget,
            buffers,
            kind: JobKind::Merge,
            insist: false,
        };
        // Several files with disjoint key ranges if the budget has no room
        // for one file's filter: they join one level together.
        let mut out = Outputs::new(&plan, charge);
        let (mut user, mut stored) = (Vec::new(), Vec::new());
        let mut previous: Option<Vec<u8>> = None;
        let mut count = 0u64;
        let added = (|| {
            for (k, v) in entries {
                let (k, v) = (k.as_ref(), v.as_ref());
                crate::read::check_key(k)?;
                if previous.as_deref().is_some_and(|p| p >= k) {
                    return Err(Error::InvalidArgument(format!(
                        "ingest needs strictly ascending keys: entry {count} is not above the one before"
                    )));
                }
                key::remember(&mut previous, k);
                user.clear();
                user.extend_from_slice(tag.as_bytes());
                user.extend_from_slice(k);
                stored.clear();
                key::encode_into(&mut stored, &user, seq, Kind::Value);
                if !out.add(&stored, v)? {
                    return Err(no_room());
                }
                count += 1;
            }
            Ok(())
        })();
        if let Err(e) = added {
            out.discard();
            return Err(e);
        }
        if count == 0 {
            return Ok(0); // dropping the builder removes the file
        }
        let built = out.finish()?;
        let (Some((first, _)), Some((last, _))) = (built.runs.first(), built.runs.last()) else {
            return Ok(0);
        };
        let min = first.file.properties().min_user_key.clone();
        let max = last.file.properties().max_user_key.clone();
        let version = self.versions.current_arc();
        let level = level_for(&version, &min, &max);
        // On a failed install the files stay until the next open removes
        // them: `apply` wrote the current manifest again, but if that
        // failed too, the manifest on disk may still list them.
        let next = self.versions.apply(VersionEdit {
            added: built
                .runs
                .iter()
                .map(|(r, _)| (level, Arc::clone(r)))
                .collect(),
            flushed_sequence: Some(seq),
            ..VersionEdit::default()
        })?;
        built.charge.end(&next, &[]);
        Ok(count)
    }
}

/// The deepest level a run of keys `min..=max` may join: above the
/// shallowest level with a run that reaches the range, else the deepest
/// level.
fn level_for(version: &Version, min: &[u8], max: &[u8]) -> usize {
    let reached = |level: &Vec<Arc<DiskRun>>| level.iter().any(|r| reaches(r, min, max));
    match version.levels.iter().position(reached) {
        Some(0) => 0,
        Some(level) => level - 1,
        None => version.levels.len().saturating_sub(1).max(1),
    }
}

/// True if `run` holds a point key in `min..=max` or a range tombstone
/// that covers one: the load must go above it, or that older tombstone,
/// met first by reads walking down, would hide the newer entries.
fn reaches(run: &DiskRun, min: &[u8], max: &[u8]) -> bool {
    let p = run.file.properties();
    let points =
        p.entries > 0 && p.min_user_key.as_slice() <= max && min <= p.max_user_key.as_slice();
    points
        || run
            .file
            .range_tombstones()
            .iter()
            .any(|t| t.start.as_slice() <= max && min < t.end.as_slice())
}
