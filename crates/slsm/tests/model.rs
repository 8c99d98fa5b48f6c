//! Model-based property test: random operation sequences against a
//! `BTreeMap`, with tiny buffers so that every path (many runs, flushes,
//! level merges, compaction, reopen, snapshots) is exercised.
//!
//! The third test also reopens with other options each time (codecs per
//! level, block and fence sizes, a cache of none to a few blocks, budgets,
//! space bounds, filters, page-cache policy, inline or background merges),
//! as a user who retunes a database does: files written under one set must
//! read and merge under the next. It also checks a read-only open beside
//! the writer, a checkpoint's copy, bulk loads and waiting for compaction.

use std::collections::BTreeMap;
use std::ops::Bound;

use proptest::prelude::*;
use slsm::{Codec, Compression, Db, Options, Snapshot, WriteBatch};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

#[derive(Clone, Debug)]
enum Op {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    DeleteRange(Vec<u8>, Vec<u8>),
    Batch(Vec<BatchOp>),
    Get(Vec<u8>),
    MultiGet(Vec<Vec<u8>>),
    Range(Bound<Vec<u8>>, Bound<Vec<u8>>, Vec<bool>),
    Prefix(Vec<u8>),
    TakeSnapshot,
    SnapshotGet(usize, Vec<u8>),
    SnapshotRange(usize),
    DropSnapshot(usize),
    Flush,
    Compact,
    Reopen,
    /// Reopens with the options this builds.
    ReopenWith(Tuning),
    /// Opens the directory read-only beside the writer; it must see every
    /// write so far.
    ReadOnlyOpen,
    /// Writes a checkpoint and opens it; it must hold every write so far.
    Checkpoint,
    /// Bulk-loads these entries (rejected whole unless strictly ascending).
    Ingest(Vec<(Vec<u8>, Vec<u8>)>),
    WaitForCompaction,
}

/// The options a reopen may change (see the module docs).
#[derive(Clone, Debug)]
struct Tuning {
    codecs: Vec<Codec>,
    bottommost: Option<Codec>,
    block_size: usize,
    fence_entries: usize,
    block_cache_size: Option<usize>,
    memory_budget: usize,
    max_space_amplification: f64,
    bloom_fp_rate: f64,
    memory_runs: usize,
    level_runs: usize,
    os_page_cache: Option<bool>,
    background_merges: bool,
    run_size: usize,
    disable_wal: bool,
    sync_writes: bool,
}

impl Tuning {
    fn options(&self) -> Options {
        Options {
            run_size: self.run_size,
            disable_wal: self.disable_wal,
            sync_writes: self.sync_writes,
            compression: Compression {
                levels: self.codecs.clone(),
                bottommost: self.bottommost,
            },
            block_size: self.block_size,
            fence_entries: self.fence_entries,
            block_cache_size: self.block_cache_size,
            memory_budget: self.memory_budget,
            max_space_amplification: self.max_space_amplification,
            bloom_fp_rate: self.bloom_fp_rate,
            memory_runs: self.memory_runs,
            level_runs: self.level_runs,
            os_page_cache: self.os_page_cache,
            background_merges: self.background_merges,
            ..Options::default()
        }
    }
}

fn codec() -> impl Strategy<Value = Codec> {
    prop::sample::select(vec![
        Codec::None,
        Codec::Lz4,
        Codec::Zstd(1),
        Codec::Zstd(3),
    ])
}

fn tuning() -> impl Strategy<Value = Tuning> {
    let files = (
        prop::collection::vec(codec(), 1..4),
        prop::option::of(codec()),
        prop::sample::select(vec![256usize, 1024, 4096]),
        1usize..9,
        prop::sample::select(vec![Some(0usize), Some(4096), Some(64 << 10), None]),
    );
    let policy = (
        prop::sample::select(vec![4usize << 20, 128 << 20]),
        prop::sample::select(vec![1.2f64, 2.0, f64::INFINITY]),
        prop::sample::select(vec![0.01f64, 0.5]),
        2usize..5,
        2usize..4,
        prop::sample::select(vec![None, Some(false), Some(true)]),
        any::<bool>(),
    );
    let logging = (
        prop::sample::select(vec![4096usize, 64 << 10]),
        prop::bool::weighted(0.25),
        prop::bool::weighted(0.1),
    );
    (files, policy, logging).prop_map(|(f, p, l)| Tuning {
        codecs: f.0,
        bottommost: f.1,
        block_size: f.2,
        fence_entries: f.3,
        block_cache_size: f.4,
        memory_budget: p.0,
        max_space_amplification: p.1,
        bloom_fp_rate: p.2,
        memory_runs: p.3,
        level_runs: p.4,
        os_page_cache: p.5,
        background_merges: p.6,
        run_size: l.0,
        disable_wal: l.1,
        sync_writes: l.2,
    })
}

#[derive(Clone, Debug)]
enum BatchOp {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    DeleteRange(Vec<u8>, Vec<u8>),
}

fn batch_op() -> impl Strategy<Value = BatchOp> {
    prop_oneof![
        6 => (key(), value()).prop_map(|(k, v)| BatchOp::Put(k, v)),
        2 => key().prop_map(BatchOp::Delete),
        1 => (key(), key()).prop_map(|(a, b)| BatchOp::DeleteRange(a.clone().min(b.clone()), a.max(b))),
    ]
}

fn remove_range(model: &mut Model, start: &[u8], end: &[u8]) {
    let doomed: Vec<Vec<u8>> = model
        .range::<[u8], _>((Bound::Included(start), Bound::Excluded(end)))
        .map(|(k, _)| k.clone())
        .collect();
    for k in doomed {
        model.remove(&k);
    }
}

fn key() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        4 => prop::collection::vec(prop::sample::select(vec![0u8, 1, b'a', b'b', 0xFF]), 0..4),
        2 => (0u32..200).prop_map(|i| format!("k{i:03}").into_bytes()),
        1 => (0u32..50).prop_map(|i| format!("long-shared-prefix-{i:02}").into_bytes()),
    ]
}

fn value() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => prop::collection::vec(any::<u8>(), 0..40),
        1 => prop::collection::vec(any::<u8>(), 500..3000),
    ]
}

fn bound() -> impl Strategy<Value = Bound<Vec<u8>>> {
    prop_oneof![
        1 => Just(Bound::Unbounded),
        2 => key().prop_map(Bound::Included),
        2 => key().prop_map(Bound::Excluded),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        30 => (key(), value()).prop_map(|(k, v)| Op::Put(k, v)),
        8 => key().prop_map(Op::Delete),
        3 => (key(), key()).prop_map(|(a, b)| Op::DeleteRange(a.clone().min(b.clone()), a.max(b))),
        5 => prop::collection::vec(batch_op(), 1..8).prop_map(Op::Batch),
        10 => key().prop_map(Op::Get),
        4 => prop::collection::vec(key(), 0..12).prop_map(Op::MultiGet),
        4 => (bound(), bound(), prop::collection::vec(any::<bool>(), 0..30))
            .prop_map(|(l, u, dirs)| Op::Range(l, u, dirs)),
        1 => prop::collection::vec(prop::sample::select(vec![0u8, b'a', b'k', 0xFF]), 0..2)
            .prop_map(Op::Prefix),
        2 => Just(Op::TakeSnapshot),
        3 => (any::<usize>(), key()).prop_map(|(i, k)| Op::SnapshotGet(i, k)),
        1 => any::<usize>().prop_map(Op::SnapshotRange),
        1 => any::<usize>().prop_map(Op::DropSnapshot),
        1 => Just(Op::Flush),
        1 => Just(Op::Compact),
        1 => Just(Op::Reopen),
    ]
}

/// [`op`] plus reopens with other options, read-only opens, checkpoints,
/// bulk loads and waits for compaction.
fn wide_op() -> impl Strategy<Value = Op> {
    let entries = prop::collection::vec((key(), value()), 0..20);
    prop_oneof![
        40 => op(),
        2 => tuning().prop_map(Op::ReopenWith),
        1 => Just(Op::ReadOnlyOpen),
        1 => Just(Op::Checkpoint),
        1 => (entries, any::<bool>()).prop_map(|(mut e, sorted)| {
            if sorted {
                e.sort();
                e.dedup_by(|a, b| a.0 == b.0);
            }
            Op::Ingest(e)
        }),
        1 => Just(Op::WaitForCompaction),
    ]
}

/// Every entry of `db`, in order.
fn contents(db: &Db) -> Vec<(Vec<u8>, Vec<u8>)> {
    db.iter()
        .map(|r| r.unwrap())
        .map(|(k, v)| (k.to_vec(), v.to_vec()))
        .collect()
}

fn model_contents(model: &Model) -> Vec<(Vec<u8>, Vec<u8>)> {
    model.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

fn options(background: bool, runs: usize, level_runs: usize, mu: usize) -> Options {
    Options {
        run_size: 4096,
        memory_runs: runs,
        level_runs,
        fence_entries: mu,
        background_merges: background,
        ..Options::default()
    }
}

fn in_range(k: &[u8], lo: &Bound<Vec<u8>>, hi: &Bound<Vec<u8>>) -> bool {
    let above = match lo {
        Bound::Unbounded => true,
        Bound::Included(l) => k >= l.as_slice(),
        Bound::Excluded(l) => k > l.as_slice(),
    };
    let below = match hi {
        Bound::Unbounded => true,
        Bound::Included(h) => k <= h.as_slice(),
        Bound::Excluded(h) => k < h.as_slice(),
    };
    above && below
}

/// Walks `iter` taking from the front (`true`) or back (`false`) per
/// `dirs`, then drains the front; checks it against the model's entries.
fn check_double_ended(mut iter: slsm::Iter, expect: Vec<(Vec<u8>, Vec<u8>)>, dirs: &[bool]) {
    let (mut lo, mut hi) = (0usize, expect.len());
    for &front in dirs {
        let got = if front { iter.next() } else { iter.next_back() };
        if lo == hi {
            assert!(got.is_none(), "iterator should be exhausted");
            return;
        }
        let (k, v) = got.expect("item").expect("no error");
        let want = if front {
            lo += 1;
            &expect[lo - 1]
        } else {
            hi -= 1;
            &expect[hi]
        };
        assert_eq!((k.to_vec(), v.to_vec()), *want);
    }
    let rest: Vec<_> = iter
        .map(|r| r.unwrap())
        .map(|(k, v)| (k.to_vec(), v.to_vec()))
        .collect();
    assert_eq!(rest, expect[lo..hi].to_vec());
}

fn run(ops: Vec<Op>, mut opts: Options) {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Some(Db::open(dir.path(), opts.clone()).unwrap());
    // Checkpoints go beside the database, in a directory of their own.
    let copies = tempfile::tempdir().unwrap();
    let mut checkpoints = 0;
    let mut model = Model::new();
    let mut snaps: Vec<(Snapshot, Model)> = Vec::new();
    for op in ops {
        let d = db.as_ref().unwrap();
        match op {
            Op::Put(k, v) => {
                d.put(&k, &v).unwrap();
                model.insert(k, v);
            }
            Op::Delete(k) => {
                d.delete(&k).unwrap();
                model.remove(&k);
            }
            Op::DeleteRange(start, end) => {
                if start < end {
                    d.delete_range(&start, &end).unwrap();
                    remove_range(&mut model, &start, &end);
                } else {
                    assert!(d.delete_range(&start, &end).is_err());
                }
            }
            Op::Batch(entries) => {
                let mut b = WriteBatch::new();
                let mut next = model.clone();
                let mut valid = true;
                for op in &entries {
                    match op {
                        BatchOp::Put(k, v) => {
                            b.put(k, v);
                            next.insert(k.clone(), v.clone());
                        }
                        BatchOp::Delete(k) => {
                            b.delete(k);
                            next.remove(k);
                        }
                        BatchOp::DeleteRange(s, e) => {
                            b.delete_range(s, e);
                            valid &= s < e;
                            remove_range(&mut next, s, e);
                        }
                    }
                }
                let result = d.write(b);
                if valid {
                    result.unwrap();
                    model = next;
                } else {
                    assert!(result.is_err(), "an invalid batch must be rejected whole");
                }
            }
            Op::Get(k) => {
                assert_eq!(
                    d.get(&k).unwrap().map(|v| v.to_vec()),
                    model.get(&k).cloned()
                );
            }
            Op::MultiGet(keys) => {
                let refs: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
                let got = d.multi_get(&refs).unwrap();
                for (k, g) in keys.iter().zip(got) {
                    assert_eq!(g.map(|v| v.to_vec()), model.get(k).cloned(), "key {k:?}");
                }
            }
            Op::Range(lo, hi, dirs) => {
                let expect: Vec<_> = model
                    .iter()
                    .filter(|(k, _)| in_range(k, &lo, &hi))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                check_double_ended(d.range((lo, hi)), expect, &dirs);
            }
            Op::Prefix(p) => {
                let got: Vec<_> = d.prefix(&p).map(|r| r.unwrap().0.to_vec()).collect();
                let want: Vec<_> = model
                    .keys()
                    .filter(|k| k.starts_with(&p))
                    .cloned()
                    .collect();
                assert_eq!(got, want);
            }
            Op::TakeSnapshot => snaps.push((d.snapshot(), model.clone())),
            Op::SnapshotGet(i, k) if !snaps.is_empty() => {
                let (s, m) = &snaps[i % snaps.len()];
                assert_eq!(s.get(&k).unwrap().map(|v| v.to_vec()), m.get(&k).cloned());
            }
            Op::SnapshotRange(i) if !snaps.is_empty() => {
                let (s, m) = &snaps[i % snaps.len()];
                let got: Vec<_> = s
                    .range::<&[u8], _>(..)
                    .rev()
                    .map(|r| r.unwrap())
                    .map(|(k, v)| (k.to_vec(), v.to_vec()))
                    .collect();
                let want: Vec<_> = m
                    .iter()
                    .rev()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                assert_eq!(got, want);
            }
            Op::DropSnapshot(i) if !snaps.is_empty() => {
                snaps.swap_remove(i % snaps.len());
            }
            Op::Flush => d.flush().unwrap(),
            Op::Compact => d.compact().unwrap(),
            Op::Reopen => {
                snaps.clear();
                drop(db.take());
                db = Some(Db::open(dir.path(), opts.clone()).unwrap());
            }
            Op::ReopenWith(tuning) => {
                snaps.clear();
                drop(db.take());
                opts = tuning.options();
                db = Some(Db::open(dir.path(), opts.clone()).unwrap());
                assert_eq!(contents(db.as_ref().unwrap()), model_contents(&model));
            }
            Op::ReadOnlyOpen => {
                // Without a log, what is not flushed lives only in the
                // writer's memory; the reader must still open and agree
                // with itself.
                let reader = Db::open_read_only(dir.path(), opts.clone()).unwrap();
                if !opts.disable_wal {
                    assert_eq!(contents(&reader), model_contents(&model));
                }
                reader.check().unwrap();
            }
            Op::Checkpoint => {
                checkpoints += 1;
                let dest = copies.path().join(format!("checkpoint-{checkpoints}"));
                d.checkpoint(&dest).unwrap();
                let copy = Db::open(&dest, opts.clone()).unwrap();
                assert_eq!(contents(&copy), model_contents(&model));
                copy.check().unwrap();
                drop(copy);
                std::fs::remove_dir_all(&dest).unwrap();
            }
            Op::Ingest(entries) => {
                let ascending = entries.windows(2).all(|w| w[0].0 < w[1].0);
                let result = d.ingest(entries.iter().map(|(k, v)| (k, v)));
                if ascending {
                    assert_eq!(result.unwrap(), entries.len() as u64);
                    model.extend(entries);
                } else {
                    assert!(result.is_err(), "keys out of order must be rejected");
                }
            }
            Op::WaitForCompaction => d.wait_for_compaction().unwrap(),
            _ => {}
        }
    }
    let d = db.as_ref().unwrap();
    assert_eq!(contents(d), model_contents(&model));
    d.check().unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn inline_merges_match_model(
        ops in prop::collection::vec(op(), 1..300),
        runs in 2usize..5, level_runs in 2usize..4, mu in 1usize..9,
    ) {
        run(ops, options(false, runs, level_runs, mu));
    }

    #[test]
    fn background_merges_match_model(
        ops in prop::collection::vec(op(), 1..300),
        runs in 2usize..5, level_runs in 2usize..4, mu in 1usize..9,
    ) {
        run(ops, options(true, runs, level_runs, mu));
    }

    #[test]
    fn reopens_with_other_options_match_model(
        ops in prop::collection::vec(wide_op(), 1..300),
        first in tuning(),
    ) {
        run(ops, first.options());
    }
}
