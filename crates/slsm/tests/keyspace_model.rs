//! Model-based property test of keyspaces, batches across them,
//! transactions and drops, against one `BTreeMap` per keyspace, with tiny
//! runs so flushes and merges happen, across reopen.

mod common;

use std::collections::BTreeMap;

use proptest::prelude::*;
use slsm::{Db, Keyspace, WriteBatch};

const NAMES: [&str; 3] = ["default", "a", "b"];

#[derive(Clone, Debug)]
enum Write {
    Put(usize, Vec<u8>, Vec<u8>),
    Delete(usize, Vec<u8>),
    DeleteRange(usize, Vec<u8>, Vec<u8>),
}

#[derive(Clone, Debug)]
enum Op {
    One(Write),
    Batch(Vec<Write>),
    /// Writes, then reads every keyspace's range from the ends these
    /// pick (true: the back), before committing.
    Transaction(Vec<Write>, Vec<bool>),
    Get(usize, Vec<u8>),
    Scan(usize),
    Drop(usize),
    /// A bulk load into one keyspace (keys sorted and distinct).
    Ingest(usize, Vec<(Vec<u8>, Vec<u8>)>),
    Flush,
    Reopen,
}

fn key() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec(
            prop::sample::select(vec![0u8, 1, b'a', 0xEF, 0xF0, 0xFF]),
            0..4
        ),
        (0u32..100).prop_map(|i| format!("k{i:02}").into_bytes()),
    ]
}

fn write() -> impl Strategy<Value = Write> {
    prop_oneof![
        6 => (0..3usize, key(), prop::collection::vec(any::<u8>(), 0..30)).prop_map(|(s, k, v)| Write::Put(s, k, v)),
        2 => (0..3usize, key()).prop_map(|(s, k)| Write::Delete(s, k)),
        1 => (0..3usize, key(), key()).prop_filter("start < end", |(_, a, b)| a != b)
            .prop_map(|(s, a, b)| Write::DeleteRange(s, a.clone().min(b.clone()), a.max(b))),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        12 => write().prop_map(Op::One),
        3 => prop::collection::vec(write(), 1..6).prop_map(Op::Batch),
        3 => prop::collection::vec(write().prop_filter("no ranges", |w| !matches!(w, Write::DeleteRange(..))), 1..6)
            .prop_flat_map(|ws| (Just(ws), prop::collection::vec(any::<bool>(), 0..40)))
            .prop_map(|(ws, ends)| Op::Transaction(ws, ends)),
        4 => (0..3usize, key()).prop_map(|(s, k)| Op::Get(s, k)),
        2 => (0..3usize).prop_map(Op::Scan),
        1 => (1..3usize).prop_map(Op::Drop),
        1 => (0..3usize, prop::collection::btree_map(key(), prop::collection::vec(any::<u8>(), 0..30), 1..12))
            .prop_map(|(s, m)| Op::Ingest(s, m.into_iter().collect())),
        1 => Just(Op::Flush),
        1 => Just(Op::Reopen),
    ]
}

type Model = [BTreeMap<Vec<u8>, Vec<u8>>; 3];

fn apply_model(model: &mut Model, w: &Write) {
    match w {
        Write::Put(s, k, v) => {
            model[*s].insert(k.clone(), v.clone());
        }
        Write::Delete(s, k) => {
            model[*s].remove(k);
        }
        Write::DeleteRange(s, a, b) => model[*s].retain(|k, _| k < a || k >= b),
    }
}

fn handles(db: &Db) -> Vec<Keyspace> {
    NAMES.iter().map(|n| db.keyspace(n).unwrap()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn keyspaces_match_the_model(ops in prop::collection::vec(op(), 1..120)) {
        let dir = tempfile::tempdir().unwrap();
        let opts = common::small_options();
        let mut db = Db::open(dir.path(), opts.clone()).unwrap();
        let mut ks = handles(&db);
        let mut model: Model = Default::default();
        for op in &ops {
            match op {
                Op::One(w) => {
                    match w {
                        Write::Put(s, k, v) => ks[*s].put(k, v).unwrap(),
                        Write::Delete(s, k) => ks[*s].delete(k).unwrap(),
                        Write::DeleteRange(s, a, b) => ks[*s].delete_range(a, b).unwrap(),
                    }
                    apply_model(&mut model, w);
                }
                Op::Batch(ws) => {
                    let mut b = WriteBatch::new();
                    for w in ws {
                        match w {
                            Write::Put(s, k, v) => b.put_in(&ks[*s], k, v),
                            Write::Delete(s, k) => b.delete_in(&ks[*s], k),
                            Write::DeleteRange(s, a, c) => b.delete_range_in(&ks[*s], a, c),
                        };
                        apply_model(&mut model, w);
                    }
                    db.write(b).unwrap();
                }
                Op::Transaction(ws, ends) => {
                    let mut t = db.transaction();
                    for w in ws {
                        match w {
                            Write::Put(s, k, v) => t.put_in(&ks[*s], k, v).unwrap(),
                            Write::Delete(s, k) => t.delete_in(&ks[*s], k).unwrap(),
                            Write::DeleteRange(..) => unreachable!(),
                        }
                        apply_model(&mut model, w);
                    }
                    // Reads inside see the transaction's own writes.
                    for (s, m) in model.iter().enumerate() {
                        let got: Vec<(Vec<u8>, Vec<u8>)> = t.range_in::<&[u8], _>(&ks[s], ..).unwrap()
                            .map(|r| { let (k, v) = r.unwrap(); (k.to_vec(), v.to_vec()) }).collect();
                        let want: Vec<(Vec<u8>, Vec<u8>)> = m.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                        prop_assert_eq!(&got, &want, "transaction range of keyspace {}", s);
                        let back: Vec<(Vec<u8>, Vec<u8>)> = t.range_in::<&[u8], _>(&ks[s], ..).unwrap().rev()
                            .map(|r| { let (k, v) = r.unwrap(); (k.to_vec(), v.to_vec()) }).collect();
                        prop_assert_eq!(back, want.iter().rev().cloned().collect::<Vec<_>>(), "descending, keyspace {}", s);
                        // Both ends of one iterator, in the order `ends` picks.
                        let mut it = t.range_in::<&[u8], _>(&ks[s], ..).unwrap();
                        let (mut lo, mut hi) = (0, want.len());
                        for (i, &from_back) in ends.iter().chain(std::iter::repeat(&false)).enumerate() {
                            let got = match from_back {
                                true => it.next_back(),
                                false => it.next(),
                            }.map(|r| { let (k, v) = r.unwrap(); (k.to_vec(), v.to_vec()) });
                            if lo == hi {
                                prop_assert_eq!(got, None, "ends met, step {}", i);
                                break;
                            }
                            let expect = match from_back {
                                true => { hi -= 1; want[hi].clone() }
                                false => { lo += 1; want[lo - 1].clone() }
                            };
                            prop_assert_eq!(got, Some(expect), "step {} from the {}", i, if from_back { "back" } else { "front" });
                        }
                    }
                    t.commit().unwrap();
                }
                Op::Get(s, k) => {
                    prop_assert_eq!(ks[*s].get(k).unwrap().map(|v| v.to_vec()), model[*s].get(k).cloned());
                }
                Op::Scan(s) => {
                    let got: Vec<Vec<u8>> = ks[*s].iter().map(|r| r.unwrap().0.to_vec()).collect();
                    let want: Vec<Vec<u8>> = model[*s].keys().cloned().collect();
                    prop_assert_eq!(&got, &want);
                    let back: Vec<Vec<u8>> = ks[*s].iter().rev().map(|r| r.unwrap().0.to_vec()).collect();
                    prop_assert_eq!(back, want.into_iter().rev().collect::<Vec<_>>());
                }
                Op::Drop(s) => {
                    db.drop_keyspace(NAMES[*s]).unwrap();
                    model[*s].clear();
                    ks[*s] = db.keyspace(NAMES[*s]).unwrap();
                }
                Op::Ingest(s, entries) => {
                    let n = ks[*s].ingest(entries.iter().map(|(k, v)| (k, v))).unwrap();
                    prop_assert_eq!(n, entries.len() as u64);
                    model[*s].extend(entries.iter().cloned());
                }
                Op::Flush => db.flush().unwrap(),
                Op::Reopen => {
                    drop(ks);
                    drop(db);
                    db = Db::open(dir.path(), opts.clone()).unwrap();
                    ks = handles(&db);
                }
            }
        }
        db.compact().unwrap();
        for (s, m) in model.iter().enumerate() {
            let got: BTreeMap<Vec<u8>, Vec<u8>> = ks[s].iter().map(|r| { let (k, v) = r.unwrap(); (k.to_vec(), v.to_vec()) }).collect();
            prop_assert_eq!(&got, m);
        }
    }
}
