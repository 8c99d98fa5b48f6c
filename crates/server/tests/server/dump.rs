//! `DUMP` and `RESTORE`: payloads that redis-server 7.0 `DUMP`ed
//! (`tests/data/redis7_dump/`, one per encoding Redis 7.0 writes: listpack
//! and quicklist lists of one and of several nodes, intset and hashtable
//! sets, listpack and hashtable hashes, listpack and skiplist sorted sets,
//! LZF-compressed, integer and plain strings) restore with their exact
//! contents; everything `DUMP`ed here restores intact, its TTL too; the
//! options and errors in Redis 7.0's order; a `RESTORE` serves a blocked
//! pop. That Redis restores what this server dumps is checked against
//! redis-server by `bench/redis/differential.py` (every key, both ways,
//! every 100 commands).

use std::collections::HashSet;

use redis::{cmd, Commands, Connection, Value};

use crate::common;
use common::{crc64, Raw, Server};

/// Each fixture's key and payload.
const FROM_REDIS: &[(&str, &[u8])] = &[
    (
        "hash_big",
        include_bytes!("../data/redis7_dump/hash_big.bin"),
    ),
    (
        "hash_small",
        include_bytes!("../data/redis7_dump/hash_small.bin"),
    ),
    (
        "list_nodes",
        include_bytes!("../data/redis7_dump/list_nodes.bin"),
    ),
    (
        "list_small",
        include_bytes!("../data/redis7_dump/list_small.bin"),
    ),
    ("set_big", include_bytes!("../data/redis7_dump/set_big.bin")),
    (
        "set_intset",
        include_bytes!("../data/redis7_dump/set_intset.bin"),
    ),
    (
        "str_bigint",
        include_bytes!("../data/redis7_dump/str_bigint.bin"),
    ),
    (
        "str_empty",
        include_bytes!("../data/redis7_dump/str_empty.bin"),
    ),
    ("str_int", include_bytes!("../data/redis7_dump/str_int.bin")),
    ("str_lzf", include_bytes!("../data/redis7_dump/str_lzf.bin")),
    ("str_neg", include_bytes!("../data/redis7_dump/str_neg.bin")),
    (
        "zset_big",
        include_bytes!("../data/redis7_dump/zset_big.bin"),
    ),
    (
        "zset_small",
        include_bytes!("../data/redis7_dump/zset_small.bin"),
    ),
];

fn restore(c: &mut Connection, key: &str, payload: &[u8]) {
    let _: () = cmd("RESTORE")
        .arg(key)
        .arg(0)
        .arg(payload)
        .query(c)
        .unwrap();
}

fn strings(items: impl IntoIterator<Item = String>) -> Vec<String> {
    items.into_iter().collect()
}

#[test]
fn payloads_dumped_by_redis_restore_exactly() {
    let s = Server::start(None);
    let mut c = s.conn();
    for (key, payload) in FROM_REDIS {
        restore(&mut c, key, payload);
    }
    let list: Vec<String> = c.lrange("list_small", 0, -1).unwrap();
    assert_eq!(list, ["a", "b", "1", "2", "-300", "70000", "1099511627776"]);
    let list: Vec<String> = c.lrange("list_nodes", 0, -1).unwrap();
    assert_eq!(
        list,
        strings((0..300).map(|i| format!("e{i}-{}", "x".repeat(40))))
    );
    let set: HashSet<i64> = c.smembers("set_intset").unwrap();
    assert_eq!(set, (-100..400).step_by(3).collect());
    let set: HashSet<String> = c.smembers("set_big").unwrap();
    assert_eq!(set, (0..600).map(|i| format!("m{i}")).collect());
    let hash: Vec<(String, String)> = c.hgetall("hash_small").unwrap();
    let mut hash = hash;
    hash.sort();
    assert_eq!(
        hash,
        [("a", "1"), ("b", "two"), ("c", "-3")].map(|(f, v)| (f.into(), v.into()))
    );
    let hash: std::collections::HashMap<String, String> = c.hgetall("hash_big").unwrap();
    assert_eq!(hash.len(), 200);
    assert!((0..200).all(|i| hash[&format!("f{i}")] == "v".repeat(i % 100)));
    let zset: Vec<(String, f64)> = c.zrange_withscores("zset_small", 0, -1).unwrap();
    assert_eq!(
        zset,
        [("c", -1e10), ("a", 1.0), ("b", 2.5), ("d", f64::INFINITY)].map(|(m, s)| (m.into(), s))
    );
    let zset: Vec<(String, f64)> = c.zrange_withscores("zset_big", 0, -1).unwrap();
    assert_eq!(
        zset,
        (0..200)
            .map(|i| (format!("m{i}"), i as f64 * 0.37))
            .collect::<Vec<_>>()
    );
    for (key, want) in [
        ("str_lzf", "abc".repeat(1000)),
        ("str_int", "12345".into()),
        ("str_neg", "-7".into()),
        ("str_bigint", "123456789012345".into()),
        ("str_empty", String::new()),
    ] {
        let got: String = c.get(key).unwrap();
        assert_eq!(got, want, "{key}");
    }
}

/// DUMP then RESTORE under another name gives the same value, for every
/// type, and keeps a TTL given to RESTORE.
#[test]
fn dumped_values_restore_intact() {
    let s = Server::start(None);
    let mut c = s.conn();
    for (key, payload) in FROM_REDIS {
        restore(&mut c, key, payload);
    }
    let _: () = c.set("binary", vec![0u8, 255, 13, 10]).unwrap();
    let mut keys: Vec<&str> = FROM_REDIS.iter().map(|(k, _)| *k).collect();
    keys.push("binary");
    for key in keys {
        let payload: Vec<u8> = cmd("DUMP").arg(key).query(&mut c).unwrap();
        let copy = format!("{key}:copy");
        let _: () = cmd("RESTORE")
            .arg(&copy)
            .arg(100_000)
            .arg(&payload)
            .query(&mut c)
            .unwrap();
        let kind: String = cmd("TYPE").arg(key).query(&mut c).unwrap();
        let read = |c: &mut Connection, k: &str| -> Value {
            let q = match kind.as_str() {
                "string" => cmd("GET").arg(k).clone(),
                "list" => cmd("LRANGE").arg(k).arg(0).arg(-1).clone(),
                "set" => cmd("SORT").arg(k).arg("ALPHA").clone(),
                "hash" => cmd("HGETALL").arg(k).clone(),
                _ => cmd("ZRANGE")
                    .arg(k)
                    .arg(0)
                    .arg(-1)
                    .arg("WITHSCORES")
                    .clone(),
            };
            q.query(c).unwrap()
        };
        assert_eq!(read(&mut c, key), read(&mut c, &copy), "{key}");
        let ttl: i64 = c.pttl(&copy).unwrap();
        assert!((99_000..=100_000).contains(&ttl), "{key}: {ttl}");
    }
    let missing: Value = cmd("DUMP").arg("missing").query(&mut c).unwrap();
    assert_eq!(missing, Value::Nil);
}

#[test]
fn restore_options_and_errors_as_redis() {
    let s = Server::start(None);
    let mut c = s.conn();
    let string = FROM_REDIS[9].1;
    restore(&mut c, "k", string);
    // Errors on the wire, byte for byte, as redis-server 7.0 sent them.
    let mut raw = Raw::new(&s);
    for (request, reply) in [
        (
            &["RESTORE", "k", "0", "x"][..],
            "-BUSYKEY Target key name already exists.\r\n",
        ),
        (
            &["RESTORE", "k2", "-1", "x"],
            "-ERR Invalid TTL value, must be >= 0\r\n",
        ),
        (
            &["RESTORE", "k2", "x", "x"],
            "-ERR value is not an integer or out of range\r\n",
        ),
        (
            &["RESTORE", "k2", "0", "x"],
            "-ERR DUMP payload version or checksum are wrong\r\n",
        ),
        (&["RESTORE", "k2", "0", "x", "FOO"], "-ERR syntax error\r\n"),
        (
            &["RESTORE", "k2", "0", "x", "FREQ", "256"],
            "-ERR Invalid FREQ value, must be >= 0 and <= 255\r\n",
        ),
        (
            &["RESTORE", "k2", "0", "x", "IDLETIME", "-1"],
            "-ERR Invalid IDLETIME value, must be >= 0\r\n",
        ),
        (
            &["RESTORE", "k2", "0", "x", "IDLETIME", "1", "FREQ", "1"],
            "-ERR syntax error\r\n",
        ),
        (
            &["RESTORE", "k2", "0", "x", "IDLETIME"],
            "-ERR syntax error\r\n",
        ),
        (
            &["RESTORE", "k2", "0"],
            "-ERR wrong number of arguments for 'restore' command\r\n",
        ),
        (&["DUMP", "nokey"], "$-1\r\n"),
    ] {
        raw.send(&[request]);
        raw.expect(reply);
    }
    let mut damaged = string.to_vec();
    damaged[5] ^= 1;
    let checksum: redis::RedisError = cmd("RESTORE")
        .arg("k2")
        .arg(0)
        .arg(&damaged)
        .query::<()>(&mut c)
        .unwrap_err();
    assert_eq!(
        checksum.detail(),
        Some("DUMP payload version or checksum are wrong")
    );
    // A well-framed payload whose body is wrong: an empty list.
    let empty_list: Vec<u8> = {
        let mut body = vec![1u8, 0, 9, 0];
        let crc = crc64(&body);
        body.extend(crc.to_le_bytes());
        body
    };
    let bad: redis::RedisError = cmd("RESTORE")
        .arg("k2")
        .arg(0)
        .arg(&empty_list)
        .query::<()>(&mut c)
        .unwrap_err();
    assert_eq!(bad.detail(), Some("Bad data format"));
    // REPLACE, and an absolute TTL already past: the old key goes and
    // nothing takes its place.
    let _: () = cmd("RESTORE")
        .arg("k")
        .arg(1)
        .arg(string)
        .arg("ABSTTL")
        .arg("REPLACE")
        .query(&mut c)
        .unwrap();
    let exists: bool = c.exists("k").unwrap();
    assert!(!exists);
    let _: () = cmd("RESTORE")
        .arg("k")
        .arg(0)
        .arg(FROM_REDIS[3].1)
        .arg("REPLACE")
        .arg("IDLETIME")
        .arg(10)
        .query(&mut c)
        .unwrap();
    let kind: String = cmd("TYPE").arg("k").query(&mut c).unwrap();
    assert_eq!(kind, "list");
}

/// A RESTOREd list serves a client blocked on its key.
#[test]
fn restore_wakes_a_blocked_pop() {
    let s = Server::start(None);
    let mut other = s.conn();
    let mut c = s.conn();
    let waiter = std::thread::spawn(move || -> Option<(String, String)> {
        cmd("BLPOP").arg("q").arg(5).query(&mut c).unwrap()
    });
    common::wait_blocked(&mut other, 1);
    restore(&mut other, "q", FROM_REDIS[3].1);
    assert_eq!(waiter.join().unwrap(), Some(("q".into(), "a".into())));
}
