//! Writing a job's output: the merged inputs into one new run file, or
//! into several with disjoint key ranges (one sorted run) when the memory
//! budget has no room for one file's filter hashes, all charged to the
//! budget before their memory is taken (see `budget`'s module docs).

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;

use crate::budget::charge::JobCharge;
use crate::budget::{JobKind, MemoryBudget, MERGE_PATIENCE};
use crate::cache::PAGE;
use crate::db_id::DbId;
use crate::error::Result;
use crate::files;
use crate::fs::durable;
use crate::iter::{InternalIter, MergingIter};
use crate::key;
use crate::merge::{merge_into, MergePolicy, RunSink};
use crate::options::Options;
use crate::rangedel::RangeTombstone;
use crate::sst::{RunBuilder, RunFile, RunOptions};
use crate::version::DiskRun;

/// Where and how to write one job's runs.
pub(super) struct RunPlan<'a> {
    pub dir: &'a Path,
    /// Numbers for the job's files.
    pub numbers: &'a dyn Fn() -> u64,
    pub opts: &'a Options,
    pub policy: MergePolicy,
    /// The level the run joins (it decides the compression).
    pub level: usize,
    pub db_id: DbId,
    /// The memory budget: its block cache, and the charge for the builder.
    pub budget: &'a Arc<MemoryBudget>,
    /// What the job's buffers were granted ([`buffers`]).
    pub buffers: Buffers,
    /// Which floor the job draws on, and whether it may wait for room.
    pub kind: JobKind,
    /// A merge given up too often runs anyway: see [`take_waiting`].
    pub insist: bool,
}

/// The buffers a job was granted: what it asked for, or less.
#[derive(Clone, Copy, Debug)]
pub(super) struct Buffers {
    /// Each new file's write buffer.
    pub write_buffer: usize,
    /// Bytes read from each input at once (a merge).
    pub read_chunk: usize,
}

/// The smallest buffers a job runs with: a page each.
const SMALLEST_BUFFER: usize = PAGE;

/// Asks `charge` for a job's buffers with `inputs` run files read in
/// chunks: the sizes the options ask for, halved (to a page) while the
/// budget has no room for them beside a first file's start; a merge that
/// cannot get even those waits for room, and `None` if it waited
/// [`MERGE_PATIENCE`] in vain. Leaves the inputs' chunks charged.
pub(super) fn buffers(
    charge: &mut JobCharge,
    opts: &Options,
    inputs: usize,
    insist: bool,
) -> Option<Buffers> {
    let mut write_buffer = match charge.kind() {
        JobKind::Flush => opts.flush_write_buffer(),
        JobKind::Merge => opts.job_write_buffer(),
    };
    let mut read_chunk = opts.merge_read_chunk();
    let total = |w: usize, r: usize| r * inputs + w + FILE_START;
    while !charge.try_set(total(write_buffer, read_chunk)) {
        if write_buffer > SMALLEST_BUFFER || read_chunk > SMALLEST_BUFFER {
            write_buffer = (write_buffer / 2).max(SMALLEST_BUFFER);
            read_chunk = (read_chunk / 2).max(SMALLEST_BUFFER);
            continue;
        }
        if !take_waiting(charge, total(write_buffer, read_chunk), insist) {
            return None;
        }
        break;
    }
    // The first file asks for its share again when it starts.
    charge.try_set(read_chunk * inputs);
    Some(Buffers {
        write_buffer,
        read_chunk,
    })
}

/// What a new file asks for beside its write buffer before its first
/// entry: more than its builder holds empty (its filter's and index's
/// first bytes), so starting the builder never asks for more.
const FILE_START: usize = 4 * PAGE;

/// Makes `charge` hold `bytes` when the budget had no room: a flush takes
/// it anyway (it never waits: see `budget`), a merge waits for room up to
/// [`MERGE_PATIENCE`]. False if the merge's wait was in vain. A merge that
/// `insist`s (it gave up [`MERGE_GIVE_UPS`] times in a row: the files it
/// replaces and those it writes cannot both fit beside the rest, a budget
/// too small for the data's indexes and filters) takes it anyway after the
/// wait, counted as an overrun, rather than leave the tree unmerged.
fn take_waiting(charge: &mut JobCharge, bytes: usize, insist: bool) -> bool {
    let got = match charge.kind() {
        JobKind::Flush => false,
        JobKind::Merge => charge.set_waiting(bytes, Instant::now() + MERGE_PATIENCE),
    };
    if !got && (insist || charge.kind() == JobKind::Flush) {
        charge.force(bytes);
        return true;
    }
    got
}

/// Times in a row a merge may give up for want of memory before the next
/// try insists (see [`take_waiting`]).
pub(super) const MERGE_GIVE_UPS: u32 = 3;

/// How the run of `plan` numbered `number` is written.
fn run_options(plan: &RunPlan<'_>, number: u64) -> RunOptions {
    RunOptions {
        fence_entries: plan.opts.fence_entries,
        max_block_bytes: plan.opts.block_size,
        bloom_fp_rate: plan.opts.bloom_fp_rate,
        codec: plan
            .opts
            .compression
            .for_level(plan.level, plan.policy.bottommost),
        file_number: number,
        db_id: plan.db_id,
        write_buffer: plan.buffers.write_buffer,
        ..RunOptions::default()
    }
}

/// The runs a job wrote (with their sizes), and the charge that still
/// holds their indexes and filters until the version has them
/// (`MemoryBudget::rebalance_releasing`).
pub(super) struct Built {
    pub runs: Vec<(Arc<DiskRun>, u64)>,
    pub charge: JobCharge,
}

/// Merges `children` and their range tombstones into new run files, each
/// synced with its directory entry. `None` if a merge gave up for want of
/// memory (nothing of it is left on disk).
pub(super) fn build_runs(
    plan: RunPlan<'_>,
    charge: JobCharge,
    children: Vec<Box<dyn InternalIter>>,
    range_dels: Vec<RangeTombstone>,
) -> Result<Option<Built>> {
    let mut outputs = Outputs::new(&plan, charge);
    let mut input = MergingIter::new(children);
    let merged = merge_into(&mut input, &range_dels, &mut outputs, &plan.policy);
    drop(input);
    match merged {
        Ok(Some(_)) => outputs.finish().map(Some),
        Ok(None) => {
            outputs.discard();
            Ok(None)
        }
        Err(e) => {
            outputs.discard();
            Err(e)
        }
    }
}

/// What a job holds: its charge, and the bytes held outside the builder of
/// the file being written (the inputs' chunks, the finished files'
/// indexes and filters).
struct JobMemory {
    charge: JobCharge,
    base: usize,
}

/// A job's output: the file being written and those finished before it.
pub(super) struct Outputs<'p> {
    plan: &'p RunPlan<'p>,
    memory: Arc<Mutex<JobMemory>>,
    current: Option<RunBuilder>,
    done: Vec<(Arc<DiskRun>, u64)>,
}

impl<'p> Outputs<'p> {
    /// The output of the job `plan` describes, holding `charge` (its
    /// buffers: see [`buffers`]).
    pub fn new(plan: &'p RunPlan<'p>, charge: JobCharge) -> Outputs<'p> {
        Outputs {
            memory: Arc::new(Mutex::new(JobMemory {
                base: charge.held(),
                charge,
            })),
            plan,
            current: None,
            done: Vec::new(),
        }
    }

    /// The builder of the file being written, started if there is none
    /// (its start charged first); `None` if a merge found no room for it.
    fn builder(&mut self) -> Result<Option<&mut RunBuilder>> {
        if self.current.is_none() {
            {
                let mut m = self.memory.lock();
                let start = m.base + self.plan.buffers.write_buffer + FILE_START;
                let insist = self.plan.insist;
                if !m.charge.try_set(start) && !take_waiting(&mut m.charge, start, insist) {
                    return Ok(None);
                }
            }
            let number = (self.plan.numbers)();
            let path = self.plan.dir.join(files::run_file_name(number));
            let fs = self.plan.opts.fs.clone();
            let mut builder = RunBuilder::create_with(fs, &path, run_options(self.plan, number))?;
            let memory = Arc::clone(&self.memory);
            // Past the start, each growth is asked for before it is taken.
            builder.charge_memory_to(Box::new(move |bytes, must| {
                let mut m = memory.lock();
                let total = m.base + bytes;
                if must {
                    m.charge.force(total);
                    return true;
                }
                m.charge.try_set(total)
            }));
            self.current = Some(builder);
        }
        Ok(self.current.as_mut())
    }

    /// Finishes the file being written (if it holds anything), syncs it
    /// and opens it; its index and filter stay charged to the job.
    fn cut(&mut self) -> Result<()> {
        let Some(builder) = self.current.take() else {
            return Ok(());
        };
        if builder.entries() == 0 && builder.range_tombstones() == 0 {
            return Ok(()); // dropping the builder removes the empty file
        }
        let number = builder.file_number();
        let props = builder.finish()?;
        let fs = &self.plan.opts.fs;
        durable::sync_dir_with(&**fs, self.plan.dir)?;
        let path = self.plan.dir.join(files::run_file_name(number));
        let cache = Arc::clone(self.plan.budget.cache());
        let file = RunFile::open_in(fs.clone(), &path, cache)?;
        {
            // The builder's buffers are gone and the open file's index and
            // filter took their place: charged as much while it was built
            // (`RunBuilder::charge_memory_to`), so this gives memory back.
            let mut m = self.memory.lock();
            m.base += file.pinned_bytes();
            let base = m.base;
            if !m.charge.try_set(base) {
                m.charge.force(base);
            }
        }
        let run = Arc::new(DiskRun::new(number, Arc::new(file)));
        self.done.push((run, props.file_size));
        Ok(())
    }

    /// Waits for the room the builder was refused: a flush takes it anyway,
    /// a merge waits up to [`MERGE_PATIENCE`]. False if none came.
    fn wait_for_room(&mut self) -> bool {
        let refused = self.current.as_ref().map_or(0, |b| b.refused_bytes());
        let mut m = self.memory.lock();

        let want = m.base + refused;
        let before = m.charge.held();
        if !take_waiting(&mut m.charge, want, self.plan.insist) {
            return false;
        }
        // Only the room was wanted: the builder asks for it itself.
        m.charge.try_set(before);
        true
    }

    /// Finishes the last file; the job's runs, in key order. On an error
    /// nothing it wrote is left.
    pub fn finish(mut self) -> Result<Built> {
        if let Err(e) = self.cut() {
            self.discard();
            return Err(e);
        }
        let done = std::mem::take(&mut self.done);
        // Every builder (which shared the charge) is gone; an empty charge
        // of the same kind takes its place.
        let empty = self.plan.budget.job_charge(self.plan.kind);
        let charge = std::mem::replace(&mut self.memory.lock().charge, empty);
        Ok(Built { runs: done, charge })
    }

    /// Removes every file written (the job gave up or failed).
    pub fn discard(&mut self) {
        self.current = None; // dropping a builder removes its partial file
        for (run, _) in self.done.drain(..) {
            let path = self.plan.dir.join(files::run_file_name(run.number));
            drop(run);
            let _ = self.plan.opts.fs.remove_file(&path);
        }
    }
}

impl RunSink for Outputs<'_> {
    fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<bool> {
        loop {
            let Some(builder) = self.builder()? else {
                return Ok(false);
            };
            if builder.try_add(ikey, value)? {
                return Ok(true);
            }
            if builder.entries() > 0 && builder.is_new_user_key(key::user_key(ikey)) {
                self.cut()?;
                continue;
            }
            // No room even for a file's first entry (or amid one user
            // key's versions, which one file keeps together).
            if !self.wait_for_room() {
                return Ok(false);
            }
            if self.plan.kind == JobKind::Flush {
                if let Some(builder) = self.builder()? {
                    builder.add(ikey, value)?;
                }
                return Ok(true);
            }
        }
    }

    fn add_range_tombstone(&mut self, start: &[u8], end: &[u8], seq: u64) -> Result<bool> {
        let Some(builder) = self.builder()? else {
            return Ok(false);
        };
        builder.add_range_tombstone(start, end, seq);
        Ok(true)
    }
}
