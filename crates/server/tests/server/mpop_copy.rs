//! `LMPOP`, `ZMPOP`, `BLMPOP`, `BZMPOP` and `COPY` answer as redis-server
//! 7.0 answered the same requests on one connection, byte for byte
//! (argument errors in Redis's order, the timeout read after the other
//! arguments, the first key holding a collection, `WRONGTYPE` for one of
//! another type met first, a copy keeping its expiry, `REPLACE` over
//! another type); and the blocking forms wait for a push, a store or a
//! copy from another client.

use redis::cmd;

use crate::common;
use common::{expect_replies, wait_blocked, Server};

const REDIS_REPLIES: &[(&[&str], &str)] = &[
    (&["rpush", "l1", "a", "b", "c", "d", "e"], ":5\r\n"),
    (&["rpush", "l2", "x"], ":1\r\n"),
    (
        &["zadd", "z1", "1", "a", "2", "b", "3", "c", "1.5", "d"],
        ":4\r\n",
    ),
    (&["set", "str", "v"], "+OK\r\n"),
    (
        &["lmpop", "1", "l1", "left"],
        "*2\r\n$2\r\nl1\r\n*1\r\n$1\r\na\r\n",
    ),
    (
        &["lmpop", "2", "nosuch", "l1", "right", "count", "2"],
        "*2\r\n$2\r\nl1\r\n*2\r\n$1\r\ne\r\n$1\r\nd\r\n",
    ),
    (
        &["lmpop", "2", "nosuch", "l1", "right", "count", "10"],
        "*2\r\n$2\r\nl1\r\n*2\r\n$1\r\nc\r\n$1\r\nb\r\n",
    ),
    (&["exists", "l1"], ":0\r\n"),
    (&["lmpop", "2", "nosuch", "l1", "left"], "*-1\r\n"),
    (
        &["lmpop", "0", "l1", "left"],
        "-ERR numkeys should be greater than 0\r\n",
    ),
    (
        &["lmpop", "-1", "l1", "left"],
        "-ERR numkeys should be greater than 0\r\n",
    ),
    (
        &["lmpop", "x", "l1", "left"],
        "-ERR numkeys should be greater than 0\r\n",
    ),
    (&["lmpop", "3", "l1", "left"], "-ERR syntax error\r\n"),
    (&["lmpop", "1", "l1", "up"], "-ERR syntax error\r\n"),
    (
        &["lmpop", "1", "l2", "left", "count", "0"],
        "-ERR count should be greater than 0\r\n",
    ),
    (
        &["lmpop", "1", "l2", "left", "count", "-1"],
        "-ERR count should be greater than 0\r\n",
    ),
    (
        &["lmpop", "1", "l2", "left", "count", "x"],
        "-ERR count should be greater than 0\r\n",
    ),
    (
        &["lmpop", "1", "l2", "left", "count"],
        "-ERR syntax error\r\n",
    ),
    (
        &["lmpop", "1", "l2", "left", "count", "1", "count", "1"],
        "-ERR syntax error\r\n",
    ),
    (
        &["lmpop", "1", "l2", "left", "foo"],
        "-ERR syntax error\r\n",
    ),
    (
        &["lmpop", "2", "str", "l2", "left"],
        "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
    ),
    (
        &["lmpop", "2", "l2", "str", "left"],
        "*2\r\n$2\r\nl2\r\n*1\r\n$1\r\nx\r\n",
    ),
    (
        &["lmpop", "2", "z1", "l2", "left"],
        "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
    ),
    (
        &["zmpop", "1", "z1", "min"],
        "*2\r\n$2\r\nz1\r\n*1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n",
    ),
    (
        &["zmpop", "1", "z1", "max", "count", "2"],
        "*2\r\n$2\r\nz1\r\n*2\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n",
    ),
    (
        &["zmpop", "2", "nosuch", "z1", "min", "count", "5"],
        "*2\r\n$2\r\nz1\r\n*1\r\n*2\r\n$1\r\nd\r\n$3\r\n1.5\r\n",
    ),
    (&["zmpop", "1", "z1", "min"], "*-1\r\n"),
    (&["zmpop", "1", "z1", "left"], "-ERR syntax error\r\n"),
    (&["zmpop", "2", "l2", "z1", "min"], "*-1\r\n"),
    (
        &["zmpop", "1", "z1", "MAX", "COUNT", "0"],
        "-ERR count should be greater than 0\r\n",
    ),
    (&["blmpop", "0.01", "2", "nosuch", "l2", "left"], "*-1\r\n"),
    (&["blmpop", "0.01", "1", "nosuch", "left"], "*-1\r\n"),
    (
        &["blmpop", "x", "1", "nosuch", "left"],
        "-ERR timeout is not a float or out of range\r\n",
    ),
    (
        &["blmpop", "-1", "1", "nosuch", "left"],
        "-ERR timeout is negative\r\n",
    ),
    (
        &["blmpop", "x", "1", "nosuch", "up"],
        "-ERR syntax error\r\n",
    ),
    (
        &["blmpop", "0.01", "0", "nosuch", "left"],
        "-ERR numkeys should be greater than 0\r\n",
    ),
    (
        &["blmpop", "0.01", "1", "str", "left"],
        "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
    ),
    (&["bzmpop", "0.01", "1", "nosuch", "min"], "*-1\r\n"),
    (&["zadd", "z2", "5", "q", "6", "r"], ":2\r\n"),
    (
        &["bzmpop", "0", "2", "z1", "z2", "max", "count", "2"],
        "*2\r\n$2\r\nz2\r\n*2\r\n*2\r\n$1\r\nr\r\n$1\r\n6\r\n*2\r\n$1\r\nq\r\n$1\r\n5\r\n",
    ),
    (&["bzmpop", "x", "1", "z2", "foo"], "-ERR syntax error\r\n"),
    (&["exists", "z2"], ":0\r\n"),
    (&["rpush", "c1", "a", "b"], ":2\r\n"),
    (&["expire", "c1", "100"], ":1\r\n"),
    (&["copy", "c1", "c2"], ":1\r\n"),
    (&["lrange", "c2", "0", "-1"], "*2\r\n$1\r\na\r\n$1\r\nb\r\n"),
    (&["ttl", "c2"], ":100\r\n"),
    (&["copy", "c1", "c2"], ":0\r\n"),
    (&["copy", "c1", "c2", "replace"], ":1\r\n"),
    (
        &["copy", "c1", "c1"],
        "-ERR source and destination objects are the same\r\n",
    ),
    (&["copy", "nosuch", "c3"], ":0\r\n"),
    (&["copy", "c1", "c3", "db", "0"], ":1\r\n"),
    (
        &["copy", "c1", "c4", "db", "x"],
        "-ERR value is not an integer or out of range\r\n",
    ),
    (&["copy", "c1", "c4", "foo"], "-ERR syntax error\r\n"),
    (&["copy", "c1", "c4", "db"], "-ERR syntax error\r\n"),
    (&["copy", "c1", "c4", "replace", "replace"], ":1\r\n"),
    (&["set", "s1", "hello"], "+OK\r\n"),
    (&["copy", "s1", "c4", "replace"], ":1\r\n"),
    (&["get", "c4"], "$5\r\nhello\r\n"),
    (&["type", "c4"], "+string\r\n"),
    (&["zadd", "zz", "1", "a", "2", "b"], ":2\r\n"),
    (&["copy", "zz", "c4", "replace"], ":1\r\n"),
    (
        &["zrange", "c4", "0", "-1", "withscores"],
        "*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n",
    ),
    (&["zadd", "c4", "0", "zz"], ":1\r\n"),
    (
        &["zrange", "zz", "0", "-1", "withscores"],
        "*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n",
    ),
    (&["sadd", "ss", "a", "b"], ":2\r\n"),
    (&["hset", "hh", "f", "v"], ":1\r\n"),
    (&["copy", "ss", "s2"], ":1\r\n"),
    (&["scard", "s2"], ":2\r\n"),
    (&["sismember", "s2", "a"], ":1\r\n"),
    (&["copy", "hh", "h2"], ":1\r\n"),
    (&["hgetall", "h2"], "*2\r\n$1\r\nf\r\n$1\r\nv\r\n"),
    (&["copy", "str", "c1", "replace"], ":1\r\n"),
    (&["type", "c1"], "+string\r\n"),
];

#[test]
fn multi_key_pops_and_copy_answer_as_redis_does() {
    let s = Server::start(None);
    expect_replies(&s, REDIS_REPLIES);
}

#[test]
fn blocking_multi_key_pops_wait_for_a_push_a_store_or_a_copy() {
    let s = Server::start(None);
    let mut c = s.conn();
    let waiter = |args: &'static [&'static str]| {
        let mut conn = s.conn();
        std::thread::spawn(move || -> redis::Value {
            cmd(args[0]).arg(&args[1..]).query(&mut conn).unwrap()
        })
    };
    // A push to the second key serves BLMPOP, up to its count.
    let lists = waiter(&["BLMPOP", "10", "2", "q1", "q2", "RIGHT", "COUNT", "3"]);
    wait_blocked(&mut c, 1);
    let _: i64 = cmd("RPUSH")
        .arg("q2")
        .arg(&["a", "b", "c", "d"])
        .query(&mut c)
        .unwrap();
    let got: (String, Vec<String>) = redis::from_redis_value(&lists.join().unwrap()).unwrap();
    assert_eq!(got, ("q2".into(), vec!["d".into(), "c".into(), "b".into()]));
    // A store into the key serves BZMPOP.
    let zsets = waiter(&["BZMPOP", "10", "1", "zq", "MAX"]);
    wait_blocked(&mut c, 1);
    let _: i64 = cmd("ZADD")
        .arg("src")
        .arg(&["1", "x", "9", "y"])
        .query(&mut c)
        .unwrap();
    let _: i64 = cmd("ZUNIONSTORE")
        .arg("zq")
        .arg(1)
        .arg("src")
        .query(&mut c)
        .unwrap();
    let got: (String, Vec<(String, f64)>) =
        redis::from_redis_value(&zsets.join().unwrap()).unwrap();
    assert_eq!(got, ("zq".into(), vec![("y".into(), 9.0)]));
    // A copy into the key serves BLMPOP; the source keeps its elements.
    let copied = waiter(&["BLMPOP", "10", "1", "cq", "LEFT"]);
    wait_blocked(&mut c, 1);
    let _: i64 = cmd("COPY").arg("q2").arg("cq").query(&mut c).unwrap();
    let got: (String, Vec<String>) = redis::from_redis_value(&copied.join().unwrap()).unwrap();
    assert_eq!(got, ("cq".into(), vec!["a".into()]));
    let left: Vec<String> = cmd("LRANGE")
        .arg("q2")
        .arg(0)
        .arg(-1)
        .query(&mut c)
        .unwrap();
    assert_eq!(left, vec!["a".to_string()]);
    // A timeout answers a null array.
    let none: redis::Value = cmd("BLMPOP")
        .arg("0.05")
        .arg(1)
        .arg("nothing")
        .arg("LEFT")
        .query(&mut c)
        .unwrap();
    assert_eq!(none, redis::Value::Nil);
}
