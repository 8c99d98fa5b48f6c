//! The sorted-set commands (Redis's `sorted_set` group), the blocking pops among them.

use super::common::{Row, SNAPSHOT, TX};
use crate::collections::blocking;
use crate::collections::mpop;
use crate::collections::scan;
use crate::collections::zsets;

pub const ROWS: &[Row] = &[
    Row::data("zadd", TX, zsets::run),
    Row::data("zincrby", TX, zsets::run),
    Row::data("zcount", SNAPSHOT, zsets::run),
    Row::data("zscore", SNAPSHOT, zsets::run),
    Row::data("zrank", SNAPSHOT, zsets::run),
    Row::data("zrevrank", SNAPSHOT, zsets::run),
    Row::data("zmscore", SNAPSHOT, zsets::run),
    Row::data("zrem", TX, zsets::run),
    Row::data("zcard", SNAPSHOT, zsets::run),
    Row::data("zrange", SNAPSHOT, zsets::run),
    Row::data("zrevrange", SNAPSHOT, zsets::run),
    Row::data("zrangebyscore", SNAPSHOT, zsets::run),
    Row::data("zrevrangebyscore", SNAPSHOT, zsets::run),
    Row::data("zpopmin", TX, zsets::run),
    Row::data("zpopmax", TX, zsets::run),
    Row::data("zremrangebyrank", TX, zsets::run),
    Row::data("zremrangebyscore", TX, zsets::run),
    Row::data("zscan", SNAPSHOT, scan::run),
    Row::data("zrangestore", TX, zsets::run),
    Row::data("zrangebylex", SNAPSHOT, zsets::run),
    Row::data("zrevrangebylex", SNAPSHOT, zsets::run),
    Row::data("zlexcount", SNAPSHOT, zsets::run),
    Row::data("zremrangebylex", TX, zsets::run),
    Row::data("zunion", SNAPSHOT, zsets::run),
    Row::data("zinter", SNAPSHOT, zsets::run),
    Row::data("zdiff", SNAPSHOT, zsets::run),
    Row::data("zunionstore", TX, zsets::run),
    Row::data("zinterstore", TX, zsets::run),
    Row::data("zdiffstore", TX, zsets::run),
    Row::data("zintercard", SNAPSHOT, zsets::run),
    Row::data("zrandmember", SNAPSHOT, zsets::run),
    Row::data("bzpopmin", TX, blocking::run),
    Row::data("bzpopmax", TX, blocking::run),
    Row::data("bzmpop", TX, blocking::run),
    Row::data("zmpop", TX, mpop::run),
];
