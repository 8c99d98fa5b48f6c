//! The set commands (Redis's `set` group).

use super::common::{Row, SNAPSHOT, TX};
use crate::collections::scan;
use crate::collections::sets;

pub const ROWS: &[Row] = &[
    Row::data("sadd", TX, sets::run),
    Row::data("srem", TX, sets::run),
    Row::data("smismember", SNAPSHOT, sets::run),
    Row::data("sismember", SNAPSHOT, sets::run),
    Row::data("smembers", SNAPSHOT, sets::run),
    Row::data("sscan", SNAPSHOT, scan::run),
    Row::data("scard", SNAPSHOT, sets::run),
    Row::data("spop", TX, sets::run),
    Row::data("srandmember", SNAPSHOT, sets::run),
    Row::data("smove", TX, sets::run),
    Row::data("sinter", SNAPSHOT, sets::run),
    Row::data("sunion", SNAPSHOT, sets::run),
    Row::data("sdiff", SNAPSHOT, sets::run),
    Row::data("sinterstore", TX, sets::run),
    Row::data("sunionstore", TX, sets::run),
    Row::data("sdiffstore", TX, sets::run),
    Row::data("sintercard", SNAPSHOT, sets::run),
];
