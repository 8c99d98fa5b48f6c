//! Recovery: torn WAL tails are dropped, corruption in the middle of a WAL
//! or in a run file is reported (never returned as data).

mod common;

use std::fs;

use common::*;
use slsm::wal::WalReader;
use slsm::{Db, Error, Options, RecoveryMode, WriteOptions};

/// Offset just past the last record of the log at `path` (the mapped WAL
/// writer reserves a zero-filled tail beyond it).
fn records_end(path: &std::path::Path) -> u64 {
    let mut r = WalReader::open(path, None, RecoveryMode::Strict).unwrap();
    while r.next_record().unwrap().is_some() {}
    r.valid_end()
}

fn write_unflushed(dir: &std::path::Path, n: u32) {
    let db = Db::open(dir, Options::default()).unwrap();
    for i in 0..n {
        db.put(key(i), value(i)).unwrap();
    }
}

#[test]
fn acknowledged_writes_survive_reopen_without_flush() {
    let dir = tempfile::tempdir().unwrap();
    write_unflushed(dir.path(), 1000);
    let db = Db::open(dir.path(), Options::default()).unwrap();
    for i in 0..1000 {
        assert_eq!(db.get(key(i)).unwrap().unwrap(), value(i));
    }
}

#[test]
fn torn_last_wal_record_is_dropped() {
    let dir = tempfile::tempdir().unwrap();
    write_unflushed(dir.path(), 100);
    let wal = files_with_ext(dir.path(), "wal").pop().unwrap();
    let len = records_end(&wal);
    // Cut into the last record: every shorter cut of it loses only it.
    for cut in 1..10 {
        let copy = tempfile::tempdir().unwrap();
        for entry in fs::read_dir(dir.path()).unwrap() {
            let p = entry.unwrap().path();
            fs::copy(&p, copy.path().join(p.file_name().unwrap())).unwrap();
        }
        let torn = copy.path().join(wal.file_name().unwrap());
        fs::OpenOptions::new()
            .write(true)
            .open(&torn)
            .unwrap()
            .set_len(len - cut)
            .unwrap();
        let db = Db::open(copy.path(), Options::default()).unwrap();
        for i in 0..99 {
            assert_eq!(db.get(key(i)).unwrap().unwrap(), value(i), "cut {cut}");
        }
        assert!(db.get(key(99)).unwrap().is_none(), "cut {cut}");
    }
}

#[test]
fn corrupt_wal_middle_is_refused_unless_best_effort() {
    let dir = tempfile::tempdir().unwrap();
    write_unflushed(dir.path(), 200);
    let wal = files_with_ext(dir.path(), "wal").pop().unwrap();
    let len = records_end(&wal);
    flip_byte(&wal, len / 2, 0x40);
    match Db::open(dir.path(), Options::default()) {
        Err(Error::Corruption { file, .. }) => assert_eq!(file, wal),
        other => panic!("expected corruption, got {other:?}"),
    }
    let opts = Options {
        recovery: RecoveryMode::BestEffort,
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    // A prefix of the writes survives, nothing after the damage.
    let present: Vec<bool> = (0..200)
        .map(|i| db.get(key(i)).unwrap().is_some())
        .collect();
    let first_missing = present.iter().position(|p| !p).unwrap();
    assert!(first_missing > 0);
    assert!(present[first_missing..].iter().all(|p| !p));
    for i in 0..first_missing as u32 {
        assert_eq!(db.get(key(i)).unwrap().unwrap(), value(i));
    }
}

#[test]
fn flipped_byte_in_run_file_is_corruption_never_wrong_data() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), Options::default()).unwrap();
        for i in 0..300 {
            db.put(key(i), value(i)).unwrap();
        }
        db.flush().unwrap();
    }
    let run = files_with_ext(dir.path(), "run").pop().unwrap();
    let original = fs::read(&run).unwrap();
    let step = (original.len() / 97).max(1);
    let mut detected = 0;
    for offset in (0..original.len()).step_by(step) {
        fs::write(&run, &original).unwrap();
        flip_byte(&run, offset as u64, 0x08);
        let db = match Db::open(dir.path(), Options::default()) {
            Ok(db) => db,
            Err(e) => {
                assert!(e.is_corruption(), "offset {offset}: {e}");
                detected += 1;
                continue;
            }
        };
        let mut saw_error = false;
        for i in 0..300 {
            match db.get(key(i)) {
                Ok(Some(v)) => assert_eq!(v, value(i), "wrong data at offset {offset}"),
                Ok(None) => panic!("key {i} lost without an error (offset {offset})"),
                Err(e) => {
                    assert!(e.is_corruption(), "{e}");
                    saw_error = true;
                }
            }
        }
        for item in db.iter() {
            match item {
                Ok((k, v)) => {
                    let i: u32 = std::str::from_utf8(&k[3..]).unwrap().parse().unwrap();
                    assert_eq!(v, value(i));
                }
                Err(e) => {
                    assert!(e.is_corruption());
                    saw_error = true;
                    break;
                }
            }
        }
        let checked = db.check();
        assert_eq!(checked.is_err(), saw_error || checked.is_err());
        if saw_error {
            assert!(checked.unwrap_err().is_corruption());
            detected += 1;
        }
    }
    assert!(detected > 50, "most flips must be detected, got {detected}");
}

#[test]
fn synced_writes_and_sync_call() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), Options::default()).unwrap();
        db.put_opt(
            b"a",
            b"1",
            &WriteOptions {
                sync: true,
                ..Default::default()
            },
        )
        .unwrap();
        db.put(b"b", b"2").unwrap();
        db.sync().unwrap();
    }
    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert_eq!(db.get(b"a").unwrap().unwrap(), b"1");
    assert_eq!(db.get(b"b").unwrap().unwrap(), b"2");
}

#[test]
fn unlogged_writes_are_flushed_on_clean_close() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        disable_wal: true,
        ..Options::default()
    };
    {
        let db = Db::open(dir.path(), opts.clone()).unwrap();
        for i in 0..100 {
            db.put(key(i), value(i)).unwrap();
        }
    }
    assert!(files_with_ext(dir.path(), "wal").is_empty());
    let db = Db::open(dir.path(), opts).unwrap();
    assert_eq!(db.iter().count(), 100);
}

#[test]
fn obsolete_files_are_removed() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), small_options()).unwrap();
        for i in 0..5000 {
            db.put(key(i % 500), value(i)).unwrap();
        }
        db.compact().unwrap();
        assert_eq!(files_with_ext(dir.path(), "run").len(), 1);
        assert_eq!(db.stats().levels.iter().map(|l| l.runs).sum::<usize>(), 1);
    }
    let db = Db::open(dir.path(), small_options()).unwrap();
    assert_eq!(files_with_ext(dir.path(), "wal").len(), 1);
    assert_eq!(db.iter().count(), 500);
}

/// A log takes writes until it holds as many bytes as the memory buffer
/// (`memory_runs` runs of `run_size`), not one run: starting a log costs
/// the writer device flushes. Writes of 1 MiB through a 256 KiB buffer of
/// four runs start about four logs (ten when a log rotated at `run_size`).
#[test]
fn a_log_spans_the_whole_memory_buffer() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        run_size: 64 << 10,
        memory_runs: 4,
        background_merges: false,
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let mut logs = std::collections::BTreeSet::new();
    let value = vec![7u8; 1000];
    for i in 0..1024u32 {
        db.put(key(i), &value).unwrap();
        logs.extend(files_with_ext(dir.path(), "wal"));
    }
    assert!(db.stats().flushes >= 4, "the runs were flushed");
    assert!(
        (3..=7).contains(&logs.len()),
        "{} logs for 1 MiB of writes through a 256 KiB buffer",
        logs.len()
    );
    drop(db);
    let db = Db::open(dir.path(), Options::default()).unwrap();
    for i in 0..1024u32 {
        assert_eq!(db.get(key(i)).unwrap().unwrap(), value, "key {i}");
    }
}

/// Runs sealed by entry count (`run_entries`) long before their log reaches
/// `run_size` share one WAL: a log must outlive every run it holds, be
/// deleted once they are all flushed, and replay only what was not flushed.
#[test]
fn logs_shared_by_several_runs_recover_and_are_deleted_once_flushed() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        run_size: 64 << 10,
        run_entries: 64,
        memory_runs: 4,
        level_runs: 4,
        background_merges: false,
        ..Options::default()
    };
    let newest = |i: u32| {
        if i.is_multiple_of(3) {
            value(i + 1)
        } else {
            value(i)
        }
    };
    {
        let db = Db::open(dir.path(), opts.clone()).unwrap();
        let mut most_logs = 0;
        for i in 0..3000 {
            db.put(key(i), value(i)).unwrap();
            most_logs = most_logs.max(files_with_ext(dir.path(), "wal").len());
        }
        for i in (0..3000).step_by(3) {
            db.put(key(i), value(i + 1)).unwrap();
        }
        let flushes = db.stats().flushes;
        // ~2.5 KiB of log per 64-entry run: one log (as large as the four
        // runs' 256 KiB) spans ~100 runs.
        assert!(flushes >= 20, "only {flushes} flushes");
        assert!(
            most_logs <= 3,
            "{most_logs} logs at once: flushed logs linger"
        );
        for i in 0..3000 {
            assert_eq!(db.get(key(i)).unwrap().unwrap(), newest(i), "key {i}");
        }
    } // Closed with unflushed runs: reopening replays the shared logs.
    for round in 0..2 {
        let db = Db::open(dir.path(), opts.clone()).unwrap();
        assert!(
            files_with_ext(dir.path(), "wal").len() <= 2,
            "round {round}"
        );
        for i in 0..3000 {
            assert_eq!(
                db.get(key(i)).unwrap().unwrap(),
                newest(i),
                "round {round} key {i}"
            );
        }
        assert_eq!(db.iter().count(), 3000);
    }
}
