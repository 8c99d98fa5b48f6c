//! `LCS` and `SUBSTR` answer as redis-server 7.0 answered the same requests
//! on one connection, byte for byte: the common subsequence, its length,
//! its matching ranges (with `MINMATCHLEN` and `WITHMATCHLEN`, where
//! several subsequences are longest the one Redis picks), missing keys as
//! empty strings, and the errors in Redis's order.

use crate::common;
use common::{expect_replies, Server};

const REDIS_REPLIES: &[(&[&str], &str)] = &[
    (&["mset", "key1", "ohmytext", "key2", "mynewtext"], "+OK\r\n"),
    (&["lcs", "key1", "key2"], "$6\r\nmytext\r\n"),
    (&["lcs", "key1", "key2", "len"], ":6\r\n"),
    (&["lcs", "key1", "key2", "idx"], "*4\r\n$7\r\nmatches\r\n*2\r\n*2\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n*2\r\n*2\r\n:2\r\n:3\r\n*2\r\n:0\r\n:1\r\n$3\r\nlen\r\n:6\r\n"),
    (&["lcs", "key1", "key2", "idx", "minmatchlen", "4"], "*4\r\n$7\r\nmatches\r\n*1\r\n*2\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n$3\r\nlen\r\n:6\r\n"),
    (&["lcs", "key1", "key2", "idx", "minmatchlen", "4", "withmatchlen"], "*4\r\n$7\r\nmatches\r\n*1\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n$3\r\nlen\r\n:6\r\n"),
    (&["lcs", "key1", "key2", "idx", "withmatchlen"], "*4\r\n$7\r\nmatches\r\n*2\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n*3\r\n*2\r\n:2\r\n:3\r\n*2\r\n:0\r\n:1\r\n:2\r\n$3\r\nlen\r\n:6\r\n"),
    (&["lcs", "key1", "key2", "len", "idx"], "-ERR If you want both the length and indexes, please just use IDX.\r\n"),
    (&["lcs", "key1", "key2", "foo"], "-ERR syntax error\r\n"),
    (&["lcs", "key1", "key2", "minmatchlen"], "-ERR syntax error\r\n"),
    (&["lcs", "key1", "key2", "minmatchlen", "x"], "-ERR value is not an integer or out of range\r\n"),
    (&["lcs", "key1", "key2", "idx", "minmatchlen", "-5"], "*4\r\n$7\r\nmatches\r\n*2\r\n*2\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n*2\r\n*2\r\n:2\r\n:3\r\n*2\r\n:0\r\n:1\r\n$3\r\nlen\r\n:6\r\n"),
    (&["lcs", "key1", "nokey"], "$0\r\n\r\n"),
    (&["lcs", "nokey", "nokey2", "idx"], "*4\r\n$7\r\nmatches\r\n*0\r\n$3\r\nlen\r\n:0\r\n"),
    (&["lcs", "key1", "key1", "idx", "withmatchlen"], "*4\r\n$7\r\nmatches\r\n*1\r\n*3\r\n*2\r\n:0\r\n:7\r\n*2\r\n:0\r\n:7\r\n:8\r\n$3\r\nlen\r\n:8\r\n"),
    (&["rpush", "l", "a"], ":1\r\n"),
    (&["lcs", "key1", "l"], "-ERR The specified keys must contain string values\r\n"),
    (&["lcs", "l", "key1", "foo"], "-ERR The specified keys must contain string values\r\n"),
    (&["set", "a", "abcabcabcxyzabc"], "+OK\r\n"),
    (&["set", "b", "xabcyzabcaxbc"], "+OK\r\n"),
    (&["lcs", "a", "b", "idx", "withmatchlen"], "*4\r\n$7\r\nmatches\r\n*4\r\n*3\r\n*2\r\n:13\r\n:14\r\n*2\r\n:11\r\n:12\r\n:2\r\n*3\r\n*2\r\n:9\r\n:9\r\n*2\r\n:10\r\n:10\r\n:1\r\n*3\r\n*2\r\n:3\r\n:6\r\n*2\r\n:6\r\n:9\r\n:4\r\n*3\r\n*2\r\n:0\r\n:2\r\n*2\r\n:1\r\n:3\r\n:3\r\n$3\r\nlen\r\n:10\r\n"),
    (&["lcs", "b", "a", "idx", "withmatchlen"], "*4\r\n$7\r\nmatches\r\n*4\r\n*3\r\n*2\r\n:11\r\n:12\r\n*2\r\n:13\r\n:14\r\n:2\r\n*3\r\n*2\r\n:10\r\n:10\r\n*2\r\n:9\r\n:9\r\n:1\r\n*3\r\n*2\r\n:6\r\n:9\r\n*2\r\n:3\r\n:6\r\n:4\r\n*3\r\n*2\r\n:1\r\n:3\r\n*2\r\n:0\r\n:2\r\n:3\r\n$3\r\nlen\r\n:10\r\n"),
    (&["lcs", "a", "b"], "$10\r\nabcabcaxbc\r\n"),
    (&["lcs", "b", "a"], "$10\r\nabcabcaxbc\r\n"),
    (&["substr", "key1", "0", "3"], "$4\r\nohmy\r\n"),
    (&["substr", "key1", "-3", "-1"], "$3\r\next\r\n"),
    (&["substr", "l", "0", "1"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["substr", "key1", "0"], "-ERR wrong number of arguments for 'substr' command\r\n"),
    (&["lcs", "key1"], "-ERR wrong number of arguments for 'lcs' command\r\n"),
];

#[test]
fn lcs_and_substr_answer_as_redis_does() {
    let s = Server::start(None);
    expect_replies(&s, REDIS_REPLIES);
}
