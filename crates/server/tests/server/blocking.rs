//! The blocking pops (BLPOP BRPOP BLMOVE BRPOPLPUSH BZPOPMIN BZPOPMAX)
//! through a real client: served by a later push from another client,
//! woken by the push rather than by the periodic recheck, timeouts, many
//! consumers on one queue (each element to exactly one), no blocking in
//! MULTI, pipelined commands behind a blocked one, and a blocked client
//! that leaves or a server that stops. Reply fidelity for the cases that
//! do not wait is `bench/redis/differential.py`'s.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use redis::{cmd, Commands, Value};

use crate::common;
use common::{request, wait_blocked, Server};

#[test]
fn a_blocked_pop_is_served_by_a_later_push() {
    let s = Server::start(None);
    let mut other = s.conn();
    type Pop = Option<(String, String)>;
    for (command, push) in [("BLPOP", "RPUSH"), ("BRPOP", "LPUSH")] {
        let mut c = s.conn();
        let waiter = std::thread::spawn(move || -> Pop {
            cmd(command)
                .arg("none")
                .arg("q")
                .arg(5)
                .query(&mut c)
                .unwrap()
        });
        wait_blocked(&mut other, 1);
        let _: () = cmd(push).arg("q").arg("job").query(&mut other).unwrap();
        assert_eq!(waiter.join().unwrap(), Some(("q".into(), "job".into())));
        wait_blocked(&mut other, 0);
    }
    // BLMOVE and BRPOPLPUSH move what arrives; BZPOPMIN pops a new member.
    let mut c = s.conn();
    let waiter = std::thread::spawn(move || -> Option<String> {
        cmd("BLMOVE")
            .arg("src")
            .arg("dst")
            .arg("LEFT")
            .arg("RIGHT")
            .arg(5)
            .query(&mut c)
            .unwrap()
    });
    wait_blocked(&mut other, 1);
    let _: () = other.rpush("src", "moved").unwrap();
    assert_eq!(waiter.join().unwrap().as_deref(), Some("moved"));
    let dst: Vec<String> = other.lrange("dst", 0, -1).unwrap();
    assert_eq!(dst, ["moved"]);
    let mut c = s.conn();
    let waiter = std::thread::spawn(move || -> Vec<String> {
        cmd("BZPOPMIN").arg("z").arg(0).query(&mut c).unwrap()
    });
    wait_blocked(&mut other, 1);
    let _: () = other.zadd("z", "m", 2.5).unwrap();
    assert_eq!(waiter.join().unwrap(), ["z", "m", "2.5"]);
}

/// Twenty rounds of block-then-push: a push wakes its waiter at once. Were
/// waiters woken only by their periodic recheck (every 500 ms), the rounds
/// would take ~5 s.
#[test]
fn a_push_wakes_its_waiter_at_once() {
    let s = Server::start(None);
    let mut other = s.conn();
    let start = Instant::now();
    for i in 0..20 {
        let mut c = s.conn();
        let waiter = std::thread::spawn(move || -> Option<(String, String)> {
            cmd("BLPOP").arg("q").arg(0).query(&mut c).unwrap()
        });
        wait_blocked(&mut other, 1);
        let _: () = other.rpush("q", i).unwrap();
        assert_eq!(waiter.join().unwrap(), Some(("q".into(), i.to_string())));
        wait_blocked(&mut other, 0);
    }
    let took = start.elapsed();
    assert!(
        took < Duration::from_millis(2500),
        "20 rounds took {took:?}"
    );
}

#[test]
fn a_timeout_answers_null_after_it_passes() {
    let s = Server::start(None);
    let mut c = s.conn();
    let start = Instant::now();
    let got: Option<(String, String)> = cmd("BLPOP").arg("none").arg(0.2).query(&mut c).unwrap();
    assert_eq!(got, None);
    let took = start.elapsed();
    assert!(took >= Duration::from_millis(200), "{took:?}");
    assert!(took < Duration::from_secs(3), "{took:?}");
    // The connection goes on.
    let pong: String = cmd("PING").query(&mut c).unwrap();
    assert_eq!(pong, "PONG");
}

/// Four consumers blocked on one queue while a producer pushes 200 jobs:
/// every job reaches exactly one consumer.
#[test]
fn consumers_of_one_queue_share_its_jobs() {
    let s = Server::start(None);
    let consumers: Vec<_> = (0..4)
        .map(|_| {
            let mut c = s.conn();
            std::thread::spawn(move || {
                let mut got = Vec::new();
                loop {
                    let job: Option<(String, String)> =
                        cmd("BLPOP").arg("jobs").arg(2).query(&mut c).unwrap();
                    match job {
                        Some((_, j)) if j == "stop" => return got,
                        Some((_, j)) => got.push(j.parse::<u32>().unwrap()),
                        None => panic!("a consumer timed out"),
                    }
                }
            })
        })
        .collect();
    let mut p = s.conn();
    for i in 0..200u32 {
        let _: () = p.rpush("jobs", i).unwrap();
    }
    for _ in 0..4 {
        let _: () = p.rpush("jobs", "stop").unwrap();
    }
    let mut all: Vec<u32> = consumers
        .into_iter()
        .flat_map(|c| c.join().unwrap())
        .collect();
    all.sort_unstable();
    assert_eq!(all, (0..200).collect::<Vec<_>>());
}

#[test]
fn blocking_pops_do_not_block_inside_multi() {
    let s = Server::start(None);
    let mut c = s.conn();
    let (pop, moved, zpop): (Value, Value, Value) = redis::pipe()
        .atomic()
        .cmd("BLPOP")
        .arg("none")
        .arg(0)
        .cmd("BLMOVE")
        .arg("none")
        .arg("d")
        .arg("LEFT")
        .arg("LEFT")
        .arg(0)
        .cmd("BZPOPMIN")
        .arg("none")
        .arg(0)
        .query(&mut c)
        .unwrap();
    assert_eq!((pop, moved, zpop), (Value::Nil, Value::Nil, Value::Nil));
}

/// Commands pipelined behind a blocked one run once it is served, in
/// order; and the wait ends for a client that leaves.
#[test]
fn a_pipeline_behind_a_blocked_pop_runs_after_it() {
    let s = Server::start(None);
    let mut sock = TcpStream::connect(s.addr).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut pipeline = request(&["BLPOP", "q", "0"]);
    pipeline.extend(request(&["PING"]));
    sock.write_all(&pipeline).unwrap();
    let mut other = s.conn();
    wait_blocked(&mut other, 1);
    // More input while blocked: kept and run after.
    sock.write_all(&request(&["ECHO", "later"])).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let _: () = other.rpush("q", "x").unwrap();
    let want = b"*2\r\n$1\r\nq\r\n$1\r\nx\r\n+PONG\r\n$5\r\nlater\r\n";
    let mut got = vec![0; want.len()];
    sock.read_exact(&mut got).unwrap();
    assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(want));

    // A client that leaves while blocked is no longer counted.
    let mut gone = TcpStream::connect(s.addr).unwrap();
    gone.write_all(&request(&["BLPOP", "never", "0"])).unwrap();
    wait_blocked(&mut other, 1);
    drop(gone);
    wait_blocked(&mut other, 0);
}

/// A server with a client blocked for ever still stops at once.
#[test]
fn a_blocked_client_does_not_hold_up_shutdown() {
    let s = Server::start(None);
    let mut sock = TcpStream::connect(s.addr).unwrap();
    sock.write_all(&request(&["BLPOP", "never", "0"])).unwrap();
    let mut other = s.conn();
    wait_blocked(&mut other, 1);
    let start = Instant::now();
    drop(s);
    assert!(start.elapsed() < Duration::from_secs(5));
}

/// Two clients blocked on one key: a push serves the one that blocked
/// first, and the other keeps waiting until a push in a transaction.
#[test]
fn the_longest_waiting_client_is_served_first() {
    let s = Server::start(None);
    let mut other = s.conn();
    let blpop = |mut c: redis::Connection| {
        std::thread::spawn(move || -> Option<(String, String)> {
            cmd("BLPOP").arg("q").arg(10).query(&mut c).unwrap()
        })
    };
    let first = blpop(s.conn());
    wait_blocked(&mut other, 1);
    let second = blpop(s.conn());
    wait_blocked(&mut other, 2);
    let _: () = other.rpush("q", "x").unwrap();
    assert_eq!(first.join().unwrap(), Some(("q".into(), "x".into())));
    wait_blocked(&mut other, 1);
    assert!(!second.is_finished());
    let pushed = Instant::now();
    let _: () = redis::pipe()
        .atomic()
        .rpush("q", "y")
        .ignore()
        .query(&mut other)
        .unwrap();
    assert_eq!(second.join().unwrap(), Some(("q".into(), "y".into())));
    // Woken by the EXEC, not found by the periodic recheck (500 ms).
    let took = pushed.elapsed();
    assert!(took < Duration::from_millis(400), "{took:?}");
}

/// As in Redis: a blocked pop whose key turns into a string keeps waiting,
/// and a blocked `BLMOVE` whose destination did gets `WRONGTYPE` when its
/// source is pushed to, the element left where it was.
#[test]
fn keys_that_change_type_while_a_client_waits() {
    let s = Server::start(None);
    let mut other = s.conn();
    let mut c = s.conn();
    let waiter = std::thread::spawn(move || -> Option<(String, String)> {
        cmd("BLPOP").arg("k").arg(10).query(&mut c).unwrap()
    });
    wait_blocked(&mut other, 1);
    let _: () = other.set("k", "a string").unwrap();
    let _: () = other.rpush("wake", "x").unwrap();
    std::thread::sleep(Duration::from_millis(700)); // past a recheck
    assert!(!waiter.is_finished());
    let _: () = other.del("k").unwrap();
    let _: () = other.rpush("k", "job").unwrap();
    assert_eq!(waiter.join().unwrap(), Some(("k".into(), "job".into())));

    let mut c = s.conn();
    let waiter = std::thread::spawn(move || {
        cmd("BLMOVE")
            .arg("src")
            .arg("dst")
            .arg("LEFT")
            .arg("LEFT")
            .arg(10)
            .query::<Option<String>>(&mut c)
    });
    wait_blocked(&mut other, 1);
    let _: () = other.set("dst", "a string").unwrap();
    let _: () = other.rpush("src", "x").unwrap();
    let err = waiter.join().unwrap().unwrap_err();
    assert_eq!(err.code(), Some("WRONGTYPE"), "{err}");
    let left: Vec<String> = other.lrange("src", 0, -1).unwrap();
    assert_eq!(left, ["x"]);
}

/// Clients blocked on the same keys are served in the order they blocked,
/// each seeing what those before it left (Redis's suite: "BLMPOP with
/// multiple blocked clients").
#[test]
fn blocked_clients_are_served_in_arrival_order() {
    let s = Server::start(None);
    let mut c = s.conn();
    let pops: [&[&str]; 4] = [
        &["BLMPOP", "0", "2", "a", "b", "LEFT", "COUNT", "1"],
        &["BLMPOP", "0", "2", "a", "b", "RIGHT", "COUNT", "10"],
        &["BLMPOP", "0", "2", "a", "b", "LEFT", "COUNT", "10"],
        &["BLMPOP", "0", "2", "a", "b", "RIGHT", "COUNT", "1"],
    ];
    let mut waiting = Vec::new();
    for (i, pop) in pops.iter().enumerate() {
        let mut conn = s.conn();
        let pop: Vec<String> = pop.iter().map(|a| a.to_string()).collect();
        waiting.push(std::thread::spawn(move || {
            redis::cmd(&pop[0])
                .arg(&pop[1..])
                .query::<redis::Value>(&mut conn)
                .unwrap()
        }));
        common::wait_blocked(&mut c, i + 1);
    }
    let _: () = redis::pipe()
        .atomic()
        .cmd("LPUSH")
        .arg(&["a", "a", "b", "c", "d", "e"])
        .ignore()
        .cmd("LPUSH")
        .arg(&["b", "1", "2", "3", "4", "5"])
        .ignore()
        .query(&mut c)
        .unwrap();
    let text = |v: redis::Value| {
        format!(
            "{:?}",
            redis::from_redis_value::<(String, Vec<String>)>(&v).unwrap()
        )
    };
    let mut waiting = waiting.into_iter();
    let mut next = || text(waiting.next().unwrap().join().unwrap());
    assert_eq!(next(), r#"("a", ["e"])"#);
    assert_eq!(next(), r#"("a", ["a", "b", "c", "d"])"#);
    assert_eq!(next(), r#"("b", ["5", "4", "3", "2", "1"])"#);
    let _: i64 = redis::cmd("LPUSH")
        .arg(&["b", "1", "2", "3"])
        .query(&mut c)
        .unwrap();
    assert_eq!(next(), r#"("b", ["1"])"#);
}
