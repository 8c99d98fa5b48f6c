//! Recovery: replaying the write-ahead logs into memory runs, through the
//! same [`MemRun::apply`] the write path uses. The caller flushes what was
//! replayed into a run file, so the old logs can go.
//!
//! Records are applied in order and only past the flushed sequence number.
//! A log may end early: a torn tail (a crash during an append, or space
//! reserved and never written) ends the history there if nothing was
//! written after it; damage followed by valid records is corruption
//! ([`RecoveryMode::Strict`]) or the end of what is recovered
//! ([`RecoveryMode::BestEffort`], point-in-time recovery).

use std::path::Path;
use std::sync::Arc;

use crate::batch;
use crate::error::{Error, Result};
use crate::files;
use crate::fs::FileSystem;
use crate::key;
use crate::memtable::{Inserters, MemRun};
use crate::options::Options;
use crate::wal::{RecoveryMode, TailDropKind, WalReader};

/// What replaying the logs produced.
pub(crate) struct Replayed {
    /// Memory runs holding the replayed writes, oldest first (sealed).
    pub runs: Vec<Arc<MemRun>>,
    /// Highest sequence number replayed (or the flushed one, if none).
    pub max_seq: u64,
}

/// Replays logs `numbers` (ascending) of `dir`, skipping every write up to
/// sequence number `flushed` (already in run files).
pub(crate) fn replay_logs(
    dir: &Path,
    numbers: &[u64],
    flushed: u64,
    opts: &Options,
) -> Result<Replayed> {
    let mut replay = Replay {
        runs: Vec::new(),
        max_seq: flushed,
        flushed,
    };
    // Sequence numbers strictly increase from record to record, across logs.
    let mut prev_last: Option<u64> = None;
    for (i, &number) in numbers.iter().enumerate() {
        let path = dir.join(files::wal_file_name(number));
        let mut reader = WalReader::open_with(&*opts.fs, &path, Some(number), opts.recovery)?;
        while let Some((offset, payload)) = reader.next_record()? {
            let seqs = record_seqs(payload, prev_last);
            if let Some((_, last)) = seqs {
                prev_last = Some(last);
            }
            let decoded = seqs.and_then(|_| batch::decode(payload)).ok_or_else(|| {
                Error::corruption(
                    &path,
                    offset,
                    "WAL record is not a valid write batch (malformed, or its sequence \
                     numbers do not follow the previous record's)",
                )
            });
            match (decoded, opts.recovery) {
                (Ok(b), _) => replay.apply(b, opts, number),
                (Err(e), RecoveryMode::Strict) => return Err(e),
                (Err(_), RecoveryMode::BestEffort) => return Ok(replay.finish()),
            }
        }
        if let Some(drop) = reader.tail_dropped() {
            let last_log = i + 1 == numbers.len();
            // A zero-filled tail is space the writer reserved and a crash
            // kept it from trimming: the log simply ends there.
            let reserved_tail =
                drop.kind == TailDropKind::Torn && zero_tail(&*opts.fs, &path, drop.offset)?;
            let stop = drop.kind == TailDropKind::Corruption
                || !(last_log
                    || reserved_tail
                    || (drop.kind == TailDropKind::Torn
                        && later_logs_empty(dir, &numbers[i + 1..], opts)?));
            if stop && opts.recovery == RecoveryMode::Strict {
                return Err(Error::corruption(
                    &path,
                    drop.offset,
                    "WAL ends early but a newer WAL follows",
                ));
            }
            if stop {
                // Point-in-time recovery: nothing after the damage.
                return Ok(replay.finish());
            }
        }
    }
    Ok(replay.finish())
}

struct Replay {
    runs: Vec<MemRun>,
    max_seq: u64,
    flushed: u64,
}

impl Replay {
    /// Applies one batch of log `log_number` past the flushed sequence
    /// number; a full run is sealed between batches, as the write path
    /// seals between groups. A run records the log it starts in: until it
    /// is flushed, that log and every later one are kept (if the flush at
    /// open cannot run, on a full disk, the next open replays them again).
    fn apply(&mut self, b: batch::DecodedBatch<'_>, opts: &Options, log_number: u64) {
        let count = b.ops.clone().count() as u64;
        let last = b.first_seq + count.saturating_sub(1);
        if count == 0 || last <= self.flushed {
            return;
        }
        if self.runs.last().is_none_or(MemRun::is_full) {
            let shared = self.runs.last().map(MemRun::key_prefix_shared);
            let shared = shared.as_deref().unwrap_or_default();
            self.runs.push(MemRun::new(opts, log_number, shared));
        }
        let skip = self.flushed.saturating_sub(b.first_seq - 1);
        let run = self.runs.last().expect("at least one run");
        run.apply(
            b.ops.skip(skip as usize),
            b.first_seq + skip,
            Inserters::Alone,
        );
        self.max_seq = self.max_seq.max(last);
    }

    fn finish(self) -> Replayed {
        let runs: Vec<Arc<MemRun>> = self
            .runs
            .into_iter()
            .filter(|r| !r.is_empty())
            .map(Arc::new)
            .collect();
        for r in &runs {
            r.seal();
        }
        Replayed {
            runs,
            max_seq: self.max_seq,
        }
    }
}

/// The first and last sequence numbers of the write batch in `payload`, if
/// it decodes completely, has operations, comes after `prev_last` and stays
/// within the sequence-number space. A record that checksums but fails this
/// (never written by the engine) must not be half-applied or collide with
/// another record's keys.
fn record_seqs(payload: &[u8], prev_last: Option<u64>) -> Option<(u64, u64)> {
    let b = batch::decode(payload)?;
    let mut n = 0u64;
    for op in b.ops {
        op.ok()?;
        n += 1;
    }
    let last = b.first_seq.checked_add(n.checked_sub(1)?)?;
    let after_prev = prev_last.is_none_or(|p| b.first_seq > p);
    (b.first_seq > 0 && after_prev && last <= key::MAX_SEQUENCE).then_some((b.first_seq, last))
}

/// True if none of the logs `numbers` holds a record. A torn tail followed
/// only by such logs is still the end of the history: a crash came after
/// the next log was created (e.g. while recovery started a new log) but
/// before anything was written to it.
fn later_logs_empty(dir: &Path, numbers: &[u64], opts: &Options) -> Result<bool> {
    for &n in numbers {
        let path = dir.join(files::wal_file_name(n));
        let mut r = WalReader::open_with(&*opts.fs, &path, Some(n), RecoveryMode::BestEffort)?;
        if r.next_record()?.is_some() {
            return Ok(false);
        }
    }
    Ok(true)
}

/// True if every byte of `path` from `offset` on is zero.
fn zero_tail(fs: &dyn FileSystem, path: &Path, offset: u64) -> Result<bool> {
    let bytes = fs.read(path).map_err(|e| Error::io(path, e))?;
    Ok(bytes
        .get(offset as usize..)
        .is_some_and(|tail| tail.iter().all(|&b| b == 0)))
}
