//! The write path: group commit into the WAL, then concurrent inserts into
//! the active memory run.
//!
//! Writers queue up; the writer at the front becomes the *leader*: it makes
//! room (sealing a full run, stalling only if all `R` runs are full), takes
//! the batches queued behind it as one group, stamps sequence numbers,
//! appends one WAL record per batch with a single `write(2)` (and one
//! `fdatasync` if any member asked for it). Then every member inserts its own
//! batch into the memory run, in parallel. When all have finished, the
//! leader publishes the group's last sequence number, which makes the whole
//! group visible to readers at once, and hands leadership to the next writer.
//! A batch is therefore never seen half-applied.
//!
//! The uncontended case (nobody queued, nobody committing) skips the queue:
//! the writer commits its own batch in place, marking the queue busy so that
//! writers arriving meanwhile line up behind it. That saves the hand-off
//! machinery (an allocation and a dozen atomic operations) on every
//! single-threaded write.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::{Condvar, Mutex, MutexGuard};

use super::log::LogWriter;
use super::Shared;
use crate::batch::{Op, WriteBatch};
use crate::bloom::hash_key;
use crate::error::{Error, Result};
use crate::key::{self, Kind, MAX_SEQUENCE};
use crate::manifest;
use crate::memtable::{Inserters, MemRun};
use crate::options::WriteOptions;

/// Largest group a leader forms, in encoded bytes.
const MAX_GROUP_BYTES: usize = 1 << 20;

/// Polls of its wake-up flag a queued writer makes before it sleeps on its
/// condition variable (~10 us of `spin_loop`). The writer ahead usually
/// finishes within a microsecond or two, while a futex sleep and wake-up
/// costs several: with two threads writing single puts, sleeping at once
/// made every put pay a full wake-up.
const SPIN_POLLS: u32 = 512;

/// Largest spent batch a thread keeps for its next `put` or `delete`.
const SPARE_BATCH_MAX: usize = 4096;

thread_local! {
    /// A spent batch kept for the thread's next one-key write, so that the
    /// common `put` allocates nothing.
    static SPARE_BATCH: Cell<Option<WriteBatch>> = const { Cell::new(None) };
    /// Scratch space for encoding internal keys while inserting a batch.
    static IKEY_BUF: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// An empty batch: the thread's spare one if it has it. (`try_with`: a
/// write from another thread-local's destructor still works.)
fn take_batch() -> WriteBatch {
    SPARE_BATCH
        .try_with(Cell::take)
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// Keeps a spent batch for the thread's next write, unless it is large.
fn recycle_batch(mut batch: WriteBatch) {
    if batch.capacity() <= SPARE_BATCH_MAX {
        batch.clear();
        let _ = SPARE_BATCH.try_with(|spare| spare.set(Some(batch)));
    }
}

/// Queue of pending writers and the state only the leader touches.
pub(crate) struct WriteQueue {
    queue: VecDeque<Arc<Writer>>,
    /// A writer is committing on the fast path, outside the queue: the
    /// queue's front must wait until it is done (it then wakes the front).
    solo_active: bool,
    /// Highest sequence number handed out.
    last_seq: u64,
    wal: Option<LogWriter>,
}

impl WriteQueue {
    pub fn new(last_seq: u64, wal: Option<LogWriter>) -> Self {
        WriteQueue {
            queue: VecDeque::new(),
            solo_active: false,
            last_seq,
            wal,
        }
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
    sync: bool,
    no_wal: bool,
    /// Seal the active run (used by `flush`); such a writer leads alone.
    rotate: bool,
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

impl Shared {
    /// Applies `batch` atomically with the given durability.
    pub(crate) fn write(&self, batch: WriteBatch, opts: &WriteOptions) -> Result<()> {
        batch.validate()?;
        if batch.is_empty() {
            return Ok(());
        }
        self.submit(batch, opts, false)
    }

    /// Seals the active run if it holds anything (through the write queue,
    /// so no group is inserting into it).
    pub(crate) fn rotate_active(&self) -> Result<()> {
        self.submit(WriteBatch::new(), &WriteOptions::default(), true)
    }

    fn submit(&self, batch: WriteBatch, opts: &WriteOptions, rotate: bool) -> Result<()> {
        let sync = opts.sync || self.opts.sync_writes;
        let no_wal = opts.disable_wal || self.opts.disable_wal;
        let mut q = self.writes.lock();
        if !rotate && !q.solo_active && q.queue.is_empty() {
            return self.commit_solo(q, batch, sync, no_wal);
        }
        let me = Arc::new(Writer {
            batch: Mutex::new(batch),
            sync,
            no_wal,
            rotate,
            state: Mutex::new(State::Waiting),
            cv: Condvar::new(),
            signaled: AtomicBool::new(false),
        });
        q.queue.push_back(Arc::clone(&me));
        let mut spun = false;
        loop {
            let mut st = me.state.lock();
            match std::mem::replace(&mut *st, State::Waiting) {
                State::Done(r) => return r,
                State::Insert {
                    run,
                    first_seq,
                    group,
                } => {
                    drop(st);
                    drop(q);
                    self.insert_batch(&run, &me.batch.lock(), first_seq, Inserters::Concurrent);
                    group.finish_one();
                    q = self.writes.lock();
                    spun = false;
                    continue;
                }
                State::Waiting => {}
            }
            drop(st);
            if !q.solo_active && Arc::ptr_eq(&q.queue[0], &me) {
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

    /// Commits `batch` without joining the queue (nobody queued, nobody
    /// committing). Writers arriving meanwhile queue behind `solo_active`;
    /// the queue's front is woken at the end.
    fn commit_solo(
        &self,
        mut q: MutexGuard<'_, WriteQueue>,
        mut batch: WriteBatch,
        sync: bool,
        no_wal: bool,
    ) -> Result<()> {
        q.solo_active = true;
        let result = self
            .make_room(&mut q, false)
            .and_then(|run| self.commit_one(&mut q, &run, &mut batch, sync, no_wal));
        q.solo_active = false;
        if let Some(front) = q.queue.front() {
            front.wake();
        }
        drop(q);
        recycle_batch(batch);
        result
    }

    /// Runs one group with `me` as leader; returns `me`'s result.
    fn lead(&self, mut q: MutexGuard<'_, WriteQueue>, me: &Arc<Writer>) -> Result<()> {
        let room = self.make_room(&mut q, me.rotate);
        let group_len = if room.is_ok() && !me.rotate {
            group_size(&q.queue)
        } else {
            1
        };
        let result = room.and_then(|run| {
            if me.rotate {
                return Ok(());
            }
            self.commit_group(&mut q, group_len, run)
        });
        // Retire the group and wake the next leader.
        for _ in 0..group_len {
            let w = q.queue.pop_front().expect("group member");
            if !Arc::ptr_eq(&w, me) {
                *w.state.lock() = State::Done(result.clone());
                w.wake();
            }
        }
        if let Some(next) = q.queue.front() {
            next.wake();
        }
        result
    }

    /// Logs and applies the first `n` queued batches; the queue lock is
    /// released while members insert.
    fn commit_group(
        &self,
        q: &mut MutexGuard<'_, WriteQueue>,
        n: usize,
        run: Arc<MemRun>,
    ) -> Result<()> {
        if n == 1 {
            return self.commit_alone(q, run);
        }
        let members: Vec<Arc<Writer>> = q.queue.iter().take(n).cloned().collect();
        let first_seq = q.last_seq + 1;
        let mut seq = first_seq;
        let mut starts = Vec::with_capacity(n);
        for w in &members {
            let count = w.batch.lock().len() as u64;
            starts.push(seq);
            seq += count;
        }
        if seq - 1 > MAX_SEQUENCE {
            return Err(Error::InvalidArgument("sequence numbers exhausted".into()));
        }
        self.log_group(q, &members, &starts)?;
        q.last_seq = seq - 1;
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
            self.insert_batch(
                &run,
                &members[0].batch.lock(),
                starts[0],
                Inserters::Concurrent,
            );
            group.wait_all();
        });
        self.visible_seq.store(last_seq, Ordering::Release);
        Ok(())
    }

    /// A group of one: the leader's batch alone, without the group
    /// bookkeeping (no allocation).
    fn commit_alone(&self, q: &mut MutexGuard<'_, WriteQueue>, run: Arc<MemRun>) -> Result<()> {
        let me = Arc::clone(&q.queue[0]);
        let mut batch = me.batch.lock();
        self.commit_one(q, &run, &mut batch, me.sync, me.no_wal)
    }

    /// Stamps, logs and inserts one batch whose writer is the only one
    /// inserting into `run` (a solo commit or a group of one), then
    /// publishes it. The queue lock is released during the insert.
    fn commit_one(
        &self,
        q: &mut MutexGuard<'_, WriteQueue>,
        run: &MemRun,
        batch: &mut WriteBatch,
        sync: bool,
        no_wal: bool,
    ) -> Result<()> {
        let first_seq = q.last_seq + 1;
        let last_seq = q.last_seq + batch.len() as u64;
        if last_seq > MAX_SEQUENCE {
            return Err(Error::InvalidArgument("sequence numbers exhausted".into()));
        }
        let logged = self.log_batch(q, batch, first_seq, no_wal)?;
        self.finish_log(q, logged, sync && logged > 0)?;
        q.last_seq = last_seq;
        MutexGuard::unlocked(q, || {
            self.insert_batch(run, batch, first_seq, Inserters::Alone)
        });
        self.visible_seq.store(last_seq, Ordering::Release);
        Ok(())
    }

    /// Appends the group's batches to the WAL and hands them to the OS.
    fn log_group(&self, q: &mut WriteQueue, members: &[Arc<Writer>], starts: &[u64]) -> Result<()> {
        let mut logged = 0u64;
        let mut sync = false;
        for (w, &start) in members.iter().zip(starts) {
            let bytes = self.log_batch(q, &mut w.batch.lock(), start, w.no_wal)?;
            logged += bytes;
            sync |= w.sync && bytes > 0;
        }
        self.finish_log(q, logged, sync)
    }

    /// Stamps `batch` with its first sequence number and appends it to the
    /// WAL unless `no_wal`; returns the bytes logged.
    fn log_batch(
        &self,
        q: &mut WriteQueue,
        batch: &mut WriteBatch,
        first_seq: u64,
        no_wal: bool,
    ) -> Result<u64> {
        self.counters
            .user_bytes_written
            .add(batch.encoded_size() as u64);
        let payload = batch.seal(first_seq);
        match (&mut q.wal, no_wal) {
            (Some(wal), false) => {
                wal.append(payload)?;
                Ok(payload.len() as u64)
            }
            _ => {
                self.unlogged.store(true, Ordering::Release);
                Ok(0)
            }
        }
    }

    /// Hands the records just appended to the operating system, or makes
    /// them durable if `sync`.
    fn finish_log(&self, q: &mut WriteQueue, logged: u64, sync: bool) -> Result<()> {
        if let Some(wal) = &mut q.wal {
            if sync {
                wal.sync()?;
            } else if logged > 0 {
                wal.flush()?;
            }
        }
        self.counters
            .wal_bytes_written
            .fetch_add(logged, Ordering::Relaxed);
        Ok(())
    }

    /// Inserts `batch` into `run`; `who` says whether other members of a
    /// group insert into the run at the same time.
    fn insert_batch(&self, run: &MemRun, batch: &WriteBatch, first_seq: u64, who: Inserters) {
        let used_tls = IKEY_BUF.try_with(|buf| {
            Self::insert_ops(run, batch, first_seq, who, &mut buf.borrow_mut());
        });
        if used_tls.is_err() {
            Self::insert_ops(run, batch, first_seq, who, &mut Vec::new());
        }
    }

    fn insert_ops(
        run: &MemRun,
        batch: &WriteBatch,
        first_seq: u64,
        who: Inserters,
        buf: &mut Vec<u8>,
    ) {
        for (seq, op) in (first_seq..).zip(batch.ops()) {
            let Ok(op) = op else { break };
            buf.clear();
            match op {
                Op::Put(k, v) => {
                    key::encode_into(buf, k, seq, Kind::Value);
                    run.insert(buf, v, hash_key(k), seq, who);
                }
                Op::Delete(k) => {
                    key::encode_into(buf, k, seq, Kind::Delete);
                    run.insert(buf, &[], hash_key(k), seq, who);
                }
                Op::DeleteRange(start, end) => run.insert_range_del(start, end, seq),
            }
        }
        if buf.capacity() > SPARE_BATCH_MAX {
            *buf = Vec::new();
        }
    }

    /// Ensures the active run has room, sealing it when full (or when
    /// `force` and it holds anything). Stalls, counted, while every memory
    /// run is full and the flush is behind. Returns the run to write into.
    fn make_room(&self, q: &mut WriteQueue, force: bool) -> Result<Arc<MemRun>> {
        let mut stalled: Option<Instant> = None;
        let result = loop {
            self.check_bg_error()?;
            let version = self.current.load();
            let active = version.active();
            let full = active.is_full();
            if !(full || force && !active.is_empty()) {
                break Ok(Arc::clone(active));
            }
            if version.mems.len() < self.opts.memory_runs {
                self.seal_active(q, force)?;
                if force {
                    break Ok(Arc::clone(self.current.load().active()));
                }
                continue;
            }
            // Every run is full: wait for a flush.
            stalled.get_or_insert_with(Instant::now);
            if self.opts.background_merges {
                self.wait_for_flush(version.mems.len());
            } else {
                self.flush_immutables()?;
            }
        };
        if let Some(start) = stalled {
            self.counters.stall_count.fetch_add(1, Ordering::Relaxed);
            self.counters
                .stall_micros
                .fetch_add(start.elapsed().as_micros() as u64, Ordering::Relaxed);
        }
        result
    }

    fn wait_for_flush(&self, mems_before: usize) {
        let mut bg = self.bg.lock();
        self.bg_work.notify_all();
        while bg.error.is_none() && !bg.shutdown && self.current.load().mems.len() >= mems_before {
            self.bg_done.wait(&mut bg);
        }
    }

    /// Seals the active run and starts a new one. Only the leader calls
    /// this, so no group is inserting into the old run.
    ///
    /// The new run keeps writing to the same WAL until the log holds
    /// `run_size` bytes (or on `force`, a flush): then a new log starts.
    /// Small entries fill a run by entry count long before its WAL reaches
    /// that size, and starting a log costs several journal commits (create,
    /// directory sync, retiring the old log), so logs span several runs; a
    /// log is deleted once every run in it is flushed.
    fn seal_active(&self, q: &mut WriteQueue, force: bool) -> Result<()> {
        let keep_log = !force
            && q.wal
                .as_ref()
                .is_some_and(|w| w.len() < self.opts.run_size as u64);
        let wal_number = if keep_log {
            self.current.load().active().wal_number
        } else if q.wal.is_some() {
            // Sync the old log first: if it failed earlier (poisoned, maybe
            // with a torn record), this fails too and no newer log is ever
            // started behind the damage (recovery would refuse it, and the
            // sequence number of the failed write would be reused).
            if let Some(old) = q.wal.as_mut() {
                old.sync()?;
            }
            let number = self.new_file_number();
            let path = self.path_of(&manifest::wal_file_name(number));
            let new_wal =
                LogWriter::create(&self.opts.fs, &path, number, self.opts.run_size as u64)?;
            if let Some(old) = q.wal.replace(new_wal) {
                // Make the old log durable (and trimmed) before newer writes
                // can be, so a power loss can never leave a gap in the middle.
                old.finish()?;
            }
            number
        } else {
            0
        };
        let run = Arc::new(MemRun::new(&self.opts, wal_number));
        let _v = self.version_lock.lock();
        let mut next = (*self.current.load_full()).clone();
        next.mems[0].seal();
        next.mems.insert(0, run);
        let immutables = next.mems.len() - 1;
        self.current.store(Arc::new(next));
        drop(_v);
        if immutables >= self.opts.runs_per_flush() {
            self.bg_work.notify_all();
            if !self.opts.background_merges {
                self.flush_immutables()?;
                self.merge_levels()?;
            }
        }
        Ok(())
    }

    /// Syncs the WAL (for `Db::sync`).
    pub(crate) fn sync_wal(&self) -> Result<()> {
        let mut q = self.writes.lock();
        match &mut q.wal {
            Some(wal) => wal.sync(),
            None => Ok(()),
        }
    }

    /// Syncs and trims the WAL for a clean close; later writes (through a
    /// surviving snapshot's handle there are none) would fail.
    pub(crate) fn close_wal(&self) -> Result<()> {
        let mut q = self.writes.lock();
        match q.wal.take() {
            Some(wal) => wal.finish(),
            None => Ok(()),
        }
    }
}

/// How many queued writers (from the front) the leader takes.
fn group_size(queue: &VecDeque<Arc<Writer>>) -> usize {
    let leader = &queue[0];
    let mut bytes = leader.batch.lock().encoded_size();
    let mut n = 1;
    for w in queue.iter().skip(1) {
        if w.rotate || w.no_wal != leader.no_wal {
            break;
        }
        bytes += w.batch.lock().encoded_size();
        if bytes > MAX_GROUP_BYTES {
            break;
        }
        n += 1;
    }
    n
}

impl super::Db {
    /// Sets `key` to `value`. Durable as described on [`crate::Options`].
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<()> {
        self.put_opt(key, value, &WriteOptions::default())
    }

    /// [`put`](Self::put) with per-write options.
    pub fn put_opt(&self, key: &[u8], value: &[u8], opts: &WriteOptions) -> Result<()> {
        let mut batch = take_batch();
        batch.put(key, value);
        self.shared.write(batch, opts)
    }

    /// Deletes every key `k` with `start <= k < end` in O(1): one range
    /// tombstone, logged and applied atomically like any write. Requires
    /// `start < end`.
    pub fn delete_range(&self, start: &[u8], end: &[u8]) -> Result<()> {
        let mut batch = WriteBatch::new();
        batch.delete_range(start, end);
        self.shared.write(batch, &WriteOptions::default())
    }

    /// Deletes `key` (writes a tombstone).
    pub fn delete(&self, key: &[u8]) -> Result<()> {
        self.delete_opt(key, &WriteOptions::default())
    }

    /// [`delete`](Self::delete) with per-write options.
    pub fn delete_opt(&self, key: &[u8], opts: &WriteOptions) -> Result<()> {
        let mut batch = take_batch();
        batch.delete(key);
        self.shared.write(batch, opts)
    }

    /// Applies `batch` atomically: after a crash, all of it or none of it.
    pub fn write(&self, batch: WriteBatch) -> Result<()> {
        self.shared.write(batch, &WriteOptions::default())
    }

    /// [`write`](Self::write) with per-write options.
    pub fn write_opt(&self, batch: WriteBatch, opts: &WriteOptions) -> Result<()> {
        self.shared.write(batch, opts)
    }
}
