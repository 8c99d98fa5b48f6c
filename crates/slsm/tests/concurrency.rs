//! Writers, readers, iterators and snapshots running during background
//! merges: no lost writes, no torn batches.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};

use common::*;
use slsm::{Db, WriteBatch};

const WRITERS: u32 = 3;
const PER_WRITER: u32 = 3000;

fn pair_keys(t: u32, i: u32) -> (Vec<u8>, Vec<u8>) {
    (
        format!("a{t}-{i:06}").into_bytes(),
        format!("b{t}-{i:06}").into_bytes(),
    )
}

#[test]
fn concurrent_writers_readers_and_merges() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small_options()).unwrap();
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let writers: Vec<_> = (0..WRITERS)
            .map(|t| {
                let db = &db;
                s.spawn(move || {
                    for i in 0..PER_WRITER {
                        let (a, b) = pair_keys(t, i);
                        let mut batch = WriteBatch::new();
                        batch.put(&a, value(i)).put(&b, value(i));
                        db.write(batch).unwrap();
                        // Read your own write.
                        assert_eq!(db.get(&a).unwrap().unwrap(), value(i));
                    }
                })
            })
            .collect();
        // Batches are atomic: in any snapshot, a-keys and b-keys pair up.
        let checker = s.spawn(|| {
            let mut rounds = 0;
            while !done.load(Ordering::Acquire) || rounds < 3 {
                let snap = db.snapshot();
                let a = snap.prefix(b"a").count();
                let b = snap.prefix(b"b").count();
                assert_eq!(a, b, "torn batch visible in a snapshot");
                let back = snap.prefix(b"a").rev().count();
                assert_eq!(a, back);
                for t in 0..WRITERS {
                    let (ka, kb) = pair_keys(t, (rounds * 37) % PER_WRITER);
                    let got = snap.multi_get(&[&ka, &kb]).unwrap();
                    assert_eq!(got[0].is_some(), got[1].is_some());
                }
                rounds += 1;
            }
        });
        for w in writers {
            w.join().unwrap();
        }
        done.store(true, Ordering::Release);
        checker.join().unwrap();
    });
    let stats = db.stats();
    assert!(stats.flushes > 0 && stats.merges > 0, "{stats}");
    let verify = |db: &Db| {
        for t in 0..WRITERS {
            for i in 0..PER_WRITER {
                let (a, b) = pair_keys(t, i);
                assert_eq!(db.get(&a).unwrap().unwrap(), value(i));
                assert_eq!(db.get(&b).unwrap().unwrap(), value(i));
            }
        }
        assert_eq!(db.iter().count() as u32, 2 * WRITERS * PER_WRITER);
    };
    verify(&db);
    drop(db);
    let db = Db::open(dir.path(), small_options()).unwrap();
    verify(&db);
}

#[test]
fn snapshot_is_stable_while_merges_rewrite_runs() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small_options()).unwrap();
    for i in 0..2000 {
        db.put(key(i), b"old").unwrap();
    }
    let snap = db.snapshot();
    let it = db.range::<&[u8], _>(..);
    for i in 0..2000 {
        db.put(key(i), b"new").unwrap();
        if i % 3 == 0 {
            db.delete(key(i)).unwrap();
        }
    }
    db.compact().unwrap();
    assert_eq!(it.count(), 2000);
    for i in (0..2000).step_by(7) {
        assert_eq!(snap.get(key(i)).unwrap().unwrap(), b"old");
    }
    assert!(snap.range::<&[u8], _>(..).all(|r| &*r.unwrap().1 == b"old"));
    drop(snap);
    db.compact().unwrap();
    assert_eq!(db.iter().count(), 2000 - 667);
}

/// A write from a thread-local's destructor, after the engine's own
/// per-thread buffers may already be gone, still succeeds.
#[test]
fn write_from_a_thread_local_destructor() {
    use std::cell::RefCell;
    use std::sync::Arc;

    struct PutOnDrop(Option<Arc<slsm::Db>>);
    impl Drop for PutOnDrop {
        fn drop(&mut self) {
            if let Some(db) = self.0.take() {
                db.put(b"from-destructor", b"v").unwrap();
            }
        }
    }
    thread_local! {
        static GUARD: RefCell<PutOnDrop> = const { RefCell::new(PutOnDrop(None)) };
    }

    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(slsm::Db::open(dir.path(), slsm::Options::default()).unwrap());
    let db2 = Arc::clone(&db);
    std::thread::spawn(move || {
        // Registered first, so destroyed after the engine's thread-locals.
        GUARD.with(|g| g.borrow_mut().0 = Some(Arc::clone(&db2)));
        db2.put(b"warm", b"up").unwrap();
    })
    .join()
    .unwrap();
    assert_eq!(
        db.get(b"from-destructor").unwrap().as_deref(),
        Some(&b"v"[..])
    );
    assert_eq!(db.get(b"warm").unwrap().as_deref(), Some(&b"up"[..]));
}

/// More writers than cores, mixing single puts, synced puts and batches,
/// while another thread keeps sealing runs (`flush`): every write lands,
/// and each batch is seen whole or not at all.
#[test]
fn many_writers_with_flushes_lose_nothing() {
    use std::sync::Arc;
    const THREADS: u32 = 8;
    const PER_THREAD: u32 = 1500;
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(dir.path(), small_options()).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let flusher = {
        let (db, stop) = (Arc::clone(&db), Arc::clone(&stop));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                db.flush().unwrap();
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        })
    };
    let writers: Vec<_> = (0..THREADS)
        .map(|t| {
            let db = Arc::clone(&db);
            std::thread::spawn(move || {
                let sync = slsm::WriteOptions {
                    sync: true,
                    ..Default::default()
                };
                for i in 0..PER_THREAD {
                    let k = key(t * PER_THREAD + i);
                    match i % 10 {
                        0 => db.put_opt(&k, value(i), &sync).unwrap(),
                        1 => {
                            // A pair that must appear together.
                            let mut b = WriteBatch::new();
                            b.put(&k, value(i));
                            b.put([&k[..], b"-twin"].concat(), value(i));
                            db.write(b).unwrap();
                        }
                        _ => db.put(&k, value(i)).unwrap(),
                    }
                    if i % 97 == 0 {
                        let twin = [&key(t * PER_THREAD + 1)[..], b"-twin"].concat();
                        let snap = db.snapshot();
                        let a = snap.get(key(t * PER_THREAD + 1)).unwrap();
                        let b = snap.get(&twin).unwrap();
                        assert_eq!(a.is_some(), b.is_some(), "torn batch");
                    }
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    flusher.join().unwrap();
    for t in 0..THREADS {
        for i in 0..PER_THREAD {
            let k = key(t * PER_THREAD + i);
            assert_eq!(db.get(&k).unwrap().unwrap(), value(i), "thread {t} key {i}");
        }
    }
    drop(db);
    let db = Db::open(dir.path(), small_options()).unwrap();
    let expected = (THREADS * PER_THREAD + THREADS * PER_THREAD / 10) as usize;
    assert_eq!(db.iter().count(), expected);
}

/// Read-only opens beside a writer that flushes and merges all the time
/// (tiny runs): each must open, and see a prefix of the writes holding
/// at least those acknowledged before it began. The writer deletes logs
/// and run files its flushes and merges made obsolete at any moment; an
/// open that read an older manifest used to miss the writes a flush had
/// moved out of a deleted log (a hole in the middle), or fail on it.
/// `SLSM_READ_ONLY_ROUNDS` lengthens it.
#[test]
fn read_only_opens_beside_a_busy_writer_see_a_prefix_of_its_writes() {
    use std::sync::atomic::AtomicU64;
    let rounds = env_u64("SLSM_READ_ONLY_ROUNDS", 1000);
    let dir = tempfile::tempdir().unwrap();
    let opts = slsm::Options {
        run_size: 4096,
        run_entries: 64,
        memory_runs: 2,
        level_runs: 2,
        ..slsm::Options::default()
    };
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    let acknowledged = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let key = |i: u64| format!("{i:08}").into_bytes();
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                db.put(key(i), [b'v'; 60]).unwrap();
                i += 1;
                acknowledged.store(i, Ordering::Release);
            }
        });
        // Stops the writer however this thread leaves (an assertion's
        // panic included), or the scope would wait for it for ever.
        struct StopOnDrop<'a>(&'a AtomicBool);
        impl Drop for StopOnDrop<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::Relaxed);
            }
        }
        let _stop = StopOnDrop(&stop);
        for round in 0..rounds {
            let before = acknowledged.load(Ordering::Acquire);
            let reader = Db::open_read_only(dir.path(), opts.clone())
                .unwrap_or_else(|e| panic!("round {round}: {e}"));
            let mut seen = 0;
            for entry in reader.iter() {
                let (k, _) = entry.unwrap();
                assert_eq!(&*k, key(seen), "round {round}: a hole before key {seen}");
                seen += 1;
            }
            assert!(
                seen >= before,
                "round {round}: {seen} keys, {before} acknowledged"
            );
        }
    });
}

/// Counters incremented by transactions from many threads, beside plain
/// writes, flushes and a checking reader: no increment is lost (each
/// counter ends at the number of commits that succeeded on it) and a
/// snapshot never sees a counter ahead of its twin, written in the same
/// transaction. A transaction commits its log write and insert outside
/// the gate that serializes validations, so one that began before another
/// became visible must still conflict on what it read.
/// `SLSM_TXN_INCREMENTS` lengthens it.
#[test]
fn concurrent_counter_transactions_lose_no_increment() {
    use std::sync::Arc;
    const THREADS: u32 = 6;
    const COUNTERS: u32 = 3;
    let per_thread: u32 = std::env::var("SLSM_TXN_INCREMENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1500);
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(dir.path(), small_options()).unwrap());
    let read = |tx: &mut slsm::Transaction, k: &str| -> u64 {
        tx.get(k)
            .unwrap()
            .map_or(0, |v| u64::from_le_bytes(v[..].try_into().unwrap()))
    };
    let stop = Arc::new(AtomicBool::new(false));
    let checker = {
        let (db, stop) = (Arc::clone(&db), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut checks = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let snap = db.snapshot();
                for c in 0..COUNTERS {
                    let get = |k: String| {
                        snap.get(k)
                            .unwrap()
                            .map_or(0, |v| u64::from_le_bytes(v[..].try_into().unwrap()))
                    };
                    assert_eq!(get(format!("c{c}")), get(format!("twin{c}")), "torn");
                }
                checks += 1;
                if checks.is_multiple_of(64) {
                    db.flush().unwrap();
                }
            }
        })
    };
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let db = Arc::clone(&db);
            std::thread::spawn(move || {
                let mut done = [0u64; COUNTERS as usize];
                let mut conflicts = 0u64;
                for i in 0..per_thread {
                    let c = (i * 7 + t) % COUNTERS;
                    loop {
                        let mut tx = db.transaction();
                        let n = read(&mut tx, &format!("c{c}"));
                        tx.put(format!("c{c}"), (n + 1).to_le_bytes()).unwrap();
                        tx.put(format!("twin{c}"), (n + 1).to_le_bytes()).unwrap();
                        // Synced commits let the gate go as soon as they
                        // are placed (others may share the sync), unsynced
                        // ones when others are committing: both kinds.
                        let sync = slsm::WriteOptions {
                            sync: i % 4 == 0,
                            ..Default::default()
                        };
                        match tx.commit_opt(&sync) {
                            Ok(()) => break,
                            Err(slsm::Error::Conflict) => conflicts += 1,
                            Err(e) => panic!("{e}"),
                        }
                    }
                    done[c as usize] += 1;
                    // Plain writes group with the transactions' commits.
                    db.put(format!("noise{t}-{}", i % 50), "x").unwrap();
                }
                (done, conflicts)
            })
        })
        .collect();
    let mut expected = [0u64; COUNTERS as usize];
    let mut conflicts = 0;
    for w in workers {
        let (done, c) = w.join().unwrap();
        conflicts += c;
        for (e, d) in expected.iter_mut().zip(done) {
            *e += d;
        }
    }
    stop.store(true, Ordering::Relaxed);
    checker.join().unwrap();
    let mut tx = db.transaction();
    for c in 0..COUNTERS {
        let got = read(&mut tx, &format!("c{c}"));
        assert_eq!(
            got, expected[c as usize],
            "counter {c}, {conflicts} conflicts"
        );
    }
}

/// The block cache under pressure: a cache of a few blocks, readers of
/// every kind missing in it all the time while a writer overwrites and
/// merges replace the files whose blocks it holds (their blocks forgotten
/// while readers still hold some). Every read sees a value written for its
/// key, never another key's or torn bytes.
#[test]
fn readers_through_a_tiny_cache_while_merges_replace_its_files() {
    const KEYS: u32 = 4000;
    let key = |i: u32| format!("k{i:05}").into_bytes();
    let val =
        |i: u32, g: u32| format!("k{i:05}#{g}#{}", "v".repeat((i % 40) as usize)).into_bytes();
    let check = |k: &[u8], v: &[u8]| {
        assert!(v.starts_with(k) && v[k.len()] == b'#', "{k:?} read {v:?}");
        let rest = &v[k.len() + 1..];
        let hash = rest.iter().position(|&b| b == b'#').expect("generation");
        let n = std::str::from_utf8(&k[1..])
            .unwrap()
            .parse::<u32>()
            .unwrap();
        assert_eq!(rest.len() - hash - 1, (n % 40) as usize, "{v:?}");
    };
    let dir = tempfile::tempdir().unwrap();
    let opts = slsm::Options {
        block_cache_size: Some(48 << 10),
        ..small_options()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    for i in 0..KEYS {
        db.put(key(i), val(i, 0)).unwrap();
    }
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let writer = s.spawn(|| {
            for g in 1..6 {
                for i in (0..KEYS).step_by(3) {
                    db.put(key((i * 7 + g) % KEYS), val((i * 7 + g) % KEYS, g))
                        .unwrap();
                }
            }
        });
        for t in 0..3u32 {
            let (db, done) = (&db, &done);
            s.spawn(move || {
                let mut n = t;
                while !done.load(Ordering::Acquire) {
                    n = n.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                    let i = n % KEYS;
                    match n % 3 {
                        0 => check(&key(i), &db.get(key(i)).unwrap().expect("present")),
                        1 => {
                            let keys: Vec<Vec<u8>> =
                                (0..16).map(|j| key((i + j * 97) % KEYS)).collect();
                            let got = db.multi_get(&keys).unwrap();
                            for (k, v) in keys.iter().zip(got) {
                                check(k, &v.expect("present"));
                            }
                        }
                        _ => {
                            let mut last: Option<Vec<u8>> = None;
                            for item in db.range(key(i)..).take(40) {
                                let (k, v) = item.unwrap();
                                check(&k, &v);
                                assert!(last.as_deref().is_none_or(|l| l < &k[..]));
                                last = Some(k.to_vec());
                            }
                        }
                    }
                }
            });
        }
        writer.join().unwrap();
        done.store(true, Ordering::Release);
    });
    let stats = db.stats();
    assert!(stats.merges > 0, "{stats}");
    let cache = db.memory_usage().cache;
    assert!(cache.misses > 10 * cache.entries.max(1), "{cache:?}");
    assert!(cache.usage <= 48 << 10, "{cache:?}");
    for i in 0..KEYS {
        check(&key(i), &db.get(key(i)).unwrap().unwrap());
    }
}
