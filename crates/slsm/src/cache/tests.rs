use super::{Admission, ENTRY_OVERHEAD};
use crate::cache::test_block::{padded, Block};
use proptest::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;

type BlockCache = super::BlockCache<Block>;
type CachedBlocks = super::CachedBlocks<Block>;

/// A block of `pad` bytes of payload that says which it is (its offset).
fn block(tag: u64, pad: usize) -> Arc<Block> {
    padded(tag, pad)
}

fn tag_of(b: &Block) -> u64 {
    b.offset()
}

/// Reads block `i` as a lookup does: from the cache if there (a hit), else
/// made and inserted.
fn read(cache: &BlockCache, file: &Arc<CachedBlocks>, i: usize, pad: usize) -> Arc<Block> {
    match cache.get(file, i) {
        Some(b) => b,
        None => cache.insert(file, i, block(i as u64, pad), Admission::Read),
    }
}

/// What the shards hold, counted from the slots: (blocks, bytes).
fn held(files: &[&Arc<CachedBlocks>]) -> (u64, u64) {
    let mut n = (0, 0);
    for f in files {
        let guard = crossbeam_epoch::pin();
        for s in f.slots.iter() {
            if let Some(b) = s.get(&guard) {
                n.0 += 1;
                n.1 += b.len() as u64 + ENTRY_OVERHEAD;
            }
        }
    }
    n
}

#[test]
fn holds_at_most_its_capacity() {
    let cache = BlockCache::new(100_000);
    let file = cache.register(1000);
    for i in 0..1000 {
        cache.insert(&file, i, block(i as u64, 900), Admission::Read);
        assert!(cache.stats().usage <= 100_000, "{:?}", cache.stats());
    }
    let s = cache.stats();
    assert!(s.entries > 80 && s.entries < 110, "{s:?}");
    assert_eq!((s.entries, s.usage), held(&[&file]));
    cache.set_capacity(10_000);
    let s = cache.stats();
    assert!(s.usage <= 10_000, "{s:?}");
    assert_eq!((s.entries, s.usage), held(&[&file]));
    let none = BlockCache::new(0);
    let file = none.register(2);
    none.insert(&file, 1, block(1, 10), Admission::Read);
    assert_eq!(none.stats().entries, 0);
    assert!(none.get(&file, 1).is_none());
}

/// A block evicted while a reader holds it stays whole for the reader.
#[test]
fn borrowed_blocks_outlive_eviction() {
    let cache = BlockCache::new(20_000);
    let file = cache.register(100);
    cache.insert(&file, 0, block(0, 5000), Admission::Read);
    let held = cache.get(&file, 0).unwrap();
    for i in 1..100 {
        cache.insert(&file, i, block(i as u64, 5000), Admission::Read);
    }
    // Hit once, it is in the main queue now: it leaves when the cache
    // shrinks below it.
    cache.set_capacity(1000);
    assert!(cache.get(&file, 0).is_none(), "evicted");
    assert_eq!(held.bytes(), &vec![0u8; 5000][..]);
}

/// Two readers that missed the same block both get the one cached first.
#[test]
fn the_first_insert_wins() {
    let cache = BlockCache::new(1 << 20);
    let file = cache.register(4);
    let first = cache.insert(&file, 2, block(2, 100), Admission::Read);
    let second = cache.insert(&file, 2, block(2, 100), Admission::Read);
    assert!(Arc::ptr_eq(&first, &second));
    assert_eq!(cache.stats().entries, 1);
}

/// Hot blocks survive a scan of many blocks read once.
#[test]
fn a_scan_does_not_evict_the_working_set() {
    let cache = BlockCache::new(400 * 1124);
    let (hot, scan) = (cache.register(100), cache.register(5000));
    for round in 0..20 {
        for i in 0..100 {
            read(&cache, &hot, i, 1000);
        }
        if round == 10 {
            for j in 0..5000 {
                read(&cache, &scan, j, 1000);
            }
        }
    }
    let kept = (0..100).filter(|&i| cache.contains(&hot, i)).count();
    assert!(kept >= 90, "only {kept} of 100 hot blocks left");
}

/// Blocks reused at a distance longer than the small queue reach the main
/// queue through the ghost keys, so a working set of most of the cache is
/// held: a plain FIFO of a tenth of the cache would miss every time.
#[test]
fn reuse_beyond_the_small_queue_is_remembered() {
    let cache = BlockCache::new(1000 * 1124);
    let file = cache.register(600);
    for _ in 0..5 {
        for i in 0..600 {
            read(&cache, &file, i, 1000);
        }
    }
    let before = cache.stats();
    for i in 0..600 {
        read(&cache, &file, i, 1000);
    }
    let after = cache.stats();
    assert_eq!(after.hits - before.hits, 600, "{after:?}");
}

/// A forgotten file's blocks are uncharged at once, nothing more is cached
/// for it, and its stale queue entries do not pile up.
#[test]
fn a_forgotten_file_leaves_nothing_behind() {
    let cache = BlockCache::new(64 << 20);
    let keep = cache.register(100);
    for i in 0..100 {
        cache.insert(&keep, i, block(i as u64, 500), Admission::Read);
    }
    let kept = cache.stats();
    for _ in 0..50 {
        let gone = cache.register(200);
        for i in 0..200 {
            cache.insert(&gone, i, block(i as u64, 500), Admission::Read);
        }
        cache.forget(&gone);
        assert_eq!(cache.stats().entries, kept.entries);
        assert_eq!(cache.stats().usage, kept.usage);
        cache.insert(&gone, 5, block(5, 500), Admission::Read);
        assert!(!cache.contains(&gone, 5), "cached for a forgotten file");
    }
    let stale: usize = cache.shards.iter().map(|s| s.lock().queued()).sum();
    assert!(
        stale < 100 + 1100 * cache.shards.len(),
        "{stale} entries queued"
    );
    for i in 0..100 {
        assert_eq!(tag_of(&cache.get(&keep, i).unwrap()), i as u64);
    }
}

#[derive(Clone, Debug)]
enum Op {
    Read(usize, usize, usize),
    Forget(usize),
    Resize(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        20 => (0usize..3, 0usize..40, 0usize..3000).prop_map(|(f, i, p)| Op::Read(f, i, p)),
        1 => (0usize..3).prop_map(Op::Forget),
        1 => (0usize..200_000).prop_map(Op::Resize),
    ]
}

proptest! {
    /// Against a model: a hit is the block last inserted under its key and
    /// not forgotten since; the charge is the sum of what the slots hold
    /// and never above the capacity.
    #[test]
    fn agrees_with_a_model(ops in prop::collection::vec(op(), 1..600)) {
        let cache = BlockCache::new(64 * 1024);
        let mut files: Vec<Arc<CachedBlocks>> = (0..3).map(|_| cache.register(40)).collect();
        let mut model: HashMap<(usize, usize), usize> = HashMap::new();
        let mut capacity = 64 * 1024;
        for op in ops {
            match op {
                Op::Read(f, i, pad) => match cache.get(&files[f], i) {
                    Some(b) => {
                        prop_assert_eq!(tag_of(&b), i as u64);
                        prop_assert_eq!(b.len(), model[&(f, i)]);
                    }
                    None => {
                        let b = cache.insert(&files[f], i, block(i as u64, pad), Admission::Read);
                        model.insert((f, i), b.len());
                    }
                },
                Op::Forget(f) => {
                    cache.forget(&files[f]);
                    files[f] = cache.register(40);
                    model.retain(|k, _| k.0 != f);
                }
                Op::Resize(c) => {
                    capacity = c;
                    cache.set_capacity(c);
                }
            }
            let s = cache.stats();
            let refs: Vec<&Arc<CachedBlocks>> = files.iter().collect();
            prop_assert_eq!((s.entries, s.usage), held(&refs));
            prop_assert!(s.usage <= capacity as u64, "{:?}", s);
        }
    }

    /// From several threads at once: every hit is the right block, and the
    /// charge stays within the capacity.
    #[test]
    fn concurrent_readers_see_what_was_inserted(ops in prop::collection::vec((0usize..64, 0usize..3000), 1..400)) {
        let cache = BlockCache::new(64 * 1024);
        let file = cache.register(64);
        std::thread::scope(|s| {
            for t in 0..3 {
                let (cache, ops, file) = (&cache, &ops, &file);
                s.spawn(move || {
                    for (n, &(k, pad)) in ops.iter().enumerate() {
                        if (n + t) % 2 == 0 {
                            cache.insert(file, k, block(k as u64, pad), if n % 5 == 0 { Admission::Ahead } else { Admission::Read });
                        } else if let Some(b) = cache.get(file, k) {
                            assert_eq!(tag_of(&b), k as u64);
                        }
                        if n % 97 == t {
                            cache.set_capacity(32 * 1024 + 16 * 1024 * t);
                        }
                    }
                });
            }
        });
        let s = cache.stats();
        prop_assert!(s.usage <= 64 * 1024);
        prop_assert_eq!((s.entries, s.usage), held(&[&file]));
    }
}

/// Files forgotten while other threads insert and evict (a merge's inputs
/// dropped while lookups fill the cache): the charge stays the sum of what
/// the slots hold, and no count goes below zero.
#[test]
fn forgetting_while_others_evict_keeps_the_books() {
    let cache = BlockCache::new(40 * 1124);
    let files: Vec<Arc<CachedBlocks>> = (0..40).map(|_| cache.register(64)).collect();
    std::thread::scope(|s| {
        for t in 0..3usize {
            let (cache, files) = (&cache, &files);
            s.spawn(move || {
                for n in 0..20_000usize {
                    let f = &files[(n * 7 + t) % files.len()];
                    read(cache, f, (n * 13 + t) % 64, 1000);
                }
            });
        }
        let (cache, files) = (&cache, &files);
        s.spawn(move || {
            for round in 0..3 {
                for f in files.iter().skip(round).step_by(3) {
                    cache.forget(f);
                    std::thread::yield_now();
                }
            }
        });
    });
    let refs: Vec<&Arc<CachedBlocks>> = files.iter().collect();
    let s = cache.stats();
    assert_eq!((s.entries, s.usage), held(&refs));
    assert!(s.usage <= 40 * 1124);
}
