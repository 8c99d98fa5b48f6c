//! Writing one new run file from merged inputs.

use std::path::Path;
use std::sync::Arc;

use crate::error::Result;
use crate::files;
use crate::fsutil;
use crate::iter::{InternalIter, MergingIter};
use crate::merge::{merge_into, MergePolicy};
use crate::options::Options;
use crate::rangedel::RangeTombstone;
use crate::run::{RunBuilder, RunFile, RunOptions};
use crate::version::DiskRun;

/// Where and how to write one new run.
pub(super) struct RunPlan<'a> {
    pub dir: &'a Path,
    pub number: u64,
    pub opts: &'a Options,
    pub policy: MergePolicy,
}

/// Merges `children` and their range tombstones into a new run file, synced
/// with its directory entry; `None` if nothing survived the merge. Returns
/// the run and the bytes written.
pub(super) fn build_run(
    plan: RunPlan<'_>,
    children: Vec<Box<dyn InternalIter>>,
    range_dels: Vec<RangeTombstone>,
) -> Result<Option<(Arc<DiskRun>, u64)>> {
    let path = plan.dir.join(files::run_file_name(plan.number));
    let run_opts = RunOptions {
        fence_entries: plan.opts.fence_entries,
        bloom_fp_rate: plan.opts.bloom_fp_rate,
        ..RunOptions::default()
    };
    let fs = &plan.opts.fs;
    let mut builder = RunBuilder::create_with(fs.clone(), &path, run_opts)?;
    let mut input = MergingIter::new(children);
    let totals = merge_into(&mut input, &range_dels, &mut builder, &plan.policy)?;
    if totals.entries_written == 0 && totals.range_dels_written == 0 {
        return Ok(None); // dropping the builder removes the partial file
    }
    let props = builder.finish()?;
    fsutil::sync_dir_with(&**fs, plan.dir)?;
    let file = RunFile::open_with(fs.clone(), &path)?;
    let run = DiskRun::new(plan.number, Arc::new(file));
    Ok(Some((Arc::new(run), props.file_size)))
}
