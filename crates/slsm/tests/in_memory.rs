//! `Options::in_memory`: the whole engine on an in-memory file system.
//! Flushes and merges happen as on disk, nothing reaches the disk, and a
//! clone of the options reopens the same data.

use std::collections::BTreeMap;

use proptest::prelude::*;
use slsm::{Db, Options};

fn small() -> Options {
    Options {
        run_size: 8 << 10,
        memory_runs: 3,
        level_runs: 2,
        fence_entries: 4,
        ..Options::default()
    }
    .in_memory()
}

#[derive(Debug, Clone)]
enum Op {
    Put(u16, u8),
    Delete(u16),
    DeleteRange(u16, u16),
    Reopen,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0..600u16, any::<u8>()).prop_map(|(k, v)| Op::Put(k, v)),
        2 => (0..600u16).prop_map(Op::Delete),
        1 => (0..600u16, 1..40u16).prop_map(|(a, n)| Op::DeleteRange(a, a + n)),
        1 => Just(Op::Reopen),
    ]
}

fn key(k: u16) -> Vec<u8> {
    format!("k{k:04}").into_bytes()
}

fn value(k: u16, v: u8) -> Vec<u8> {
    vec![v; 20 + usize::from(k % 50)]
}

fn check(db: &Db, model: &BTreeMap<Vec<u8>, Vec<u8>>) {
    let all: Vec<(Vec<u8>, Vec<u8>)> = db
        .range::<&[u8], _>(..)
        .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).unwrap())
        .collect();
    let want: Vec<(Vec<u8>, Vec<u8>)> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(all, want);
    for k in (0..600u16).step_by(7) {
        assert_eq!(
            db.get(key(k)).unwrap().map(|s| s.to_vec()),
            model.get(&key(k)).cloned()
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn matches_a_btreemap_across_reopen(ops in proptest::collection::vec(op(), 1..1500)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let opts = small();
        let mut db = Db::open(&path, opts.clone()).unwrap();
        let mut model = BTreeMap::new();
        for op in ops {
            match op {
                Op::Put(k, v) => {
                    db.put(key(k), value(k, v)).unwrap();
                    model.insert(key(k), value(k, v));
                }
                Op::Delete(k) => {
                    db.delete(key(k)).unwrap();
                    model.remove(&key(k));
                }
                Op::DeleteRange(a, b) => {
                    db.delete_range(key(a), key(b)).unwrap();
                    model.retain(|k, _| k.as_slice() < key(a).as_slice() || k.as_slice() >= key(b).as_slice());
                }
                Op::Reopen => {
                    drop(db);
                    db = Db::open(&path, opts.clone()).unwrap();
                }
            }
        }
        check(&db, &model);
        drop(db);
        let db = Db::open(&path, opts).unwrap();
        check(&db, &model);
        prop_assert!(!path.exists(), "an in-memory database wrote to the disk");
    }
}

#[test]
fn flushes_and_merges_stay_in_memory_and_fresh_options_start_empty() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let opts = small();
    let db = Db::open(&path, opts.clone()).unwrap();
    for i in 0..20_000u32 {
        db.put(format!("key{i:06}").as_bytes(), [7u8; 40]).unwrap();
    }
    db.flush().unwrap();
    let stats = db.stats();
    assert!(stats.flushes > 0 && stats.merges > 0, "{stats}");
    assert!(db.check().is_ok());
    assert!(!path.exists());
    // A second database on the same file system is locked out, as on disk.
    assert!(Db::open(&path, opts.clone()).is_err());
    drop(db);
    let fresh = Db::open(&path, small()).unwrap();
    assert!(fresh.get(b"key000001").unwrap().is_none());
    let again = Db::open(dir.path().join("other"), opts).unwrap();
    assert!(again.get(b"key000001").unwrap().is_none());
}
