use std::sync::{Arc, Weak};

use super::{Inputs, Job};
use crate::memtable::MemRun;
use crate::{Db, Options};

/// A database on an in-memory file system whose jobs run only when the
/// test calls them, with memory runs of a few hundred entries.
fn small_db() -> Db {
    let mut opts = Options::default().in_memory();
    opts.background_merges = false;
    opts.run_entries = 256;
    opts.memory_runs = 8;
    Db::open("/db", opts).unwrap()
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

/// A merge picked from one version and run after a flush changed the
/// version must not keep that version's memory runs alive: a level merge
/// takes seconds, and every run flushed meanwhile would stay in memory,
/// outside the budget's account, until it finished.
#[test]
fn a_job_keeps_its_inputs_not_the_version_it_was_picked_from() {
    let db = small_db();
    let (jobs, versions) = db.jobs_and_versions();
    let mut i = 0;
    while versions
        .current()
        .levels
        .first()
        .is_none_or(|l| l.is_empty())
    {
        db.put(key(i), b"v").unwrap();
        i += 1;
    }
    while versions
        .current()
        .immutables_oldest_first()
        .next()
        .is_none()
    {
        db.put(key(i), b"v").unwrap();
        i += 1;
    }
    let (merge, sealed) = {
        let version = versions.current();
        let inputs = Inputs::Disk(version.levels[0].clone());
        let sealed: Vec<Weak<MemRun>> = version
            .immutables_oldest_first()
            .map(Arc::downgrade)
            .collect();
        (Job::new(&version, inputs, 1), sealed)
    };

    jobs.flush_all().unwrap();
    assert!(
        sealed.iter().all(|run| run.upgrade().is_none()),
        "the flushed memory runs outlive their flush while a merge is pending"
    );

    jobs.run(merge).unwrap();
    for k in 0..i {
        assert_eq!(
            db.get(key(k)).unwrap().as_deref(),
            Some(&b"v"[..]),
            "key {k}"
        );
    }
}

/// Bytes of every run file of `db`, and the entries they hold.
fn files_on_disk(db: &Db) -> (u64, u64) {
    let levels = db.stats().levels;
    (
        levels.iter().map(|l| l.bytes).sum(),
        levels.iter().map(|l| l.entries).sum(),
    )
}

/// Writes every one of `keys` keys (not a multiple of 7) `rounds` times
/// over, in a stride-7 order (values that do not
/// compress), on a database whose runs hold a few hundred entries.
fn update_heavy(max_space_amplification: f64, keys: u32, rounds: u32) -> Db {
    let mut opts = Options::default().in_memory();
    opts.background_merges = false;
    opts.run_entries = 256;
    opts.memory_runs = 4;
    opts.max_space_amplification = max_space_amplification;
    let db = Db::open("/db", opts).unwrap();
    let mut state = 7u64;
    for round in 0..rounds {
        for i in 0..keys {
            let value: Vec<u8> = (0..100)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (state >> 56) as u8
                })
                .collect();
            db.put(
                key(i * 7 % keys),
                [&round.to_le_bytes()[..], &value].concat(),
            )
            .unwrap();
        }
    }
    db.wait_for_compaction().unwrap();
    db
}

/// A workload that rewrites the same keys leaves at most
/// `max_space_amplification` times the live data in run files once the
/// due merges ran (the bound is checked against the same data after a
/// full compaction), and every key reads its newest value.
#[test]
fn updates_leave_at_most_the_space_amplification_bound() {
    let (keys, rounds) = (3001, 30);
    let db = update_heavy(2.0, keys, rounds);
    let (bytes, entries) = files_on_disk(&db);
    assert!(db.stats().space_merges > 0, "no merge bounded the space");
    db.compact().unwrap();
    let (live, live_entries) = files_on_disk(&db);
    assert_eq!(live_entries, u64::from(keys));
    assert!(
        bytes as f64 <= 2.0 * live as f64,
        "{bytes} bytes ({entries} entries) on disk for {live} bytes of live data"
    );
    for i in 0..keys {
        let v = db.get(key(i)).unwrap().unwrap();
        assert_eq!(v[..4], (rounds - 1).to_le_bytes(), "key {i}");
    }

    // The same workload without the bound keeps more: the check above is
    // one the tiered levels alone fail.
    let unbounded = update_heavy(f64::INFINITY, keys, rounds);
    let (bytes, _) = files_on_disk(&unbounded);
    assert_eq!(unbounded.stats().space_merges, 0);
    assert!(bytes as f64 > 2.0 * live as f64, "{bytes} against {live}");
}

/// A sequential load writes new keys only: its runs do not overlap the
/// deepest level's data, so the bound never rewrites it.
#[test]
fn a_sequential_load_is_not_rewritten_for_space() {
    let mut opts = Options::default().in_memory();
    opts.background_merges = false;
    opts.run_entries = 256;
    opts.memory_runs = 4;
    let db = Db::open("/db", opts).unwrap();
    for i in 0..40_000 {
        db.put(key(i), [7u8; 100]).unwrap();
    }
    db.wait_for_compaction().unwrap();
    assert_eq!(db.stats().space_merges, 0);
    assert!(db.stats().levels.len() > 1 || db.stats().levels[0].runs > 1);
}

/// `wait_for_compaction` returns once the files the merges replaced are
/// deleted, even when the clean-up thread is busy with something else.
#[test]
fn wait_for_compaction_returns_after_the_replaced_files_are_gone() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        run_entries: 256,
        memory_runs: 4,
        level_runs: 2,
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    // Deletions deferred from now on wait behind this job.
    crate::reaper::defer(|| std::thread::sleep(std::time::Duration::from_millis(500)));
    for round in 0..10u32 {
        for i in 0..2000 {
            db.put(key(i), [round as u8; 100]).unwrap();
        }
    }
    db.flush().unwrap();
    db.wait_for_compaction().unwrap();
    let on_disk: u64 = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".run"))
        .map(|e| e.metadata().unwrap().len())
        .sum();
    let in_version: u64 = db.stats().levels.iter().map(|l| l.bytes).sum();
    assert_eq!(on_disk, in_version, "replaced run files left behind");
}
