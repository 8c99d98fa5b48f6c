//! `MONITOR`: a monitoring client receives every command other clients
//! run, as redis-server 7.0 shows them (checked side by side by hand; the
//! lines' shape is asserted here): quoted and escaped arguments, the
//! client's address, `[0 lua]` for a script's calls after its `EVAL`, a
//! `MULTI`'s commands before `EXEC`, a pipeline's grouped `GET`s one by
//! one, administrative commands hidden and `AUTH` redacted; in RESP3 too.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

use redis::cmd;

use crate::common;
use common::Server;

/// A raw connection in MONITOR (after `HELLO proto`), read line by line.
fn monitor(s: &Server, proto: u8) -> BufReader<TcpStream> {
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut r = BufReader::new(c.try_clone().unwrap());
    if proto == 3 {
        c.write_all(b"HELLO 3\r\n").unwrap();
        // HELLO's reply: a map of 7 pairs.
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        assert!(line.starts_with('%'), "{line}");
        for _ in 0..14 {
            skip_reply(&mut r);
        }
    }
    c.write_all(b"MONITOR\r\n").unwrap();
    let mut ok = String::new();
    r.read_line(&mut ok).unwrap();
    assert_eq!(ok, "+OK\r\n");
    r
}

/// Skips one simple RESP reply (HELLO's fields: bulk, int, array).
fn skip_reply(r: &mut BufReader<TcpStream>) {
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    match line.as_bytes()[0] {
        b'$' => {
            let mut body = String::new();
            r.read_line(&mut body).unwrap();
        }
        b'*' => {
            let n: usize = line[1..].trim().parse().unwrap();
            (0..n).for_each(|_| skip_reply(r));
        }
        _ => {}
    }
}

/// The next line, less its time stamp and client address (the client
/// library's `CLIENT SETINFO` at connect skipped).
fn next(r: &mut BufReader<TcpStream>) -> String {
    loop {
        let line = next_line(r);
        if !line.starts_with("\"CLIENT\" \"SETINFO\"") {
            return line;
        }
    }
}

fn next_line(r: &mut BufReader<TcpStream>) -> String {
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    assert!(line.starts_with('+') && line.ends_with("\r\n"), "{line:?}");
    let (stamp, rest) = line[1..].trim_end().split_once(' ').unwrap();
    assert!(
        stamp.split_once('.').is_some_and(|(_, us)| us.len() == 6),
        "{stamp}"
    );
    let (source, args) = rest.split_once("] ").unwrap();
    assert!(
        source == "[0 lua" || source.starts_with("[0 127.0.0.1:"),
        "{source}"
    );
    match source {
        "[0 lua" => format!("lua {args}"),
        _ => args.to_string(),
    }
}

#[test]
fn monitors_see_every_command_as_redis_shows_it() {
    let s = Server::start(None);
    for proto in [2, 3] {
        let mut m = monitor(&s, proto);
        let mut c = s.conn();
        let _: () = cmd("SET")
            .arg("a")
            .arg("x y\"z\n\u{1}")
            .query(&mut c)
            .unwrap();
        let _: redis::RedisResult<()> = cmd("AUTH").arg("secret").query(&mut c);
        let _: Vec<String> = cmd("CONFIG").arg("GET").arg("port").query(&mut c).unwrap();
        // Hidden as Redis hides it (`acl|setuser` is `admin`): its
        // passwords never reach a monitor.
        let _: () = cmd("ACL")
            .arg("SETUSER")
            .arg(format!("mon{proto}"))
            .arg(">pw-never-shown")
            .query(&mut c)
            .unwrap();
        let _: Option<String> = cmd("EVAL")
            .arg("return redis.call('get', KEYS[1])")
            .arg(1)
            .arg("a")
            .query(&mut c)
            .unwrap();
        let _: (i64, String) = redis::pipe()
            .atomic()
            .cmd("INCR")
            .arg("n")
            .cmd("GET")
            .arg("a")
            .query(&mut c)
            .unwrap();
        let _: Vec<Option<String>> = redis::pipe()
            .cmd("GET")
            .arg("a")
            .cmd("GET")
            .arg("b")
            .query(&mut c)
            .unwrap();
        let want = [
            r#""SET" "a" "x y\"z\n\x01""#,
            r#""AUTH" "(redacted)""#,
            r#""EVAL" "return redis.call('get', KEYS[1])" "1" "a""#,
            r#"lua "get" "a""#,
            r#""MULTI""#,
            r#""INCR" "n""#,
            r#""GET" "a""#,
            r#""EXEC""#,
            r#""GET" "a""#,
            r#""GET" "b""#,
        ];
        for w in want {
            assert_eq!(next(&mut m), w, "RESP{proto}");
        }
    }
}

/// A monitor that never reads is disconnected once its backlog passes the
/// pub/sub limit (32 MiB), as Redis drops a client past its output
/// buffer limit; the client it watched is not slowed down or refused.
#[test]
fn a_monitor_that_does_not_read_is_dropped() {
    let s = Server::start(None);
    let mut stalled = TcpStream::connect(s.addr).unwrap();
    stalled.write_all(b"MONITOR\r\n").unwrap();
    let mut c = s.conn();
    let count_clients = |c: &mut redis::Connection| -> usize {
        let list: String = cmd("CLIENT").arg("LIST").query(c).unwrap();
        list.lines().count()
    };
    // Wait until the MONITOR is in place (two clients), then write ~48 MiB
    // of monitor lines: 1,600 SETs of 32 KiB values.
    while count_clients(&mut c) < 2 {
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(50));
    let value = "v".repeat(32 << 10);
    for i in 0..1_600 {
        let _: () = cmd("SET")
            .arg(format!("k{i}"))
            .arg(&value)
            .query(&mut c)
            .unwrap();
    }
    let mut gone = false;
    for _ in 0..500 {
        if count_clients(&mut c) == 1 {
            gone = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(gone, "the stalled monitor is still connected");
}
