//! The string commands (Redis's `string` group).

use super::common::{Mode, Row, DIRECT, TX};
use crate::commands::strings;

pub const ROWS: &[Row] = &[
    Row::data("get", DIRECT, strings::run),
    Row::data("set", Mode::ByArgs(strings::mode), strings::run),
    Row::data("getset", TX, strings::run),
    Row::data("setnx", TX, strings::run),
    Row::data("setex", DIRECT, strings::run),
    Row::data("psetex", DIRECT, strings::run),
    Row::data("getdel", TX, strings::run),
    Row::data("getex", TX, strings::run),
    Row::data("mget", DIRECT, strings::run),
    Row::data("mset", TX, strings::run),
    Row::data("msetnx", TX, strings::run),
    Row::data("append", TX, strings::run),
    Row::data("strlen", DIRECT, strings::run),
    Row::data("getrange", DIRECT, strings::run),
    Row::data("substr", DIRECT, strings::run),
    Row::data("lcs", DIRECT, strings::run),
    Row::data("setrange", TX, strings::run),
    Row::data("incr", TX, strings::run),
    Row::data("incrby", TX, strings::run),
    Row::data("decr", TX, strings::run),
    Row::data("decrby", TX, strings::run),
    Row::data("incrbyfloat", TX, strings::run),
];
