//! The hash commands (Redis's `hash` group).

use super::common::{Row, SNAPSHOT, TX};
use crate::collections::hashes;
use crate::collections::scan;

pub const ROWS: &[Row] = &[
    Row::data("hset", TX, hashes::run),
    Row::data("hmset", TX, hashes::run),
    Row::data("hsetnx", TX, hashes::run),
    Row::data("hincrby", TX, hashes::run),
    Row::data("hincrbyfloat", TX, hashes::run),
    Row::data("hget", SNAPSHOT, hashes::run),
    Row::data("hexists", SNAPSHOT, hashes::run),
    Row::data("hstrlen", SNAPSHOT, hashes::run),
    Row::data("hmget", SNAPSHOT, hashes::run),
    Row::data("hdel", TX, hashes::run),
    Row::data("hlen", SNAPSHOT, hashes::run),
    Row::data("hgetall", SNAPSHOT, hashes::run),
    Row::data("hkeys", SNAPSHOT, hashes::run),
    Row::data("hvals", SNAPSHOT, hashes::run),
    Row::data("hscan", SNAPSHOT, scan::run),
    Row::data("hrandfield", SNAPSHOT, hashes::run),
];
