//! Model-based fuzzing of the Db API against a BTreeMap: puts, deletes,
//! range deletes, batches, reads, scans in both directions, snapshots,
//! flushes, compactions and reopens, on the in-memory file system with tiny
//! runs so every operation sequence reaches flushes and merges.
#![no_main]

use std::collections::BTreeMap;
use std::path::Path;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use slsm::fs::FaultFs;
use slsm::{Db, Options, WriteBatch};

#[derive(Arbitrary, Debug)]
enum BatchOp {
    Put(u8, u16),
    Delete(u8),
    DeleteRange(u8, u8),
}

#[derive(Arbitrary, Debug)]
enum Op {
    Put(u8, u16),
    Delete(u8),
    DeleteRange(u8, u8),
    Batch(Vec<BatchOp>),
    Get(u8),
    Scan { from: u8, to: u8, reverse: bool },
    Snapshot,
    ReadSnapshot(u8),
    Flush,
    Compact,
    Reopen,
}

fn key(k: u8) -> Vec<u8> {
    format!("k{k:03}").into_bytes()
}

fn value(k: u8, v: u16) -> Vec<u8> {
    let mut out = format!("v{k}-{v}-").into_bytes();
    out.resize(out.len() + (v as usize % 200), b'x');
    out
}

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn apply(model: &mut Model, op: &BatchOp) {
    match *op {
        BatchOp::Put(k, v) => {
            model.insert(key(k), value(k, v));
        }
        BatchOp::Delete(k) => {
            model.remove(&key(k));
        }
        BatchOp::DeleteRange(a, b) if a < b => {
            model.retain(|k, _| !(k >= &key(a) && k < &key(b)));
        }
        BatchOp::DeleteRange(..) => {}
    }
}

fuzz_target!(|ops: Vec<Op>| {
    let fs = FaultFs::new(0);
    let dir = Path::new("/db");
    let opts = || Options {
        fs: fs.as_dyn(),
        run_size: 4096,
        memory_runs: 2,
        level_runs: 2,
        fence_entries: 4,
        background_merges: false,
        ..Options::default()
    };
    let mut db = Some(Db::open(dir, opts()).unwrap());
    let mut model = Model::new();
    let mut snapshots: Vec<(slsm::Snapshot, Model)> = Vec::new();
    for op in ops.iter().take(300) {
        let d = db.as_ref().unwrap();
        match op {
            Op::Put(k, v) => {
                d.put(&key(*k), &value(*k, *v)).unwrap();
                apply(&mut model, &BatchOp::Put(*k, *v));
            }
            Op::Delete(k) => {
                d.delete(&key(*k)).unwrap();
                apply(&mut model, &BatchOp::Delete(*k));
            }
            Op::DeleteRange(a, b) => {
                let r = d.delete_range(&key(*a), &key(*b));
                if a < b {
                    r.unwrap();
                    apply(&mut model, &BatchOp::DeleteRange(*a, *b));
                } else {
                    assert!(r.is_err(), "empty range must be rejected");
                }
            }
            Op::Batch(list) => {
                let mut b = WriteBatch::new();
                let mut m = model.clone();
                let mut valid = true;
                for bo in list.iter().take(20) {
                    match *bo {
                        BatchOp::Put(k, v) => {
                            b.put(&key(k), &value(k, v));
                        }
                        BatchOp::Delete(k) => {
                            b.delete(&key(k));
                        }
                        BatchOp::DeleteRange(x, y) => {
                            valid &= x < y;
                            b.delete_range(&key(x), &key(y));
                        }
                    }
                    apply(&mut m, bo);
                }
                let r = d.write(b);
                if valid {
                    r.unwrap();
                    model = m;
                } else {
                    assert!(r.is_err(), "a batch with an empty range must be rejected");
                }
            }
            Op::Get(k) => {
                let got = d.get(&key(*k)).unwrap().map(|s| s.to_vec());
                assert_eq!(got.as_ref(), model.get(&key(*k)), "get {k}");
            }
            Op::Scan { from, to, reverse } => {
                let (lo, hi) = (key(*from.min(to)), key(*from.max(to)));
                let want: Vec<_> = model
                    .range(lo.clone()..hi.clone())
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                let it = d.range(&lo[..]..&hi[..]);
                let mut got: Vec<_> = if *reverse {
                    it.rev()
                        .map(|r| r.unwrap())
                        .map(|(k, v)| (k.to_vec(), v.to_vec()))
                        .collect()
                } else {
                    it.map(|r| r.unwrap())
                        .map(|(k, v)| (k.to_vec(), v.to_vec()))
                        .collect()
                };
                if *reverse {
                    got.reverse();
                }
                assert_eq!(got, want, "scan {lo:?}..{hi:?} reverse={reverse}");
            }
            Op::Snapshot => {
                if snapshots.len() < 4 {
                    snapshots.push((d.snapshot(), model.clone()));
                }
            }
            Op::ReadSnapshot(k) => {
                if let Some((s, m)) = snapshots.last() {
                    let got = s.get(&key(*k)).unwrap().map(|s| s.to_vec());
                    assert_eq!(got.as_ref(), m.get(&key(*k)), "snapshot get {k}");
                }
            }
            Op::Flush => d.flush().unwrap(),
            Op::Compact => d.compact().unwrap(),
            Op::Reopen => {
                snapshots.clear();
                drop(db.take());
                db = Some(Db::open(dir, opts()).unwrap());
            }
        }
    }
    let d = db.as_ref().unwrap();
    d.check().unwrap();
    let got: Model = d
        .iter()
        .map(|r| r.unwrap())
        .map(|(k, v)| (k.to_vec(), v.to_vec()))
        .collect();
    assert_eq!(got, model, "final contents");
});
