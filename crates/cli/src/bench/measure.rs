//! Measuring one workload: its threads run what `workloads.rs` says for its
//! kind, released together; their statistics are merged and db_bench's
//! message for the workload is composed.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Barrier;

use anyhow::{anyhow, Result};

use super::catalog::{Kind, Workload};
use super::keygen::KeyOrder;
use super::report::{Merged, ThreadStats};
use super::workloads::{Ctx, ReadKeys};

/// What the threads of one workload measured, merged, with the message
/// db_bench prints after its line.
pub(super) struct Measured {
    pub merged: Merged,
    pub found: Option<u64>,
    pub message: String,
}

/// Runs `body` on `n` threads released together; returns each thread's result.
fn run_threads<T: Send>(
    n: usize,
    body: &(dyn Fn(usize, &Barrier) -> Result<T> + Sync),
) -> Result<Vec<T>> {
    let go = Barrier::new(n);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|tid| {
                let go = &go;
                s.spawn(move || body(tid, go))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .map_err(|_| anyhow!("a benchmark thread panicked"))?
            })
            .collect()
    })
}

/// Runs workload `w` on `threads` threads of `per_thread` operations each.
pub(super) fn measure(
    w: &Workload,
    ctx: &Ctx<'_>,
    threads: usize,
    per_thread: u64,
) -> Result<Measured> {
    let mut message = String::new();
    let mixed_writes = AtomicU64::new(0);
    let stats: Vec<ThreadStats> = match w.kind {
        Kind::FillSeq | Kind::FillBatch => run_threads(threads, &|tid, go| {
            ctx.write(tid, KeyOrder::Sequential, per_thread, false, go)
        })?,
        Kind::FillRandom | Kind::FillSync | Kind::Fill100K | Kind::Overwrite => {
            run_threads(threads, &|tid, go| {
                ctx.write(tid, KeyOrder::Random, per_thread, false, go)
            })?
        }
        Kind::FillUniqueRandom => run_threads(threads, &|tid, go| {
            ctx.write(tid, KeyOrder::UniqueRandom, per_thread, false, go)
        })?,
        Kind::DeleteSeq => run_threads(threads, &|tid, go| {
            ctx.write(tid, KeyOrder::Sequential, per_thread, true, go)
        })?,
        Kind::DeleteRandom => run_threads(threads, &|tid, go| {
            ctx.write(tid, KeyOrder::Random, per_thread, true, go)
        })?,
        Kind::ReadRandom => run_threads(threads, &|tid, go| ctx.read_random(tid, per_thread, go))?,
        Kind::ReadMissing => run_threads(threads, &|tid, go| {
            ctx.read_keys(tid, per_thread, ReadKeys::Missing, go)
        })?,
        Kind::ReadHot => run_threads(threads, &|tid, go| {
            ctx.read_keys(tid, per_thread, ReadKeys::Hot, go)
        })?,
        Kind::MultiReadRandom => run_threads(threads, &|tid, go| {
            ctx.multi_read_random(tid, per_thread, go)
        })?,
        Kind::SeekRandom => run_threads(threads, &|tid, go| ctx.seek_random(tid, per_thread, go))?,
        Kind::ReadSeq => run_threads(threads, &|_, go| ctx.read_seq(per_thread, false, go))?,
        Kind::ReadReverse => run_threads(threads, &|_, go| ctx.read_seq(per_thread, true, go))?,
        Kind::UpdateRandom | Kind::ReadRandomWriteRandom => {
            let update = w.kind == Kind::UpdateRandom;
            run_threads(threads, &|tid, go| {
                ctx.read_write_random(tid, per_thread, update, &mixed_writes, go)
            })?
        }
        Kind::ReadWhileWriting | Kind::SeekRandomWhileWriting | Kind::MultiReadWhileWriting => {
            let stop = AtomicBool::new(false);
            let readers_left = AtomicU64::new(threads as u64);
            let writes = AtomicU64::new(0);
            let all = run_threads(threads + 1, &|tid, go| {
                if tid == threads {
                    // Keep writing until the readers are done, even if
                    // one of them failed.
                    let n = ctx.background_writer(tid, &stop, go);
                    stop.store(true, Ordering::Relaxed);
                    writes.store(*n.as_ref().unwrap_or(&0), Ordering::Relaxed);
                    n.map(|_| None)
                } else {
                    let r = match w.kind {
                        Kind::SeekRandomWhileWriting => ctx.seek_random(tid, per_thread, go),
                        Kind::MultiReadWhileWriting => ctx.multi_read_random(tid, per_thread, go),
                        _ => ctx.read_random(tid, per_thread, go),
                    };
                    if readers_left.fetch_sub(1, Ordering::AcqRel) == 1 {
                        stop.store(true, Ordering::Relaxed);
                    }
                    if r.is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    r.map(Some)
                }
            })?;
            message = format!("(writer: {} puts)", writes.load(Ordering::Relaxed));
            all.into_iter().flatten().collect()
        }
        Kind::Flush | Kind::Compact | Kind::Stats | Kind::WaitForCompaction | Kind::Unsupported => {
            unreachable!("handled above")
        }
    };
    let merged = Merged::from_threads(&stats);
    let found = match w.kind {
        Kind::ReadRandom
        | Kind::ReadMissing
        | Kind::ReadHot
        | Kind::MultiReadRandom
        | Kind::SeekRandom
        | Kind::ReadWhileWriting
        | Kind::SeekRandomWhileWriting
        | Kind::MultiReadWhileWriting => {
            let found_msg = format!("({} of {} found)", merged.found, merged.done);
            message = if message.is_empty() {
                found_msg
            } else {
                format!("{found_msg} {message}")
            };
            Some(merged.found)
        }
        // db_bench's own wording for these two.
        Kind::UpdateRandom => {
            message = format!("( updates:{} found:{})", merged.done, merged.found);
            Some(merged.found)
        }
        Kind::ReadRandomWriteRandom => {
            let writes = mixed_writes.load(Ordering::Relaxed);
            message = format!(
                "( reads:{} writes:{writes} total:{} found:{})",
                merged.done - writes,
                merged.done,
                merged.found
            );
            Some(merged.found)
        }
        _ => None,
    };
    Ok(Measured {
        merged,
        found,
        message,
    })
}
