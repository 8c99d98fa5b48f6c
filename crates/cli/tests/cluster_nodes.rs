//! A running `slsm serve --cluster` changing under its clients: a blank
//! node joined and caught up from a snapshot, the leader removed, a member
//! restarted from an empty directory, a node SIGKILLed again and again
//! while a snapshot is sent to it and installed.

mod support;

use std::thread;
use std::time::Duration;

use support::cluster::{wait_replicated, write, Cluster, Conn, Resp};

#[test]
fn members_are_added_and_removed_while_serving() {
    // Snapshots every 100 entries: the log behind is purged, so the blank
    // nodes below catch up from a snapshot.
    let mut cluster = Cluster::start_snapshotting_every(100);
    let leader = cluster.leader(Duration::from_secs(20)).expect("a leader");
    for n in 0..300 {
        let (k, v) = (format!("k{n}"), format!("v{n}"));
        assert_eq!(write(&cluster, &["SET", &k, &v]), Resp::Ok("OK".into()));
    }
    // A script's random numbers are the entry's: the same on every node.
    let script = "redis.call('SET', KEYS[1], tostring(math.random()) .. ':' .. math.random(1000000)) return redis.call('GET', KEYS[1])";
    let drawn = write(&cluster, &["EVAL", script, "1", "rnd"]);
    assert!(matches!(&drawn, Resp::Bulk(Some(_))), "{drawn:?}");
    // A blank node joins: added as a learner through a follower (which
    // sends the command on to the leader), caught up, then a voter.
    cluster.wait_status(leader, |s| purged(s) > 0);
    let (four, addrs) = cluster.start_joining();
    let follower = (leader + 1) % 3;
    assert_eq!(
        cluster.admin(follower, &["add", "4", &addrs]),
        Ok("OK".into())
    );
    // (The new node's own view follows the leader's soon after.)
    cluster.wait_status(four, |s| s.contains("raft_voters:1,2,3,4"));
    wait_replicated(
        &cluster.clients[four],
        "k299",
        &Resp::Bulk(Some(b"v299".to_vec())),
    );
    for i in 0..4 {
        wait_replicated(&cluster.clients[i], "rnd", &drawn);
    }
    // The leader is removed: another member leads, and the cluster serves.
    let removed = (leader + 1).to_string();
    assert_eq!(cluster.admin(four, &["remove", &removed]), Ok("OK".into()));
    let voters: Vec<String> = (1..=4)
        .map(|n| n.to_string())
        .filter(|n| *n != removed)
        .collect();
    let voters = format!("raft_voters:{}", voters.join(","));
    cluster.wait_status(four, |status| {
        let leads = status.lines().find_map(|l| l.strip_prefix("raft_leader:"));
        leads.is_some_and(|l| l != "none" && l != removed) && status.contains(&voters)
    });
    cluster.kill(leader);
    assert_eq!(
        write(&cluster, &["SET", "after", "removal"]),
        Resp::Ok("OK".into())
    );
    wait_replicated(
        &cluster.clients[four],
        "after",
        &Resp::Bulk(Some(b"removal".to_vec())),
    );
    // A member restarted from an empty directory is caught up again.
    let blank = (0..3).find(|&i| i != leader).unwrap();
    cluster.kill(blank);
    std::fs::remove_dir_all(cluster.dir.path().join(format!("n{}", blank + 1))).unwrap();
    cluster.spawn(blank);
    wait_replicated(
        &cluster.clients[blank],
        "after",
        &Resp::Bulk(Some(b"removal".to_vec())),
    );
    wait_replicated(&cluster.clients[blank], "rnd", &drawn);
    assert_eq!(write(&cluster, &["INCR", "n"]), Resp::Int(1));
}

#[test]
fn a_node_killed_while_installing_a_snapshot_comes_back_whole() {
    let mut cluster = Cluster::start_snapshotting_every(100);
    let leader = cluster.leader(Duration::from_secs(20)).expect("a leader");
    let behind = (leader + 1) % 3;
    cluster.kill(behind);
    // ~3 MB of data, in entries enough for several snapshots and purges.
    let value = "v".repeat(1000);
    for batch in 0..30 {
        let mut args = vec!["MSET".to_string()];
        for n in batch * 100..(batch + 1) * 100 {
            args.push(format!("k{n}"));
            args.push(format!("{value}{n}"));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_eq!(write(&cluster, &args), Resp::Ok("OK".into()));
        // (Entries past openraft's purge batch, 256, for a purge.)
        for n in 0..12 {
            write(&cluster, &["INCR", &format!("c{}", n % 4)]);
        }
    }
    cluster.wait_status(leader, |s| purged(s) > 0);
    // Started, it is sent a snapshot; SIGKILLed at moments across the
    // transfer and the install, each restart must find the old state or
    // the new one whole, and go on.
    for (round, ms) in [150u64, 250, 350, 450, 600, 800].into_iter().enumerate() {
        cluster.spawn(behind);
        thread::sleep(Duration::from_millis(ms + round as u64 * 7));
        cluster.kill(behind);
    }
    cluster.spawn(behind);
    let last = Resp::Bulk(Some(format!("{value}2999").into_bytes()));
    wait_replicated(&cluster.clients[behind], "k2999", &last);
    wait_replicated(
        &cluster.clients[behind],
        "c3",
        &Resp::Bulk(Some(b"90".to_vec())),
    );
    let mut here = Conn::open(&cluster.clients[behind]).unwrap();
    here.call(&["READONLY"]).unwrap();
    assert_eq!(here.call(&["DBSIZE"]).unwrap(), Resp::Int(3004));
    assert_eq!(
        here.call(&["GET", "k1234"]).unwrap(),
        Resp::Bulk(Some(format!("{value}1234").into_bytes()))
    );
}

/// The log index up to which a node's RAFT STATUS says it has purged.
fn purged(status: &str) -> u64 {
    let line = status
        .lines()
        .find_map(|l| l.strip_prefix("raft_purged_index:"));
    line.and_then(|n| n.trim().parse().ok()).unwrap_or(0)
}
