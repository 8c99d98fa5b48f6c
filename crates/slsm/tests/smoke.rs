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
