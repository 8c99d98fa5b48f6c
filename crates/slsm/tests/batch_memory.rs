//! Batched lookups over a database larger than its cache keep the
//! process where the cache keeps its blocks: the blocks their reads evict
//! are freed as they go. (Batches that held their epoch guard across their
//! reads held back the collection of every block those reads evicted: the
//! process grew by 120 MB over db_bench's `multireadrandom` of the 5M
//! default set.) Its own test binary: it measures the whole process.
#![cfg(target_os = "linux")]

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use slsm::{Db, Options};

const KEYS: u32 = 300_000;

fn key(i: u32) -> Vec<u8> {
    format!("{i:016}").into_bytes()
}

/// The process's resident memory, in bytes.
fn resident() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib << 10
}

fn batches(db: &Db, rng: &mut StdRng, n: usize) {
    for _ in 0..n {
        let keys: Vec<Vec<u8>> = (0..64).map(|_| key(rng.gen_range(0..KEYS))).collect();
        let found = db.multi_get(&keys).unwrap();
        assert!(found.iter().all(Option::is_some));
    }
}

#[test]
fn batches_over_a_cold_cache_free_what_they_evict() {
    let dir = tempfile::tempdir().unwrap();
    let options = Options {
        memory_budget: 16 << 20,
        ..Options::default()
    };
    let db = Db::open(dir.path(), options).unwrap();
    let value = [7u8; 100];
    for i in 0..KEYS {
        db.put(key(i), value).unwrap();
    }
    db.flush().unwrap();
    let mut rng = StdRng::seed_from_u64(1);
    // The cache fills and the pool's free pages settle first.
    batches(&db, &mut rng, 1_000);
    let before = resident();
    batches(&db, &mut rng, 6_000);
    let grown = resident().saturating_sub(before);
    assert!(
        grown < 8 << 20,
        "the process grew by {grown} bytes over batches that fit a 16 MiB budget"
    );
}
