//! The queue of the commit pipeline: writers waiting, the leader forming
//! and running a group, members inserting their batches (the protocol is
//! described in the [module docs of `commit`](super)).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::{Condvar, Mutex, MutexGuard};

use super::{recycle_batch, CommitPipeline, Durability};
use crate::batch::WriteBatch;
use crate::buffer::ActiveLog;
use crate::error::{Error, Result};
use crate::key::MAX_SEQUENCE;
use crate::memtable::{Inserters, MemRun};

/// Largest group a leader forms, in encoded bytes.
const MAX_GROUP_BYTES: usize = 1 << 20;

/// Polls of its wake-up flag a queued writer makes before it sleeps on its
/// condition variable (~10 us of `spin_loop`). The writer ahead usually
/// finishes within a microsecond or two, while a futex sleep and wake-up
/// costs several: with two threads writing single puts, sleeping at once
/// made every put pay a full wake-up.
const SPIN_POLLS: u32 = 512;

/// What only the holder of the queue lock touches.
pub(super) struct Queue {
    waiting: VecDeque<Arc<Writer>>,
    /// A writer is committing outside the queue (uncontended): the queue's
    /// front must wait until it is done (it then wakes the front).
    pub busy: bool,
    /// Highest sequence number handed out.
    pub last_seq: u64,
    pub log: ActiveLog,
}

impl Queue {
    pub fn new(last_seq: u64, log: ActiveLog) -> Queue {
        Queue {
            waiting: VecDeque::new(),
            busy: false,
            last_seq,
            log,
        }
    }

    /// Nobody queued and nobody committing.
    pub fn is_idle(&self) -> bool {
        !self.busy && self.waiting.is_empty()
    }

    /// Wakes the writer at the front, if any.
    pub fn wake_front(&self) {
        if let Some(front) = self.waiting.front() {
            front.wake();
        }
    }

    /// The first and last sequence numbers of the next `count` (at least
    /// one) operations.
    pub fn sequences_for(&self, count: u64) -> Result<(u64, u64)> {
        let last = self.last_seq + count;
        if last > MAX_SEQUENCE {
            return Err(Error::InvalidArgument("sequence numbers exhausted".into()));
        }
        Ok((self.last_seq + 1, last))
    }
}

enum State {
    Waiting,
    /// Insert your batch into `run` starting at sequence `first_seq`.
    Insert {
        run: Arc<MemRun>,
        first_seq: u64,
        group: Arc<Group>,
    },
    Done(Result<()>),
}

struct Writer {
    batch: Mutex<WriteBatch>,
    durability: Durability,
    /// Seal the active run (a flush); such a writer leads alone.
    seal: bool,
    state: Mutex<State>,
    cv: Condvar,
    /// Set (with the queue lock held) whenever `cv` is notified, so that a
    /// writer spinning before it sleeps notices without a system call.
    signaled: AtomicBool,
}

impl Writer {
    /// Wakes the writer, spinning or sleeping.
    fn wake(&self) {
        self.signaled.store(true, Ordering::Release);
        self.cv.notify_one();
    }

    /// Spins up to `SPIN_POLLS` times for a wake-up; true if one came.
    fn spin_for_wake(&self) -> bool {
        for _ in 0..SPIN_POLLS {
            if self.signaled.swap(false, Ordering::Acquire) {
                return true;
            }
            std::hint::spin_loop();
        }
        false
    }
}

/// Members of one group still inserting.
struct Group {
    remaining: Mutex<usize>,
    cv: Condvar,
}

impl Group {
    fn finish_one(&self) {
        let mut left = self.remaining.lock();
        *left -= 1;
        if *left == 0 {
            self.cv.notify_all();
        }
    }

    fn wait_all(&self) {
        let mut left = self.remaining.lock();
        while *left > 0 {
            self.cv.wait(&mut left);
        }
    }
}

/// Queues `batch` and waits: to insert it as a member of a group, to be
/// told the group's result, or to lead a group. `seal` asks for the active
/// run to be sealed instead of writing anything.
pub(super) fn wait_in_line<'a>(
    pipeline: &'a CommitPipeline,
    mut q: MutexGuard<'a, Queue>,
    batch: WriteBatch,
    durability: Durability,
    seal: bool,
) -> Result<()> {
    let me = Arc::new(Writer {
        batch: Mutex::new(batch),
        durability,
        seal,
        state: Mutex::new(State::Waiting),
        cv: Condvar::new(),
        signaled: AtomicBool::new(false),
    });
    q.waiting.push_back(Arc::clone(&me));
    let mut spun = false;
    loop {
        let mut st = me.state.lock();
        match std::mem::replace(&mut *st, State::Waiting) {
            State::Done(r) => {
                drop((st, q));
                recycle_batch(std::mem::take(&mut *me.batch.lock()));
                return r;
            }
            State::Insert {
                run,
                first_seq,
                group,
            } => {
                drop((st, q));
                run.apply(me.batch.lock().ops(), first_seq, Inserters::Concurrent);
                group.finish_one();
                q = pipeline.queue.lock();
                spun = false;
                continue;
            }
            State::Waiting => {}
        }
        drop(st);
        if !q.busy && Arc::ptr_eq(&q.waiting[0], &me) {
            return lead(pipeline, q, &me);
        }
        if !spun {
            // Spin briefly with the lock released, then re-check the state
            // under the lock before any sleep.
            spun = true;
            MutexGuard::unlocked(&mut q, || me.spin_for_wake());
            continue;
        }
        // Wait with the queue lock released; the leader signals `me.cv`
        // while holding the queue lock, so no wake-up is lost.
        me.cv.wait(&mut q);
        spun = false;
    }
}

/// Runs one group with `me` as leader; returns `me`'s result.
fn lead<'a>(
    pipeline: &'a CommitPipeline,
    mut q: MutexGuard<'a, Queue>,
    me: &Arc<Writer>,
) -> Result<()> {
    let (group_len, group_bytes) = if me.seal {
        (1, 0)
    } else {
        group_size(&q.waiting)
    };
    let room = pipeline.buffer.make_room(&mut q.log, me.seal, group_bytes);
    let group_len = if room.is_ok() { group_len } else { 1 };
    let result = room.and_then(|run| match (me.seal, group_len) {
        (true, _) => Ok(()),
        (false, 1) => {
            let mut batch = me.batch.lock();
            pipeline.commit_single(&mut q, &run, &mut batch, me.durability)
        }
        (false, n) => commit_group(pipeline, &mut q, n, run),
    });
    // Retire the group and wake the next leader.
    for _ in 0..group_len {
        let w = q.waiting.pop_front().expect("group member");
        if !Arc::ptr_eq(&w, me) {
            *w.state.lock() = State::Done(result.clone());
            w.wake();
        }
    }
    q.wake_front();
    drop(q);
    recycle_batch(std::mem::take(&mut *me.batch.lock()));
    result
}

/// Logs and applies the first `n` queued batches; the queue lock is
/// released while the members insert.
fn commit_group(
    pipeline: &CommitPipeline,
    q: &mut MutexGuard<'_, Queue>,
    n: usize,
    run: Arc<MemRun>,
) -> Result<()> {
    let members: Vec<Arc<Writer>> = q.waiting.iter().take(n).cloned().collect();
    let mut starts = Vec::with_capacity(n);
    let mut next = q.last_seq + 1;
    for w in &members {
        starts.push(next);
        next += w.batch.lock().len() as u64;
    }
    if next - 1 > MAX_SEQUENCE {
        return Err(Error::InvalidArgument("sequence numbers exhausted".into()));
    }
    let (mut logged, mut sync) = (0u64, false);
    for (w, &start) in members.iter().zip(&starts) {
        let bytes = pipeline.log_batch(q, &mut w.batch.lock(), start, w.durability.no_wal)?;
        logged += bytes;
        sync |= w.durability.sync && bytes > 0;
    }
    pipeline.finish_log(q, logged, sync)?;
    q.last_seq = next - 1;
    let group = Arc::new(Group {
        remaining: Mutex::new(n - 1),
        cv: Condvar::new(),
    });
    for (w, &start) in members.iter().zip(&starts).skip(1) {
        *w.state.lock() = State::Insert {
            run: Arc::clone(&run),
            first_seq: start,
            group: Arc::clone(&group),
        };
        w.wake();
    }
    let last_seq = q.last_seq;
    MutexGuard::unlocked(q, || {
        run.apply(
            members[0].batch.lock().ops(),
            starts[0],
            Inserters::Concurrent,
        );
        group.wait_all();
    });
    pipeline.publish(last_seq);
    Ok(())
}

/// How many queued writers (from the front) the leader takes, and their
/// encoded bytes.
fn group_size(queue: &VecDeque<Arc<Writer>>) -> (usize, usize) {
    let leader = &queue[0];
    let mut bytes = leader.batch.lock().encoded_size();
    let mut n = 1;
    for w in queue.iter().skip(1) {
        if w.seal || w.durability.no_wal != leader.durability.no_wal {
            break;
        }
        let more = w.batch.lock().encoded_size();
        if bytes + more > MAX_GROUP_BYTES {
            break;
        }
        bytes += more;
        n += 1;
    }
    (n, bytes)
}
