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
