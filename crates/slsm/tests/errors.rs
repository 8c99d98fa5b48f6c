//! Bad input gets a clear, typed error and loses nothing.

mod common;

use common::*;
use slsm::{Db, Error, Options, WriteBatch};

#[test]
fn second_open_is_locked() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    match Db::open(dir.path(), Options::default()) {
        Err(Error::Locked(p)) => assert_eq!(p, dir.path()),
        other => panic!("expected Locked, got {other:?}"),
    }
    drop(db);
    Db::open(dir.path(), Options::default()).unwrap();
}

#[test]
fn foreign_directory_is_rejected() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), b"my files").unwrap();
    let err = Db::open(dir.path(), Options::default()).unwrap_err();
    assert!(matches!(err, Error::NotADatabase { .. }), "{err}");
    assert!(dir.path().join("notes.txt").exists());
    let file = dir.path().join("notes.txt");
    let err = Db::open(&file, Options::default()).unwrap_err();
    assert!(matches!(err, Error::NotADatabase { .. }), "{err}");
}

#[test]
fn invalid_options_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let bad = [
        Options {
            memory_runs: 1,
            ..Options::default()
        },
        Options {
            merge_fraction: 0.0,
            ..Options::default()
        },
        Options {
            bloom_fp_rate: 1.5,
            ..Options::default()
        },
        Options {
            level_runs: 0,
            ..Options::default()
        },
        Options {
            max_space_amplification: 1.0,
            ..Options::default()
        },
        Options {
            max_space_amplification: f64::NAN,
            ..Options::default()
        },
        Options {
            fence_entries: 0,
            ..Options::default()
        },
        Options {
            run_size: 10,
            ..Options::default()
        },
        Options {
            run_entries: 1,
            ..Options::default()
        },
    ];
    for opts in bad {
        let err = Db::open(dir.path(), opts.clone()).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{opts:?}: {err}");
    }
}

#[test]
fn missing_directory_and_exists_flags() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let no_create = Options {
        create_if_missing: false,
        ..Options::default()
    };
    assert!(matches!(
        Db::open(&path, no_create).unwrap_err(),
        Error::InvalidArgument(_)
    ));
    drop(Db::open(&path, Options::default()).unwrap());
    let exclusive = Options {
        error_if_exists: true,
        ..Options::default()
    };
    assert!(matches!(
        Db::open(&path, exclusive).unwrap_err(),
        Error::InvalidArgument(_)
    ));
}

#[test]
fn oversized_keys_and_values_are_rejected_and_nothing_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    db.put(b"keep", b"me").unwrap();
    let big_key = vec![b'k'; slsm::key::MAX_KEY_SIZE + 1];
    assert!(matches!(
        db.put(&big_key, b"v"),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(db.get(&big_key), Err(Error::InvalidArgument(_))));
    let mut batch = WriteBatch::new();
    batch.put(b"half", b"of a batch").put(&big_key, b"v");
    assert!(matches!(db.write(batch), Err(Error::InvalidArgument(_))));
    assert!(
        db.get(b"half").unwrap().is_none(),
        "a rejected batch applies nothing"
    );
    let max_key = vec![b'k'; slsm::key::MAX_KEY_SIZE];
    db.put(&max_key, b"ok").unwrap();
    assert_eq!(db.get(&max_key).unwrap().unwrap(), b"ok");
    assert_eq!(db.get(b"keep").unwrap().unwrap(), b"me");
}

#[test]
fn empty_keys_and_values_work() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), small_options()).unwrap();
        db.put(b"", b"empty key").unwrap();
        db.put(b"empty value", b"").unwrap();
        assert_eq!(db.get(b"").unwrap().unwrap(), b"empty key");
        db.flush().unwrap();
    }
    let db = Db::open(dir.path(), small_options()).unwrap();
    assert_eq!(db.get(b"").unwrap().unwrap(), b"empty key");
    assert_eq!(db.get(b"empty value").unwrap().unwrap(), b"");
    let first = db.iter().next().unwrap().unwrap();
    assert_eq!(&*first.0, b"");
}

#[test]
fn large_values_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let big = vec![0xAB; 3 << 20];
    {
        let db = Db::open(dir.path(), small_options()).unwrap();
        db.put(b"big", &big).unwrap();
        db.put(b"small", b"s").unwrap();
        assert_eq!(db.get(b"big").unwrap().unwrap(), big);
        db.flush().unwrap();
        assert_eq!(db.get(b"big").unwrap().unwrap(), big);
    }
    let db = Db::open(dir.path(), small_options()).unwrap();
    assert_eq!(db.get(b"big").unwrap().unwrap(), big);
}
