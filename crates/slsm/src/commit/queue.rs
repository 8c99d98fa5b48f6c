//! The commit protocol: writers waiting, the leader forming and running a
//! group, members inserting their batches (described in the [module docs
//! of `commit`](super)). It knows its environment only as [`Stages`], so
//! it is tested alone with a fake one (`tests.rs`).
//!
//! * **Owns**: the queue, the last sequence number handed out, the active
//!   log (see [`Stages::Log`]).
//! * **Calls**: its [`Stages`] only.
//! * **Thread safety**: [`Committer::commit`] from any number of threads.

use std::collections::VecDeque;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use parking_lot::{Condvar, Mutex, MutexGuard};

use super::spare::recycle_batch;
use super::stages::{Durability, Stages};
use super::waiter::{Group, State, Writer};
use crate::batch::WriteBatch;
use crate::error::{Error, Result};
use crate::key::MAX_SEQUENCE;
use crate::memtable::Inserters;

/// Largest group a leader forms, in encoded bytes.
const MAX_GROUP_BYTES: usize = 1 << 20;

/// What only the holder of the queue lock touches.
pub(crate) struct Queue<E: Stages> {
    waiting: VecDeque<Arc<Writer<E::Run>>>,
    /// A writer is committing outside the queue (uncontended): the queue's
    /// front must wait until it is done (it then wakes the front).
    busy: bool,
    /// Highest sequence number handed out.
    pub last_seq: u64,
    pub log: E::Log,
}

impl<E: Stages> Queue<E> {
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
    /// one) operations: the one check that they do not run out.
    pub fn sequences_for(&self, count: u64) -> Result<(u64, u64)> {
        match self.last_seq.checked_add(count) {
            Some(last) if last <= MAX_SEQUENCE => Ok((self.last_seq + 1, last)),
            _ => Err(Error::InvalidArgument("sequence numbers exhausted".into())),
        }
    }
}

/// The protocol over its stages. See the [module docs](self).
pub(crate) struct Committer<E: Stages> {
    env: E,
    queue: Mutex<Queue<E>>,
}

impl<E: Stages> Committer<E> {
    /// A protocol continuing after `last_seq`, writing to `log`.
    pub fn new(env: E, last_seq: u64, log: E::Log) -> Committer<E> {
        Committer {
            env,
            queue: Mutex::new(Queue {
                waiting: VecDeque::new(),
                busy: false,
                last_seq,
                log,
            }),
        }
    }

    /// The stages.
    pub fn env(&self) -> &E {
        &self.env
    }

    /// The queue, locked: nobody starts a commit while it is held.
    pub fn lock(&self) -> MutexGuard<'_, Queue<E>> {
        self.queue.lock()
    }

    /// Commits `batch` (valid, not empty). `placed` is called once its
    /// place in the commit order is fixed, if others could share its commit
    /// (see `CommitPipeline::commit`). Inlined into the pipeline's `commit`:
    /// apart, the two cost a put 23 more instructions than the one function
    /// they were (cachegrind, 200,000 puts).
    #[inline]
    pub fn commit(
        &self,
        mut batch: WriteBatch,
        durability: Durability,
        placed: &mut dyn FnMut(),
    ) -> Result<()> {
        let mut q = self.queue.lock();
        // Whoever takes the queue lock after us commits after us: an idle
        // queue is marked busy (later writers queue behind) before the lock
        // is released, and a busy one gets `batch` at its back first. The
        // place is announced only when others could share the commit: when
        // it syncs, or when others are committing already. An unsynced
        // batch on an idle queue commits in microseconds, and a caller
        // let go on so short a commit (a transaction releasing its gate)
        // only queues behind it alone: measured on `slsm serve` with 50
        // clients, `INCR -P 1` (one transaction each) fell ~10% when every
        // transaction let its gate go here.
        if durability.sync || !q.is_idle() {
            placed();
        }
        if !q.is_idle() {
            return self.wait_in_line(q, batch, durability, false);
        }
        // The uncontended case is a group of one that skips the queue (and
        // the hand-off: an allocation and a dozen atomic operations).
        q.busy = true;
        let result = self
            .env
            .make_room(&mut q.log, false, batch.encoded_size())
            .and_then(|run| self.commit_alone(&mut q, &run, &mut batch, durability));
        q.busy = false;
        q.wake_front();
        drop(q);
        recycle_batch(batch);
        result
    }

    /// Seals the active run if it holds anything, through the queue so that
    /// no group is inserting into it.
    pub fn seal_active(&self) -> Result<()> {
        let q = self.queue.lock();
        let durability = Durability {
            sync: false,
            no_wal: false,
        };
        self.wait_in_line(q, WriteBatch::new(), durability, true)
    }

    /// Syncs the active log, running the device flush with `q` unlocked:
    /// the records are handed to the file system first (so nothing is
    /// buffered while unlocked), and only the queue's leader (or a
    /// `Db::sync`, which appends nothing) syncs, so no record is appended
    /// until the sync's outcome is recorded. Writers arriving meanwhile
    /// queue up and share the next group's sync instead of blocking on the
    /// lock.
    pub fn sync_unlocked(&self, q: &mut MutexGuard<'_, Queue<E>>) -> Result<()> {
        let Some(pending) = self.env.begin_sync(&mut q.log)? else {
            return Ok(());
        };
        let outcome = MutexGuard::unlocked(q, || self.env.run_sync(&pending));
        self.env.end_sync(&mut q.log, pending, outcome)
    }

    /// Queues `batch` and waits: to insert it as a member of a group, to be
    /// told the group's result, or to lead a group. `seal` asks for the
    /// active run to be sealed instead of writing anything.
    fn wait_in_line<'a>(
        &'a self,
        mut q: MutexGuard<'a, Queue<E>>,
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
                    let batch = me.batch.lock();
                    self.env
                        .apply(&run, &batch, first_seq, Inserters::Concurrent);
                    drop(batch);
                    group.finish_one();
                    q = self.queue.lock();
                    spun = false;
                    continue;
                }
                State::Waiting => {}
            }
            drop(st);
            if !q.busy && Arc::ptr_eq(&q.waiting[0], &me) {
                return self.lead(q, &me);
            }
            if !spun {
                // Spin briefly with the lock released, then re-check the
                // state under the lock before any sleep.
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
    fn lead<'a>(&'a self, mut q: MutexGuard<'a, Queue<E>>, me: &Arc<Writer<E::Run>>) -> Result<()> {
        let (group_len, group_bytes) = match me.seal {
            true => (1, 0),
            false => group_size(&q.waiting),
        };
        let room = self.env.make_room(&mut q.log, me.seal, group_bytes);
        let group_len = if room.is_ok() { group_len } else { 1 };
        let result = room.and_then(|run| match (me.seal, group_len) {
            (true, _) => Ok(()),
            (false, 1) => {
                let mut batch = me.batch.lock();
                self.commit_alone(&mut q, &run, &mut batch, me.durability)
            }
            (false, n) => self.commit_group(&mut q, n, run),
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

    /// A group of one (queued or not): stamps, logs and applies one batch
    /// whose writer is the only one inserting into `run`, then publishes
    /// it. The queue lock is released during the insert.
    fn commit_alone(
        &self,
        q: &mut MutexGuard<'_, Queue<E>>,
        run: &E::Run,
        batch: &mut WriteBatch,
        d: Durability,
    ) -> Result<()> {
        let (first_seq, last_seq) = q.sequences_for(batch.len() as u64)?;
        let logged = self.env.log_batch(&mut q.log, batch, first_seq, d.no_wal)?;
        self.finish_log(q, logged, d.sync && logged > 0)?;
        q.last_seq = last_seq;
        MutexGuard::unlocked(q, || {
            self.env.apply(run, batch, first_seq, Inserters::Alone)
        });
        self.env.publish(last_seq);
        Ok(())
    }

    /// Logs and applies the first `n` queued batches; the queue lock is
    /// released while the members insert.
    fn commit_group(
        &self,
        q: &mut MutexGuard<'_, Queue<E>>,
        n: usize,
        run: Arc<E::Run>,
    ) -> Result<()> {
        let members: Vec<Arc<Writer<E::Run>>> = q.waiting.iter().take(n).cloned().collect();
        let mut starts = Vec::with_capacity(n);
        let mut ops = 0;
        for w in &members {
            starts.push(ops);
            ops += w.batch.lock().len() as u64;
        }
        let (first_seq, last_seq) = q.sequences_for(ops)?;
        starts.iter_mut().for_each(|s| *s += first_seq);
        let (mut logged, mut sync) = (0u64, false);
        for (w, &start) in members.iter().zip(&starts) {
            let mut batch = w.batch.lock();
            let bytes = self
                .env
                .log_batch(&mut q.log, &mut batch, start, w.durability.no_wal)?;
            logged += bytes;
            sync |= w.durability.sync && bytes > 0;
        }
        self.finish_log(q, logged, sync)?;
        q.last_seq = last_seq;
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
        MutexGuard::unlocked(q, || {
            let batch = members[0].batch.lock();
            self.env
                .apply(&run, &batch, starts[0], Inserters::Concurrent);
            drop(batch);
            group.wait_all();
        });
        self.env.publish(last_seq);
        Ok(())
    }

    /// Hands the records just appended to the file system, or makes them
    /// durable if `sync` (the device flush runs with the queue unlocked:
    /// the caller leads, so no other writer touches the log meanwhile).
    fn finish_log(&self, q: &mut MutexGuard<'_, Queue<E>>, logged: u64, sync: bool) -> Result<()> {
        if sync {
            self.sync_unlocked(q)?;
        } else if logged > 0 {
            self.env.flush_log(&mut q.log)?;
        }
        self.env.count_logged(logged);
        Ok(())
    }
}

/// How many queued writers (from the front) the leader takes, and their
/// encoded bytes.
fn group_size<R>(queue: &VecDeque<Arc<Writer<R>>>) -> (usize, usize) {
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
