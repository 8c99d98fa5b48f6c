//! The log and the state machine under SIGKILL: a child process appends
//! entries, applies them, builds snapshots and purges the log behind them,
//! printing what it was told is durable; the parent kills it at random
//! moments, reopens both stores and checks that every entry reported
//! flushed is there, that the state machine holds exactly the effects of
//! the entries up to its applied id (none twice, none half), and that the
//! current snapshot, if any, reads whole. The child picks up where the
//! last one stopped, applying again from the log what the state machine
//! lacks, as openraft does at start.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command as Process, Stdio};
use std::time::{Duration, Instant};

use openraft::storage::{RaftLogStorage, RaftLogStorageExt, RaftStateMachine};
use openraft::{CommittedLeaderId, EntryPayload, LogId, RaftLogReader, RaftSnapshotBuilder};
use slsm_raft::types::Entry;
use slsm_raft::{Command, LogStore, Op, StateMachine};

const CHILD: &str = "SLSM_RAFT_KILL_CHILD";

fn log_id(index: u64) -> LogId<u64> {
    LogId::new(CommittedLeaderId::new(1, 1), index)
}

fn entry(index: u64) -> Entry {
    Entry {
        log_id: log_id(index),
        payload: EntryPayload::Normal(Command {
            at_millis: 0,
            ops: vec![
                Op::Put {
                    key: format!("k{index:08}").into_bytes(),
                    value: format!("v{index}").into_bytes(),
                },
                Op::Incr {
                    key: b"count".to_vec(),
                    by: 1,
                },
            ],
        }),
    }
}

async fn open(dir: &Path) -> (LogStore, StateMachine) {
    (
        LogStore::open(&dir.join("log")).unwrap(),
        StateMachine::open(&dir.join("sm")).unwrap(),
    )
}

/// The child: works until it is killed.
async fn work(dir: &Path) {
    let (mut log, mut sm) = open(dir).await;
    let applied = sm.applied_state().await.unwrap().0.map_or(0, |l| l.index);
    let last = log
        .get_log_state()
        .await
        .unwrap()
        .last_log_id
        .map_or(0, |l| l.index);
    // What the log has and the state machine lacks, applied again.
    for e in log.try_get_log_entries(applied + 1..=last).await.unwrap() {
        let i = e.log_id.index;
        sm.apply([e]).await.unwrap();
        println!("applied {i}");
    }
    let mut i = last + 1;
    loop {
        log.blocking_append([entry(i)]).await.unwrap();
        println!("flushed {i}");
        sm.apply([entry(i)]).await.unwrap();
        println!("applied {i}");
        if i % 97 == 0 {
            let snap = sm
                .get_snapshot_builder()
                .await
                .build_snapshot()
                .await
                .unwrap();
            if let Some(id) = snap.meta.last_log_id {
                log.purge(log_id(id.index.saturating_sub(10)))
                    .await
                    .unwrap();
            }
        }
        i += 1;
    }
}

/// Reopens the stores and checks them against what the child reported.
async fn check(dir: &Path, flushed: u64, applied: u64) -> u64 {
    let (mut log, mut sm) = open(dir).await;
    let state = log.get_log_state().await.unwrap();
    let last = state.last_log_id.map_or(0, |l| l.index);
    assert!(
        last >= flushed,
        "entry {flushed} was reported flushed; the log ends at {last}"
    );
    let first = state.last_purged_log_id.map_or(1, |l| l.index + 1);
    let entries = log.try_get_log_entries(first..=last).await.unwrap();
    let indexes: Vec<u64> = entries.iter().map(|e| e.log_id.index).collect();
    assert_eq!(
        indexes,
        (first..=last).collect::<Vec<_>>(),
        "a hole in the log"
    );
    let at = sm.applied_state().await.unwrap().0.map_or(0, |l| l.index);
    assert!(
        at >= applied,
        "entry {applied} was applied; the state machine is at {at}"
    );
    let count = sm
        .get(b"count")
        .unwrap()
        .map(|v| String::from_utf8(v).unwrap());
    assert_eq!(
        count,
        (at > 0).then(|| at.to_string()),
        "each entry applied once"
    );
    for i in [1, at / 2, at].into_iter().filter(|&i| i > 0) {
        let v = sm.get(format!("k{i:08}").as_bytes()).unwrap();
        assert_eq!(v, Some(format!("v{i}").into_bytes()), "k{i}");
    }
    assert_eq!(
        sm.get(format!("k{:08}", at + 1).as_bytes()).unwrap(),
        None,
        "half an entry"
    );
    if let Some(snap) = sm.get_current_snapshot().await.unwrap() {
        assert!(snap.meta.last_log_id.map_or(0, |l| l.index) <= at);
    }
    at
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_at_random_moments_loses_nothing_reported() {
    if let Ok(dir) = std::env::var(CHILD) {
        work(Path::new(&dir)).await;
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let started = Instant::now();
    let mut seed = 0x9e37_79b9_u64;
    let mut progress = 0;
    for round in 0..8 {
        let mut child = Process::new(&exe)
            .args([
                "sigkill_at_random_moments_loses_nothing_reported",
                "--exact",
                "--nocapture",
            ])
            .env(CHILD, dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let run_for = Duration::from_millis(150 + (seed >> 33) % 600);
        let stdout = child.stdout.take().unwrap();
        let reader = std::thread::spawn(move || {
            let (mut flushed, mut applied) = (0u64, 0u64);
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let (what, n) = line.split_once(' ').unwrap_or(("", "0"));
                let n: u64 = n.trim().parse().unwrap_or(0);
                match what {
                    "flushed" => flushed = flushed.max(n),
                    "applied" => applied = applied.max(n),
                    _ => {}
                }
            }
            (flushed, applied)
        });
        std::thread::sleep(run_for);
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let (flushed, applied) = reader.join().unwrap();
        let at = check(dir.path(), flushed, applied).await;
        assert!(
            at >= progress,
            "round {round}: went back from {progress} to {at}"
        );
        progress = at;
        assert!(started.elapsed() < Duration::from_secs(120), "bounded");
    }
    assert!(progress > 0, "the children made progress");
}
