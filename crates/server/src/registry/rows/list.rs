//! The list commands (Redis's `list` group), the blocking pops among them.

use super::common::{Row, SNAPSHOT, TX};
use crate::collections::blocking;
use crate::collections::lists;
use crate::collections::mpop;

pub const ROWS: &[Row] = &[
    Row::data("lpush", TX, lists::run),
    Row::data("rpush", TX, lists::run),
    Row::data("lpushx", TX, lists::run),
    Row::data("rpushx", TX, lists::run),
    Row::data("lpop", TX, lists::run),
    Row::data("rpop", TX, lists::run),
    Row::data("llen", SNAPSHOT, lists::run),
    Row::data("lindex", SNAPSHOT, lists::run),
    Row::data("rpoplpush", TX, lists::run),
    Row::data("lrange", SNAPSHOT, lists::run),
    Row::data("lset", TX, lists::run),
    Row::data("ltrim", TX, lists::run),
    Row::data("lrem", TX, lists::run),
    Row::data("linsert", TX, lists::run),
    Row::data("lmove", TX, lists::run),
    Row::data("lpos", SNAPSHOT, lists::run),
    Row::data("blpop", TX, blocking::run),
    Row::data("brpop", TX, blocking::run),
    Row::data("blmove", TX, blocking::run),
    Row::data("brpoplpush", TX, blocking::run),
    Row::data("blmpop", TX, blocking::run),
    Row::data("lmpop", TX, mpop::run),
];
