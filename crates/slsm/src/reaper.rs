//! Deferred clean-up on a background thread.
//!
//! Whoever drops the last reference to an obsolete run file pays for
//! deleting it: unmapping it (page-table teardown, TLB shootdowns on every
//! core) and unlinking it (the kernel truncates its page cache, hundreds of
//! megabytes after a big merge). That can be a writer swapping versions or
//! a reader finishing a lookup. [`defer`] hands such work to one process-wide
//! thread instead; [`drain`] waits for everything deferred so far, so a
//! closing database leaves no deletion behind.

use std::collections::VecDeque;
use std::sync::OnceLock;

use parking_lot::{Condvar, Mutex};

type Job = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    /// Jobs handed in and jobs finished, for `drain`.
    submitted: u64,
    finished: u64,
}

struct Reaper {
    queue: Mutex<Queue>,
    work: Condvar,
    done: Condvar,
}

fn reaper() -> Option<&'static Reaper> {
    static REAPER: OnceLock<Option<&'static Reaper>> = OnceLock::new();
    *REAPER.get_or_init(|| {
        let r: &'static Reaper = Box::leak(Box::new(Reaper {
            queue: Mutex::new(Queue::default()),
            work: Condvar::new(),
            done: Condvar::new(),
        }));
        std::thread::Builder::new()
            .name("slsm-reaper".into())
            .spawn(move || run(r))
            .ok()
            .map(|_| r)
    })
}

fn run(r: &'static Reaper) {
    let mut q = r.queue.lock();
    loop {
        match q.jobs.pop_front() {
            Some(job) => {
                drop(q);
                job();
                q = r.queue.lock();
                q.finished += 1;
                r.done.notify_all();
            }
            None => r.work.wait(&mut q),
        }
    }
}

/// Runs `job` on the clean-up thread (inline if that thread could not be
/// started).
pub(crate) fn defer(job: impl FnOnce() + Send + 'static) {
    let Some(r) = reaper() else {
        return job();
    };
    let mut q = r.queue.lock();
    q.jobs.push_back(Box::new(job));
    q.submitted += 1;
    r.work.notify_one();
}

/// Waits until every job deferred before this call has run.
pub(crate) fn drain() {
    let Some(r) = reaper() else { return };
    let mut q = r.queue.lock();
    let target = q.submitted;
    while q.finished < target {
        r.done.wait(&mut q);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    #[test]
    fn drain_waits_for_deferred_jobs() {
        let n = Arc::new(AtomicUsize::new(0));
        for _ in 0..100 {
            let n = Arc::clone(&n);
            defer(move || {
                std::thread::sleep(std::time::Duration::from_micros(50));
                n.fetch_add(1, Ordering::SeqCst);
            });
        }
        drain();
        assert_eq!(n.load(Ordering::SeqCst), 100);
    }
}
