use slsm::{Db, Options, WriteBatch};

fn small_opts() -> Options {
    Options {
        run_size: 16 << 10,
        memory_runs: 3,
        level_runs: 2,
        fence_entries: 4,
        ..Options::default()
    }
}

#[test]
fn put_get_delete_across_flush_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), small_opts()).unwrap();
        for i in 0..5000u32 {
            db.put(
                format!("key{i:05}").as_bytes(),
                format!("value{i}").as_bytes(),
            )
            .unwrap();
        }
        for i in (0..5000u32).step_by(3) {
            db.delete(format!("key{i:05}").as_bytes()).unwrap();
        }
        let mut b = WriteBatch::new();
        b.put(b"batch1", b"x").put(b"batch2", b"y");
        db.write(b).unwrap();
        assert_eq!(db.get(b"key00001").unwrap().unwrap(), b"value1");
        assert!(db.get(b"key00003").unwrap().is_none());
        let stats = db.stats();
        assert!(stats.flushes > 0, "{stats}");
    }
    let db = Db::open(dir.path(), small_opts()).unwrap();
    for i in 0..5000u32 {
        let got = db.get(format!("key{i:05}").as_bytes()).unwrap();
        if i % 3 == 0 {
            assert!(got.is_none(), "key{i} should be deleted");
        } else {
            assert_eq!(got.unwrap(), format!("value{i}").into_bytes(), "key{i}");
        }
    }
    assert_eq!(db.get(b"batch2").unwrap().unwrap(), b"y");
    let n = db.iter().count();
    assert_eq!(n, 5000 - 1667 + 2);
    let rev: Vec<_> = db.iter().rev().map(|r| r.unwrap().0).collect();
    assert_eq!(rev.len(), n);
    assert!(rev.windows(2).all(|w| w[0] > w[1]));
    db.compact().unwrap();
    assert_eq!(db.iter().count(), n);
    db.check().unwrap();
}

#[test]
fn disjoint_runs_are_not_rewritten_but_overlapping_ones_are() {
    let opts = || Options {
        run_size: 16 << 10,
        memory_runs: 2,
        level_runs: 2,
        background_merges: false,
        ..Options::default()
    };
    // Ascending keys: every flushed run is disjoint from the others, so no
    // merge rewrites them, and they all stay readable.
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    for i in 0..6000u32 {
        db.put(format!("k{i:06}").as_bytes(), [1; 40]).unwrap();
    }
    db.flush().unwrap();
    let stats = db.stats();
    assert!(stats.flushes >= 4, "{stats}");
    assert_eq!(stats.merges, 0, "{stats}");
    for i in (0..6000u32).step_by(97) {
        assert!(db.get(format!("k{i:06}").as_bytes()).unwrap().is_some());
    }
    assert_eq!(db.iter().count(), 6000);
    // A delete of every key overlaps them all: now merges are due.
    for i in (0..6000u32).rev() {
        db.delete(format!("k{i:06}").as_bytes()).unwrap();
        db.put(format!("k{:06}", 6000 - i).as_bytes(), [2; 40])
            .unwrap();
    }
    db.flush().unwrap();
    assert!(db.stats().merges > 0, "{}", db.stats());
    drop(db);
    let db = Db::open(dir.path(), opts()).unwrap();
    // Key x was deleted at step x and rewritten at step 6000 - x (steps
    // count down): it survives if the rewrite came last, x >= 3000.
    let keys: Vec<Vec<u8>> = db.iter().map(|r| r.unwrap().0.to_vec()).collect();
    let want: Vec<Vec<u8>> = (3000..=6000u32)
        .map(|x| format!("k{x:06}").into_bytes())
        .collect();
    assert_eq!(keys, want);
}

/// `stats` measures each level's filter false-positive rate on the files as
/// they are, and it follows `bloom_fp_rate`, whatever was looked up.
#[test]
fn stats_measure_each_levels_filter_false_positive_rate() {
    let measured = |fp: f64| {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(
            dir.path(),
            Options {
                bloom_fp_rate: fp,
                ..Options::default()
            },
        )
        .unwrap();
        for i in 0..60_000u32 {
            db.put(i.to_be_bytes(), b"v").unwrap();
        }
        db.flush().unwrap();
        let stats = db.stats();
        assert_eq!(stats.bloom_checks, 0, "nothing was looked up");
        let level = stats.levels.iter().find(|l| l.runs > 0).expect("a run");
        assert!(level.filter_probes >= 4096, "{level:?}");
        assert!(level.filter_bits_per_entry() > 1.0, "{level:?}");
        assert!(stats.to_string().contains("false positives (measured)"));
        level.filter_false_positive_rate()
    };
    let one_percent = measured(0.01);
    assert!((0.003..0.03).contains(&one_percent), "{one_percent}");
    let tenth = measured(0.001);
    assert!(tenth < one_percent / 3.0, "{tenth} vs {one_percent}");
}
