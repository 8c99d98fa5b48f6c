//! The memory budget holds: a database many times larger than
//! `Options::memory_budget`, written, read at random, scanned and reopened,
//! never has more accounted memory than the budget, and still answers every
//! read from the model.

use std::collections::BTreeMap;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use slsm::{Codec, Compression, Db, MemoryUsage, Options};

const BUDGET: usize = 4 << 20;
const KEYS: u32 = 120_000;

fn options() -> Options {
    Options {
        memory_budget: BUDGET,
        compression: Compression::all(Codec::Lz4),
        ..Options::default()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!(
        "user{:010}",
        (i as u64).wrapping_mul(2_654_435_761) % 10_000_000_000
    )
    .into_bytes()
}

/// 200 bytes that LZ4 shrinks about in half: the data on disk is still
/// several times the budget.
fn value(i: u32, round: u32) -> Vec<u8> {
    let mut rng = StdRng::seed_from_u64(((round as u64) << 32) | i as u64);
    (0..200)
        .map(|j| {
            if j % 2 == 0 {
                rng.gen_range(b'a'..=b'z')
            } else {
                b'-'
            }
        })
        .collect()
}

fn assert_within_budget(usage: MemoryUsage, when: &str) {
    assert!(
        usage.total() <= BUDGET as u64,
        "{when}: {} bytes accounted, budget {BUDGET}: {usage:?}",
        usage.total()
    );
    assert!(
        usage.memory_runs <= usage.memory_runs_limit,
        "{when}: memory runs past their share: {usage:?}"
    );
}

fn disk_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum()
}

#[test]
fn accounted_memory_never_exceeds_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let mut model = BTreeMap::new();
    {
        let db = Db::open(dir.path(), options()).unwrap();
        for round in 0..2 {
            for i in 0..KEYS {
                let v = value(i, round);
                db.put(key(i), &v).unwrap();
                model.insert(key(i), v);
                if i.is_multiple_of(5_000) {
                    assert_within_budget(db.memory_usage(), "while writing");
                }
            }
        }
        db.wait_for_compaction().unwrap();
        assert_within_budget(db.memory_usage(), "after the merges");
    }
    let on_disk = disk_bytes(dir.path());
    assert!(
        on_disk > 4 * BUDGET as u64,
        "the database ({on_disk} bytes) must be several times the budget"
    );

    let db = Db::open(dir.path(), options()).unwrap();
    assert_within_budget(db.memory_usage(), "after reopening");
    let mut rng = StdRng::seed_from_u64(7);
    for n in 0..20_000u32 {
        let i = rng.gen_range(0..KEYS + KEYS / 4);
        let k = key(i);
        assert_eq!(
            db.get(&k).unwrap().map(|v| v.to_vec()),
            model.get(&k).cloned(),
            "key {i}"
        );
        if n.is_multiple_of(1_000) {
            assert_within_budget(db.memory_usage(), "while reading");
        }
    }
    let usage = db.memory_usage();
    assert!(
        usage.cache.usage > 0,
        "reads went through the cache: {usage:?}"
    );
    assert!(usage.cache.hits + usage.cache.misses > 0);

    let mut scanned = 0usize;
    let mut expected = model.iter();
    for item in db.iter() {
        let (k, v) = item.unwrap();
        let (mk, mv) = expected.next().expect("scan longer than the model");
        assert_eq!((&k[..], &v[..]), (&mk[..], &mv[..]));
        scanned += 1;
        if scanned.is_multiple_of(10_000) {
            assert_within_budget(db.memory_usage(), "while scanning");
        }
    }
    assert_eq!(scanned, model.len());
    assert_within_budget(db.memory_usage(), "after the scan");
}
