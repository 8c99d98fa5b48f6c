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

use super::build::{charge_budget, open_run, run_options, RunPlan};
use super::Jobs;
use crate::error::{Error, Result};
use crate::fsutil;
use crate::key::{self, Kind};
use crate::keyspace::tag::Tag;
use crate::merge::MergePolicy;
use crate::run::RunBuilder;
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
        let number = self.versions.new_file_number();
        let plan = RunPlan {
            dir: &self.dir,
            number,
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
            input_buffers: 0,
        };
        let path = self.dir.join(crate::files::run_file_name(number));
        let fs = &self.opts.fs;
        let mut builder = RunBuilder::create_with(fs.clone(), &path, run_options(&plan, false))?;
        charge_budget(&mut builder, &self.budget, 0);
        let (mut user, mut stored) = (Vec::new(), Vec::new());
        let mut previous: Option<Vec<u8>> = None;
        let mut count = 0u64;
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
            builder.add(&stored, v)?;
            count += 1;
        }
        if count == 0 {
            return Ok(0); // dropping the builder removes the file
        }
        let props = builder.finish()?;
        let unlisted = |e| {
            let _ = fs.remove_file(&path); // no manifest lists it yet
            e
        };
        fsutil::sync_dir_with(&**fs, &self.dir).map_err(unlisted)?;
        let run = open_run(&plan, &path).map_err(unlisted)?;
        let version = self.versions.current_arc();
        let level = level_for(&version, &props.min_user_key, &props.max_user_key);
        // On a failed install the file stays until the next open removes
        // it: `apply` wrote the current manifest again, but if that failed
        // too, the manifest on disk may still list it.
        let next = self.versions.apply(VersionEdit {
            added: vec![(level, run)],
            flushed_sequence: Some(seq),
            ..VersionEdit::default()
        })?;
        self.budget.rebalance(&next);
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
