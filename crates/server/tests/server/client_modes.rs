//! `CLIENT`'s modes answer as redis-server 7.0 answered the same requests
//! (`REDIS_REPLIES`: `NO-EVICT`, `TRACKING OFF`, `GETREDIR`,
//! `TRACKINGINFO`, `CACHING`, `UNBLOCK`'s checks, `HELP`, the errors);
//! `CLIENT REPLY OFF|ON|SKIP` drops exactly the replies Redis drops;
//! `CLIENT UNBLOCK` ends a blocked pop as a timeout or with Redis's
//! `-UNBLOCKED` error, and a `WAIT` (`TRACKING ON` is `tracking.rs`'s);
//! `CLIENT PAUSE` holds what Redis holds until its end or an
//! `UNPAUSE`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use redis::cmd;

use crate::common;
use common::{expect_replies, wait_blocked, Raw, Server};

const REDIS_REPLIES: &[(&[&str], &str)] = &[
    (&["client", "no-evict", "on"], "+OK\r\n"),
    (&["client", "no-evict", "off"], "+OK\r\n"),
    (&["client", "no-evict", "x"], "-ERR syntax error\r\n"),
    (&["client", "getredir"], ":-1\r\n"),
    (&["client", "trackinginfo"], "*6\r\n$5\r\nflags\r\n*1\r\n$3\r\noff\r\n$8\r\nredirect\r\n:-1\r\n$8\r\nprefixes\r\n*0\r\n"),
    (&["client", "tracking", "off"], "+OK\r\n"),
    (&["client", "tracking", "x"], "-ERR syntax error\r\n"),
    (&["client", "caching", "yes"], "-ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled\r\n"),
    (&["client", "reply", "x"], "-ERR syntax error\r\n"),
    (&["client", "unblock", "999"], ":0\r\n"),
    (&["client", "unblock", "x"], "-ERR value is not an integer or out of range\r\n"),
    (&["client", "unblock", "5", "foo"], "-ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR\r\n"),
    (&["client", "unblock", "5", "error"], ":0\r\n"),
    (&["client", "help"], "*48\r\n+CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+CACHING (YES|NO)\r\n+    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.\r\n+GETREDIR\r\n+    Return the client ID we are redirecting to when tracking is enabled.\r\n+GETNAME\r\n+    Return the name of the current connection.\r\n+ID\r\n+    Return the ID of the current connection.\r\n+INFO\r\n+    Return information about the current client connection.\r\n+KILL <ip:port>\r\n+    Kill connection made from <ip:port>.\r\n+KILL <option> <value> [<option> <value> [...]]\r\n+    Kill connections. Options are:\r\n+    * ADDR (<ip:port>|<unixsocket>:0)\r\n+      Kill connections made from the specified address\r\n+    * LADDR (<ip:port>|<unixsocket>:0)\r\n+      Kill connections made to specified local address\r\n+    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)\r\n+      Kill connections by type.\r\n+    * USER <username>\r\n+      Kill connections authenticated by <username>.\r\n+    * SKIPME (YES|NO)\r\n+      Skip killing current connection (default: yes).\r\n+LIST [options ...]\r\n+    Return information about client connections. Options:\r\n+    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)\r\n+      Return clients of specified type.\r\n+UNPAUSE\r\n+    Stop the current client pause, resuming traffic.\r\n+PAUSE <timeout> [WRITE|ALL]\r\n+    Suspend all, or just write, clients for <timeout> milliseconds.\r\n+REPLY (ON|OFF|SKIP)\r\n+    Control the replies sent to the current connection.\r\n+SETNAME <name>\r\n+    Assign the name <name> to the current connection.\r\n+UNBLOCK <clientid> [TIMEOUT|ERROR]\r\n+    Unblock the specified blocked client.\r\n+TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]\r\n+         [OPTIN] [OPTOUT] [NOLOOP]\r\n+    Control server assisted client side caching.\r\n+TRACKINGINFO\r\n+    Report tracking status for the current connection.\r\n+NO-EVICT (ON|OFF)\r\n+    Protect current client connection from eviction.\r\n+HELP\r\n+    Prints this help.\r\n"),
    (&["client", "pause"], "-ERR wrong number of arguments for 'client|pause' command\r\n"),
    (&["client", "no-evict"], "-ERR wrong number of arguments for 'client|no-evict' command\r\n"),
    (&["client", "unpause"], "+OK\r\n"),
    (&["client", "pause", "abc"], "-ERR timeout is not an integer or out of range\r\n"),
    (&["client", "pause", "-1"], "-ERR timeout is negative\r\n"),
    (&["client", "pause", "10", "foo"], "-ERR CLIENT PAUSE mode must be WRITE or ALL\r\n"),
    (&["client", "pause", "0"], "+OK\r\n"),
    (&["client", "pause", "100", "all", "extra"], "-ERR unknown subcommand or wrong number of arguments for 'pause'. Try CLIENT HELP.\r\n"),
    (&["client", "foo"], "-ERR unknown subcommand 'foo'. Try CLIENT HELP.\r\n"),
];

#[test]
fn client_modes_answer_as_redis_does() {
    let s = Server::start(None);
    expect_replies(&s, REDIS_REPLIES);
}

#[test]
fn reply_off_and_skip_drop_what_redis_drops() {
    let s = Server::start(None);
    let mut c = Raw::new(&s);
    c.send(&[
        &["CLIENT", "REPLY", "OFF"],
        &["SET", "a", "1"],
        &["GET", "a"],
        &["CLIENT", "REPLY", "ON"],
        &["GET", "a"],
        &["CLIENT", "REPLY", "SKIP"],
        &["GET", "a"],
        &["GET", "a"],
        &["CLIENT", "REPLY", "x"],
        &["PING"],
    ]);
    c.expect("+OK\r\n$1\r\n1\r\n$1\r\n1\r\n-ERR syntax error\r\n+PONG\r\n");
    // RESET turns replies back on, as Redis's does.
    c.send(&[&["CLIENT", "REPLY", "OFF"], &["RESET"], &["PING"]]);
    c.expect("+RESET\r\n+PONG\r\n");
    c.expect_quiet();
}

#[test]
fn unblock_ends_a_wait_as_a_timeout_or_an_error() {
    let s = Server::start(None);
    let mut admin = s.conn();
    let mut blocked = TcpStream::connect(s.addr).unwrap();
    blocked
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let read = |b: &mut TcpStream, want: &str| {
        let mut got = vec![0; want.len()];
        b.read_exact(&mut got).unwrap();
        assert_eq!(String::from_utf8_lossy(&got), want);
    };
    blocked.write_all(b"CLIENT ID\r\n").unwrap();
    let mut id = [0u8; 32];
    let n = blocked.read(&mut id).unwrap();
    let id: i64 = std::str::from_utf8(&id[1..n - 2]).unwrap().parse().unwrap();
    for (request, how, reply) in [
        ("BLPOP q 0\r\n", "TIMEOUT", "*-1\r\n"),
        (
            "BLPOP q 0\r\n",
            "ERROR",
            "-UNBLOCKED client unblocked via CLIENT UNBLOCK\r\n",
        ),
        ("WAIT 1 0\r\n", "TIMEOUT", ":0\r\n"),
    ] {
        blocked.write_all(request.as_bytes()).unwrap();
        wait_blocked(&mut admin, 1);
        let n: i64 = cmd("CLIENT")
            .arg("UNBLOCK")
            .arg(id)
            .arg(how)
            .query(&mut admin)
            .unwrap();
        assert_eq!(n, 1);
        read(&mut blocked, reply);
    }
    let n: i64 = cmd("CLIENT")
        .arg("UNBLOCK")
        .arg(id)
        .query(&mut admin)
        .unwrap();
    assert_eq!(n, 0, "no longer blocked");
}

/// Runs `args` on a connection of its own; how long it took (the
/// connection's setup included: it is held too under `ALL`).
fn timed(s: &Server, args: &[&str]) -> Duration {
    let started = std::time::Instant::now();
    let mut c = s.conn();
    let _: redis::Value = cmd(args[0]).arg(&args[1..]).query(&mut c).unwrap();
    started.elapsed()
}

/// `WRITE` holds writes, `EVAL`s and an `EXEC` holding a write until the
/// pause ends, and nothing else; `UNPAUSE` releases them at once.
#[test]
fn a_write_pause_holds_writes_until_its_end_or_unpause() {
    let s = std::sync::Arc::new(Server::start(None));
    let mut c = s.conn();
    let _: () = cmd("CLIENT")
        .arg(&["PAUSE", "400", "WRITE"])
        .query(&mut c)
        .unwrap();
    assert!(timed(&s, &["GET", "k"]) < Duration::from_millis(200));
    assert!(timed(&s, &["PING"]) < Duration::from_millis(200));
    assert!(timed(&s, &["SET", "k", "v"]) >= Duration::from_millis(250));
    let _: () = cmd("CLIENT")
        .arg(&["PAUSE", "400", "WRITE"])
        .query(&mut c)
        .unwrap();
    let mut m = s.conn();
    let (v,): (Option<String>,) = redis::pipe()
        .atomic()
        .cmd("GET")
        .arg("k")
        .query(&mut m)
        .unwrap();
    assert_eq!(v.as_deref(), Some("v"), "a transaction of reads runs");
    assert!(timed(&s, &["EVAL", "return 1", "0"]) >= Duration::from_millis(200));
    let _: () = cmd("CLIENT")
        .arg(&["PAUSE", "10000", "WRITE"])
        .query(&mut c)
        .unwrap();
    let writer = {
        let s = std::sync::Arc::clone(&s);
        std::thread::spawn(move || timed(&s, &["INCR", "n"]))
    };
    std::thread::sleep(Duration::from_millis(100));
    let n: Option<i64> = cmd("GET").arg("n").query(&mut c).unwrap();
    assert_eq!(n, None, "held");
    let _: () = cmd("CLIENT").arg("UNPAUSE").query(&mut c).unwrap();
    assert!(
        writer.join().unwrap() < Duration::from_secs(5),
        "released by UNPAUSE"
    );
    let n: i64 = cmd("GET").arg("n").query(&mut c).unwrap();
    assert_eq!(n, 1);
}

/// `ALL` holds every command, the pausing client's own next one included.
#[test]
fn an_all_pause_holds_every_command() {
    let s = Server::start(None);
    let mut c = s.conn();
    let started = std::time::Instant::now();
    let (_, pong): ((), String) = redis::pipe()
        .cmd("CLIENT")
        .arg(&["PAUSE", "300"])
        .cmd("PING")
        .query(&mut c)
        .unwrap();
    assert_eq!(pong, "PONG");
    assert!(
        started.elapsed() >= Duration::from_millis(250),
        "{:?}",
        started.elapsed()
    );
    let _: () = cmd("CLIENT")
        .arg(&["PAUSE", "300", "ALL"])
        .query(&mut c)
        .unwrap();
    assert!(timed(&s, &["GET", "k"]) >= Duration::from_millis(200));
}
