//! Sorted-set algebra (`ZUNION`, `ZINTER`, `ZDIFF`, their STORE forms,
//! `ZINTERCARD`), member ranges (`ZRANGEBYLEX`, `ZREVRANGEBYLEX`,
//! `ZLEXCOUNT`, `ZREMRANGEBYLEX`, `ZRANGE ... BYLEX`) and `ZRANGESTORE`
//! answer as redis-server 7.0 answered the same requests on one
//! connection, byte for byte: sets among the inputs, weights with
//! infinities (NaN counting 0, differently in a union and an
//! intersection), each aggregate, a destination that is also a source or
//! of another type, an empty result deleting the destination, option and
//! range errors in Redis's order of checks, a set with several scores.

use crate::common;
use common::{expect_replies, Server};

const REDIS_REPLIES: &[(&[&str], &str)] = &[
    (&["zadd", "a", "0", "x", "1", "y", "2", "z"], ":3\r\n"),
    (&["sadd", "s", "x", "w"], ":2\r\n"),
    (&["set", "str", "v"], "+OK\r\n"),
    (&["zadd", "l", "0", "a", "0", "b", "0", "c", "0", "d", "0", "e"], ":5\r\n"),
    (&["zadd", "b", "1.5", "x", "2.5", "q", "-3", "y"], ":3\r\n"),
    (&["zunion", "1", "a", "weights", "-1", "withscores"], "*6\r\n$1\r\nz\r\n$2\r\n-2\r\n$1\r\ny\r\n$2\r\n-1\r\n$1\r\nx\r\n$2\r\n-0\r\n"),
    (&["zunion", "0", "a"], "-ERR at least 1 input key is needed for 'zunion' command\r\n"),
    (&["zinter", "0", "a"], "-ERR at least 1 input key is needed for 'zinter' command\r\n"),
    (&["zintercard", "0", "a"], "-ERR at least 1 input key is needed for 'zintercard' command\r\n"),
    (&["zdiff", "0", "a"], "-ERR at least 1 input key is needed for 'zdiff' command\r\n"),
    (&["zunion", "3", "a"], "-ERR syntax error\r\n"),
    (&["zunion", "1", "a", "str"], "-ERR syntax error\r\n"),
    (&["zunion", "2", "a", "str"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["zunion", "2", "a", "s", "withscores"], "*8\r\n$1\r\nw\r\n$1\r\n1\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\ny\r\n$1\r\n1\r\n$1\r\nz\r\n$1\r\n2\r\n"),
    (&["zinter", "2", "a", "s", "withscores"], "*2\r\n$1\r\nx\r\n$1\r\n1\r\n"),
    (&["zdiff", "2", "a", "s", "withscores"], "*4\r\n$1\r\ny\r\n$1\r\n1\r\n$1\r\nz\r\n$1\r\n2\r\n"),
    (&["zintercard", "2", "a", "s"], ":1\r\n"),
    (&["zintercard", "2", "a", "s", "limit", "-1"], "-ERR LIMIT can't be negative\r\n"),
    (&["zintercard", "2", "a", "s", "limit", "x"], "-ERR LIMIT can't be negative\r\n"),
    (&["zintercard", "2", "a", "s", "limit", "1"], ":1\r\n"),
    (&["zintercard", "3", "a", "s", "b", "limit", "0"], ":1\r\n"),
    (&["zunion", "1", "a", "weights", "x"], "-ERR weight value is not a float\r\n"),
    (&["zunion", "1", "a", "weights", "nan"], "-ERR weight value is not a float\r\n"),
    (&["zunion", "1", "a", "weights", "inf", "withscores"], "*6\r\n$1\r\nx\r\n$1\r\n0\r\n$1\r\ny\r\n$3\r\ninf\r\n$1\r\nz\r\n$3\r\ninf\r\n"),
    (&["zunion", "1", "a", "aggregate", "foo"], "-ERR syntax error\r\n"),
    (&["zunion", "1", "a", "aggregate"], "-ERR syntax error\r\n"),
    (&["zdiff", "1", "a", "weights", "1"], "-ERR syntax error\r\n"),
    (&["zunionstore", "d", "1", "a", "withscores"], "-ERR syntax error\r\n"),
    (&["zunion", "x", "a"], "-ERR value is not an integer or out of range\r\n"),
    (&["zunion", "1", "a", "weights", "1", "2"], "-ERR syntax error\r\n"),
    (&["zunionstore", "d", "1", "nosuch"], ":0\r\n"),
    (&["zinterstore", "d", "2", "a", "s"], ":1\r\n"),
    (&["zunion", "2", "a", "a", "aggregate", "max", "withscores"], "*6\r\n$1\r\nx\r\n$1\r\n0\r\n$1\r\ny\r\n$1\r\n1\r\n$1\r\nz\r\n$1\r\n2\r\n"),
    (&["zrange", "d", "0", "-1", "withscores"], "*2\r\n$1\r\nx\r\n$1\r\n1\r\n"),
    (&["zinterstore", "str", "1", "a"], ":3\r\n"),
    (&["type", "str"], "+zset\r\n"),
    (&["zintercard", "-1", "a"], "-ERR at least 1 input key is needed for 'zintercard' command\r\n"),
    (&["zdiffstore", "d", "0", "a"], "-ERR at least 1 input key is needed for 'zdiffstore' command\r\n"),
    (&["zunion", "1", "a", "withscores", "withscores"], "*6\r\n$1\r\nx\r\n$1\r\n0\r\n$1\r\ny\r\n$1\r\n1\r\n$1\r\nz\r\n$1\r\n2\r\n"),
    (&["zunion", "1", "a", "weights"], "-ERR syntax error\r\n"),
    (&["zunion", "3", "a", "b", "s", "weights", "1", "2", "3", "aggregate", "min", "withscores"], "*10\r\n$1\r\ny\r\n$2\r\n-6\r\n$1\r\nx\r\n$1\r\n0\r\n$1\r\nz\r\n$1\r\n2\r\n$1\r\nw\r\n$1\r\n3\r\n$1\r\nq\r\n$1\r\n5\r\n"),
    (&["zunion", "3", "a", "b", "s", "weights", "1", "2", "3", "aggregate", "max", "withscores"], "*10\r\n$1\r\ny\r\n$1\r\n1\r\n$1\r\nz\r\n$1\r\n2\r\n$1\r\nw\r\n$1\r\n3\r\n$1\r\nx\r\n$1\r\n3\r\n$1\r\nq\r\n$1\r\n5\r\n"),
    (&["zunion", "3", "a", "b", "s", "weights", "0.1", "0.2", "inf", "withscores"], "*10\r\n$1\r\ny\r\n$20\r\n-0.50000000000000011\r\n$1\r\nz\r\n$19\r\n0.20000000000000001\r\n$1\r\nq\r\n$3\r\n0.5\r\n$1\r\nw\r\n$3\r\ninf\r\n$1\r\nx\r\n$3\r\ninf\r\n"),
    (&["zinter", "3", "a", "b", "s", "weights", "1", "2", "-inf", "aggregate", "sum", "withscores"], "*2\r\n$1\r\nx\r\n$4\r\n-inf\r\n"),
    (&["zinter", "2", "a", "b", "weights", "inf", "0", "withscores"], "*4\r\n$1\r\nx\r\n$1\r\n0\r\n$1\r\ny\r\n$3\r\ninf\r\n"),
    (&["zinter", "2", "a", "b", "weights", "inf", "0", "aggregate", "min", "withscores"], "*4\r\n$1\r\nx\r\n$1\r\n0\r\n$1\r\ny\r\n$2\r\n-0\r\n"),
    (&["zinter", "2", "a", "b", "weights", "0", "inf", "aggregate", "max", "withscores"], "*4\r\n$1\r\ny\r\n$1\r\n0\r\n$1\r\nx\r\n$3\r\ninf\r\n"),
    (&["zinter", "2", "b", "a", "weights", "0", "inf", "withscores"], "*4\r\n$1\r\nx\r\n$1\r\n0\r\n$1\r\ny\r\n$3\r\ninf\r\n"),
    (&["zdiff", "3", "a", "b", "s", "withscores"], "*2\r\n$1\r\nz\r\n$1\r\n2\r\n"),
    (&["zdiff", "2", "b", "a", "withscores"], "*2\r\n$1\r\nq\r\n$3\r\n2.5\r\n"),
    (&["zdiffstore", "dd", "2", "b", "a"], ":1\r\n"),
    (&["zrange", "dd", "0", "-1", "withscores"], "*2\r\n$1\r\nq\r\n$3\r\n2.5\r\n"),
    (&["zdiffstore", "dd", "2", "a", "a"], ":0\r\n"),
    (&["exists", "dd"], ":0\r\n"),
    (&["zunionstore", "a", "2", "a", "b"], ":4\r\n"),
    (&["zrange", "a", "0", "-1", "withscores"], "*8\r\n$1\r\ny\r\n$2\r\n-2\r\n$1\r\nx\r\n$3\r\n1.5\r\n$1\r\nz\r\n$1\r\n2\r\n$1\r\nq\r\n$3\r\n2.5\r\n"),
    (&["zunionstore", "u", "2", "s", "s", "aggregate", "sum"], ":2\r\n"),
    (&["zrange", "u", "0", "-1", "withscores"], "*4\r\n$1\r\nw\r\n$1\r\n2\r\n$1\r\nx\r\n$1\r\n2\r\n"),
    (&["zunion", "1", "nosuch", "withscores"], "*0\r\n"),
    (&["zinter", "2", "a", "nosuch"], "*0\r\n"),
    (&["zunion", "2", "a", "b", "weights", "1", "1", "aggregate", "sum", "aggregate", "max", "withscores"], "*8\r\n$1\r\ny\r\n$2\r\n-2\r\n$1\r\nx\r\n$3\r\n1.5\r\n$1\r\nz\r\n$1\r\n2\r\n$1\r\nq\r\n$3\r\n2.5\r\n"),
    (&["zunionstore", "d", "2", "a", "b", "weights", "1", "1", "x"], "-ERR syntax error\r\n"),
    (&["zinterstore", "1", "1", "a"], ":4\r\n"),
    (&["zrangebylex", "l", "-", "+"], "*5\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n"),
    (&["zrangebylex", "l", "[b", "(d"], "*2\r\n$1\r\nb\r\n$1\r\nc\r\n"),
    (&["zrangebylex", "l", "(b", "+"], "*3\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n"),
    (&["zrevrangebylex", "l", "+", "-"], "*5\r\n$1\r\ne\r\n$1\r\nd\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n"),
    (&["zrevrangebylex", "l", "(d", "[b"], "*2\r\n$1\r\nc\r\n$1\r\nb\r\n"),
    (&["zrevrangebylex", "l", "[d", "(b"], "*2\r\n$1\r\nd\r\n$1\r\nc\r\n"),
    (&["zrangebylex", "l", "b", "d"], "-ERR min or max not valid string range item\r\n"),
    (&["zrangebylex", "l", "[b", "[d", "limit", "1", "1"], "*1\r\n$1\r\nc\r\n"),
    (&["zrangebylex", "l", "[b", "[d", "limit", "-1", "1"], "*0\r\n"),
    (&["zrangebylex", "l", "[b", "[d", "limit", "1", "-1"], "*2\r\n$1\r\nc\r\n$1\r\nd\r\n"),
    (&["zrangebylex", "l", "[b", "[d", "withscores"], "-ERR syntax error, WITHSCORES not supported in combination with BYLEX\r\n"),
    (&["zrange", "l", "[b", "[d", "bylex", "withscores"], "-ERR syntax error, WITHSCORES not supported in combination with BYLEX\r\n"),
    (&["zrange", "l", "[b", "[d", "bylex", "rev"], "*0\r\n"),
    (&["zrange", "l", "[d", "[b", "bylex", "rev", "limit", "0", "1"], "*1\r\n$1\r\nd\r\n"),
    (&["zrange", "l", "[b", "[d", "bylex", "byscore"], "-ERR syntax error\r\n"),
    (&["zrange", "l", "[b", "[d", "bylex", "bylex"], "-ERR syntax error\r\n"),
    (&["zrange", "l", "0", "1", "rev", "rev"], "-ERR syntax error\r\n"),
    (&["zrange", "l", "[b", "[d", "byscore"], "-ERR min or max is not a float\r\n"),
    (&["zrange", "l", "-", "+", "bylex", "limit", "1", "2"], "*2\r\n$1\r\nb\r\n$1\r\nc\r\n"),
    (&["zrangebylex", "l", "-", "+", "limit", "1"], "-ERR syntax error\r\n"),
    (&["zlexcount", "l", "-", "+"], ":5\r\n"),
    (&["zlexcount", "l", "(a", "[c"], ":2\r\n"),
    (&["zlexcount", "l", "x", "y"], "-ERR min or max not valid string range item\r\n"),
    (&["zlexcount", "l", "+", "-"], ":0\r\n"),
    (&["zlexcount", "l", "[c", "[c"], ":1\r\n"),
    (&["zlexcount", "l", "(c", "[c"], ":0\r\n"),
    (&["zlexcount", "nosuch", "-", "+"], ":0\r\n"),
    (&["zlexcount", "str", "-", "+"], ":3\r\n"),
    (&["zrangebylex", "l", "[aa", "[cc"], "*2\r\n$1\r\nb\r\n$1\r\nc\r\n"),
    (&["zrevrangebylex", "l", "[cc", "[aa"], "*2\r\n$1\r\nc\r\n$1\r\nb\r\n"),
    (&["zrevrangebylex", "l", "[cc", "[aa", "limit", "1", "5"], "*1\r\n$1\r\nb\r\n"),
    (&["zrangebylex", "l", "[", "+"], "*5\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n"),
    (&["zrangebylex", "l", "(", "+"], "*5\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n$1\r\nd\r\n$1\r\ne\r\n"),
    (&["zremrangebylex", "l", "(a", "[c"], ":2\r\n"),
    (&["zrange", "l", "0", "-1"], "*3\r\n$1\r\na\r\n$1\r\nd\r\n$1\r\ne\r\n"),
    (&["zrangestore", "dst", "l", "0", "-1"], ":3\r\n"),
    (&["zrangestore", "dst", "l", "0", "-1", "withscores"], "-ERR syntax error\r\n"),
    (&["zrangestore", "dst", "nosuch", "0", "-1"], ":0\r\n"),
    (&["exists", "dst"], ":0\r\n"),
    (&["zrangestore", "dst", "l", "[a", "[z", "bylex", "limit", "1", "1"], ":1\r\n"),
    (&["zrange", "dst", "0", "-1", "withscores"], "*2\r\n$1\r\nd\r\n$1\r\n0\r\n"),
    (&["zrangestore", "dst", "b", "(0", "+inf", "byscore", "rev"], ":0\r\n"),
    (&["zrangestore", "dst", "b", "+inf", "(0", "byscore", "rev"], ":2\r\n"),
    (&["zrange", "dst", "0", "-1", "withscores"], "*4\r\n$1\r\nx\r\n$3\r\n1.5\r\n$1\r\nq\r\n$3\r\n2.5\r\n"),
    (&["zrangestore", "dst", "b", "0", "-1", "rev"], ":3\r\n"),
    (&["zrange", "dst", "0", "-1", "withscores"], "*6\r\n$1\r\ny\r\n$2\r\n-3\r\n$1\r\nx\r\n$3\r\n1.5\r\n$1\r\nq\r\n$3\r\n2.5\r\n"),
    (&["zrangestore", "dst", "str", "0", "-1"], ":3\r\n"),
    (&["zrangestore", "str", "b", "0", "0"], ":1\r\n"),
    (&["type", "str"], "+zset\r\n"),
    (&["zrangestore", "dst", "b", "0", "-1", "limit", "0", "1"], "-ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX\r\n"),
    (&["zrangebylex", "l", "+", "-"], "*0\r\n"),
    (&["zrangebylex", "l", "[a", "+x"], "-ERR min or max not valid string range item\r\n"),
    (&["zrangebylex", "l", "[a"], "-ERR wrong number of arguments for 'zrangebylex' command\r\n"),
    (&["zrangebylex", "l", "{a", "+"], "-ERR min or max not valid string range item\r\n"),
    (&["zremrangebylex", "l", "-", "+"], ":3\r\n"),
    (&["exists", "l"], ":0\r\n"),
    (&["zremrangebylex", "str", "-", "+"], ":1\r\n"),
    (&["zremrangebylex", "nosuch", "-", "x"], "-ERR min or max not valid string range item\r\n"),
    (&["zadd", "mixed", "1", "b", "2", "a", "3", "c"], ":3\r\n"),
    (&["zrangebylex", "mixed", "-", "+"], "*3\r\n$1\r\nb\r\n$1\r\na\r\n$1\r\nc\r\n"),
    (&["zrevrangebylex", "mixed", "+", "-"], "*3\r\n$1\r\nc\r\n$1\r\na\r\n$1\r\nb\r\n"),
];

#[test]
fn sorted_set_algebra_and_member_ranges_answer_as_redis_does() {
    let s = Server::start(None);
    expect_replies(&s, REDIS_REPLIES);
}

/// A large intersection and difference take the point-read path (one
/// input far larger than the other) and the whole-read path, with equal
/// answers; a store wakes a client blocked on its destination.
#[test]
fn intersections_read_small_inputs_whole_and_probe_large_ones() {
    let s = Server::start(None);
    let mut c = s.conn();
    let big: Vec<(i64, String)> = (0..5000).map(|i| (i, format!("m{i:05}"))).collect();
    let _: () = redis::cmd("ZADD")
        .arg("big")
        .arg(&big)
        .query(&mut c)
        .unwrap();
    let small: Vec<(i64, String)> = (0..10).map(|i| (1, format!("m{:05}", i * 400))).collect();
    let _: () = redis::cmd("ZADD")
        .arg("small")
        .arg(&small)
        .query(&mut c)
        .unwrap();
    let _: () = redis::cmd("SADD")
        .arg("odd")
        .arg(&["m00800", "m02000", "nope"])
        .query(&mut c)
        .unwrap();
    let inter: Vec<(String, f64)> = redis::cmd("ZINTER")
        .arg(3)
        .arg(&["big", "small", "odd"])
        .arg("WITHSCORES")
        .query(&mut c)
        .unwrap();
    assert_eq!(
        inter,
        vec![("m00800".into(), 802.0), ("m02000".into(), 2002.0)]
    );
    let inter: Vec<(String, f64)> = redis::cmd("ZINTER")
        .arg(2)
        .arg(&["small", "big"])
        .arg("AGGREGATE")
        .arg("MAX")
        .arg("WITHSCORES")
        .query(&mut c)
        .unwrap();
    let want: Vec<(String, f64)> = (0..10)
        .map(|i| (format!("m{:05}", i * 400), (i * 400).max(1) as f64))
        .collect();
    assert_eq!(inter, want);
    let diff: i64 = redis::cmd("ZDIFFSTORE")
        .arg("d")
        .arg(2)
        .arg(&["big", "small"])
        .query(&mut c)
        .unwrap();
    assert_eq!(diff, 4990);
    let diff: Vec<String> = redis::cmd("ZDIFF")
        .arg(3)
        .arg(&["small", "odd", "big"])
        .query(&mut c)
        .unwrap();
    assert!(diff.is_empty());
    let card: i64 = redis::cmd("ZINTERCARD")
        .arg(2)
        .arg(&["d", "big"])
        .arg("LIMIT")
        .arg(100)
        .query(&mut c)
        .unwrap();
    assert_eq!(card, 100);

    let mut blocked = s.conn();
    let waiter = std::thread::spawn(move || {
        let got: Option<(String, String, f64)> = redis::cmd("BZPOPMIN")
            .arg("dest")
            .arg(10)
            .query(&mut blocked)
            .unwrap();
        got
    });
    std::thread::sleep(std::time::Duration::from_millis(200));
    let stored: i64 = redis::cmd("ZUNIONSTORE")
        .arg("dest")
        .arg(1)
        .arg("small")
        .query(&mut c)
        .unwrap();
    assert_eq!(stored, 10);
    let got = waiter.join().unwrap();
    assert_eq!(got, Some(("dest".into(), "m00000".into(), 1.0)));
}
