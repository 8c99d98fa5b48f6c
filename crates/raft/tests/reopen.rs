//! The log and the state machine across close and reopen, and a snapshot's
//! data (not only its metadata) moved from one state machine to another.

use openraft::storage::{RaftLogStorage, RaftLogStorageExt, RaftStateMachine};
use openraft::{CommittedLeaderId, EntryPayload, LogId, RaftLogReader, RaftSnapshotBuilder, Vote};
use slsm_raft::types::Entry;
use slsm_raft::{Command, LogStore, Op, StateMachine};

fn log_id(term: u64, index: u64) -> LogId<u64> {
    LogId::new(CommittedLeaderId::new(term, 1), index)
}

fn put_entry(term: u64, index: u64, key: &str, value: &str) -> Entry {
    Entry {
        log_id: log_id(term, index),
        payload: EntryPayload::Normal(Command {
            at_millis: 0,
            ops: vec![Op::Put {
                key: key.into(),
                value: value.into(),
            }],
        }),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_carries_the_data_and_survives_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let mut leader = StateMachine::open(&dir.path().join("a")).unwrap();
    let entries: Vec<Entry> = (1..=200)
        .map(|i| put_entry(1, i, &format!("k{i:04}"), &format!("v{i}")))
        .collect();
    leader.apply(entries).await.unwrap();
    let snap = leader
        .get_snapshot_builder()
        .await
        .build_snapshot()
        .await
        .unwrap();
    assert_eq!(snap.meta.last_log_id, Some(log_id(1, 200)));
    let mut follower = StateMachine::open(&dir.path().join("b")).unwrap();
    follower.apply([put_entry(1, 1, "old", "x")]).await.unwrap();
    let mut incoming = follower.begin_receiving_snapshot().await.unwrap();
    *incoming = *snap.snapshot;
    follower
        .install_snapshot(&snap.meta, incoming)
        .await
        .unwrap();
    let check = |sm: &StateMachine| {
        for i in [1u64, 100, 200] {
            let got = sm.get(format!("k{i:04}").as_bytes()).unwrap();
            assert_eq!(got.as_deref(), Some(format!("v{i}").as_bytes()), "k{i:04}");
        }
        assert_eq!(sm.get(b"old").unwrap(), None, "the old state is gone");
    };
    check(&follower);
    drop(follower);
    let mut reopened = StateMachine::open(&dir.path().join("b")).unwrap();
    check(&reopened);
    assert_eq!(
        reopened.applied_state().await.unwrap().0,
        Some(log_id(1, 200))
    );
    assert_eq!(
        reopened.get_current_snapshot().await.unwrap().unwrap().meta,
        snap.meta
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_keeps_entries_vote_truncation_and_purge_across_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log");
    {
        let mut log = LogStore::open(&path).unwrap();
        let entries: Vec<Entry> = (0..=20)
            .map(|i| put_entry(1, i, "k", &i.to_string()))
            .collect();
        log.blocking_append(entries).await.unwrap();
        log.save_vote(&Vote::new(3, 2)).await.unwrap();
        log.truncate(log_id(1, 15)).await.unwrap();
        log.purge(log_id(1, 4)).await.unwrap();
    }
    let mut log = LogStore::open(&path).unwrap();
    assert_eq!(log.read_vote().await.unwrap(), Some(Vote::new(3, 2)));
    let state = log.get_log_state().await.unwrap();
    assert_eq!(state.last_purged_log_id, Some(log_id(1, 4)));
    assert_eq!(state.last_log_id, Some(log_id(1, 14)));
    let got = log.try_get_log_entries(0..100).await.unwrap();
    let indexes: Vec<u64> = got.iter().map(|e| e.log_id.index).collect();
    assert_eq!(indexes, (5..=14).collect::<Vec<_>>());
}
