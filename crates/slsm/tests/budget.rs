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
    assert_within(usage, BUDGET, when);
}

fn assert_within(usage: MemoryUsage, budget: usize, when: &str) {
    assert!(
        usage.total() <= budget as u64,
        "{when}: {} bytes accounted, budget {budget}: {usage:?}",
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

/// Memory runs sealed by their entry count hold far less than their share
/// of the budget: the block cache gets the difference, and gives it back
/// before bigger entries make the runs grow, so the budget holds
/// throughout.
#[test]
fn the_memory_runs_reserve_follows_what_the_runs_hold() {
    const BIG_BUDGET: usize = 64 << 20;
    let opts = Options {
        memory_budget: BIG_BUDGET,
        run_entries: 2_000,
        ..Options::default()
    };
    let share = (opts.effective_run_size() * opts.memory_runs) as u64;
    let check = |usage: MemoryUsage, when: &str| {
        assert_within(usage, BIG_BUDGET, when);
        assert!(usage.memory_runs_limit <= share, "{when}: {usage:?}");
    };
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts).unwrap();
    let mut model = BTreeMap::new();
    let before = db.memory_usage();
    assert_eq!(before.memory_runs_limit, share, "the whole share at first");

    // Writes `n` keys with values of `value(i)`, checking as they go.
    let mut write = |n: u32, value: &dyn Fn(u32) -> Vec<u8>, when: &str| {
        for i in 0..n {
            let (k, v) = (key(i), value(i));
            db.put(&k, &v).unwrap();
            model.insert(k, v);
            if i.is_multiple_of(100) {
                check(db.memory_usage(), when);
            }
        }
    };
    // Small entries: runs are sealed at 2,000 entries, well below their
    // bytes.
    write(20_000, &|i| i.to_be_bytes().repeat(4), "small entries");
    let small = db.memory_usage();
    assert!(
        small.memory_runs_limit < share / 4,
        "the reserve follows the runs: {small:?}"
    );
    assert!(
        small.cache.capacity >= before.cache.capacity + share / 2,
        "the cache got the rest: {small:?} (before: {before:?})"
    );
    // Values of 8 KiB: runs now fill their share by bytes.
    write(4_000, &|i| vec![(i % 251) as u8; 8 << 10], "big entries");
    let big = db.memory_usage();
    assert!(
        big.memory_runs_limit > small.memory_runs_limit * 2,
        "the reserve grew with the runs: {big:?}"
    );
    db.wait_for_compaction().unwrap();
    check(db.memory_usage(), "after the merges");
    for (k, v) in &model {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(&v[..]));
    }
}

/// While no write comes, the reserve of the memory runs that do not exist
/// goes to the block cache; the next seal takes it back before the new run
/// takes a write. The budget holds throughout, reads answer from the model.
#[test]
fn the_idle_memory_runs_reserve_is_lent_to_the_cache() {
    const BIG_BUDGET: usize = 32 << 20;
    let opts = Options {
        memory_budget: BIG_BUDGET,
        run_entries: 2_000,
        compression: Compression::all(Codec::Lz4),
        ..Options::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts).unwrap();
    let mut model = BTreeMap::new();
    // What the writes use, sampled while they go on (a pause of a loaded
    // machine may let the loan start before they end), once the first run
    // was sealed full and the reserve follows what runs hold: from then on
    // it only grows, so the largest sample is the reserve without a loan.
    let mut writing: Option<MemoryUsage> = None;
    for i in 0..30_000 {
        let (k, v) = (key(i), value(i, 0));
        db.put(&k, &v).unwrap();
        model.insert(k, v);
        if i >= 10_000 && i % 1_000 == 0 {
            let usage = db.memory_usage();
            if writing.is_none_or(|w| usage.memory_runs_limit > w.memory_runs_limit) {
                writing = Some(usage);
            }
        }
    }
    let writing = writing.expect("sampled");
    assert_within(db.memory_usage(), BIG_BUDGET, "after the writes");
    // Quiet: within a few ticks the runs keep only what they hold. A flush
    // or merge still building holds part of the budget the cache would get
    // (a CI run met one holding 1 MB): the loan is measured once none does.
    let started = std::time::Instant::now();
    let lent = loop {
        let usage = db.memory_usage();
        if usage.memory_runs_limit < writing.memory_runs_limit && usage.building == 0 {
            break usage;
        }
        assert!(started.elapsed().as_secs() < 10, "nothing lent: {usage:?}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let given = writing.memory_runs_limit - lent.memory_runs_limit;
    assert!(
        lent.cache.capacity >= writing.cache.capacity + given - (1 << 20),
        "the cache got the loan: {lent:?} (writing: {writing:?})"
    );
    for (k, v) in model.iter().step_by(3) {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(&v[..]));
    }
    assert_within(db.memory_usage(), BIG_BUDGET, "reading on the loan");
    // Writes again: the first seal takes the loan back.
    for i in 0..5_000 {
        let (k, v) = (key(i), value(i, 1));
        db.put(&k, &v).unwrap();
        model.insert(k, v);
        let usage = db.memory_usage();
        assert_within(usage, BIG_BUDGET, "writing after the loan");
        if usage.memory_runs_limit == writing.memory_runs_limit {
            break;
        }
    }
    let back = db.memory_usage();
    assert_eq!(
        back.memory_runs_limit, writing.memory_runs_limit,
        "{back:?}"
    );
    for (k, v) in &model {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(&v[..]));
    }
}

/// Once quiet, the sealed memory runs that wait for company are flushed:
/// the active run is all that stays in memory, the reserve of the others
/// goes to the cache, every read still answers from the model, and a
/// reopen (whose logs were trimmed by the flush) finds everything.
#[test]
fn a_quiet_database_flushes_its_sealed_memory_runs() {
    let opts = Options {
        memory_budget: 32 << 20,
        run_entries: 2_000,
        compression: Compression::all(Codec::Lz4),
        ..Options::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    let mut model = BTreeMap::new();
    // Three runs sealed and a fourth taking writes: fewer than a flush
    // takes while writes go on (half of the 8 runs).
    for i in 0..7_000 {
        let (k, v) = (key(i), value(i, 0));
        db.put(&k, &v).unwrap();
        model.insert(k, v);
    }
    // Usually four runs now and no flush yet; on a loaded machine a pause
    // in the writes may have flushed some sealed runs already.
    let writing = (db.stats(), db.memory_usage());
    assert!(writing.0.memory_runs > 1, "{:?}", writing.0);
    let started = std::time::Instant::now();
    // The flush counter is bumped just after the flushed runs leave the
    // version: wait for both.
    let quiet = loop {
        let stats = db.stats();
        if stats.memory_runs == 1 && stats.flushes >= 1 {
            break stats;
        }
        assert!(
            started.elapsed().as_secs() < 10,
            "nothing flushed: {stats:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert!(
        quiet.flushes >= 1,
        "the sealed runs were flushed: {quiet:?}"
    );
    assert_eq!(quiet.memory_entries, 1_000);
    let usage = db.memory_usage();
    assert!(
        usage.memory_runs_limit < writing.1.memory_runs_limit
            && usage.cache.capacity > writing.1.cache.capacity,
        "the runs' reserve went to the cache: {usage:?} (writing: {:?})",
        writing.1
    );
    assert_within(usage, 32 << 20, "quiet");
    for (k, v) in &model {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(&v[..]));
    }
    for i in 7_000..9_000 {
        let (k, v) = (key(i), value(i, 1));
        db.put(&k, &v).unwrap();
        model.insert(k, v);
    }
    drop(db);
    let db = Db::open(dir.path(), opts).unwrap();
    for (k, v) in &model {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(&v[..]));
    }
}

#[test]
fn a_budget_changed_while_open_resizes_the_cache_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let big = 16 << 20;
    let db = Db::open(
        dir.path(),
        Options {
            memory_budget: big,
            ..options()
        },
    )
    .unwrap();
    for i in 0..KEYS / 2 {
        db.put(key(i), value(i, 0)).unwrap();
    }
    db.flush().unwrap();
    for i in 0..KEYS / 2 {
        assert_eq!(db.get(key(i)).unwrap().as_deref(), Some(&value(i, 0)[..]));
    }
    let before = db.memory_usage();
    assert_eq!(before.budget, big as u64);
    assert!(before.cache.usage > (4 << 20), "a warm cache: {before:?}");

    // Down to a half: the cache gives back what the new budget lacks,
    // before the call returns. (The memory runs and buffers keep the size
    // the open gave them: a quarter and a sixteenth-odd of 16 MiB.)
    let small = 8 << 20;
    db.set_memory_budget(small).unwrap();
    let after = db.memory_usage();
    assert_eq!(after.budget, small as u64);
    assert_within(after, small, "right after the budget shrank");
    for i in 0..KEYS / 2 {
        db.put(key(i), value(i, 1)).unwrap();
        if i % 5_000 == 0 {
            assert_within(db.memory_usage(), small, "writing under the smaller budget");
        }
    }
    for i in (0..KEYS / 2).step_by(7) {
        assert_eq!(db.get(key(i)).unwrap().as_deref(), Some(&value(i, 1)[..]));
    }
    assert_within(db.memory_usage(), small, "reading under the smaller budget");

    // Below what the memory runs and buffers were given at open: the cache
    // is left nothing, and the usage says the engine is above the budget.
    // (The least budget: the buffers alone, sized for 16 MiB, pass it.)
    let least = slsm::MIN_MEMORY_BUDGET;
    db.set_memory_budget(least).unwrap();
    let floor = db.memory_usage();
    assert_eq!(floor.cache.capacity, 0, "{floor:?}");
    assert!(
        floor.memory_runs_limit + floor.buffers > least as u64,
        "{floor:?}"
    );
    assert!(floor.total() > least as u64, "{floor:?}");

    // Back up: the cache may hold more again.
    db.set_memory_budget(big).unwrap();
    for i in 0..KEYS / 2 {
        db.get(key(i)).unwrap();
    }
    let raised = db.memory_usage();
    assert!(raised.cache.capacity > after.cache.capacity, "{raised:?}");
    assert!(raised.cache.usage > (4 << 20), "{raised:?}");

    // Below the least budget an open accepts: refused, nothing changed.
    let refused = db.set_memory_budget(1000).unwrap_err();
    assert!(refused.to_string().contains("at least 1 MiB"), "{refused}");
    assert_eq!(db.memory_usage().budget, big as u64);
}
