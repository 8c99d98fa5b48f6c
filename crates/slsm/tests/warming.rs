//! A flush's or a merge's new file is warmed into the block cache: a
//! database that was written and is now read finds its blocks cached, and
//! the blocks lookups were using survive the merge that rewrites them.

use slsm::{Codec, Compression, Db, MemoryUsage, Options};

const KEYS: u32 = 40_000;

fn key(i: u32) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

fn value(i: u32) -> Vec<u8> {
    format!("{i:08}-{}", "v".repeat(90)).into_bytes()
}

fn options(cache: usize) -> Options {
    Options {
        block_cache_size: Some(cache),
        compression: Compression::all(Codec::Lz4),
        ..Options::default()
    }
}

/// Reads every `step`-th key from `from` (one key per block or so) and
/// returns the share of the cache's lookups that hit.
fn hit_share(db: &Db, keys: impl Iterator<Item = u32>) -> f64 {
    let before = db.memory_usage().cache;
    for i in keys {
        assert_eq!(db.get(key(i)).unwrap().unwrap(), value(i));
    }
    let after: MemoryUsage = db.memory_usage();
    let hits = after.cache.hits - before.hits;
    let misses = after.cache.misses - before.misses;
    hits as f64 / (hits + misses).max(1) as f64
}

fn load(db: &Db) {
    for i in 0..KEYS {
        db.put(key(i), value(i)).unwrap();
    }
    db.flush().unwrap();
    db.wait_for_compaction().unwrap();
}

#[test]
fn a_database_read_after_its_load_finds_its_blocks_cached() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(64 << 20)).unwrap();
    load(&db);
    // One key in 40: nearly every read is a different block's first.
    let share = hit_share(&db, (0..KEYS).step_by(40));
    assert!(share > 0.9, "{share} of the first reads hit");
}

#[test]
fn a_merge_keeps_the_blocks_lookups_use_cached() {
    let dir = tempfile::tempdir().unwrap();
    // A cache of about a quarter of the data.
    let db = Db::open(dir.path(), options(1 << 20)).unwrap();
    load(&db);
    // The hot keys: the last tenth, which warming in key order from the
    // start would not reach.
    let hot = || (KEYS - KEYS / 10..KEYS).step_by(7);
    for _ in 0..3 {
        hit_share(&db, hot());
    }
    assert!(hit_share(&db, hot()) > 0.9, "the hot set is cached");
    db.compact().unwrap();
    let share = hit_share(&db, hot());
    assert!(share > 0.9, "{share} of the hot reads hit after the merge");
    let usage = db.memory_usage().cache;
    assert!(usage.usage <= 1 << 20, "{usage:?}");
}
