//! HyperLogLogs (`PFADD`, `PFCOUNT`, `PFMERGE`) answer as redis-server 7.0
//! answered the same requests on one connection, byte for byte, and hold
//! the very strings Redis holds (compared by their SHA-1, taken in a
//! script): sparse, promoted to dense, merged from both, with the errors
//! for collections and for strings that are not HyperLogLogs. Then what a
//! table cannot show: a `PFCOUNT` that refreshes the cached count is a
//! write a `WATCH` sees, one that reads it is not, and `PFADD` and
//! `PFMERGE` keep the key's expiry.

use redis::cmd;

use crate::common;
use common::{expect_replies, Server};

const REDIS_REPLIES: &[(&[&str], &str)] = &[
    (&["pfadd", "h", "a", "b", "c"], ":1\r\n"),
    (&["pfadd", "h", "a"], ":0\r\n"),
    (&["pfadd", "h"], ":0\r\n"),
    (&["pfcount", "h"], ":3\r\n"),
    (&["pfcount", "h"], ":3\r\n"),
    (&["eval", "return redis.sha1hex(redis.call('get', KEYS[1]))", "1", "h"], "$40\r\nd07322dc4f4d0c338026f11fbf082c5b68e6a70a\r\n"),
    (&["pfadd", "empty"], ":1\r\n"),
    (&["eval", "return redis.sha1hex(redis.call('get', KEYS[1]))", "1", "empty"], "$40\r\ne2c2a4d6f667db2d3180523f3c7a9bda5a4db0fc\r\n"),
    (&["strlen", "empty"], ":18\r\n"),
    (&["pfcount", "nokey"], ":0\r\n"),
    (&["pfcount", "h", "nokey"], ":3\r\n"),
    (&["eval", "for i = 1, 300 do redis.call('pfadd', KEYS[1], 'e' .. i) end return redis.call('pfcount', KEYS[1])", "1", "sp"], ":302\r\n"),
    (&["eval", "return redis.sha1hex(redis.call('get', KEYS[1]))", "1", "sp"], "$40\r\nd62c7f8a65610ee5c12682890ad5eac1571252f0\r\n"),
    (&["strlen", "sp"], ":713\r\n"),
    (&["eval", "for i = 1, 4000 do redis.call('pfadd', KEYS[1], i, i * 7, 'x' .. i) end return redis.call('pfcount', KEYS[1])", "1", "dn"], ":11318\r\n"),
    (&["eval", "return redis.sha1hex(redis.call('get', KEYS[1]))", "1", "dn"], "$40\r\nd7780f034a3f1962ab83ae7ab63e38ec2a2ddc1b\r\n"),
    (&["strlen", "dn"], ":12304\r\n"),
    (&["pfcount", "sp", "dn", "h"], ":11615\r\n"),
    (&["pfmerge", "m", "h", "sp"], "+OK\r\n"),
    (&["eval", "return redis.sha1hex(redis.call('get', KEYS[1]))", "1", "m"], "$40\r\n020be298e0b6281a02d07381cdf46382adad49a3\r\n"),
    (&["pfcount", "m"], ":305\r\n"),
    (&["pfmerge", "m2", "m", "dn"], "+OK\r\n"),
    (&["strlen", "m2"], ":12304\r\n"),
    (&["pfcount", "m2"], ":11615\r\n"),
    (&["eval", "return redis.sha1hex(redis.call('get', KEYS[1]))", "1", "m2"], "$40\r\n3cb111f76c489006d7678daeacec77ce16db1f79\r\n"),
    (&["pfmerge", "m3"], "+OK\r\n"),
    (&["strlen", "m3"], ":18\r\n"),
    (&["type", "h"], "+string\r\n"),
    (&["set", "s", "hello"], "+OK\r\n"),
    (&["pfadd", "s", "a"], "-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n"),
    (&["pfcount", "s"], "-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n"),
    (&["pfcount", "h", "s"], "-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n"),
    (&["pfmerge", "s", "h"], "-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n"),
    (&["pfmerge", "h", "s"], "-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n"),
    (&["lpush", "l", "a"], ":1\r\n"),
    (&["pfadd", "l", "a"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["pfcount", "l"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["pfmerge", "d", "l"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["set", "bad", "HYLL\x02 and more bytes"], "+OK\r\n"),
    (&["pfcount", "bad"], "-WRONGTYPE Key is not a valid HyperLogLog string value.\r\n"),
    (&["pfadd"], "-ERR wrong number of arguments for 'pfadd' command\r\n"),
    (&["pfcount"], "-ERR wrong number of arguments for 'pfcount' command\r\n"),
    (&["pfmerge"], "-ERR wrong number of arguments for 'pfmerge' command\r\n"),
    (&["eval", "for i = 1, 1600 do redis.call('pfadd', KEYS[1], 'k' .. i) end return redis.call('strlen', KEYS[1])", "1", "sp2"], ":2851\r\n"),
    (&["eval", "return redis.sha1hex(redis.call('get', KEYS[1]))", "1", "sp2"], "$40\r\nd1caccf1037ce78074f8e0535861bbebb1563c04\r\n"),
    (&["pfcount", "sp2"], ":1577\r\n"),
    (&["eval", "for i = 1601, 1700 do redis.call('pfadd', KEYS[1], 'k' .. i) end return redis.call('strlen', KEYS[1])", "1", "sp2"], ":12304\r\n"),
    (&["pfcount", "sp2"], ":1679\r\n"),
    (&["pfmerge", "sp3", "sp2", "sp"], "+OK\r\n"),
    (&["eval", "return redis.sha1hex(redis.call('get', KEYS[1]))", "1", "sp3"], "$40\r\nee4776d7a355562d49aa4a2a1c6638982d9c8bfa\r\n"),
];

#[test]
fn hyperloglogs_answer_as_redis_does() {
    let s = Server::start(None);
    expect_replies(&s, REDIS_REPLIES);
}

/// `EXEC` after `WATCH key` and `cause` on another connection: whether the
/// transaction ran.
fn watched_exec_runs(s: &Server, cause: &[&str]) -> bool {
    let (mut c, mut other) = (s.conn(), s.conn());
    let _: () = cmd("WATCH").arg("h").query(&mut c).unwrap();
    let _: redis::Value = cmd(cause[0]).arg(&cause[1..]).query(&mut other).unwrap();
    let _: () = cmd("MULTI").query(&mut c).unwrap();
    let _: () = cmd("SET").arg(&["other", "1"]).query(&mut c).unwrap();
    let done: Option<Vec<String>> = cmd("EXEC").query(&mut c).unwrap();
    done.is_some()
}

#[test]
fn a_count_that_refreshes_the_cache_is_a_write() {
    let s = Server::start(None);
    let mut c = s.conn();
    let _: i64 = cmd("PFADD").arg(&["h", "a", "b"]).query(&mut c).unwrap();
    // The cache is stale after PFADD: the count rewrites the key.
    assert!(!watched_exec_runs(&s, &["PFCOUNT", "h"]));
    // Now it is current: the count only reads.
    assert!(watched_exec_runs(&s, &["PFCOUNT", "h"]));
    // Adding what is there already changes nothing.
    assert!(watched_exec_runs(&s, &["PFADD", "h", "a"]));
    assert!(!watched_exec_runs(&s, &["PFADD", "h", "c"]));
}

#[test]
fn adds_and_merges_keep_the_expiry() {
    let s = Server::start(None);
    let mut c = s.conn();
    let _: i64 = cmd("PFADD").arg(&["h", "a"]).query(&mut c).unwrap();
    let _: i64 = cmd("PFADD").arg(&["src", "x", "y"]).query(&mut c).unwrap();
    let _: i64 = cmd("EXPIRE").arg(&["h", "1000"]).query(&mut c).unwrap();
    let _: i64 = cmd("PFADD").arg(&["h", "b"]).query(&mut c).unwrap();
    let _: () = cmd("PFMERGE").arg(&["h", "src"]).query(&mut c).unwrap();
    let ttl: i64 = cmd("TTL").arg("h").query(&mut c).unwrap();
    assert!((990..=1000).contains(&ttl), "ttl {ttl}");
    let count: i64 = cmd("PFCOUNT").arg("h").query(&mut c).unwrap();
    assert_eq!(count, 4);
}

/// Four clients adding to one key in pipelines (run as one transaction
/// per run of `PFADD`s) lose no element: the key counts what one client
/// adding the same elements in order counts.
#[test]
fn concurrent_pipelined_adds_lose_nothing() {
    let s = Server::start(None);
    let workers: Vec<_> = (0..4)
        .map(|w| {
            let mut c = s.conn();
            std::thread::spawn(move || {
                for chunk in 0..10 {
                    let mut p = redis::pipe();
                    for i in 0..50 {
                        p.cmd("PFADD").arg("h").arg(format!("e{w}-{chunk}-{i}"));
                    }
                    let _: Vec<i64> = p.query(&mut c).unwrap();
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let mut c = s.conn();
    for w in 0..4 {
        for chunk in 0..10 {
            for i in 0..50 {
                let _: i64 = cmd("PFADD")
                    .arg(&["ref", &format!("e{w}-{chunk}-{i}")])
                    .query(&mut c)
                    .unwrap();
            }
        }
    }
    let got: i64 = cmd("PFCOUNT").arg("h").query(&mut c).unwrap();
    let want: i64 = cmd("PFCOUNT").arg("ref").query(&mut c).unwrap();
    assert_eq!(got, want);
    assert!((1900..2100).contains(&got), "{got}");
}
