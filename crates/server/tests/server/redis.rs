//! The server driven by a real Redis client (the `redis` crate) on an
//! ephemeral loopback port: every command family, pipelines, MULTI/EXEC
//! with WATCH conflicts, expiry, AUTH, protocol errors.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use redis::{cmd, Commands, RedisResult, Value};

use crate::common;
use common::Server;

#[test]
fn strings() {
    let s = Server::start(None);
    let mut c = s.conn();
    let _: () = c.set("k", "v").unwrap();
    assert_eq!(c.get::<_, String>("k").unwrap(), "v");
    assert_eq!(c.get::<_, Option<String>>("missing").unwrap(), None);
    assert!(!c.set_nx::<_, _, bool>("k", "other").unwrap());
    assert!(c.set_nx::<_, _, bool>("n", "1").unwrap());
    let r: Option<String> = cmd("SET")
        .arg("k")
        .arg("v2")
        .arg("XX")
        .arg("GET")
        .query(&mut c)
        .unwrap();
    assert_eq!(r.as_deref(), Some("v"));
    let r: Option<String> = cmd("SET")
        .arg("nope")
        .arg("v")
        .arg("XX")
        .query(&mut c)
        .unwrap();
    assert_eq!(r, None);
    assert_eq!(c.incr::<_, _, i64>("cnt", 5).unwrap(), 5);
    assert_eq!(c.decr::<_, _, i64>("cnt", 2).unwrap(), 3);
    assert_eq!(cmd("INCR").arg("cnt").query::<i64>(&mut c).unwrap(), 4);
    assert_eq!(
        cmd("INCRBYFLOAT")
            .arg("f")
            .arg("1.5")
            .query::<String>(&mut c)
            .unwrap(),
        "1.5"
    );
    assert!(cmd("INCR")
        .arg("k")
        .query::<i64>(&mut c)
        .unwrap_err()
        .to_string()
        .contains("not an integer"));
    assert_eq!(c.append::<_, _, i64>("k", "!").unwrap(), 3);
    assert_eq!(c.strlen::<_, i64>("k").unwrap(), 3);
    assert_eq!(c.getrange::<_, String>("k", 0, -2).unwrap(), "v2");
    assert_eq!(c.setrange::<_, _, i64>("k", 5, "x").unwrap(), 6);
    assert_eq!(c.get::<_, Vec<u8>>("k").unwrap(), b"v2!\0\0x");
    let _: () = c.mset(&[("a", "1"), ("b", "2")]).unwrap();
    assert_eq!(
        c.mget::<_, Vec<Option<String>>>(&["a", "zz", "b"]).unwrap(),
        vec![Some("1".into()), None, Some("2".into())]
    );
    assert!(!cmd("MSETNX")
        .arg("a")
        .arg("9")
        .arg("c")
        .arg("3")
        .query::<bool>(&mut c)
        .unwrap());
    assert_eq!(cmd("GETDEL").arg("a").query::<String>(&mut c).unwrap(), "1");
    assert_eq!(c.exists::<_, i64>("a").unwrap(), 0);
    let big = vec![b'x'; 1 << 20];
    let _: () = c.set("big", &big).unwrap();
    assert_eq!(c.get::<_, Vec<u8>>("big").unwrap(), big);
}

#[test]
fn keys_scan_rename_and_expiry() {
    let s = Server::start(None);
    let mut c = s.conn();
    for i in 0..250 {
        let _: () = c.set(format!("user:{i}"), i).unwrap();
    }
    let _: () = c.set("other", 1).unwrap();
    let mut keys: Vec<String> = c.keys("user:1*").unwrap();
    keys.sort();
    assert_eq!(keys.len(), 1 + 10 + 100);
    let scanned: Vec<String> = c.scan_match("user:*").unwrap().collect();
    assert_eq!(scanned.len(), 250);
    assert_eq!(cmd("DBSIZE").query::<i64>(&mut c).unwrap(), 251);
    assert_eq!(
        cmd("TYPE").arg("other").query::<String>(&mut c).unwrap(),
        "string"
    );
    assert_eq!(
        cmd("TYPE").arg("nope").query::<String>(&mut c).unwrap(),
        "none"
    );
    let _: () = c.rename("other", "renamed").unwrap();
    assert_eq!(c.get::<_, i64>("renamed").unwrap(), 1);
    assert_eq!(c.del::<_, i64>(&["renamed", "user:0", "nope"]).unwrap(), 2);
    assert_eq!(c.ttl::<_, i64>("user:1").unwrap(), -1);
    assert_eq!(c.ttl::<_, i64>("nope").unwrap(), -2);
    assert!(c.expire::<_, bool>("user:1", 100).unwrap());
    assert!((99..=100).contains(&c.ttl::<_, i64>("user:1").unwrap()));
    assert!(c.persist::<_, bool>("user:1").unwrap());
    assert_eq!(c.pttl::<_, i64>("user:1").unwrap(), -1);
    let _: () = cmd("SET")
        .arg("short")
        .arg("v")
        .arg("PX")
        .arg(150)
        .query(&mut c)
        .unwrap();
    let _: () = cmd("SETEX")
        .arg("short2")
        .arg(100)
        .arg("v")
        .query(&mut c)
        .unwrap();
    assert_eq!(
        c.get::<_, Option<String>>("short").unwrap().as_deref(),
        Some("v")
    );
    std::thread::sleep(Duration::from_millis(250));
    assert_eq!(c.get::<_, Option<String>>("short").unwrap(), None);
    assert_eq!(c.exists::<_, i64>("short").unwrap(), 0);
    assert!(c.exists::<_, bool>("short2").unwrap());
    assert!(c.pexpire::<_, bool>("short2", 1).unwrap());
    std::thread::sleep(Duration::from_millis(20));
    assert!(!c.exists::<_, bool>("short2").unwrap());
    let _: () = cmd("FLUSHDB").query(&mut c).unwrap();
    assert_eq!(cmd("DBSIZE").query::<i64>(&mut c).unwrap(), 0);
}

#[test]
fn pipelines_and_transactions() {
    let s = Server::start(None);
    let mut c = s.conn();
    let (a, b): (i64, i64) = redis::pipe()
        .cmd("INCR")
        .arg("p")
        .cmd("INCR")
        .arg("p")
        .query(&mut c)
        .unwrap();
    assert_eq!((a, b), (1, 2));
    let (x, y): (String, i64) = redis::pipe()
        .atomic()
        .set("t", "1")
        .ignore()
        .get("t")
        .incr("t", 1)
        .query(&mut c)
        .unwrap();
    assert_eq!((x.as_str(), y), ("1", 2));
    // WATCH: a write by someone else makes EXEC return nil.
    let mut other = s.conn();
    let _: () = cmd("WATCH").arg("w").query(&mut c).unwrap();
    let _: () = other.set("w", "changed").unwrap();
    let r: Value = redis::pipe()
        .atomic()
        .set("w", "mine")
        .query(&mut c)
        .unwrap();
    assert_eq!(r, Value::Nil);
    assert_eq!(other.get::<_, String>("w").unwrap(), "changed");
    // Without interference it applies.
    let _: () = cmd("WATCH").arg("w").query(&mut c).unwrap();
    let _: Value = redis::pipe()
        .atomic()
        .set("w", "mine")
        .query(&mut c)
        .unwrap();
    assert_eq!(other.get::<_, String>("w").unwrap(), "mine");
    assert!(cmd("EXEC")
        .query::<Value>(&mut c)
        .unwrap_err()
        .to_string()
        .contains("EXEC without MULTI"));
    let _: () = cmd("MULTI").query(&mut c).unwrap();
    let _: () = cmd("SET").arg("d").arg("1").query(&mut c).unwrap();
    let _: () = cmd("DISCARD").query(&mut c).unwrap();
    assert!(!c.exists::<_, bool>("d").unwrap());
}

/// `EXEC` after `keys` were each watched by a `WATCH` of their own and
/// `write` (if any) was set by another client after `WATCH` number
/// `write_after` (`None`: after them all): applied (true) or null.
fn exec_after_watching(s: &Server, keys: &[String], write: Option<(&str, usize)>) -> bool {
    let (mut c, mut other) = (s.conn(), s.conn());
    for (i, k) in keys.iter().enumerate() {
        let _: () = cmd("WATCH").arg(k).query(&mut c).unwrap();
        if let Some((key, _)) = write.filter(|w| w.1 == i) {
            let _: () = other.set(key, "other").unwrap();
        }
    }
    let r: Value = redis::pipe()
        .atomic()
        .set("out", "mine")
        .query(&mut c)
        .unwrap();
    r != Value::Nil
}

#[test]
fn many_watches_keep_what_each_watch_means() {
    // One WATCH per key, 1,000 keys: the server folds the watches into a
    // few engine transactions (transaction::Watch); each key stays watched
    // from its own WATCH on, the earliest as the latest.
    let s = Server::start(None);
    let keys: Vec<String> = (0..1000).map(|i| format!("k{i}")).collect();
    assert!(exec_after_watching(&s, &keys, None));
    for (key, after) in [
        ("k0", 999),
        ("k0", 0),
        ("k511", 600),
        ("k999", 999),
        ("k300", 511),
    ] {
        assert!(
            !exec_after_watching(&s, &keys, Some((key, after))),
            "{key} written after WATCH {after}: EXEC must fail"
        );
    }
    // A write before the key's own WATCH does not count.
    assert!(exec_after_watching(&s, &keys, Some(("k999", 998))));
    assert!(exec_after_watching(&s, &keys, Some(("k600", 599))));
    // The same key watched 20,000 times is one watch: a write after the
    // first aborts, and it costs no more than one.
    let same = vec!["k".to_string(); 20_000];
    assert!(exec_after_watching(&s, &same, None));
    assert!(!exec_after_watching(&s, &same, Some(("k", 0))));
    assert!(!exec_after_watching(&s, &same, Some(("k", 19_999))));
}

#[test]
fn incr_is_atomic_under_concurrent_clients() {
    let s = Server::start(None);
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let mut c = s.conn();
            std::thread::spawn(move || {
                for _ in 0..200 {
                    let _: i64 = c.incr("counter", 1).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(s.conn().get::<_, i64>("counter").unwrap(), 1600);
}

#[test]
fn pipelined_counters_are_atomic_under_concurrent_clients() {
    // Each pipeline's run of counters is one engine transaction: the same
    // key twice in a run must see the run's own first write, and runs of
    // different clients must not lose each other's increments.
    let s = Server::start(None);
    let (clients, pipelines) = (6, 40);
    let threads: Vec<_> = (0..clients)
        .map(|t| {
            let mut c = s.conn();
            std::thread::spawn(move || {
                let mut last_a = 0;
                for i in 0..pipelines {
                    // The redis crate sends INCRBY for `incr`: runs of it
                    // with repeated keys are one group each.
                    let mut p = redis::pipe();
                    p.incr("a", 1).incr("b", 2).incr("a", 1).incr("a", 1);
                    p.cmd("DECR").arg("c").cmd("DECR").arg("c");
                    p.set(format!("plain-{t}-{i}"), i).ignore();
                    p.incr("b", -1).incr("fresh", 1).incr("a", 1);
                    let r: (i64, i64, i64, i64, i64, i64, i64, i64, i64) = p.query(&mut c).unwrap();
                    let a = [r.0, r.2, r.3, r.8];
                    assert!(a[0] > last_a, "{r:?} after {last_a}");
                    assert!(a[1] > a[0] && a[2] > a[1] && a[3] > a[2], "{r:?}");
                    assert!(r.5 < r.4, "{r:?}");
                    last_a = a[3];
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let mut c = s.conn();
    let n = (clients * pipelines) as i64;
    assert_eq!(c.get::<_, i64>("a").unwrap(), 4 * n);
    assert_eq!(c.get::<_, i64>("b").unwrap(), n);
    assert_eq!(c.get::<_, i64>("c").unwrap(), -2 * n);
    assert_eq!(c.get::<_, i64>("fresh").unwrap(), n);
    assert_eq!(c.get::<_, i64>("plain-5-39").unwrap(), 39);
}

#[test]
fn auth_hello_and_connection_commands() {
    let s = Server::start(Some("sekret"));
    let mut anon = redis::Client::open(format!("redis://{}/", s.addr))
        .unwrap()
        .get_connection()
        .unwrap();
    let e = anon.get::<_, Option<String>>("k").unwrap_err().to_string();
    assert!(e.contains("NOAUTH"), "{e}");
    let e = cmd("AUTH")
        .arg("wrong")
        .query::<()>(&mut anon)
        .unwrap_err()
        .to_string();
    assert!(e.contains("WRONGPASS"), "{e}");
    let _: () = cmd("AUTH").arg("sekret").query(&mut anon).unwrap();
    let _: () = anon.set("k", "v").unwrap();
    let mut c = s.conn();
    assert_eq!(cmd("PING").query::<String>(&mut c).unwrap(), "PONG");
    assert_eq!(cmd("ECHO").arg("hi").query::<String>(&mut c).unwrap(), "hi");
    let _: () = cmd("CLIENT")
        .arg("SETNAME")
        .arg("me")
        .query(&mut c)
        .unwrap();
    assert_eq!(
        cmd("CLIENT")
            .arg("GETNAME")
            .query::<String>(&mut c)
            .unwrap(),
        "me"
    );
    assert!(cmd("CLIENT").arg("ID").query::<i64>(&mut c).unwrap() > 0);
    let _: () = cmd("SELECT").arg(0).query(&mut c).unwrap();
    assert!(cmd("SELECT").arg(1).query::<()>(&mut c).is_err());
    let hello: Value = cmd("HELLO").arg(3).query(&mut c).unwrap();
    assert!(
        matches!(hello, Value::Map(_) | Value::Array(_)),
        "{hello:?}"
    );
    let info: String = cmd("INFO").arg("persistence").query(&mut c).unwrap();
    assert!(info.contains("appendfsync:no"), "{info}");
    let info: String = cmd("INFO").arg("memory").query(&mut c).unwrap();
    let field = |name: &str| -> u64 {
        let line = info.lines().find(|l| l.starts_with(&format!("{name}:")));
        let value = line.unwrap_or_else(|| panic!("no {name} in {info}"));
        value[name.len() + 1..].trim().parse().unwrap()
    };
    assert!(field("used_memory") <= field("maxmemory"), "{info}");
    assert!(field("slsm_block_cache_bytes") <= field("slsm_block_cache_capacity"));
    for name in [
        "slsm_block_cache_hits",
        "slsm_block_cache_misses",
        "slsm_bytes_read_from_files",
    ] {
        field(name);
    }
    assert!(cmd("COMMAND").arg("COUNT").query::<i64>(&mut c).unwrap() > 40);
    let e = cmd("FOO")
        .arg("a")
        .query::<()>(&mut c)
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown command 'FOO'"), "{e}");
    let e = cmd("GET").query::<()>(&mut c).unwrap_err().to_string();
    assert!(e.contains("wrong number of arguments for 'get'"), "{e}");
}

#[test]
fn protocol_errors_close_the_connection() {
    let s = Server::start(None);
    let out = s.raw(b"*1\r\n$x\r\n");
    assert!(
        String::from_utf8_lossy(&out).starts_with("-ERR Protocol error"),
        "{out:?}"
    );
    // Past Redis 7's INT_MAX, and a count with a leading zero.
    for bad in [&b"*2147483648\r\n"[..], b"*01\r\n$4\r\nPING\r\n"] {
        let out = s.raw(bad);
        assert!(String::from_utf8_lossy(&out).contains("invalid multibulk length"));
    }
    let out = s.raw(b"PING\r\nECHO \"unbalanced\r\n");
    assert!(
        String::from_utf8_lossy(&out)
            .starts_with("+PONG\r\n-ERR Protocol error: unbalanced quotes"),
        "{out:?}"
    );
    // The server is still fine for others.
    assert_eq!(cmd("PING").query::<String>(&mut s.conn()).unwrap(), "PONG");
}

#[test]
fn shutdown_flushes_and_stops() {
    let s = Server::start(None);
    let mut c = s.conn();
    let _: () = c.set("k", "v").unwrap();
    let r: RedisResult<()> = cmd("SHUTDOWN").query(&mut c);
    let _ = r; // the connection closes without a reply
    std::thread::sleep(Duration::from_millis(300));
    assert!(TcpStream::connect(s.addr).is_err() || s.conn().get::<_, String>("k").is_err());
}

/// The soft limit on open files (both ends of every connection live in
/// this process).
fn open_file_limit() -> usize {
    std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|l| {
            l.lines()
                .find(|l| l.starts_with("Max open files"))
                .and_then(|l| l.split_whitespace().nth(3)?.parse().ok())
        })
        .unwrap_or(1024)
}

#[test]
fn a_thousand_connections_at_once() {
    let s = Server::start(None);
    // A thousand where the file limit allows (two descriptors each here).
    let n = 1000.min(open_file_limit().saturating_sub(200) / 2);
    let mut conns: Vec<TcpStream> = (0..n)
        .map(|_| TcpStream::connect(s.addr).unwrap())
        .collect();
    for c in &mut conns {
        c.write_all(b"*1\r\n$4\r\nPING\r\n").unwrap();
    }
    for c in &mut conns {
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut buf = [0u8; 7];
        c.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"+PONG\r\n");
    }
    let info: String = cmd("INFO").arg("clients").query(&mut s.conn()).unwrap();
    assert!(
        info.contains(&format!("connected_clients:{}", n + 1)),
        "{info}"
    );
}

/// redis-cli, when it is installed, talks to the server unchanged.
#[test]
fn redis_cli_works_unchanged() {
    let Ok(version) = std::process::Command::new("redis-cli")
        .arg("--version")
        .output()
    else {
        eprintln!("redis-cli not installed: skipped");
        return;
    };
    assert!(version.status.success());
    let s = Server::start(None);
    let port = s.addr.port().to_string();
    let cli = |args: &[&str]| {
        let o = std::process::Command::new("redis-cli")
            .args(["-p", &port])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    assert_eq!(cli(&["set", "greeting", "hello world"]), "OK");
    assert_eq!(cli(&["get", "greeting"]), "hello world");
    assert_eq!(cli(&["incrby", "n", "41"]), "41");
    assert_eq!(cli(&["-3", "incr", "n"]), "42");
    assert_eq!(cli(&["exists", "greeting", "nope"]), "1");
    assert_eq!(cli(&["ping"]), "PONG");
}
