//! The stream commands (Redis's `stream` group).

use super::common::{Row, SNAPSHOT, TX};
use crate::collections::streams;

pub const ROWS: &[Row] = &[
    Row::data("xadd", TX, streams::run),
    Row::data("xlen", SNAPSHOT, streams::run),
    Row::data("xdel", TX, streams::run),
    Row::data("xtrim", TX, streams::run),
    Row::data("xrange", SNAPSHOT, streams::run),
    Row::data("xrevrange", SNAPSHOT, streams::run),
    Row::data("xread", SNAPSHOT, streams::run),
    Row::data("xreadgroup", TX, streams::run),
    Row::data("xgroup", TX, streams::run),
    Row::data("xack", TX, streams::run),
    Row::data("xpending", SNAPSHOT, streams::run),
    Row::data("xclaim", TX, streams::run),
    Row::data("xautoclaim", TX, streams::run),
    Row::data("xinfo", TX, streams::run),
    Row::data("xsetid", TX, streams::run),
];
