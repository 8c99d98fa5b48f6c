//! `slsm serve --cluster`: three processes on loopback, driven from
//! outside as a user would (the Redis protocol, `-MOVED` followed), with
//! the leader SIGKILLed and restarted, or SIGSTOPped past the election
//! timeout and continued, again and again while clients write and read.
//! Every client's operations are recorded (a timed-out or failed write as
//! of unknown outcome) and each key's history is checked for
//! linearizability (`support/linearizability.rs`): an acknowledged write
//! that was lost, or a stale read served by a deposed leader, fails it.
//!
//! `SLSM_CLUSTER_FAULTS` (default 4) sets the number of faults, for soaks.

mod support;

use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use support::cluster::{Client, Cluster, Conn, Outcome, Resp};
use support::linearizability::{linearizable, Kind, Op};

const KEYS: usize = 3;
const CLIENTS: usize = 4;

fn int_of(r: &Resp) -> Option<i64> {
    match r {
        Resp::Int(n) => Some(*n),
        Resp::Bulk(Some(b)) => std::str::from_utf8(b).ok()?.parse().ok(),
        _ => None,
    }
}

/// A client's loop: SET, GET and INCR on the shared keys, recorded.
fn client_loop(
    me: usize,
    addrs: Vec<String>,
    start: Instant,
    stop: Arc<AtomicBool>,
    history: Arc<Mutex<Vec<Vec<Op>>>>,
    acked: Arc<AtomicU64>,
) {
    let mut client = Client {
        addrs,
        at: me % 3,
        conn: None,
        wait: Duration::from_secs(8),
    };
    let now = || start.elapsed().as_nanos() as u64;
    let mut seq = 0i64;
    while !stop.load(Ordering::Relaxed) {
        seq += 1;
        let key_index = (seq as usize * 7 + me) % KEYS;
        let key = format!("k{key_index}");
        let call = now();
        let (kind, outcome) = match seq % 3 {
            0 => {
                let v = (me as i64 + 1) * 1_000_000 + seq;
                let o = client.call(&["SET", &key, &v.to_string()]);
                (Kind::Set(v), o)
            }
            1 => match client.call(&["GET", &key]) {
                Outcome::Done(r) => (Kind::Get(int_of(&r)), Outcome::Done(r)),
                Outcome::Unknown => (Kind::Get(None), Outcome::Unknown),
            },
            _ => match client.call(&["INCR", &key]) {
                Outcome::Done(r) => (Kind::Incr(int_of(&r)), Outcome::Done(r)),
                Outcome::Unknown => (Kind::Incr(None), Outcome::Unknown),
            },
        };
        let ret = match outcome {
            Outcome::Done(Resp::Error(e)) => panic!("unexpected error {e}"),
            Outcome::Done(_) => {
                acked.fetch_add(1, Ordering::Relaxed);
                Some(now())
            }
            Outcome::Unknown => None,
        };
        history.lock().unwrap()[key_index].push(Op { call, ret, kind });
    }
}

fn faults() -> usize {
    std::env::var("SLSM_CLUSTER_FAULTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4)
}

/// Waits until a write through the cluster is acknowledged: how long it took.
fn first_write(addrs: &[String], since: Instant) -> Duration {
    let mut client = Client {
        addrs: addrs.to_vec(),
        at: 0,
        conn: None,
        // Short: a paused node must not hide a leader elected meanwhile.
        wait: Duration::from_millis(300),
    };
    loop {
        match client.call(&["SET", "probe", "1"]) {
            Outcome::Done(Resp::Ok(_)) => return since.elapsed(),
            Outcome::Done(other) => eprintln!("probe: {other:?}"),
            Outcome::Unknown => {
                eprintln!("probe: unknown at {}", client.addrs[client.at]);
                thread::sleep(Duration::from_millis(100))
            }
        }
        if since.elapsed() > Duration::from_secs(15) {
            if let Ok(pids) = std::env::var("SLSM_CLUSTER_PIDS_FILE") {
                std::fs::write(&pids, "hang").ok();
                thread::sleep(Duration::from_secs(60));
            }
        }
        assert!(
            since.elapsed() < Duration::from_secs(30),
            "no write for 30 s"
        );
    }
}

#[test]
fn histories_stay_linearizable_through_leader_kills_and_pauses() {
    let mut cluster = Cluster::start();
    let leader = cluster.leader(Duration::from_secs(20)).expect("a leader");
    let start = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let history = Arc::new(Mutex::new(vec![Vec::new(); KEYS]));
    let acked = Arc::new(AtomicU64::new(0));
    let workers: Vec<_> = (0..CLIENTS)
        .map(|me| {
            let (addrs, stop, history, acked) = (
                cluster.clients.clone(),
                Arc::clone(&stop),
                Arc::clone(&history),
                Arc::clone(&acked),
            );
            thread::spawn(move || client_loop(me, addrs, start, stop, history, acked))
        })
        .collect();
    let mut recoveries = Vec::new();
    let mut leader = leader;
    for fault in 0..faults() {
        thread::sleep(Duration::from_millis(700));
        let at = Instant::now();
        if fault % 2 == 0 {
            cluster.kill(leader);
            if std::env::var("SLSM_CLUSTER_VERBOSE").is_ok() {
                eprintln!("killed {}", cluster.clients[leader]);
            }
            recoveries.push(first_write(&cluster.clients, at));
            cluster.spawn(leader);
        } else {
            // Paused past the election timeout: a new leader is elected;
            // the old one, continued, must not acknowledge or serve stale.
            cluster.signal(leader, libc::SIGSTOP);
            recoveries.push(first_write(&cluster.clients, at));
            thread::sleep(Duration::from_millis(300));
            cluster.signal(leader, libc::SIGCONT);
        }
        leader = cluster
            .leader(Duration::from_secs(20))
            .expect("a leader again");
    }
    thread::sleep(Duration::from_millis(500));
    stop.store(true, Ordering::Relaxed);
    for w in workers {
        w.join().unwrap();
    }
    let histories = history.lock().unwrap().clone();
    for (k, ops) in histories.iter().enumerate() {
        assert!(
            linearizable(ops),
            "key k{k}'s history of {} operations is not linearizable: {ops:?}",
            ops.len()
        );
    }
    let worst = recoveries.iter().max().copied().unwrap_or_default();
    eprintln!(
        "{} operations acknowledged, {} faults; first write after a fault: {recoveries:?}",
        acked.load(Ordering::Relaxed),
        faults()
    );
    assert!(
        acked.load(Ordering::Relaxed) > 50,
        "the cluster barely served"
    );
    assert!(worst < Duration::from_secs(10), "a failover took {worst:?}");
}

#[test]
fn the_cluster_speaks_redis_cluster() {
    let cluster = Cluster::start();
    let leader = cluster.leader(Duration::from_secs(20)).expect("a leader");
    let follower = (leader + 1) % 3;
    let mut f = Conn::open(&cluster.clients[follower]).unwrap();
    // A follower redirects writes and (by default) reads to the leader.
    let moved = format!("MOVED 12182 {}", cluster.clients[leader]);
    // (Once the follower has heard from the new leader: until then it
    // answers CLUSTERDOWN.)
    let until = Instant::now() + Duration::from_secs(10);
    let mut reply = f.call(&["SET", "foo", "bar"]).unwrap();
    while reply == Resp::Error("CLUSTERDOWN The cluster is down".into()) && Instant::now() < until {
        thread::sleep(Duration::from_millis(50));
        reply = f.call(&["SET", "foo", "bar"]).unwrap();
    }
    assert_eq!(reply, Resp::Error(moved.clone()));
    assert_eq!(f.call(&["GET", "foo"]).unwrap(), Resp::Error(moved));
    let mut l = Conn::open(&cluster.clients[leader]).unwrap();
    assert_eq!(
        l.call(&["SET", "foo", "bar"]).unwrap(),
        Resp::Ok("OK".into())
    );
    assert_eq!(
        l.call(&["GET", "foo"]).unwrap(),
        Resp::Bulk(Some(b"bar".to_vec()))
    );
    // MULTI/EXEC and a script are entries too.
    assert_eq!(l.call(&["MULTI"]).unwrap(), Resp::Ok("OK".into()));
    l.call(&["INCR", "n"]).unwrap();
    l.call(&["RPUSH", "list", "a", "b"]).unwrap();
    assert_eq!(
        l.call(&["EXEC"]).unwrap(),
        Resp::Array(vec![Resp::Int(1), Resp::Int(2)])
    );
    let script = "return redis.call('INCRBY', KEYS[1], ARGV[1])";
    assert_eq!(
        l.call(&["EVAL", script, "1", "n", "41"]).unwrap(),
        Resp::Int(42)
    );
    // WATCH sees another client's write.
    let mut other = Conn::open(&cluster.clients[leader]).unwrap();
    assert_eq!(l.call(&["WATCH", "foo"]).unwrap(), Resp::Ok("OK".into()));
    other.call(&["SET", "foo", "changed"]).unwrap();
    l.call(&["MULTI"]).unwrap();
    l.call(&["SET", "foo", "mine"]).unwrap();
    // (The parser reads RESP2's null array, `*-1`, as an empty array.)
    assert_eq!(l.call(&["EXEC"]).unwrap(), Resp::Array(vec![]));
    // ACL users are each node's own; a restricted user's commands are
    // checked before they are proposed, and again at EXEC.
    let ok = |r: Resp| assert_eq!(r, Resp::Ok("OK".into()));
    ok(
        l.call(&["ACL", "SETUSER", "app", "on", ">pw", "+@all", "~app:*"])
            .unwrap(),
    );
    let mut app = Conn::open(&cluster.clients[leader]).unwrap();
    ok(app.call(&["AUTH", "app", "pw"]).unwrap());
    ok(app.call(&["SET", "app:1", "v"]).unwrap());
    assert!(
        matches!(app.call(&["SET", "other", "v"]).unwrap(), Resp::Error(e) if e.starts_with("NOPERM"))
    );
    ok(app.call(&["MULTI"]).unwrap());
    app.call(&["INCR", "app:n"]).unwrap();
    app.call(&["SET", "app:2", "v"]).unwrap();
    ok(l.call(&["ACL", "SETUSER", "app", "-incr"]).unwrap());
    match app.call(&["EXEC"]).unwrap() {
        Resp::Array(r) => {
            assert!(
                matches!(&r[0], Resp::Error(e) if e.contains("ACLs rules changed")),
                "{r:?}"
            );
            assert_eq!(r[1], Resp::Ok("OK".into()));
        }
        other => panic!("EXEC: {other:?}"),
    }
    // A restricted user's script is checked call by call where the entry
    // applies (its rules travel with it).
    let script = "return redis.call('SET', 'other', 'x')";
    match app.call(&["EVAL", script, "0"]).unwrap() {
        Resp::Error(e) => assert!(e.contains("The user executing the script"), "{e}"),
        other => panic!("a refused call in a script: {other:?}"),
    }
    let allowed = "return redis.call('SET', 'app:s', 'x')";
    ok(app.call(&["EVAL", allowed, "0"]).unwrap());
    assert_eq!(l.call(&["EXISTS", "other"]).unwrap(), Resp::Int(0));
    // A plain SET (applied as one batch with no read, unless the node owes
    // notices for it) replaces whatever the key held, its TTL too, alike on
    // every node: here the follower tells keyspace notices, the others not.
    ok(f.call(&["CONFIG", "SET", "notify-keyspace-events", "KEA"])
        .unwrap());
    assert_eq!(l.call(&["RPUSH", "l2", "a", "b"]).unwrap(), Resp::Int(2));
    ok(l.call(&["SET", "t", "v", "EX", "1000"]).unwrap());
    ok(l.call(&["SET", "l2", "s"]).unwrap());
    ok(l.call(&["SET", "t", "w"]).unwrap());
    ok(l.call(&["SET", "done", "1"]).unwrap());
    let replaced = |c: &mut Conn| {
        assert_eq!(c.call(&["TYPE", "l2"]).unwrap(), Resp::Ok("string".into()));
        assert!(
            matches!(c.call(&["LLEN", "l2"]).unwrap(), Resp::Error(e) if e.starts_with("WRONGTYPE"))
        );
        assert_eq!(c.call(&["TTL", "t"]).unwrap(), Resp::Int(-1));
        assert_eq!(
            c.call(&["GET", "t"]).unwrap(),
            Resp::Bulk(Some(b"w".to_vec()))
        );
    };
    replaced(&mut l);
    for i in (0..3).filter(|&i| i != leader) {
        let one = Resp::Bulk(Some(b"1".to_vec()));
        support::cluster::wait_replicated(&cluster.clients[i], "done", &one);
        let mut c = Conn::open(&cluster.clients[i]).unwrap();
        ok(c.call(&["READONLY"]).unwrap());
        replaced(&mut c);
    }
    // After READONLY a follower serves reads as it has them: soon the same.
    assert_eq!(f.call(&["READONLY"]).unwrap(), Resp::Ok("OK".into()));
    let until = Instant::now() + Duration::from_secs(5);
    while f.call(&["GET", "n"]).unwrap() != Resp::Bulk(Some(b"42".to_vec())) {
        assert!(
            Instant::now() < until,
            "the follower never applied the writes"
        );
        thread::sleep(Duration::from_millis(20));
    }
    // One shard, all slots, the leader its master.
    match f.call(&["CLUSTER", "SLOTS"]).unwrap() {
        Resp::Array(shards) => match &shards[..] {
            [Resp::Array(range)] => {
                assert_eq!(range[0], Resp::Int(0));
                assert_eq!(range[1], Resp::Int(16383));
                assert_eq!(range.len(), 5, "master and two replicas: {range:?}");
                let port: i64 = cluster.clients[leader]
                    .rsplit(':')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap();
                assert!(matches!(&range[2], Resp::Array(m) if m[1] == Resp::Int(port)));
            }
            other => panic!("CLUSTER SLOTS: {other:?}"),
        },
        other => panic!("CLUSTER SLOTS: {other:?}"),
    }
    // Membership through any node.
    let status = Command::new(env!("CARGO_BIN_EXE_slsm"))
        .args(["cluster", "status", "--node", &cluster.clients[follower]])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(text.contains("raft_voters:1,2,3"), "{text}");
}

#[test]
fn the_checker_rejects_what_is_not_linearizable() {
    support::linearizability::tests::checker_accepts_and_rejects();
}
