//! `SORT` and `SORT_RO` answer as redis-server 7.0 answered the same
//! requests on one connection, byte for byte: lists, sets and sorted sets
//! sorted as numbers (hex, `inf`, ties by their bytes) or `ALPHA`,
//! ascending or not, with `LIMIT` at every edge, by the strings and hash
//! fields a pattern names, `BY` without `*` keeping a list's or sorted
//! set's order (a set stored sorted), `GET` patterns and `#`, `STORE`
//! (a list; an empty result deletes the destination), and the errors:
//! elements that are not numbers, other types, options.

use crate::common;
use common::{expect_replies, Server};

const REDIS_REPLIES: &[(&[&str], &str)] = &[
    (&["rpush", "l", "3", "1", "2", "10", "-5", "1.5", "0x10", "inf"], ":8\r\n"),
    (&["sort", "l"], "*8\r\n$2\r\n-5\r\n$1\r\n1\r\n$3\r\n1.5\r\n$1\r\n2\r\n$1\r\n3\r\n$2\r\n10\r\n$4\r\n0x10\r\n$3\r\ninf\r\n"),
    (&["sort", "l", "desc"], "*8\r\n$3\r\ninf\r\n$4\r\n0x10\r\n$2\r\n10\r\n$1\r\n3\r\n$1\r\n2\r\n$3\r\n1.5\r\n$1\r\n1\r\n$2\r\n-5\r\n"),
    (&["sort", "l", "alpha"], "*8\r\n$2\r\n-5\r\n$4\r\n0x10\r\n$1\r\n1\r\n$3\r\n1.5\r\n$2\r\n10\r\n$1\r\n2\r\n$1\r\n3\r\n$3\r\ninf\r\n"),
    (&["sort", "l", "alpha", "desc"], "*8\r\n$3\r\ninf\r\n$1\r\n3\r\n$1\r\n2\r\n$2\r\n10\r\n$3\r\n1.5\r\n$1\r\n1\r\n$4\r\n0x10\r\n$2\r\n-5\r\n"),
    (&["sort", "l", "limit", "1", "3"], "*3\r\n$1\r\n1\r\n$3\r\n1.5\r\n$1\r\n2\r\n"),
    (&["sort", "l", "limit", "-1", "3"], "*3\r\n$2\r\n-5\r\n$1\r\n1\r\n$3\r\n1.5\r\n"),
    (&["sort", "l", "limit", "2", "-1"], "*6\r\n$3\r\n1.5\r\n$1\r\n2\r\n$1\r\n3\r\n$2\r\n10\r\n$4\r\n0x10\r\n$3\r\ninf\r\n"),
    (&["sort", "l", "limit", "100", "1"], "*0\r\n"),
    (&["sort", "l", "limit", "0", "0"], "*0\r\n"),
    (&["sort", "l", "limit", "x", "1"], "-ERR value is not an integer or out of range\r\n"),
    (&["sort", "l", "limit", "1"], "-ERR syntax error\r\n"),
    (&["sort", "l", "by", "nosort"], "*8\r\n$1\r\n3\r\n$1\r\n1\r\n$1\r\n2\r\n$2\r\n10\r\n$2\r\n-5\r\n$3\r\n1.5\r\n$4\r\n0x10\r\n$3\r\ninf\r\n"),
    (&["sort", "l", "by", "nosort", "desc"], "*8\r\n$3\r\ninf\r\n$4\r\n0x10\r\n$3\r\n1.5\r\n$2\r\n-5\r\n$2\r\n10\r\n$1\r\n2\r\n$1\r\n1\r\n$1\r\n3\r\n"),
    (&["sort", "l", "by", "nosort", "limit", "2", "3"], "*3\r\n$1\r\n2\r\n$2\r\n10\r\n$2\r\n-5\r\n"),
    (&["sort", "l", "by", "nosort", "desc", "limit", "2", "3"], "*3\r\n$3\r\n1.5\r\n$2\r\n-5\r\n$2\r\n10\r\n"),
    (&["mset", "w_3", "30", "w_1", "10", "w_2", "20", "w_10", "-1", "w_-5", "5"], "+OK\r\n"),
    (&["sort", "l", "by", "w_*"], "*8\r\n$2\r\n10\r\n$4\r\n0x10\r\n$3\r\n1.5\r\n$3\r\ninf\r\n$2\r\n-5\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"),
    (&["sort", "l", "by", "w_*", "desc"], "*8\r\n$1\r\n3\r\n$1\r\n2\r\n$1\r\n1\r\n$2\r\n-5\r\n$3\r\ninf\r\n$3\r\n1.5\r\n$4\r\n0x10\r\n$2\r\n10\r\n"),
    (&["sort", "l", "by", "w_*", "alpha"], "*8\r\n$3\r\n1.5\r\n$4\r\n0x10\r\n$3\r\ninf\r\n$2\r\n10\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$2\r\n-5\r\n"),
    (&["sort", "l", "by", "w_*", "get", "#"], "*8\r\n$2\r\n10\r\n$4\r\n0x10\r\n$3\r\n1.5\r\n$3\r\ninf\r\n$2\r\n-5\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n"),
    (&["sort", "l", "by", "w_*", "get", "#", "get", "w_*"], "*16\r\n$2\r\n10\r\n$2\r\n-1\r\n$4\r\n0x10\r\n$-1\r\n$3\r\n1.5\r\n$-1\r\n$3\r\ninf\r\n$-1\r\n$2\r\n-5\r\n$1\r\n5\r\n$1\r\n1\r\n$2\r\n10\r\n$1\r\n2\r\n$2\r\n20\r\n$1\r\n3\r\n$2\r\n30\r\n"),
    (&["sort", "l", "by", "w_*", "get", "nostar"], "*8\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n"),
    (&["sort", "l", "get", "w_*", "get", "#"], "*16\r\n$1\r\n5\r\n$2\r\n-5\r\n$2\r\n10\r\n$1\r\n1\r\n$-1\r\n$3\r\n1.5\r\n$2\r\n20\r\n$1\r\n2\r\n$2\r\n30\r\n$1\r\n3\r\n$2\r\n-1\r\n$2\r\n10\r\n$-1\r\n$4\r\n0x10\r\n$-1\r\n$3\r\ninf\r\n"),
    (&["hset", "h_1", "f", "a"], ":1\r\n"),
    (&["hset", "h_2", "f", "b"], ":1\r\n"),
    (&["hset", "h_3", "f", "c"], ":1\r\n"),
    (&["sort", "l", "by", "h_*->f", "alpha", "get", "h_*->f", "get", "#"], "*16\r\n$-1\r\n$2\r\n10\r\n$-1\r\n$2\r\n-5\r\n$-1\r\n$3\r\n1.5\r\n$-1\r\n$4\r\n0x10\r\n$-1\r\n$3\r\ninf\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n"),
    (&["sort", "l", "by", "h_*->f"], "-ERR One or more scores can't be converted into double\r\n"),
    (&["sort", "l", "get", "h_*->"], "*8\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n$-1\r\n"),
    (&["sort", "l", "get", "h_*->f", "limit", "0", "3"], "*3\r\n$-1\r\n$1\r\na\r\n$-1\r\n"),
    (&["sort", "l", "store", "dst"], ":8\r\n"),
    (&["lrange", "dst", "0", "-1"], "*8\r\n$2\r\n-5\r\n$1\r\n1\r\n$3\r\n1.5\r\n$1\r\n2\r\n$1\r\n3\r\n$2\r\n10\r\n$4\r\n0x10\r\n$3\r\ninf\r\n"),
    (&["type", "dst"], "+list\r\n"),
    (&["sort", "l", "by", "w_*", "get", "w_*", "store", "dst"], ":8\r\n"),
    (&["lrange", "dst", "0", "-1"], "*8\r\n$2\r\n-1\r\n$0\r\n\r\n$0\r\n\r\n$0\r\n\r\n$1\r\n5\r\n$2\r\n10\r\n$2\r\n20\r\n$2\r\n30\r\n"),
    (&["sort", "nokey", "store", "dst"], ":0\r\n"),
    (&["exists", "dst"], ":0\r\n"),
    (&["sort_ro", "l", "store", "dst"], "-ERR syntax error\r\n"),
    (&["sort_ro", "l", "desc", "limit", "0", "2"], "*2\r\n$3\r\ninf\r\n$4\r\n0x10\r\n"),
    (&["rpush", "bad", "1", "abc", "2"], ":3\r\n"),
    (&["sort", "bad"], "-ERR One or more scores can't be converted into double\r\n"),
    (&["sort", "bad", "alpha"], "*3\r\n$1\r\n1\r\n$1\r\n2\r\n$3\r\nabc\r\n"),
    (&["sort", "bad", "by", "nosort"], "*3\r\n$1\r\n1\r\n$3\r\nabc\r\n$1\r\n2\r\n"),
    (&["set", "str", "x"], "+OK\r\n"),
    (&["sort", "str"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["sort", "str", "by", "nosort"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["sort", "l", "foo"], "-ERR syntax error\r\n"),
    (&["sort", "l", "limit", "0"], "-ERR syntax error\r\n"),
    (&["sort", "l", "by"], "-ERR syntax error\r\n"),
    (&["sort", "l", "get"], "-ERR syntax error\r\n"),
    (&["sort", "l", "store"], "-ERR syntax error\r\n"),
    (&["sadd", "s", "5", "3", "9", "1"], ":4\r\n"),
    (&["sort", "s"], "*4\r\n$1\r\n1\r\n$1\r\n3\r\n$1\r\n5\r\n$1\r\n9\r\n"),
    (&["sort", "s", "desc"], "*4\r\n$1\r\n9\r\n$1\r\n5\r\n$1\r\n3\r\n$1\r\n1\r\n"),
    (&["sort", "s", "alpha", "limit", "1", "2"], "*2\r\n$1\r\n3\r\n$1\r\n5\r\n"),
    (&["sort", "s", "by", "nosort", "store", "dst2"], ":4\r\n"),
    (&["lrange", "dst2", "0", "-1"], "*4\r\n$1\r\n1\r\n$1\r\n3\r\n$1\r\n5\r\n$1\r\n9\r\n"),
    (&["zadd", "z", "3", "c", "1", "a", "2", "b"], ":3\r\n"),
    (&["sort", "z", "alpha"], "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"),
    (&["sort", "z", "by", "nosort"], "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n"),
    (&["sort", "z", "by", "nosort", "desc"], "*3\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n"),
    (&["sort", "z", "by", "nosort", "limit", "1", "5"], "*2\r\n$1\r\nb\r\n$1\r\nc\r\n"),
    (&["sort", "z"], "-ERR One or more scores can't be converted into double\r\n"),
    (&["rpush", "e", "", " ", "1e-400", "-0", "nan"], ":5\r\n"),
    (&["sort", "e"], "-ERR One or more scores can't be converted into double\r\n"),
    (&["rpush", "f", "2", "1", "2", "1"], ":4\r\n"),
    (&["sort", "f"], "*4\r\n$1\r\n1\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n2\r\n"),
    (&["sort", "f", "alpha", "desc"], "*4\r\n$1\r\n2\r\n$1\r\n2\r\n$1\r\n1\r\n$1\r\n1\r\n"),
];

#[test]
fn sort_answers_as_redis_does() {
    let s = Server::start(None);
    expect_replies(&s, REDIS_REPLIES);
}
