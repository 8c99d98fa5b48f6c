//! Streams (`XADD`, `XLEN`, `XDEL`, `XTRIM`, `XRANGE`, `XREVRANGE`,
//! `XREAD`) answer as redis-server 7.0 answered the same requests on one
//! connection, byte for byte: IDs given whole, by milliseconds alone or
//! as `<ms>-*`, and refused when not above the top; exclusive range ends
//! and their limits; `COUNT 0`; trimming by `MAXLEN` and `MINID`, with
//! `=`, `~` and `LIMIT`, and the option errors in Redis's order; a stream
//! emptied by `XDEL` or `XTRIM` that stays and keeps its last ID; `$`.
//! Then what a reply table cannot show: blocked readers, a capped log
//! that does not slow down, a restart.

use std::time::{Duration, Instant};

use redis::cmd;

use crate::common;
use common::{expect_replies, wait_blocked, Server};

/// An entry as the redis crate reads it: its ID, and fields and values.
type Entry = (String, Vec<String>);

const REDIS_REPLIES: &[(&[&str], &str)] = &[
    (&["xadd", "s", "1-1", "a", "1"], "$3\r\n1-1\r\n"),
    (&["xadd", "s", "1-2", "b", "2", "c", "3"], "$3\r\n1-2\r\n"),
    (&["xadd", "s", "1-*", "d", "4"], "$3\r\n1-3\r\n"),
    (&["xadd", "s", "5", "e", "5"], "$3\r\n5-0\r\n"),
    (&["xadd", "s", "5-*", "f", "6"], "$3\r\n5-1\r\n"),
    (&["xadd", "s", "3-0", "g", "7"], "-ERR The ID specified in XADD is equal or smaller than the target stream top item\r\n"),
    (&["xadd", "s", "5-2", "g", "7"], "$3\r\n5-2\r\n"),
    (&["xadd", "s", "0-0", "x", "y"], "-ERR The ID specified in XADD must be greater than 0-0\r\n"),
    (&["xadd", "s2", "0-0", "x", "y"], "-ERR The ID specified in XADD must be greater than 0-0\r\n"),
    (&["exists", "s2"], ":0\r\n"),
    (&["xadd", "s2", "0-1", "x", "y"], "$3\r\n0-1\r\n"),
    (&["xadd", "s"], "-ERR wrong number of arguments for 'xadd' command\r\n"),
    (&["xadd", "s", "9-0"], "-ERR wrong number of arguments for 'xadd' command\r\n"),
    (&["xadd", "s", "9-0", "a"], "-ERR wrong number of arguments for 'xadd' command\r\n"),
    (&["xadd", "s", "9-0", "a", "b", "c"], "-ERR wrong number of arguments for 'xadd' command\r\n"),
    (&["xadd", "s", "bad", "a", "b"], "-ERR Invalid stream ID specified as stream command argument\r\n"),
    (&["xadd", "s", "-", "a", "b"], "-ERR Invalid stream ID specified as stream command argument\r\n"),
    (&["xadd", "s", "+", "a", "b"], "-ERR Invalid stream ID specified as stream command argument\r\n"),
    (&["xadd", "s", "9-x", "a", "b"], "-ERR Invalid stream ID specified as stream command argument\r\n"),
    (&["xlen", "s"], ":6\r\n"),
    (&["xlen", "nosuch"], ":0\r\n"),
    (&["xrange", "s", "-", "+"], "*6\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n1-2\r\n*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n*2\r\n$3\r\n1-3\r\n*2\r\n$1\r\nd\r\n$1\r\n4\r\n*2\r\n$3\r\n5-0\r\n*2\r\n$1\r\ne\r\n$1\r\n5\r\n*2\r\n$3\r\n5-1\r\n*2\r\n$1\r\nf\r\n$1\r\n6\r\n*2\r\n$3\r\n5-2\r\n*2\r\n$1\r\ng\r\n$1\r\n7\r\n"),
    (&["xrange", "s", "-", "+", "count", "2"], "*2\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n1-2\r\n*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n"),
    (&["xrange", "s", "-", "+", "count", "0"], "*-1\r\n"),
    (&["xrange", "s", "-", "+", "count", "-1"], "*-1\r\n"),
    (&["xrange", "s", "-", "+", "count", "x"], "-ERR value is not an integer or out of range\r\n"),
    (&["xrange", "s", "-", "+", "foo"], "-ERR syntax error\r\n"),
    (&["xrange", "s", "-", "+", "count"], "-ERR syntax error\r\n"),
    (&["xrange", "s", "1", "1"], "*3\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n1-2\r\n*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n*2\r\n$3\r\n1-3\r\n*2\r\n$1\r\nd\r\n$1\r\n4\r\n"),
    (&["xrange", "s", "(1-1", "+"], "*5\r\n*2\r\n$3\r\n1-2\r\n*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n*2\r\n$3\r\n1-3\r\n*2\r\n$1\r\nd\r\n$1\r\n4\r\n*2\r\n$3\r\n5-0\r\n*2\r\n$1\r\ne\r\n$1\r\n5\r\n*2\r\n$3\r\n5-1\r\n*2\r\n$1\r\nf\r\n$1\r\n6\r\n*2\r\n$3\r\n5-2\r\n*2\r\n$1\r\ng\r\n$1\r\n7\r\n"),
    (&["xrange", "s", "-", "(5-1"], "*4\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n1-2\r\n*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n*2\r\n$3\r\n1-3\r\n*2\r\n$1\r\nd\r\n$1\r\n4\r\n*2\r\n$3\r\n5-0\r\n*2\r\n$1\r\ne\r\n$1\r\n5\r\n"),
    (&["xrange", "s", "5", "5"], "*3\r\n*2\r\n$3\r\n5-0\r\n*2\r\n$1\r\ne\r\n$1\r\n5\r\n*2\r\n$3\r\n5-1\r\n*2\r\n$1\r\nf\r\n$1\r\n6\r\n*2\r\n$3\r\n5-2\r\n*2\r\n$1\r\ng\r\n$1\r\n7\r\n"),
    (&["xrange", "s", "(18446744073709551615-18446744073709551615", "+"], "-ERR invalid start ID for the interval\r\n"),
    (&["xrange", "s", "-", "(0-0"], "-ERR invalid end ID for the interval\r\n"),
    (&["xrange", "s", "(", "+"], "-ERR Invalid stream ID specified as stream command argument\r\n"),
    (&["xrange", "s", "(-", "+"], "-ERR Invalid stream ID specified as stream command argument\r\n"),
    (&["xrevrange", "s", "+", "-"], "*6\r\n*2\r\n$3\r\n5-2\r\n*2\r\n$1\r\ng\r\n$1\r\n7\r\n*2\r\n$3\r\n5-1\r\n*2\r\n$1\r\nf\r\n$1\r\n6\r\n*2\r\n$3\r\n5-0\r\n*2\r\n$1\r\ne\r\n$1\r\n5\r\n*2\r\n$3\r\n1-3\r\n*2\r\n$1\r\nd\r\n$1\r\n4\r\n*2\r\n$3\r\n1-2\r\n*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"),
    (&["xrevrange", "s", "+", "-", "count", "2"], "*2\r\n*2\r\n$3\r\n5-2\r\n*2\r\n$1\r\ng\r\n$1\r\n7\r\n*2\r\n$3\r\n5-1\r\n*2\r\n$1\r\nf\r\n$1\r\n6\r\n"),
    (&["xrevrange", "s", "(5-1", "-"], "*4\r\n*2\r\n$3\r\n5-0\r\n*2\r\n$1\r\ne\r\n$1\r\n5\r\n*2\r\n$3\r\n1-3\r\n*2\r\n$1\r\nd\r\n$1\r\n4\r\n*2\r\n$3\r\n1-2\r\n*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"),
    (&["xrevrange", "s", "5", "1-2"], "*5\r\n*2\r\n$3\r\n5-2\r\n*2\r\n$1\r\ng\r\n$1\r\n7\r\n*2\r\n$3\r\n5-1\r\n*2\r\n$1\r\nf\r\n$1\r\n6\r\n*2\r\n$3\r\n5-0\r\n*2\r\n$1\r\ne\r\n$1\r\n5\r\n*2\r\n$3\r\n1-3\r\n*2\r\n$1\r\nd\r\n$1\r\n4\r\n*2\r\n$3\r\n1-2\r\n*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n"),
    (&["xrange", "nosuch", "-", "+"], "*0\r\n"),
    (&["xrange", "nosuch", "-", "+", "count", "0"], "*0\r\n"),
    (&["set", "str", "v"], "+OK\r\n"),
    (&["xrange", "str", "-", "+"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["xadd", "str", "*", "a", "b"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["xlen", "str"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["xdel", "s", "1-1", "1-1", "9-9"], ":1\r\n"),
    (&["xdel", "s", "bad"], "-ERR Invalid stream ID specified as stream command argument\r\n"),
    (&["xdel", "nosuch", "1-1"], ":0\r\n"),
    (&["xdel", "str", "1-1"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["xrange", "s", "-", "+"], "*5\r\n*2\r\n$3\r\n1-2\r\n*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n*2\r\n$3\r\n1-3\r\n*2\r\n$1\r\nd\r\n$1\r\n4\r\n*2\r\n$3\r\n5-0\r\n*2\r\n$1\r\ne\r\n$1\r\n5\r\n*2\r\n$3\r\n5-1\r\n*2\r\n$1\r\nf\r\n$1\r\n6\r\n*2\r\n$3\r\n5-2\r\n*2\r\n$1\r\ng\r\n$1\r\n7\r\n"),
    (&["xlen", "s"], ":5\r\n"),
    (&["xadd", "s", "maxlen", "2", "6-0", "h", "8"], "$3\r\n6-0\r\n"),
    (&["xrange", "s", "-", "+"], "*2\r\n*2\r\n$3\r\n5-2\r\n*2\r\n$1\r\ng\r\n$1\r\n7\r\n*2\r\n$3\r\n6-0\r\n*2\r\n$1\r\nh\r\n$1\r\n8\r\n"),
    (&["xadd", "s", "maxlen", "=", "1", "7-0", "i", "9"], "$3\r\n7-0\r\n"),
    (&["xlen", "s"], ":1\r\n"),
    (&["xadd", "s", "maxlen", "~", "1", "8-0", "j", "10"], "$3\r\n8-0\r\n"),
    (&["xadd", "s", "minid", "8", "9-0", "k", "11"], "$3\r\n9-0\r\n"),
    (&["xrange", "s", "-", "+"], "*2\r\n*2\r\n$3\r\n8-0\r\n*2\r\n$1\r\nj\r\n$2\r\n10\r\n*2\r\n$3\r\n9-0\r\n*2\r\n$1\r\nk\r\n$2\r\n11\r\n"),
    (&["xadd", "s", "maxlen", "-1", "10-0", "a", "b"], "-ERR The MAXLEN argument must be >= 0.\r\n"),
    (&["xadd", "s", "maxlen", "x", "10-0", "a", "b"], "-ERR value is not an integer or out of range\r\n"),
    (&["xadd", "s", "maxlen", "1", "minid", "1", "10-0", "a", "b"], "-ERR syntax error, MAXLEN and MINID options at the same time are not compatible\r\n"),
    (&["xadd", "s", "limit", "5", "10-0", "a", "b"], "-ERR syntax error, LIMIT cannot be used without specifying a trimming strategy\r\n"),
    (&["xadd", "s", "maxlen", "5", "limit", "5", "10-0", "a", "b"], "-ERR syntax error, LIMIT cannot be used without the special ~ option\r\n"),
    (&["xadd", "s", "maxlen", "~", "5", "limit", "-1", "10-0", "a", "b"], "-ERR The LIMIT argument must be >= 0.\r\n"),
    (&["xadd", "s", "maxlen", "~", "5", "limit", "5", "10-0", "a", "b"], "$4\r\n10-0\r\n"),
    (&["xadd", "s", "nomkstream", "11-0", "a", "b"], "$4\r\n11-0\r\n"),
    (&["xadd", "nope", "nomkstream", "*", "a", "b"], "$-1\r\n"),
    (&["exists", "nope"], ":0\r\n"),
    (&["xadd", "s", "minid", "~", "bad", "12-0", "a", "b"], "-ERR Invalid stream ID specified as stream command argument\r\n"),
    (&["xadd", "s", "minid", "5-*", "12-0", "a", "b"], "-ERR Invalid stream ID specified as stream command argument\r\n"),
    (&["xadd", "s", "maxlen"], "-ERR wrong number of arguments for 'xadd' command\r\n"),
    (&["xadd", "s", "maxlen", "3"], "-ERR wrong number of arguments for 'xadd' command\r\n"),
    (&["xtrim", "s", "maxlen", "1"], ":3\r\n"),
    (&["xtrim", "s", "maxlen", "0"], ":1\r\n"),
    (&["xlen", "s"], ":0\r\n"),
    (&["exists", "s"], ":1\r\n"),
    (&["type", "s"], "+stream\r\n"),
    (&["xrange", "s", "-", "+"], "*0\r\n"),
    (&["xadd", "s", "1-0", "a", "b"], "-ERR The ID specified in XADD is equal or smaller than the target stream top item\r\n"),
    (&["xadd", "s", "12-0", "a", "b"], "$4\r\n12-0\r\n"),
    (&["xtrim", "s"], "-ERR wrong number of arguments for 'xtrim' command\r\n"),
    (&["xtrim", "s", "foo", "1"], "-ERR syntax error\r\n"),
    (&["xtrim", "s", "maxlen", "1", "foo"], "-ERR syntax error\r\n"),
    (&["xtrim", "s", "limit", "5"], "-ERR syntax error, LIMIT cannot be used without specifying a trimming strategy\r\n"),
    (&["xtrim", "nosuch", "maxlen", "1"], ":0\r\n"),
    (&["xtrim", "str", "maxlen", "1"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["xtrim", "s", "maxlen", "~", "0"], ":1\r\n"),
    (&["xtrim", "s", "maxlen", "0", "limit", "1"], "-ERR syntax error, LIMIT cannot be used without the special ~ option\r\n"),
    (&["xtrim", "nosuch", "maxlen", "x"], "-ERR value is not an integer or out of range\r\n"),
    (&["xadd", "q", "1-0", "a", "1"], "$3\r\n1-0\r\n"),
    (&["xadd", "q", "2-0", "a", "2"], "$3\r\n2-0\r\n"),
    (&["xadd", "q2", "1-0", "b", "1"], "$3\r\n1-0\r\n"),
    (&["xread", "streams", "q", "0"], "*1\r\n*2\r\n$1\r\nq\r\n*2\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\na\r\n$1\r\n2\r\n"),
    (&["xread", "count", "1", "streams", "q", "q2", "0", "0"], "*2\r\n*2\r\n$1\r\nq\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$2\r\nq2\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nb\r\n$1\r\n1\r\n"),
    (&["xread", "streams", "q", "q2", "1-0", "0"], "*2\r\n*2\r\n$1\r\nq\r\n*1\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\na\r\n$1\r\n2\r\n*2\r\n$2\r\nq2\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\nb\r\n$1\r\n1\r\n"),
    (&["xread", "streams", "q", "q2", "2", "1"], "*-1\r\n"),
    (&["xread", "streams", "q", "$"], "*-1\r\n"),
    (&["xread", "streams", "nosuch", "0"], "*-1\r\n"),
    (&["xread", "streams", "q"], "-ERR wrong number of arguments for 'xread' command\r\n"),
    (&["xread", "streams", "q", "q2", "0"], "-ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.\r\n"),
    (&["xread", "count", "x", "streams", "q", "0"], "-ERR value is not an integer or out of range\r\n"),
    (&["xread", "count", "-1", "streams", "q", "0"], "*1\r\n*2\r\n$1\r\nq\r\n*2\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\na\r\n$1\r\n2\r\n"),
    (&["xread", "block", "-1", "streams", "q", "0"], "-ERR timeout is negative\r\n"),
    (&["xread", "block", "x", "streams", "q", "0"], "-ERR timeout is not an integer or out of range\r\n"),
    (&["xread", "foo", "streams", "q", "0"], "-ERR syntax error\r\n"),
    (&["xread", "streams", "q", "bad"], "-ERR Invalid stream ID specified as stream command argument\r\n"),
    (&["xread", "streams", "q", ">"], "-ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.\r\n"),
    (&["xread", "streams", "str", "0"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["xread", "count", "1"], "-ERR wrong number of arguments for 'xread' command\r\n"),
    (&["xread", "streams"], "-ERR wrong number of arguments for 'xread' command\r\n"),
    (&["xread", "block", "10", "streams", "q", "$"], "*-1\r\n"),
    (&["xread", "block", "10", "streams", "nosuch", "$"], "*-1\r\n"),
    (&["xread", "block", "10", "streams", "q", "0"], "*1\r\n*2\r\n$1\r\nq\r\n*2\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\na\r\n$1\r\n2\r\n"),
    (&["xlen", "big"], ":0\r\n"),
];

#[test]
fn streams_answer_as_redis_does() {
    let s = Server::start(None);
    expect_replies(&s, REDIS_REPLIES);
}

/// A client reading `key` from its end, blocked for up to 10 s.
fn blocked_reader(s: &Server, key: &'static str) -> std::thread::JoinHandle<redis::Value> {
    let mut conn = s.conn();
    std::thread::spawn(move || {
        cmd("XREAD")
            .arg("BLOCK")
            .arg(10_000)
            .arg("STREAMS")
            .arg(key)
            .arg("$")
            .query(&mut conn)
            .unwrap()
    })
}

/// Every client blocked on a stream gets an entry added after it asked
/// (`$` meaning the last ID when it asked, however often its read is
/// tried again), and only such entries.
#[test]
fn blocked_readers_each_get_the_entries_added_after_they_asked() {
    let s = Server::start(None);
    let mut c = s.conn();
    let _: String = cmd("XADD")
        .arg("events")
        .arg("1-0")
        .arg("old")
        .arg("x")
        .query(&mut c)
        .unwrap();
    let readers: Vec<_> = (0..3).map(|_| blocked_reader(&s, "events")).collect();
    wait_blocked(&mut c, 3);
    // A write to another key wakes nobody.
    let _: String = cmd("XADD")
        .arg("other")
        .arg("1-0")
        .arg("f")
        .arg("v")
        .query(&mut c)
        .unwrap();
    let _: String = cmd("XADD")
        .arg("events")
        .arg("2-0")
        .arg("new")
        .arg("y")
        .query(&mut c)
        .unwrap();
    for r in readers {
        let got: Vec<(String, Vec<Entry>)> = redis::from_redis_value(&r.join().unwrap()).unwrap();
        assert_eq!(
            got,
            vec![(
                "events".into(),
                vec![("2-0".into(), vec!["new".into(), "y".into()])]
            )]
        );
    }
    // A read that times out answers a null array after about its timeout.
    let t = Instant::now();
    let none: redis::Value = cmd("XREAD")
        .arg("BLOCK")
        .arg(100)
        .arg("STREAMS")
        .arg("events")
        .arg("$")
        .query(&mut c)
        .unwrap();
    assert_eq!(none, redis::Value::Nil);
    assert!(t.elapsed() >= Duration::from_millis(100));
}

/// A capped log (`XADD ... MAXLEN n` on every add, `XDEL` of the oldest)
/// keeps its length and its newest entries, and stays fast: each trim
/// starts past what the trims before it removed.
#[test]
fn a_capped_log_keeps_its_newest_entries() {
    let s = Server::start(None);
    let mut c = s.conn();
    for i in 1..=3000u64 {
        let _: String = cmd("XADD")
            .arg("log")
            .arg("MAXLEN")
            .arg(10)
            .arg(format!("{i}-0"))
            .arg("n")
            .arg(i)
            .query(&mut c)
            .unwrap();
    }
    let len: i64 = cmd("XLEN").arg("log").query(&mut c).unwrap();
    assert_eq!(len, 10);
    let ids: Vec<Entry> = cmd("XRANGE")
        .arg("log")
        .arg("-")
        .arg("+")
        .query(&mut c)
        .unwrap();
    let want: Vec<String> = (2991..=3000).map(|i| format!("{i}-0")).collect();
    assert_eq!(
        ids.iter().map(|(id, _)| id.clone()).collect::<Vec<_>>(),
        want
    );
    let rev: Vec<Entry> = cmd("XREVRANGE")
        .arg("log")
        .arg("+")
        .arg("-")
        .arg("COUNT")
        .arg(3)
        .query(&mut c)
        .unwrap();
    assert_eq!(
        rev.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(),
        ["3000-0", "2999-0", "2998-0"]
    );
    // A consumer deleting what it handled, oldest first.
    for i in 2991..=2999 {
        let n: i64 = cmd("XDEL")
            .arg("log")
            .arg(format!("{i}-0"))
            .query(&mut c)
            .unwrap();
        assert_eq!(n, 1);
    }
    let left: Vec<Entry> = cmd("XRANGE")
        .arg("log")
        .arg("-")
        .arg("+")
        .query(&mut c)
        .unwrap();
    assert_eq!(
        left,
        vec![(
            "3000-0".to_string(),
            vec!["n".to_string(), "3000".to_string()]
        )]
    );
}

/// A stream, emptied or not, and its last ID survive a restart.
#[test]
fn streams_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    {
        let s = Server::start_at(tempfile::tempdir().unwrap(), db.clone(), |_| {});
        let mut c = s.conn();
        let _: String = cmd("XADD")
            .arg("a")
            .arg("5-1")
            .arg("f")
            .arg("v")
            .query(&mut c)
            .unwrap();
        let _: String = cmd("XADD")
            .arg("b")
            .arg("7-0")
            .arg("f")
            .arg("v")
            .query(&mut c)
            .unwrap();
        let _: i64 = cmd("XDEL").arg("b").arg("7-0").query(&mut c).unwrap();
    }
    let s = Server::start_at(tempfile::tempdir().unwrap(), db, |_| {});
    let mut c = s.conn();
    let a: Vec<Entry> = cmd("XRANGE")
        .arg("a")
        .arg("-")
        .arg("+")
        .query(&mut c)
        .unwrap();
    assert_eq!(
        a,
        vec![("5-1".to_string(), vec!["f".to_string(), "v".to_string()])]
    );
    let kind: String = cmd("TYPE").arg("b").query(&mut c).unwrap();
    assert_eq!(kind, "stream");
    let err = cmd("XADD")
        .arg("b")
        .arg("7-0")
        .arg("f")
        .arg("v")
        .query::<String>(&mut c)
        .unwrap_err();
    assert!(err.to_string().contains("equal or smaller"), "{err}");
    let id: String = cmd("XADD")
        .arg("b")
        .arg("7-*")
        .arg("f")
        .arg("v")
        .query(&mut c)
        .unwrap();
    assert_eq!(id, "7-1");
}

/// Clients appending to one stream in pipelines (whose `XADD`s commit as
/// one transaction each) lose nothing and get distinct, growing IDs; a
/// reader blocked on the stream is woken by such a pipeline.
#[test]
fn pipelined_appends_from_many_clients_all_land_in_order() {
    let s = Server::start(None);
    let mut c = s.conn();
    let reader = blocked_reader(&s, "jobs");
    wait_blocked(&mut c, 1);
    // Woken by the pipeline's commit, well before the periodic recheck.
    let t = Instant::now();
    let mut first = redis::pipe();
    for n in 0..2 {
        first
            .cmd("XADD")
            .arg("jobs")
            .arg("*")
            .arg("w")
            .arg("first")
            .arg("n")
            .arg(n);
    }
    let _: Vec<String> = first.query(&mut c).unwrap();
    let got: Vec<(String, Vec<Entry>)> = redis::from_redis_value(&reader.join().unwrap()).unwrap();
    assert!(
        t.elapsed() < Duration::from_millis(300),
        "{:?}",
        t.elapsed()
    );
    assert_eq!((got[0].0.as_str(), got[0].1.len()), ("jobs", 2));
    let writers: Vec<_> = (0..4)
        .map(|w| {
            let mut conn = s.conn();
            std::thread::spawn(move || {
                for round in 0..5 {
                    let mut p = redis::pipe();
                    for i in 0..100 {
                        p.cmd("XADD")
                            .arg("jobs")
                            .arg("*")
                            .arg("w")
                            .arg(w)
                            .arg("n")
                            .arg(round * 100 + i);
                    }
                    let ids: Vec<String> = p.query(&mut conn).unwrap();
                    assert_eq!(ids.len(), 100);
                }
            })
        })
        .collect();
    writers.into_iter().for_each(|w| w.join().unwrap());
    let all: Vec<Entry> = cmd("XRANGE")
        .arg("jobs")
        .arg("-")
        .arg("+")
        .query(&mut c)
        .unwrap();
    assert_eq!(all.len(), 2002);
    let ids: Vec<(u64, u64)> = all
        .iter()
        .map(|(id, _)| {
            let (ms, seq) = id.split_once('-').unwrap();
            (ms.parse().unwrap(), seq.parse().unwrap())
        })
        .collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    // Each writer's entries in its own order.
    for w in 0..4 {
        let mine: Vec<u64> = all
            .iter()
            .filter(|(_, f)| f[1] == w.to_string())
            .map(|(_, f)| f[3].parse().unwrap())
            .collect();
        assert_eq!(mine, (0..500).collect::<Vec<u64>>());
    }
}

/// `~` trims whole nodes of `stream-node-max-entries` entries, leaving
/// what Redis leaves (the counts are those Redis's own suite checks).
#[test]
fn approximate_trimming_removes_whole_nodes() {
    let s = Server::start(None);
    let mut c = s.conn();
    let xlen = |c: &mut redis::Connection| cmd("XLEN").arg("s").query::<i64>(c).unwrap();
    let add = |c: &mut redis::Connection, opts: &[&str]| {
        let _: String = cmd("XADD")
            .arg("s")
            .arg(opts)
            .arg(&["*", "f", "v"])
            .query(c)
            .unwrap();
    };
    for _ in 0..1000 {
        add(&mut c, &["MAXLEN", "~", "555"]);
    }
    assert_eq!(xlen(&mut c), 600);
    let _: i64 = cmd("DEL").arg("s").query(&mut c).unwrap();
    for _ in 0..1000 {
        add(&mut c, &[]);
    }
    let trim = |c: &mut redis::Connection, args: &[&str]| {
        cmd("XTRIM").arg("s").arg(args).query::<i64>(c).unwrap()
    };
    trim(&mut c, &["MAXLEN", "666"]);
    trim(&mut c, &["MAXLEN", "=", "555"]);
    trim(&mut c, &["MAXLEN", "~", "444"]);
    assert_eq!(xlen(&mut c), 500);
    trim(&mut c, &["MAXLEN", "~", "400"]);
    assert_eq!(xlen(&mut c), 400);
    let _: i64 = cmd("DEL").arg("s").query(&mut c).unwrap();
    let _: String = cmd("CONFIG")
        .arg(&["SET", "stream-node-max-entries", "10"])
        .query(&mut c)
        .unwrap();
    for _ in 0..100 {
        add(&mut c, &[]);
    }
    add(&mut c, &["MAXLEN", "~", "55", "LIMIT", "30"]);
    assert_eq!(xlen(&mut c), 71);
    add(&mut c, &["MAXLEN", "~", "55", "LIMIT", "30"]);
    assert_eq!(xlen(&mut c), 62);
    // Without LIMIT, `~` removes at most 100 nodes.
    let _: i64 = cmd("DEL").arg("s").query(&mut c).unwrap();
    let _: String = cmd("CONFIG")
        .arg(&["SET", "stream-node-max-entries", "1"])
        .query(&mut c)
        .unwrap();
    for _ in 0..102 {
        add(&mut c, &[]);
    }
    assert_eq!(trim(&mut c, &["MAXLEN", "~", "1"]), 100);
    assert_eq!(xlen(&mut c), 2);
}
