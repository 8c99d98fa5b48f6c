//! Data safety under abuse from outside the engine: a directory that is not
//! a database, a read-only file system, a file truncated or swapped by
//! another process, a full disk. Each test holds one row of the contract in
//! `crates/slsm/RELIABILITY.md`.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{files_with_ext, key, small_options, value};
use slsm::fs::{FaultFs, FileSystem};
use slsm::{Db, Error, Options};

/// Name, size and contents of every file under `dir`.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let contents = match path.is_dir() {
            true => b"(a directory)".to_vec(),
            false => std::fs::read(&path).unwrap(),
        };
        out.insert(path, contents);
    }
    out
}

fn fill(db: &Db, range: std::ops::Range<u32>) {
    for i in range {
        db.put(key(i), value(i)).unwrap();
    }
}

fn assert_all_there(db: &Db, range: std::ops::Range<u32>) {
    for i in range {
        assert_eq!(
            db.get(key(i)).unwrap().as_deref(),
            Some(&value(i)[..]),
            "key {i}"
        );
    }
}

#[test]
fn a_refused_directory_is_left_as_it_was_found() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("thesis.tex"), b"\\documentclass{article}").unwrap();
    std::fs::create_dir(dir.path().join("figures")).unwrap();
    let before = snapshot(dir.path());
    match Db::open(dir.path(), Options::default()) {
        Err(Error::NotADatabase { reason, .. }) => {
            assert!(reason.contains("no MANIFEST"), "{reason}")
        }
        other => panic!("a directory of someone else's files must be refused: {other:?}"),
    }
    assert_eq!(
        snapshot(dir.path()),
        before,
        "nothing created, nothing changed"
    );
    // A MANIFEST that is not ours is refused the same way.
    std::fs::write(dir.path().join("MANIFEST"), b"not ours").unwrap();
    let before = snapshot(dir.path());
    assert!(matches!(
        Db::open(dir.path(), Options::default()),
        Err(Error::NotADatabase { .. })
    ));
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn a_read_only_open_changes_nothing_and_sees_the_log() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), small_options()).unwrap();
        fill(&db, 0..3000);
        db.flush().unwrap();
        // These stay in the log only.
        fill(&db, 3000..3100);
    }
    assert!(
        files_with_ext(dir.path(), "wal")
            .iter()
            .any(|p| std::fs::metadata(p).unwrap().len() > 100),
        "the test needs a log with records in it"
    );
    let before = snapshot(dir.path());
    let check_read_only = |db: &Db| {
        assert_all_there(db, 0..3100);
        assert_eq!(db.iter().count(), 3100);
        assert!(matches!(db.put(b"k", b"v"), Err(Error::ReadOnly(_))));
        assert!(matches!(db.delete(b"k"), Err(Error::ReadOnly(_))));
        assert!(matches!(db.flush(), Err(Error::ReadOnly(_))));
        assert!(matches!(db.compact(), Err(Error::ReadOnly(_))));
        db.check().unwrap();
        db.wait_for_compaction().unwrap();
        let _ = db.stats();
    };
    check_read_only(&Db::open_read_only(dir.path(), small_options()).unwrap());
    assert_eq!(
        snapshot(dir.path()),
        before,
        "a read-only open wrote something"
    );
    // Beside a writer: no lock is taken.
    let writer = Db::open(dir.path(), small_options()).unwrap();
    check_read_only(&Db::open_read_only(dir.path(), small_options()).unwrap());
    drop(writer);
}

#[test]
fn a_read_only_open_works_on_a_read_only_file_system() {
    let fs = FaultFs::new(1);
    let opts = Options {
        fs: fs.as_dyn(),
        ..small_options()
    };
    let dir = Path::new("/ro/db");
    {
        let db = Db::open(dir, opts.clone()).unwrap();
        fill(&db, 0..2000);
        db.flush().unwrap();
        fill(&db, 2000..2050);
    }
    fs.set_read_only(true);
    let err = Db::open(dir, opts.clone()).expect_err("opening for writes must fail");
    assert!(!err.is_corruption(), "{err}");
    let db = Db::open_read_only(dir, opts).unwrap();
    assert_all_there(&db, 0..2050);
    assert!(matches!(db.put(b"k", b"v"), Err(Error::ReadOnly(_))));
    assert_eq!(db.iter().count(), 2050);
}

#[test]
fn a_read_only_open_needs_a_database() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nothing-here");
    assert!(Db::open_read_only(&missing, Options::default()).is_err());
    assert!(!missing.exists(), "a read-only open created the directory");
    assert!(matches!(
        Db::open_read_only(dir.path(), Options::default()),
        Err(Error::NotADatabase { .. })
    ));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

fn truncate(path: &Path, len: u64) {
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len)
        .unwrap();
}

/// Another process truncating a run file or the live log must not kill us
/// (both were mapped once: `SIGBUS`): a read of the damaged file is an
/// error for that read, other keys stay readable, writes go on.
#[test]
fn files_truncated_by_another_process_are_errors_not_signals() {
    let dir = tempfile::tempdir().unwrap();
    // Levels that take many runs: no merge replaces the files listed below
    // before they are cut (one did, in a loaded full test run).
    let opts = Options {
        block_cache_size: Some(0),
        level_runs: 32,
        ..small_options()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    fill(&db, 0..3000);
    db.flush().unwrap();
    db.wait_for_compaction().unwrap();
    let flushed = files_with_ext(dir.path(), "run");
    // In memory and in the log (or in a run of their own, flushed after
    // the damage: only the files written before it are cut).
    fill(&db, 3000..3100);
    for run in flushed {
        truncate(&run, 64);
    }
    let mut failed = 0;
    for i in (0..3000).step_by(7) {
        match db.get(key(i)) {
            Ok(v) => assert!(v.is_none() || v.as_deref() == Some(&value(i)[..])),
            Err(e) => {
                failed += 1;
                let _ = e.to_string();
            }
        }
    }
    assert!(failed > 0, "reads of truncated run files must fail");
    assert_all_there(&db, 3000..3100);
    for log in files_with_ext(dir.path(), "wal") {
        truncate(&log, 0);
    }
    // The write that meets the truncated log fails; the next one retires it
    // and goes on in a new log.
    let _ = db.put(b"after-1", b"x");
    db.put(b"after-2", b"y").unwrap();
    db.put(b"after-3", b"z").unwrap();
    assert_eq!(db.get(b"after-3").unwrap().as_deref(), Some(&b"z"[..]));
    assert_all_there(&db, 3000..3100);
}

/// Run files carry their identity (database, number, size, checksum),
/// checked against the manifest: a swapped, copied-in or stale file is
/// corruption, never silently old data.
#[test]
fn swapped_or_foreign_run_files_are_corruption() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), small_options()).unwrap();
        fill(&db, 0..1500);
        db.flush().unwrap();
        fill(&db, 1500..3000);
        db.flush().unwrap();
    }
    let runs = files_with_ext(dir.path(), "run");
    assert!(runs.len() >= 2, "{runs:?}");
    let (a, b) = (&runs[0], &runs[1]);
    let tmp = dir.path().join("swap.tmp");
    std::fs::rename(a, &tmp).unwrap();
    std::fs::rename(b, a).unwrap();
    std::fs::rename(&tmp, b).unwrap();
    let err = Db::open(dir.path(), small_options()).expect_err("swapped files");
    assert!(err.is_corruption(), "{err}");
    std::fs::rename(a, &tmp).unwrap();
    std::fs::rename(b, a).unwrap();
    std::fs::rename(&tmp, b).unwrap();
    Db::open(dir.path(), small_options()).unwrap();

    // The same file number from another database.
    let other = tempfile::tempdir().unwrap();
    {
        let db = Db::open(other.path(), small_options()).unwrap();
        fill(&db, 0..1500);
        db.flush().unwrap();
    }
    let theirs = files_with_ext(other.path(), "run");
    let saved = std::fs::read(a).unwrap();
    std::fs::copy(&theirs[0], a).unwrap();
    let err = Db::open(dir.path(), small_options()).expect_err("a foreign run file");
    assert!(err.is_corruption(), "{err}");
    std::fs::write(a, saved).unwrap();
    let db = Db::open(dir.path(), small_options()).unwrap();
    assert_all_there(&db, 0..3000);
}

fn full_disk_options(fs: &FaultFs) -> Options {
    Options {
        fs: fs.as_dyn(),
        ..small_options()
    }
}

/// A full disk: writes fail cleanly and lose nothing acknowledged, the
/// database opens and reads while the disk is full, and writes resume by
/// themselves once space is back, without reopening.
#[test]
fn a_full_disk_loses_nothing_and_writes_resume_when_space_is_back() {
    let fs = FaultFs::new(9);
    let dir = Path::new("/full/db");
    let db = Db::open(dir, full_disk_options(&fs)).unwrap();
    fill(&db, 0..2000);
    fs.set_full(true);
    let mut acked = 2000;
    let mut error = None;
    for i in 2000..20_000 {
        match db.put(key(i), value(i)) {
            Ok(()) => acked = i + 1,
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    let error = error.expect("writes must fail on a full disk");
    assert!(error.is_no_space(), "{error}");
    assert_all_there(&db, 0..acked);
    assert!(db.put(b"still", b"full").unwrap_err().is_no_space());
    drop(db);

    // Opens and reads with no space at all.
    let db = Db::open(dir, full_disk_options(&fs)).expect("open on a full disk");
    assert_all_there(&db, 0..acked);
    assert!(db.put(b"still", b"full").unwrap_err().is_no_space());

    // Space comes back: writes resume in the same Db.
    fs.set_full(false);
    let resumed = acked..acked + 3000;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    for i in resumed.clone() {
        loop {
            match db.put(key(i), value(i)) {
                Ok(()) => break,
                Err(e) if e.is_no_space() && std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(20))
                }
                Err(e) => panic!("writes did not resume after space came back: {e}"),
            }
        }
    }
    db.wait_for_compaction().unwrap();
    assert_all_there(&db, 0..resumed.end);
    drop(db);
    let db = Db::open(dir, full_disk_options(&fs)).unwrap();
    assert_all_there(&db, 0..resumed.end);
    db.check().unwrap();
    assert!(fs.mem().is_some_and(|m| m.used_bytes() > 0));
    let _ = fs.read_dir(dir).unwrap();
}
