//! Three nodes on loopback: they elect a leader, replicate writes, answer
//! linearizable reads only on the leader, survive the leader's loss, and a
//! node restarted (from its disk, or from nothing) catches up.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use slsm_raft::{Command, Member, Node, NodeConfig, NodeId, Op, OpResult, WriteError};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn members(n: u64) -> BTreeMap<NodeId, Member> {
    (1..=n)
        .map(|id| {
            let m = Member {
                raft: format!("127.0.0.1:{}", free_port()),
                client: format!("127.0.0.1:{}", free_port()),
            };
            (id, m)
        })
        .collect()
}

fn config(id: NodeId, root: &Path, members: &BTreeMap<NodeId, Member>) -> NodeConfig {
    let mut c = NodeConfig::new(id, root.join(format!("n{id}")), members.clone());
    c.heartbeat = Duration::from_millis(50);
    c.election_timeout = (Duration::from_millis(300), Duration::from_millis(600));
    c
}

/// The leader all of `nodes` agree on, waiting up to 10 s.
async fn leader(nodes: &[Arc<Node>]) -> Arc<Node> {
    let start = Instant::now();
    loop {
        let seen: Vec<Option<NodeId>> = nodes.iter().map(|n| n.leader()).collect();
        if let Some(Some(l)) = seen.first() {
            if seen.iter().all(|s| *s == Some(*l)) {
                if let Some(n) = nodes.iter().find(|n| n.id() == *l) {
                    return Arc::clone(n);
                }
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no leader: {seen:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn put(key: &str, value: &str) -> Command {
    Command {
        at_millis: 0,
        ops: vec![Op::Put {
            key: key.into(),
            value: value.into(),
        }],
    }
}

fn incr(key: &str) -> Command {
    Command {
        at_millis: 0,
        ops: vec![Op::Incr {
            key: key.into(),
            by: 1,
        }],
    }
}

/// Waits until `node`'s copy of `key` is `want` (up to 10 s).
async fn converges(node: &Node, key: &str, want: Option<&str>) {
    let start = Instant::now();
    loop {
        let got = node.read(key.as_bytes(), false).await.unwrap();
        if got.as_deref() == want.map(|w| w.as_bytes()) {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "node {} has {key} = {got:?}, not {want:?}: {:?}",
            node.id(),
            node.raft().metrics().borrow()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_nodes_replicate_and_survive_the_leader() {
    let root = tempfile::tempdir().unwrap();
    let m = members(3);
    let mut nodes = Vec::new();
    for id in 1..=3 {
        nodes.push(Node::start(config(id, root.path(), &m)).await.unwrap());
    }
    let first = leader(&nodes).await;
    for i in 0..100 {
        let r = first.write(incr("counter")).await.unwrap();
        assert_eq!(r.results, vec![OpResult::Value(i + 1)]);
    }
    first.write(put("greeting", "hello")).await.unwrap();
    for n in &nodes {
        converges(n, "counter", Some("100")).await;
        converges(n, "greeting", Some("hello")).await;
    }
    // Only the leader serves a linearizable read; a follower names it.
    let follower = nodes.iter().find(|n| n.id() != first.id()).unwrap();
    match follower.read(b"counter", true).await {
        Err(WriteError::NotLeader(Some((id, _)))) => assert_eq!(id, first.id()),
        other => panic!("a follower answered a linearizable read: {other:?}"),
    }
    match follower.write(incr("counter")).await {
        Err(WriteError::NotLeader(Some((id, _)))) => assert_eq!(id, first.id()),
        other => panic!("a follower took a write: {other:?}"),
    }
    assert_eq!(
        first.read(b"counter", true).await.unwrap().as_deref(),
        Some(&b"100"[..])
    );

    // The leader goes: the other two elect one and go on.
    let gone = first.id();
    first.shutdown().await;
    let rest: Vec<Arc<Node>> = nodes.iter().filter(|n| n.id() != gone).cloned().collect();
    drop(first);
    nodes.retain(|n| n.id() != gone);
    let lost = Instant::now();
    let second = leader(&rest).await;
    assert_ne!(second.id(), gone);
    let r = loop {
        match second.write(incr("counter")).await {
            Ok(r) => break r,
            Err(e) => {
                assert!(
                    lost.elapsed() < Duration::from_secs(10),
                    "no write after the loss: {e}"
                );
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    };
    assert_eq!(
        r.results,
        vec![OpResult::Value(101)],
        "no acknowledged increment lost"
    );
    eprintln!(
        "first write after the leader's loss acknowledged in {:?}",
        lost.elapsed()
    );

    // The old leader comes back from its disk and catches up.
    let back = Node::start(config(gone, root.path(), &m)).await.unwrap();
    converges(&back, "counter", Some("101")).await;
    converges(&back, "greeting", Some("hello")).await;
    for n in rest.iter().chain([&back]) {
        n.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_restarted_from_nothing_catches_up_by_snapshot() {
    let root = tempfile::tempdir().unwrap();
    let m = members(3);
    let cfg = |id| {
        let mut c = config(id, root.path(), &m);
        c.snapshot_every = 50;
        c.logs_to_keep = 10;
        c
    };
    let mut nodes = Vec::new();
    for id in 1..=3 {
        nodes.push(Node::start(cfg(id)).await.unwrap());
    }
    let lead = leader(&nodes).await;
    let victim = nodes.iter().find(|n| n.id() != lead.id()).unwrap().id();
    let victim_node = nodes.iter().position(|n| n.id() == victim).unwrap();
    let node = nodes.remove(victim_node);
    node.shutdown().await;
    drop(node);
    std::fs::remove_dir_all(root.path().join(format!("n{victim}"))).unwrap();
    for i in 0..300 {
        lead.write(put(&format!("k{i:04}"), &format!("v{i}")))
            .await
            .unwrap();
    }
    // The log behind the leader's snapshot is gone: the empty node gets
    // the snapshot, then the log's tail.
    let back = Node::start(cfg(victim)).await.unwrap();
    converges(&back, "k0000", Some("v0")).await;
    converges(&back, "k0299", Some("v299")).await;
    let snapshot = back.raft().metrics().borrow().snapshot;
    assert!(snapshot.is_some(), "caught up by a snapshot");
    for n in nodes.iter().chain([&back]) {
        n.shutdown().await;
    }
}
