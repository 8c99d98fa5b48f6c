//! Writing one new run file from merged inputs.

use std::path::Path;
use std::sync::Arc;

use crate::budget::MemoryBudget;
use crate::error::Result;
use crate::files;
use crate::fsutil;
use crate::iter::{InternalIter, MergingIter};
use crate::manifest::DbId;
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
    /// The level the run joins (it decides the compression).
    pub level: usize,
    pub db_id: DbId,
    /// The memory budget: its block cache, and the charge for the builder.
    pub budget: &'a Arc<MemoryBudget>,
    /// Bytes the inputs hold while they are read (charged with the
    /// builder's).
    pub input_buffers: usize,
}

/// How the run of `plan` is written.
pub(super) fn run_options(plan: &RunPlan<'_>, bottommost: bool) -> RunOptions {
    RunOptions {
        fence_entries: plan.opts.fence_entries,
        max_block_bytes: plan.opts.block_size,
        bloom_fp_rate: plan.opts.bloom_fp_rate,
        codec: plan.opts.compression.for_level(plan.level, bottommost),
        file_number: plan.number,
        db_id: plan.db_id,
        write_buffer: plan.opts.job_write_buffer(),
        ..RunOptions::default()
    }
}

/// Opens the run file `plan` wrote, through the block cache.
pub(super) fn open_run(plan: &RunPlan<'_>, path: &Path) -> Result<Arc<DiskRun>> {
    let file = RunFile::open_in(plan.opts.fs.clone(), path, Arc::clone(plan.budget.cache()))?;
    Ok(Arc::new(DiskRun::new(plan.number, Arc::new(file))))
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
    let run_opts = run_options(&plan, plan.policy.bottommost);
    let fs = &plan.opts.fs;
    let mut builder = RunBuilder::create_with(fs.clone(), &path, run_opts)?;
    charge_budget(&mut builder, plan.budget, plan.input_buffers);
    let mut input = MergingIter::new(children);
    let totals = merge_into(&mut input, &range_dels, &mut builder, &plan.policy)?;
    if totals.entries_written == 0 && totals.range_dels_written == 0 {
        return Ok(None); // dropping the builder removes the partial file
    }
    let props = builder.finish()?;
    fsutil::sync_dir_with(&**fs, plan.dir)?;
    Ok(Some((open_run(&plan, &path)?, props.file_size)))
}

/// Charges what `builder` holds while it builds (its filter's key hashes,
/// its index, its write buffer), and the `inputs` bytes its inputs hold
/// while they are read, to the memory budget: the block cache shrinks
/// meanwhile, so the budget holds during big merges, and gets the memory
/// back when no job runs.
pub(super) fn charge_budget(builder: &mut RunBuilder, budget: &Arc<MemoryBudget>, inputs: usize) {
    let mut charge = budget.build_charge();
    builder.charge_memory_to(Box::new(move |bytes| charge.set(bytes + inputs)));
}
