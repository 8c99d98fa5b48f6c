//! Publish/subscribe: replies byte for byte as redis-server 7.0 gave them
//! to the same requests, delivery under concurrent publishers, the redis
//! crate's pub/sub API, transactions, and the limits on a subscriber that
//! does not read.

use crate::common;
use std::io::Read;
use std::time::{Duration, Instant};

use common::{Raw, Server};

const ONLY_PUBSUB: &str = "-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n";

#[test]
fn a_resp2_subscriber_may_only_subscribe_ping_quit_or_reset() {
    let s = Server::start(None);
    let mut a = Raw::new(&s);
    a.send(&[
        &["SUBSCRIBE", "a"],
        &["PSUBSCRIBE", "x*"],
        &["GET", "k"],
        &["PING"],
        &["PING", "hi"],
        &["UNSUBSCRIBE"],
        &["PUNSUBSCRIBE"],
        &["UNSUBSCRIBE"],
        &["GET", "k"],
    ]);
    a.expect(&format!(
        "*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n*3\r\n$10\r\npsubscribe\r\n$2\r\nx*\r\n:2\r\n{ONLY_PUBSUB}*2\r\n$4\r\npong\r\n$0\r\n\r\n*2\r\n$4\r\npong\r\n$2\r\nhi\r\n*3\r\n$11\r\nunsubscribe\r\n$1\r\na\r\n:1\r\n*3\r\n$12\r\npunsubscribe\r\n$2\r\nx*\r\n:0\r\n*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n$-1\r\n"
    ));
    // A shard channel counts apart, and holds the client in the mode too.
    a.send(&[
        &["SSUBSCRIBE", "s"],
        &["GET", "k"],
        &["UNSUBSCRIBE"],
        &["SUNSUBSCRIBE"],
        &["GET", "k"],
        &["SUBSCRIBE", "z"],
        &["MULTI"],
        &["RESET"],
        &["GET", "k"],
    ]);
    a.expect(&format!(
        "*3\r\n$10\r\nssubscribe\r\n$1\r\ns\r\n:1\r\n{ONLY_PUBSUB}*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n*3\r\n$12\r\nsunsubscribe\r\n$1\r\ns\r\n:0\r\n$-1\r\n*3\r\n$9\r\nsubscribe\r\n$1\r\nz\r\n:1\r\n-ERR Can't execute 'multi': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n+RESET\r\n$-1\r\n"
    ));
}

#[test]
fn messages_reach_channels_patterns_and_shard_channels() {
    let s = Server::start(None);
    let mut sub = Raw::new(&s);
    sub.send(&[
        &["SUBSCRIBE", "a", "a"],
        &["PSUBSCRIBE", "a*", "b?"],
        &["SSUBSCRIBE", "s1"],
    ]);
    sub.expect("*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n*3\r\n$10\r\npsubscribe\r\n$2\r\na*\r\n:2\r\n*3\r\n$10\r\npsubscribe\r\n$2\r\nb?\r\n:3\r\n*3\r\n$10\r\nssubscribe\r\n$2\r\ns1\r\n:1\r\n");
    let mut p = Raw::new(&s);
    p.send(&[
        &["PUBLISH", "a", "x"],
        &["PUBLISH", "bc", "y"],
        &["PUBLISH", "b", "none"],
        &["SPUBLISH", "s1", "z"],
        &["PUBLISH", "s1", "none"],
    ]);
    p.expect(":2\r\n:1\r\n:0\r\n:1\r\n:0\r\n");
    sub.expect("*3\r\n$7\r\nmessage\r\n$1\r\na\r\n$1\r\nx\r\n*4\r\n$8\r\npmessage\r\n$2\r\na*\r\n$1\r\na\r\n$1\r\nx\r\n*4\r\n$8\r\npmessage\r\n$2\r\nb?\r\n$2\r\nbc\r\n$1\r\ny\r\n*3\r\n$8\r\nsmessage\r\n$2\r\ns1\r\n$1\r\nz\r\n");
    sub.expect_quiet();
    // Introspection, as redis-server answers it.
    p.send(&[
        &["PUBSUB", "CHANNELS", "a"],
        &["PUBSUB", "NUMSUB", "a", "zz"],
        &["PUBSUB", "NUMPAT"],
        &["PUBSUB", "SHARDCHANNELS"],
        &["PUBSUB", "SHARDNUMSUB", "s1"],
        &["PUBSUB", "NUMSUB"],
        &["PUBSUB", "foo"],
        &["PUBSUB", "CHANNELS", "a", "b"],
        &["PUBSUB", "NUMPAT", "x"],
        &["SUBSCRIBE"],
        &["PUBLISH", "a"],
    ]);
    p.expect("*1\r\n$1\r\na\r\n*4\r\n$1\r\na\r\n:1\r\n$2\r\nzz\r\n:0\r\n:2\r\n*1\r\n$2\r\ns1\r\n*2\r\n$2\r\ns1\r\n:1\r\n*0\r\n-ERR unknown subcommand 'foo'. Try PUBSUB HELP.\r\n-ERR unknown subcommand or wrong number of arguments for 'CHANNELS'. Try PUBSUB HELP.\r\n-ERR wrong number of arguments for 'pubsub|numpat' command\r\n-ERR wrong number of arguments for 'subscribe' command\r\n-ERR wrong number of arguments for 'publish' command\r\n");
    // The subscriber shows in CLIENT LIST and INFO.
    let mut c = s.conn();
    let list: String = redis::cmd("CLIENT").arg("LIST").query(&mut c).unwrap();
    assert!(
        list.lines()
            .any(|l| l.contains("flags=P") && l.contains("sub=1 psub=2 ssub=1")),
        "{list}"
    );
    let info: String = redis::cmd("INFO").arg("stats").query(&mut c).unwrap();
    for line in [
        "pubsub_channels:1",
        "pubsub_patterns:2",
        "pubsubshard_channels:1",
    ] {
        assert!(info.contains(line), "{info}");
    }
    // Leaving: a closed connection is unsubscribed from everything.
    drop(sub);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let n: i64 = redis::cmd("PUBLISH")
            .arg("a")
            .arg("x")
            .query(&mut c)
            .unwrap();
        let pats: i64 = redis::cmd("PUBSUB").arg("NUMPAT").query(&mut c).unwrap();
        if n == 0 && pats == 0 {
            break;
        }
        assert!(Instant::now() < deadline, "still subscribed: {n} {pats}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A connection that has switched to RESP3 (its `HELLO` reply read).
fn resp3(s: &Server) -> Raw {
    let mut c = Raw::new(s);
    c.send(&[&["HELLO", "3"]]);
    let mut hello = vec![0u8; 4096];
    c.0.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let _ = c.0.read(&mut hello).unwrap();
    c.0.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    c
}

#[test]
fn in_resp3_messages_are_pushes_and_any_command_runs() {
    let s = Server::start(None);
    let mut c = resp3(&s);
    // A message it publishes to itself comes before PUBLISH's reply, as
    // from Redis.
    c.send(&[
        &["SUBSCRIBE", "a"],
        &["SSUBSCRIBE", "s1"],
        &["GET", "k"],
        &["PUBLISH", "a", "m1"],
        &["PING"],
    ]);
    c.expect(">3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n>3\r\n$10\r\nssubscribe\r\n$2\r\ns1\r\n:1\r\n_\r\n>3\r\n$7\r\nmessage\r\n$1\r\na\r\n$2\r\nm1\r\n:1\r\n+PONG\r\n");
    let mut p = s.conn();
    let _: i64 = redis::cmd("PUBLISH")
        .arg("a")
        .arg("hello")
        .query(&mut p)
        .unwrap();
    c.expect(">3\r\n$7\r\nmessage\r\n$1\r\na\r\n$5\r\nhello\r\n");
    c.send(&[
        &["SUNSUBSCRIBE"],
        &["UNSUBSCRIBE", "a", "nope"],
        &["PUNSUBSCRIBE", "nope"],
    ]);
    c.expect(">3\r\n$12\r\nsunsubscribe\r\n$2\r\ns1\r\n:0\r\n>3\r\n$11\r\nunsubscribe\r\n$1\r\na\r\n:0\r\n>3\r\n$11\r\nunsubscribe\r\n$4\r\nnope\r\n:0\r\n>3\r\n$12\r\npunsubscribe\r\n$4\r\nnope\r\n:0\r\n");
    // A client blocked in BLPOP still gets its messages.
    c.send(&[&["SUBSCRIBE", "b"], &["BLPOP", "list", "0"]]);
    c.expect(">3\r\n$9\r\nsubscribe\r\n$1\r\nb\r\n:1\r\n");
    std::thread::sleep(Duration::from_millis(100));
    let _: i64 = redis::cmd("PUBLISH")
        .arg("b")
        .arg("while")
        .query(&mut p)
        .unwrap();
    c.expect(">3\r\n$7\r\nmessage\r\n$1\r\nb\r\n$5\r\nwhile\r\n");
    let _: i64 = redis::cmd("RPUSH")
        .arg("list")
        .arg("v")
        .query(&mut p)
        .unwrap();
    c.expect("*2\r\n$4\r\nlist\r\n$1\r\nv\r\n");
}

#[test]
fn a_transaction_publishes_after_it_commits_and_not_if_it_fails() {
    let s = Server::start(None);
    let mut sub = Raw::new(&s);
    sub.send(&[&["MULTI"], &["SUBSCRIBE", "q"], &["EXEC"]]);
    sub.expect("+OK\r\n+QUEUED\r\n*1\r\n*3\r\n$9\r\nsubscribe\r\n$1\r\nq\r\n:1\r\n");
    let mut w = Raw::new(&s);
    w.send(&[
        &["MULTI"],
        &["SET", "k", "v1"],
        &["PUBLISH", "q", "done"],
        &["EXEC"],
    ]);
    w.expect("+OK\r\n+QUEUED\r\n+QUEUED\r\n*2\r\n+OK\r\n:1\r\n");
    sub.expect("*3\r\n$7\r\nmessage\r\n$1\r\nq\r\n$4\r\ndone\r\n");
    // A transaction its WATCH aborts publishes nothing.
    let mut other = s.conn();
    w.send(&[&["WATCH", "k"]]);
    w.expect("+OK\r\n");
    let _: () = redis::cmd("SET")
        .arg("k")
        .arg("v2")
        .query(&mut other)
        .unwrap();
    w.send(&[&["MULTI"], &["PUBLISH", "q", "never"], &["EXEC"]]);
    w.expect("+OK\r\n+QUEUED\r\n*-1\r\n");
    let _: i64 = redis::cmd("PUBLISH")
        .arg("q")
        .arg("next")
        .query(&mut other)
        .unwrap();
    sub.expect("*3\r\n$7\r\nmessage\r\n$1\r\nq\r\n$4\r\nnext\r\n");
}

#[test]
fn the_redis_crate_subscribes_and_receives() {
    let s = Server::start(None);
    let mut c = s.conn();
    let mut ps = c.as_pubsub();
    ps.subscribe("news").unwrap();
    ps.psubscribe("sport.*").unwrap();
    let mut p = s.conn();
    let n: i64 = redis::cmd("PUBLISH")
        .arg("news")
        .arg("one")
        .query(&mut p)
        .unwrap();
    assert_eq!(n, 1);
    let n: i64 = redis::cmd("PUBLISH")
        .arg("sport.tennis")
        .arg("two")
        .query(&mut p)
        .unwrap();
    assert_eq!(n, 1);
    let m = ps.get_message().unwrap();
    assert_eq!(
        (m.get_channel_name(), m.get_payload::<String>().unwrap()),
        ("news", "one".into())
    );
    let m = ps.get_message().unwrap();
    assert_eq!(m.get_pattern::<String>().unwrap(), "sport.*");
    assert_eq!(
        (m.get_channel_name(), m.get_payload::<String>().unwrap()),
        ("sport.tennis", "two".into())
    );
    ps.unsubscribe("news").unwrap();
    ps.punsubscribe("sport.*").unwrap();
    drop(ps);
    // Back to plain commands on the same connection.
    let v: Option<String> = redis::cmd("GET").arg("k").query(&mut c).unwrap();
    assert_eq!(v, None);
}

#[test]
fn every_subscriber_gets_every_message_in_each_publishers_order() {
    const SUBSCRIBERS: usize = 4;
    const PUBLISHERS: usize = 3;
    const EACH: usize = 2000;
    let s = Server::start(None);
    let mut subs: Vec<Raw> = (0..SUBSCRIBERS).map(|_| Raw::new(&s)).collect();
    for sub in &mut subs {
        sub.send(&[&["SUBSCRIBE", "c"]]);
        sub.expect("*3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n");
    }
    let publishers: Vec<_> = (0..PUBLISHERS)
        .map(|p| {
            let mut c = s.conn();
            std::thread::spawn(move || {
                for i in 0..EACH {
                    let n: i64 = redis::cmd("PUBLISH")
                        .arg("c")
                        .arg(format!("{p}:{i}"))
                        .query(&mut c)
                        .unwrap();
                    assert_eq!(n, SUBSCRIBERS as i64);
                }
            })
        })
        .collect();
    for sub in &mut subs {
        let mut next = [0usize; PUBLISHERS];
        let mut reader = std::io::BufReader::new(&sub.0);
        for _ in 0..PUBLISHERS * EACH {
            let payload = read_message_payload(&mut reader);
            let (p, i) = payload.split_once(':').unwrap();
            let (p, i): (usize, usize) = (p.parse().unwrap(), i.parse().unwrap());
            assert_eq!(i, next[p], "publisher {p}'s messages out of order");
            next[p] += 1;
        }
    }
    for p in publishers {
        p.join().unwrap();
    }
}

/// The payload of the next `message` (RESP2) on `r`.
fn read_message_payload(r: &mut impl std::io::BufRead) -> String {
    let mut lines = Vec::new();
    for _ in 0..7 {
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        lines.push(line.trim_end().to_string());
    }
    assert_eq!(lines[..3], ["*3", "$7", "message"]);
    lines[6].clone()
}

#[test]
fn a_subscriber_that_does_not_read_is_disconnected_past_32_mib() {
    let s = Server::start(None);
    let mut sub = Raw::new(&s);
    sub.send(&[&["SUBSCRIBE", "big"]]);
    sub.expect("*3\r\n$9\r\nsubscribe\r\n$3\r\nbig\r\n:1\r\n");
    // The subscriber never reads: its socket's buffers fill, then its
    // outbox, until the server lets it go.
    let mut p = s.conn();
    let payload = vec![b'x'; 1 << 20];
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut published = 0;
    loop {
        let n: i64 = redis::cmd("PUBLISH")
            .arg("big")
            .arg(&payload)
            .query(&mut p)
            .unwrap();
        published += 1;
        if n == 0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "still subscribed after {published} MiB"
        );
    }
    assert!(published > 32, "{published}");
    // Its connection was closed: after what the socket held, the end.
    sub.0
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut rest = Vec::new();
    sub.0
        .read_to_end(&mut rest)
        .expect("the server closes the connection");
}

/// Under `CLIENT REPLY OFF` a client still gets its (un)subscribe
/// confirmations and messages: they are pushes, not replies, in RESP2 too
/// (Redis 7.0's `CLIENT_PUSHING`; its suite subscribes that way).
#[test]
fn pushes_come_under_client_reply_off() {
    let s = Server::start(None);
    let mut c = resp3(&s);
    c.send(&[
        &["CLIENT", "REPLY", "OFF"],
        &["SUBSCRIBE", "channel"],
        &["PSUBSCRIBE", "ch*"],
    ]);
    c.expect(">3\r\n$9\r\nsubscribe\r\n$7\r\nchannel\r\n:1\r\n>3\r\n$10\r\npsubscribe\r\n$3\r\nch*\r\n:2\r\n");
    let mut p = s.conn();
    let n: i64 = redis::cmd("PUBLISH")
        .arg("channel")
        .arg("hello")
        .query(&mut p)
        .unwrap();
    assert_eq!(n, 2);
    c.expect(">3\r\n$7\r\nmessage\r\n$7\r\nchannel\r\n$5\r\nhello\r\n");
    c.expect(">4\r\n$8\r\npmessage\r\n$3\r\nch*\r\n$7\r\nchannel\r\n$5\r\nhello\r\n");
    c.send(&[&["UNSUBSCRIBE", "channel"]]);
    c.expect(">3\r\n$11\r\nunsubscribe\r\n$7\r\nchannel\r\n:1\r\n");
    let mut old = Raw::new(&s);
    old.send(&[&["CLIENT", "REPLY", "OFF"], &["SUBSCRIBE", "x"], &["PING"]]);
    old.expect("*3\r\n$9\r\nsubscribe\r\n$1\r\nx\r\n:1\r\n");
    old.expect_quiet();
}
