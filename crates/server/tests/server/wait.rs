//! `WAIT`: this server has no replicas, so, as redis-server without
//! replicas, it answers 0 at once when asked for none (or inside `MULTI`),
//! else after its timeout; with no timeout it waits (a blocked client in
//! `INFO`) until the client leaves. Its errors are Redis's.

use std::time::{Duration, Instant};

use redis::cmd;

use crate::common;
use common::{expect_replies, wait_blocked, Server};

#[test]
fn wait_answers_as_redis_without_replicas() {
    let s = Server::start(None);
    expect_replies(
        &s,
        &[
            (&["wait", "0", "0"], ":0\r\n"),
            (&["wait", "-1", "0"], ":0\r\n"),
            (
                &["wait", "x", "0"],
                "-ERR value is not an integer or out of range\r\n",
            ),
            (
                &["wait", "0", "x"],
                "-ERR timeout is not an integer or out of range\r\n",
            ),
            (&["wait", "1", "-1"], "-ERR timeout is negative\r\n"),
            (
                &["wait", "1"],
                "-ERR wrong number of arguments for 'wait' command\r\n",
            ),
            (&["multi"], "+OK\r\n"),
            (&["wait", "5", "0"], "+QUEUED\r\n"),
            (&["exec"], "*1\r\n:0\r\n"),
        ],
    );
    let mut c = s.conn();
    let started = Instant::now();
    let acked: i64 = cmd("WAIT").arg(1).arg(200).query(&mut c).unwrap();
    assert_eq!(acked, 0);
    assert!(started.elapsed() >= Duration::from_millis(200));
}

#[test]
fn wait_without_timeout_blocks_until_the_client_leaves() {
    let s = Server::start(None);
    let mut watcher = s.conn();
    let addr = s.addr;
    let mut raw = std::net::TcpStream::connect(addr).unwrap();
    std::io::Write::write_all(&mut raw, b"WAIT 1 0\r\n").unwrap();
    wait_blocked(&mut watcher, 1);
    drop(raw);
    wait_blocked(&mut watcher, 0);
}
