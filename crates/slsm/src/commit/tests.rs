//! The commit protocol alone (`queue.rs`), over fake stages that record
//! what they are asked: sequence numbers follow the queue, a publish never
//! shows a write that is not applied, groups form and keep their bounds, a
//! failed log write fails its whole group and leaves nothing behind, and
//! sequence numbers that run out are an error before anything is logged.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use super::queue::Committer;
use super::stages::{Durability, Stages};
use crate::batch::WriteBatch;
use crate::error::{Error, Result};
use crate::key::MAX_SEQUENCE;
use crate::memtable::Inserters;

/// What the fake log was handed: each group's records, and how it ended.
#[derive(Default)]
struct FakeLog {
    /// `(first_seq, ops)` of every record appended, in order.
    records: Vec<(u64, u64)>,
    /// Records at each flush or sync: the groups' boundaries.
    handed_over: Vec<usize>,
    /// Fail the append of this record (counted from 0), once.
    fail_record: Option<usize>,
}

#[derive(Default)]
struct FakeRun {
    /// Sequence number -> applied.
    applied: Mutex<BTreeMap<u64, ()>>,
}

#[derive(Default)]
struct Fake {
    run: Arc<FakeRun>,
    visible: AtomicU64,
    /// A publish showed a write not yet applied, or went backwards.
    violated: AtomicBool,
    /// The next uncontended insert holds (`holding`) until `released`, so
    /// that writers queue behind it.
    hold_alone: AtomicBool,
    holding: AtomicBool,
    released: AtomicBool,
    syncs: AtomicUsize,
}

impl Stages for Fake {
    type Log = FakeLog;
    type Run = FakeRun;
    type PendingSync = usize;

    fn make_room(&self, _log: &mut FakeLog, _seal: bool, _bytes: usize) -> Result<Arc<FakeRun>> {
        Ok(Arc::clone(&self.run))
    }

    fn log_batch(
        &self,
        log: &mut FakeLog,
        batch: &mut WriteBatch,
        first: u64,
        no_wal: bool,
    ) -> Result<u64> {
        if no_wal {
            return Ok(0);
        }
        if log.fail_record == Some(log.records.len()) {
            log.fail_record = None;
            return Err(Error::io(
                std::path::Path::new("fake log"),
                std::io::Error::other("injected"),
            ));
        }
        log.records.push((first, batch.len() as u64));
        Ok(100)
    }

    fn flush_log(&self, log: &mut FakeLog) -> Result<()> {
        log.handed_over.push(log.records.len());
        Ok(())
    }

    fn begin_sync(&self, log: &mut FakeLog) -> Result<Option<usize>> {
        log.handed_over.push(log.records.len());
        Ok(Some(log.records.len()))
    }

    fn run_sync(&self, _pending: &usize) -> std::io::Result<()> {
        self.syncs.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    fn end_sync(
        &self,
        _log: &mut FakeLog,
        _pending: usize,
        outcome: std::io::Result<()>,
    ) -> Result<()> {
        outcome.map_err(|e| Error::io(std::path::Path::new("fake log"), e))
    }

    fn count_logged(&self, _bytes: u64) {}

    fn apply(&self, run: &FakeRun, batch: &WriteBatch, first: u64, inserters: Inserters) {
        if inserters == Inserters::Alone && self.hold_alone.swap(false, Ordering::AcqRel) {
            self.holding.store(true, Ordering::Release);
            while !self.released.load(Ordering::Acquire) {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        let mut applied = run.applied.lock();
        for seq in first..first + batch.len() as u64 {
            applied.insert(seq, ());
        }
    }

    fn publish(&self, last: u64) {
        let applied = self.run.applied.lock();
        let before = self.visible.swap(last, Ordering::AcqRel);
        let all_applied = (before + 1..=last).all(|s| applied.contains_key(&s));
        if last < before || !all_applied {
            self.violated.store(true, Ordering::Relaxed);
        }
    }
}

fn batch(ops: usize, value_len: usize) -> WriteBatch {
    let mut b = WriteBatch::new();
    for i in 0..ops {
        b.put(format!("k{i}"), vec![b'v'; value_len]);
    }
    b
}

const PLAIN: Durability = Durability {
    sync: false,
    no_wal: false,
};

fn committer(last_seq: u64) -> Arc<Committer<Fake>> {
    Arc::new(Committer::new(
        Fake::default(),
        last_seq,
        FakeLog::default(),
    ))
}

/// One writer commits alone and holds its insert until `others` have
/// queued behind it (each after the one before), so they form one group.
/// Returns every writer's result, the first one's first.
fn staged_group(
    c: &Arc<Committer<Fake>>,
    others: Vec<(WriteBatch, Durability)>,
) -> Vec<Result<()>> {
    let env = c.env();
    env.released.store(false, Ordering::Release);
    env.holding.store(false, Ordering::Release);
    env.hold_alone.store(true, Ordering::Release);
    let first = {
        let c = Arc::clone(c);
        std::thread::spawn(move || c.commit(batch(1, 1), PLAIN, &mut || {}))
    };
    while !env.holding.load(Ordering::Acquire) {
        std::thread::yield_now();
    }
    let rest: Vec<_> = others
        .into_iter()
        .map(|(b, d)| {
            let c = Arc::clone(c);
            let placed = Arc::new(AtomicBool::new(false));
            let seen = Arc::clone(&placed);
            let h = std::thread::spawn(move || {
                c.commit(b, d, &mut || seen.store(true, Ordering::Relaxed))
            });
            // `placed` runs once the writer is in line behind the first.
            while !placed.load(Ordering::Relaxed) {
                std::thread::yield_now();
            }
            h
        })
        .collect::<Vec<_>>();
    env.released.store(true, Ordering::Release);
    std::iter::once(first)
        .chain(rest)
        .map(|h| h.join().unwrap())
        .collect()
}

#[test]
fn sequence_numbers_follow_the_queue_and_a_publish_shows_only_applied_writes() {
    let c = committer(0);
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let c = Arc::clone(&c);
            std::thread::spawn(move || {
                for i in 0..300 {
                    let d = Durability {
                        sync: (t + i) % 7 == 0,
                        no_wal: false,
                    };
                    c.commit(batch(1 + (i % 3), 10), d, &mut || {}).unwrap();
                }
            })
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().unwrap());
    let env = c.env();
    assert!(
        !env.violated.load(Ordering::Relaxed),
        "a publish showed an unapplied write"
    );
    let q = c.lock();
    let total: u64 = q.log.records.iter().map(|r| r.1).sum();
    assert_eq!(q.last_seq, total);
    assert_eq!(env.visible.load(Ordering::Relaxed), total);
    let mut next = 1;
    for &(first, ops) in &q.log.records {
        assert_eq!(
            first, next,
            "records are logged in sequence order, without gaps"
        );
        next += ops;
    }
    let applied: Vec<u64> = env.run.applied.lock().keys().copied().collect();
    assert_eq!(
        applied,
        (1..=total).collect::<Vec<_>>(),
        "every logged write applied once"
    );
    assert!(env.syncs.load(Ordering::Relaxed) > 0);
}

#[test]
fn writers_arriving_during_a_commit_form_one_group() {
    let c = committer(0);
    let results = staged_group(&c, (0..4).map(|_| (batch(2, 10), PLAIN)).collect());
    assert!(results.iter().all(|r| r.is_ok()));
    let q = c.lock();
    // The first commit, then one group of the four behind it.
    assert_eq!(
        q.log.handed_over,
        vec![1, 5],
        "groups: {:?}",
        q.log.handed_over
    );
    assert_eq!(q.last_seq, 9);
    assert!(!c.env().violated.load(Ordering::Relaxed));
}

#[test]
fn a_group_stops_at_its_byte_bound_and_at_a_change_of_log_setting() {
    let c = committer(0);
    let big = || (batch(1, 600 << 10), PLAIN);
    let unlogged = Durability {
        sync: false,
        no_wal: true,
    };
    let others = vec![
        big(),
        big(),
        (batch(1, 10), unlogged),
        (batch(1, 10), PLAIN),
    ];
    let results = staged_group(&c, others);
    assert!(results.iter().all(|r| r.is_ok()));
    let q = c.lock();
    // 1 MiB holds one 600 KiB batch: each leads its own group; the
    // unlogged write leads one of its own (nothing logged); the last alone.
    assert_eq!(
        q.log.handed_over,
        vec![1, 2, 3, 4],
        "groups: {:?}",
        q.log.handed_over
    );
    assert_eq!(q.last_seq, 5);
}

#[test]
fn a_failed_log_write_fails_its_whole_group_and_leaves_nothing_visible() {
    let c = committer(0);
    c.lock().log.fail_record = Some(3); // the third member of the group
    let results = staged_group(&c, (0..4).map(|_| (batch(1, 10), PLAIN)).collect());
    assert!(
        results[0].is_ok(),
        "the commit before the group is unaffected"
    );
    assert!(results[1..].iter().all(|r| r.is_err()), "{results:?}");
    let env = c.env();
    assert_eq!(env.visible.load(Ordering::Relaxed), 1);
    assert_eq!(
        env.run.applied.lock().len(),
        1,
        "no member of the failed group is applied"
    );
    assert_eq!(
        c.lock().last_seq,
        1,
        "the group's sequence numbers are not spent"
    );
    c.commit(batch(2, 10), PLAIN, &mut || {}).unwrap();
    assert_eq!(
        env.visible.load(Ordering::Relaxed),
        3,
        "the next write takes them"
    );
    assert!(!env.violated.load(Ordering::Relaxed));
}

#[test]
fn sequence_numbers_that_run_out_are_an_error_before_anything_is_logged() {
    let c = committer(MAX_SEQUENCE - 2);
    c.commit(batch(2, 1), PLAIN, &mut || {}).unwrap();
    assert_eq!(c.env().visible.load(Ordering::Relaxed), MAX_SEQUENCE);
    let err = c.commit(batch(1, 1), PLAIN, &mut || {}).unwrap_err();
    assert!(
        matches!(err, Error::InvalidArgument(ref m) if m.contains("exhausted")),
        "{err}"
    );
    // The same in a group.
    let c = committer(MAX_SEQUENCE - 3);
    let results = staged_group(&c, vec![(batch(1, 1), PLAIN), (batch(2, 1), PLAIN)]);
    assert!(results[0].is_ok());
    assert!(
        results[1..]
            .iter()
            .all(|r| matches!(r, Err(Error::InvalidArgument(_)))),
        "{results:?}"
    );
    assert_eq!(c.lock().log.records.len(), 1, "the group logged nothing");
    assert_eq!(c.env().visible.load(Ordering::Relaxed), MAX_SEQUENCE - 2);
}
