//! `OBJECT` and `MEMORY` answer as redis-server 7.0 answered the same
//! requests on one connection, byte for byte (`REDIS_REPLIES`): the
//! encodings Redis gives values of each type and size (integers, short
//! and long strings, intsets, listpacks past their thresholds),
//! `REFCOUNT`'s shared integers, `FREQ`'s error under `noeviction`, the
//! help texts and the errors. Beyond the fixture: `MEMORY USAGE` grows
//! with a value and counts every element with `SAMPLES 0`, and `MEMORY
//! STATS` reports the keys.

use redis::{cmd, Commands};

use crate::common;
use common::{expect_replies, Server};

const REDIS_REPLIES: &[(&[&str], &str)] = &[
    (&["set", "s", "hello"], "+OK\r\n"),
    (&["set", "i", "123"], "+OK\r\n"),
    (&["set", "z0", "0"], "+OK\r\n"),
    (&["set", "neg", "-5"], "+OK\r\n"),
    (&["set", "m0", "-0"], "+OK\r\n"),
    (&["set", "lead", "0123"], "+OK\r\n"),
    (&["set", "big", "12345678901234567890"], "+OK\r\n"),
    (&["set", "i64", "9223372036854775807"], "+OK\r\n"),
    (&["set", "i20", "-9223372036854775808"], "+OK\r\n"),
    (&["set", "e44", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"], "+OK\r\n"),
    (&["set", "e45", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"], "+OK\r\n"),
    (&["rpush", "l", "a"], ":1\r\n"),
    (&["sadd", "si", "1", "2", "-3"], ":3\r\n"),
    (&["sadd", "ss", "a"], ":1\r\n"),
    (&["sadd", "smix", "1", "a"], ":2\r\n"),
    (&["hset", "h", "f", "v"], ":1\r\n"),
    (&["hset", "hl", "f", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"], ":1\r\n"),
    (&["zadd", "z", "1", "m"], ":1\r\n"),
    (&["zadd", "zl", "1", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"], ":1\r\n"),
    (&["xadd", "x", "1-1", "f", "v"], "$3\r\n1-1\r\n"),
    (&["pfadd", "hll", "a", "b", "c"], ":1\r\n"),
    (&["object", "encoding", "s"], "$6\r\nembstr\r\n"),
    (&["object", "encoding", "i"], "$3\r\nint\r\n"),
    (&["object", "encoding", "z0"], "$3\r\nint\r\n"),
    (&["object", "encoding", "neg"], "$3\r\nint\r\n"),
    (&["object", "encoding", "m0"], "$6\r\nembstr\r\n"),
    (&["object", "encoding", "lead"], "$6\r\nembstr\r\n"),
    (&["object", "encoding", "big"], "$6\r\nembstr\r\n"),
    (&["object", "encoding", "i64"], "$3\r\nint\r\n"),
    (&["object", "encoding", "i20"], "$3\r\nint\r\n"),
    (&["object", "encoding", "e44"], "$6\r\nembstr\r\n"),
    (&["object", "encoding", "e45"], "$3\r\nraw\r\n"),
    (&["object", "encoding", "l"], "$9\r\nquicklist\r\n"),
    (&["object", "encoding", "si"], "$6\r\nintset\r\n"),
    (&["object", "encoding", "ss"], "$9\r\nhashtable\r\n"),
    (&["object", "encoding", "smix"], "$9\r\nhashtable\r\n"),
    (&["object", "encoding", "h"], "$8\r\nlistpack\r\n"),
    (&["object", "encoding", "hl"], "$9\r\nhashtable\r\n"),
    (&["object", "encoding", "z"], "$8\r\nlistpack\r\n"),
    (&["object", "encoding", "zl"], "$8\r\nskiplist\r\n"),
    (&["object", "encoding", "x"], "$6\r\nstream\r\n"),
    (&["object", "encoding", "hll"], "$3\r\nraw\r\n"),
    (&["object", "encoding", "nokey"], "$-1\r\n"),
    (&["object", "refcount", "i"], ":2147483647\r\n"),
    (&["object", "refcount", "z0"], ":2147483647\r\n"),
    (&["object", "refcount", "s"], ":1\r\n"),
    (&["object", "refcount", "neg"], ":1\r\n"),
    (&["object", "refcount", "nokey"], "$-1\r\n"),
    (&["object", "freq", "s"], "-ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.\r\n"),
    (&["object", "freq", "nokey"], "$-1\r\n"),
    (&["object", "foo"], "-ERR unknown subcommand 'foo'. Try OBJECT HELP.\r\n"),
    (&["object", "encoding"], "-ERR wrong number of arguments for 'object|encoding' command\r\n"),
    (&["object", "encoding", "a", "b"], "-ERR wrong number of arguments for 'object|encoding' command\r\n"),
    (&["object"], "-ERR wrong number of arguments for 'object' command\r\n"),
    (&["object", "help"], "*15\r\n+OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+ENCODING <key>\r\n+    Return the kind of internal representation used in order to store the value\r\n+    associated with a <key>.\r\n+FREQ <key>\r\n+    Return the access frequency index of the <key>. The returned integer is\r\n+    proportional to the logarithm of the recent access frequency of the key.\r\n+IDLETIME <key>\r\n+    Return the idle time of the <key>, that is the approximated number of\r\n+    seconds elapsed since the last access to the key.\r\n+REFCOUNT <key>\r\n+    Return the number of references of the value associated with the specified\r\n+    <key>.\r\n+HELP\r\n+    Prints this help.\r\n"),
    (&["memory", "usage", "nokey"], "$-1\r\n"),
    (&["memory", "usage", "s", "samples", "x"], "-ERR value is not an integer or out of range\r\n"),
    (&["memory", "usage", "s", "foo"], "-ERR syntax error\r\n"),
    (&["memory", "usage", "s", "samples"], "-ERR syntax error\r\n"),
    (&["memory", "usage", "s", "samples", "-1"], "-ERR syntax error\r\n"),
    (&["memory", "foo"], "-ERR unknown subcommand 'foo'. Try MEMORY HELP.\r\n"),
    (&["memory", "usage"], "-ERR wrong number of arguments for 'memory|usage' command\r\n"),
    (&["memory", "purge"], "+OK\r\n"),
    (&["memory", "help"], "*14\r\n+MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+DOCTOR\r\n+    Return memory problems reports.\r\n+MALLOC-STATS\r\n+    Return internal statistics report from the memory allocator.\r\n+PURGE\r\n+    Attempt to purge dirty pages for reclamation by the allocator.\r\n+STATS\r\n+    Return information about the memory usage of the server.\r\n+USAGE <key> [SAMPLES <count>]\r\n+    Return memory in bytes used by <key> and its value. Nested values are\r\n+    sampled up to <count> times (default: 5, 0 means sample all).\r\n+HELP\r\n+    Prints this help.\r\n"),
    (&["memory", "stats", "x"], "-ERR wrong number of arguments for 'memory|stats' command\r\n"),
    (&["memory", "doctor", "x"], "-ERR wrong number of arguments for 'memory|doctor' command\r\n"),
];

#[test]
fn object_and_memory_answer_as_redis_does() {
    let s = Server::start(None);
    expect_replies(&s, REDIS_REPLIES);
}

fn usage(c: &mut redis::Connection, key: &str, samples: Option<i64>) -> i64 {
    let mut q = cmd("MEMORY");
    q.arg("USAGE").arg(key);
    if let Some(n) = samples {
        q.arg("SAMPLES").arg(n);
    }
    q.query(c).unwrap()
}

#[test]
fn memory_usage_follows_the_value() {
    let s = Server::start(None);
    let mut c = s.conn();
    let _: () = c.set("small", "x").unwrap();
    let _: () = c.set("large", "x".repeat(10_000)).unwrap();
    assert!(usage(&mut c, "large", None) > usage(&mut c, "small", None) + 9_000);
    // Elements of very different sizes: the first five are small, the
    // rest large, so only counting all of them sees the large ones.
    let mut h = Vec::new();
    for i in 0..5 {
        h.push((format!("a{i}"), "v".to_string()));
    }
    for i in 0..100 {
        h.push((format!("b{i}"), "w".repeat(1000)));
    }
    let _: () = c.hset_multiple("h", &h).unwrap();
    let sampled = usage(&mut c, "h", None);
    let all = usage(&mut c, "h", Some(0));
    assert!(all > 100_000, "{all}");
    assert!(sampled < all / 10, "{sampled} {all}");
    let stats: Vec<redis::Value> = cmd("MEMORY").arg("STATS").query(&mut c).unwrap();
    let keys = stats
        .chunks(2)
        .find(|kv| kv[0] == redis::Value::SimpleString("keys.count".into()))
        .map(|kv| kv[1].clone());
    assert_eq!(keys, Some(redis::Value::Int(3)));
}
