//! The set stores (`SINTERSTORE`, `SUNIONSTORE`, `SDIFFSTORE`),
//! `SINTERCARD` and `LPOS` answer as redis-server 7.0 answered the same
//! requests on one connection, byte for byte: a destination of another
//! type or with an expiry replaced, an empty result deleting it, a source
//! that is also the destination, option errors, ranks from either end,
//! `COUNT 0`, `MAXLEN`.

use crate::common;
use common::{expect_replies, Server};

const REDIS_REPLIES: &[(&[&str], &str)] = &[
    (&["sadd", "s1", "a", "b", "c"], ":3\r\n"),
    (&["sadd", "s2", "b", "c", "d"], ":3\r\n"),
    (&["set", "str", "x"], "+OK\r\n"),
    (&["sinterstore", "d", "s1", "s2"], ":2\r\n"),
    (&["smembers", "d"], "*2\r\n$1\r\nb\r\n$1\r\nc\r\n"),
    (&["sunionstore", "d", "s1", "s2"], ":4\r\n"),
    (&["scard", "d"], ":4\r\n"),
    (&["sdiffstore", "d", "s1", "s2"], ":1\r\n"),
    (&["smembers", "d"], "*1\r\n$1\r\na\r\n"),
    (&["sinterstore", "d", "s1", "nokey"], ":0\r\n"),
    (&["exists", "d"], ":0\r\n"),
    (&["sinterstore", "str", "s1"], ":3\r\n"),
    (&["type", "str"], "+set\r\n"),
    (&["sinterstore", "d", "s1", "str"], ":3\r\n"),
    (&["sunionstore", "d", "str"], ":3\r\n"),
    (&["sdiffstore", "d", "nokey", "s1"], ":0\r\n"),
    (&["exists", "d"], ":0\r\n"),
    (&["sadd", "d", "z"], ":1\r\n"),
    (&["expire", "d", "100"], ":1\r\n"),
    (&["sunionstore", "d", "s1"], ":3\r\n"),
    (&["ttl", "d"], ":-1\r\n"),
    (&["sinterstore", "s1", "s1", "s2"], ":2\r\n"),
    (&["smembers", "s1"], "*2\r\n$1\r\nb\r\n$1\r\nc\r\n"),
    (&["sintercard", "2", "s1", "s2"], ":2\r\n"),
    (&["sintercard", "1", "s2"], ":3\r\n"),
    (&["sintercard", "2", "s2", "nokey"], ":0\r\n"),
    (&["sintercard", "0", "s1"], "-ERR numkeys should be greater than 0\r\n"),
    (&["sintercard", "3", "s1", "s2"], "-ERR Number of keys can't be greater than number of args\r\n"),
    (&["sintercard", "x", "s1"], "-ERR numkeys should be greater than 0\r\n"),
    (&["sintercard", "-1", "s1"], "-ERR numkeys should be greater than 0\r\n"),
    (&["sintercard", "1", "s2", "limit", "1"], ":1\r\n"),
    (&["sintercard", "1", "s2", "limit", "0"], ":3\r\n"),
    (&["sintercard", "1", "s2", "limit", "-1"], "-ERR LIMIT can't be negative\r\n"),
    (&["sintercard", "1", "s2", "limit", "x"], "-ERR LIMIT can't be negative\r\n"),
    (&["sintercard", "1", "s2", "foo", "1"], "-ERR syntax error\r\n"),
    (&["sintercard", "1", "str"], ":3\r\n"),
    (&["sintercard", "1", "s2", "limit"], "-ERR syntax error\r\n"),
    (&["sintercard", "1", "s2", "limit", "2", "limit", "1"], ":1\r\n"),
    (&["sinterstore", "d"], "-ERR wrong number of arguments for 'sinterstore' command\r\n"),
    (&["sintercard", "1"], "-ERR wrong number of arguments for 'sintercard' command\r\n"),
    (&["rpush", "l", "a", "b", "c", "1", "2", "3", "c", "c"], ":8\r\n"),
    (&["lpos", "l", "c"], ":2\r\n"),
    (&["lpos", "l", "c", "rank", "2"], ":6\r\n"),
    (&["lpos", "l", "c", "rank", "-1"], ":7\r\n"),
    (&["lpos", "l", "c", "count", "2"], "*2\r\n:2\r\n:6\r\n"),
    (&["lpos", "l", "c", "count", "0"], "*3\r\n:2\r\n:6\r\n:7\r\n"),
    (&["lpos", "l", "c", "count", "0", "rank", "-2"], "*2\r\n:6\r\n:2\r\n"),
    (&["lpos", "l", "c", "maxlen", "2"], "$-1\r\n"),
    (&["lpos", "l", "c", "maxlen", "3"], ":2\r\n"),
    (&["lpos", "l", "c", "count", "0", "maxlen", "7"], "*2\r\n:2\r\n:6\r\n"),
    (&["lpos", "l", "zz"], "$-1\r\n"),
    (&["lpos", "l", "zz", "count", "3"], "*0\r\n"),
    (&["lpos", "nokey", "a"], "$-1\r\n"),
    (&["lpos", "nokey", "a", "count", "1"], "*0\r\n"),
    (&["lpos", "l", "c", "rank", "0"], "-ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list\r\n"),
    (&["lpos", "l", "c", "count", "-1"], "-ERR COUNT can't be negative\r\n"),
    (&["lpos", "l", "c", "maxlen", "-1"], "-ERR MAXLEN can't be negative\r\n"),
    (&["lpos", "l", "c", "foo"], "-ERR syntax error\r\n"),
    (&["lpos", "l", "c", "rank"], "-ERR syntax error\r\n"),
    (&["lpos", "l", "c", "rank", "x"], "-ERR value is not an integer or out of range\r\n"),
    (&["lpos", "str", "a"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["lpos", "l", "c", "rank", "-9223372036854775808"], ":7\r\n"),
    (&["lpos", "l", "c", "rank", "9223372036854775807"], "$-1\r\n"),
    (&["lpos", "l", "c", "rank", "-4"], "$-1\r\n"),
    (&["lpos", "l", "c", "rank", "4"], "$-1\r\n"),
    (&["lpos", "l", "c", "count", "2", "rank", "-1", "maxlen", "3"], "*2\r\n:7\r\n:6\r\n"),
];

#[test]
fn set_stores_sintercard_and_lpos_answer_as_redis_server_does() {
    expect_replies(&Server::start(None), REDIS_REPLIES);
}

#[test]
fn lpos_reads_a_long_list_a_chunk_at_a_time() {
    // 5,000 elements, every 7th a match: positions across chunk borders,
    // from either end, against the list itself.
    let s = Server::start(None);
    let mut c = s.conn();
    let values: Vec<String> = (0..5000)
        .map(|i| {
            if i % 7 == 3 {
                "m".into()
            } else {
                format!("v{i}")
            }
        })
        .collect();
    let _: i64 = redis::cmd("RPUSH")
        .arg("l")
        .arg(&values)
        .query(&mut c)
        .unwrap();
    let matches: Vec<i64> = (0..5000).filter(|i| i % 7 == 3).collect();
    let all: Vec<i64> = redis::cmd("LPOS")
        .arg("l")
        .arg("m")
        .arg("COUNT")
        .arg(0)
        .query(&mut c)
        .unwrap();
    assert_eq!(all, matches);
    let from_tail: Vec<i64> = redis::cmd("LPOS")
        .arg("l")
        .arg("m")
        .arg("RANK")
        .arg(-3)
        .arg("COUNT")
        .arg(0)
        .query(&mut c)
        .unwrap();
    assert_eq!(
        from_tail,
        matches.iter().rev().skip(2).copied().collect::<Vec<_>>()
    );
    let within: Vec<i64> = redis::cmd("LPOS")
        .arg("l")
        .arg("m")
        .arg("RANK")
        .arg(150)
        .arg("COUNT")
        .arg(5)
        .arg("MAXLEN")
        .arg(1100)
        .query(&mut c)
        .unwrap();
    assert_eq!(
        within,
        matches
            .iter()
            .skip(149)
            .take(5)
            .copied()
            .filter(|&i| i < 1100)
            .collect::<Vec<_>>()
    );
    let one: Option<i64> = redis::cmd("LPOS")
        .arg("l")
        .arg("m")
        .arg("RANK")
        .arg(-1)
        .query(&mut c)
        .unwrap();
    assert_eq!(one, matches.last().copied());
}
