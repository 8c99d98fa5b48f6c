//! Reading many data blocks at once: a batched lookup or a seek over many
//! runs asks for all the blocks it will need, and those the device must
//! serve are read concurrently, so that a batch of misses costs about what
//! the device does at its queue depth, not one read after another.
//!
//! Blocks already in the cache, or in the operating system's page cache
//! (asked first with `cachestat(2)`, which starts no read), cost no
//! hand-off at all: a data set in memory never pays for the parallelism.
//! The rest go to a small pool of reader threads shared by the process.
//! While nearly every block asked for turns out to be in memory anyway, the
//! fetch is skipped altogether (but for one in [`SAMPLE_EVERY`], which keeps
//! measuring): the reads then happen in place, without a `cachestat` each.
//!
//! Blocks that are in memory but not in the block cache are decoded by the
//! caller, not shared with the pool: splitting a batch's copying and
//! decompressing between the caller and a pool thread (each taking the
//! next block) was measured on two cores, `multireadrandom` of 64 over 3M
//! LZ4 keys in the page cache with the default budget, and was no faster
//! (1.8-2.4 against 1.9-2.1 us a key) for 40% more CPU: the wake-ups and
//! blocks freed on another thread than their allocator's cost what the
//! second core gave.
//!
//! When the blocks are read directly (`O_DIRECT`: the memory limit cannot
//! hold the files, see `budget`), the whole batch goes to the kernel in
//! one `io_uring` submission from the calling thread (`fs::uring`), and the
//! page cache is not asked first (it cannot serve a direct read). Measured
//! with 5M keys in a 256 MiB cgroup, `multireadrandom` of 64, alternating
//! rounds on one database: 13.9 us a key against 16.5 through the pool,
//! with 300 against 784 ms of CPU and 801 against 32,117 context switches
//! for 30,000 keys (on this VM each read costs ~20 us of kernel CPU, and a
//! thread per outstanding read added two switches to it).
//!
//! Otherwise (buffered reads, or a system that refuses `io_uring`, as
//! container runtimes commonly do) a pool of threads reads them: a buffered
//! `io_uring` read that misses the page cache is handed to a kernel worker
//! thread anyway. The pool's size is the queue depth that pays on
//! solid-state devices (16 outstanding reads gave 3.7x the reads per second
//! of one, measured with fio).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::{Condvar, Mutex};

use super::source::{BlockSource, Want};
use crate::fs::{read_direct_batch, DirectRead};

/// Reader threads (the queue depth the device sees).
const READERS: usize = 16;

/// One fetch in this many probes the page cache even when blocks have
/// been found there: the estimate follows a data set that outgrows memory.
const SAMPLE_EVERY: u64 = 16;
/// The estimate (in 1/1024) above which fetches are skipped.
const IN_MEMORY: u32 = 1000;

/// Of the blocks fetches asked for lately, the fraction (in 1/1024) that
/// were in memory (block cache or page cache): a moving average.
static READY_PER_1024: AtomicU32 = AtomicU32::new(0);
static FETCHES: AtomicU64 = AtomicU64::new(0);

/// Folds one fetch's `ready` of `asked` blocks into the estimate.
fn note_readiness(ready: usize, asked: usize) {
    let sample = (ready * 1024 / asked.max(1)) as u32;
    let old = READY_PER_1024.load(Ordering::Relaxed);
    // An average over the last ~8 fetches: quick to notice either way.
    let new = old - old / 8 + sample / 8;
    READY_PER_1024.store(new, Ordering::Relaxed);
}

/// Whether a batch of reads about to start should gather its blocks and
/// [`fetch`] them: false while the blocks are almost surely in memory
/// (but for a sampling fetch), so that a data set in memory does not even
/// pay for listing them.
pub(crate) fn fetch_wanted() -> bool {
    let n = FETCHES.fetch_add(1, Ordering::Relaxed);
    READY_PER_1024.load(Ordering::Relaxed) < IN_MEMORY || n.is_multiple_of(SAMPLE_EVERY)
}

type Job = Box<dyn FnOnce() + Send>;

struct Pool {
    jobs: Mutex<VecDeque<Job>>,
    work: Condvar,
}

fn pool() -> Option<&'static Pool> {
    static POOL: OnceLock<Option<&'static Pool>> = OnceLock::new();
    *POOL.get_or_init(|| {
        let pool: &'static Pool = Box::leak(Box::new(Pool {
            jobs: Mutex::new(VecDeque::new()),
            work: Condvar::new(),
        }));
        let started = (0..READERS)
            .filter(|i| {
                std::thread::Builder::new()
                    .name(format!("slsm-read-{i}"))
                    .spawn(move || serve(pool))
                    .is_ok()
            })
            .count();
        (started > 0).then_some(pool)
    })
}

fn serve(pool: &'static Pool) {
    let mut jobs = pool.jobs.lock();
    loop {
        match jobs.pop_front() {
            Some(job) => {
                drop(jobs);
                job();
                jobs = pool.jobs.lock();
            }
            None => pool.work.wait(&mut jobs),
        }
    }
}

/// Jobs of one batch still running.
#[derive(Default)]
struct Pending {
    left: Mutex<usize>,
    done: Condvar,
}

/// Puts blocks `(file, index)` in the block cache, reading those that are
/// in neither the cache nor the page cache concurrently. A hint: a block
/// that cannot be read is left for the read that needs it, which reports
/// the error. Callers ask [`fetch_wanted`] first.
pub(crate) fn fetch<S: BlockSource>(blocks: &[(Arc<S>, usize)]) {
    let mut slow: Vec<&(Arc<S>, usize)> = Vec::new();
    for entry in blocks {
        let (file, i) = entry;
        if !matches!(file.block(*i, Want::IfReady), Ok(Some(_)) | Err(_)) {
            slow.push(entry);
        }
    }
    note_readiness(blocks.len() - slow.len(), blocks.len());
    if slow.len() > 1 && read_directly(&slow) {
        return;
    }
    match (slow.len(), pool()) {
        (0, _) => {}
        (1, _) | (_, None) => {
            for (file, i) in slow {
                let _ = file.block(*i, Want::Ahead);
            }
        }
        (n, Some(pool)) => read_concurrently(pool, &slow, n),
    }
}

/// Reads `slow` with one submission of direct reads (`fs::uring`) if
/// every one of them is read directly; false, with nothing read, if not.
/// A read that fails is left to the read that needs the block.
pub(crate) fn read_directly<S: BlockSource>(slow: &[&(Arc<S>, usize)]) -> bool {
    let reads: Option<Vec<DirectRead>> = slow.iter().map(|(f, i)| f.direct_read(*i)).collect();
    let Some(reads) = reads else {
        return false;
    };
    read_direct_batch(&reads, |k, stored| {
        let (file, i) = slow[k];
        let _ = file.block(*i, Want::Fetched(stored));
    })
}

fn read_concurrently<S: BlockSource>(pool: &'static Pool, slow: &[&(Arc<S>, usize)], n: usize) {
    let pending = Arc::new(Pending {
        left: Mutex::new(n),
        done: Condvar::new(),
    });
    {
        let mut jobs = pool.jobs.lock();
        for (file, i) in slow.iter().map(|e| (Arc::clone(&e.0), e.1)) {
            let pending = Arc::clone(&pending);
            jobs.push_back(Box::new(move || {
                let _ = file.block(i, Want::Ahead);
                let mut left = pending.left.lock();
                *left -= 1;
                if *left == 0 {
                    pending.done.notify_all();
                }
            }));
        }
    }
    // One wake-up per job: waking the whole pool for a handful of reads
    // cost ~16 context switches per seek (measured: most of a cold seek's
    // CPU time on two cores).
    for _ in 0..n.min(READERS) {
        pool.work.notify_one();
    }
    let mut left = pending.left.lock();
    while *left > 0 {
        pending.done.wait(&mut left);
    }
}
