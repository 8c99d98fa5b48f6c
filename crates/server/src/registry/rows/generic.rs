//! The commands on keys of any type (Redis's `generic` group; `WAIT` and `MOVE`, which touch no data here, are with the server commands).

use super::common::{Row, DIRECT, SNAPSHOT, TX};
use crate::collections::dump;
use crate::collections::object;
use crate::collections::sort;
use crate::commands::keys;

pub const ROWS: &[Row] = &[
    Row::data("sort", TX, sort::run),
    Row::data("sort_ro", SNAPSHOT, sort::run),
    Row::data("dump", SNAPSHOT, dump::run),
    Row::data("restore", TX, dump::run),
    Row::data("object", TX, object::run),
    Row::data("keys", DIRECT, keys::run),
    Row::data("scan", DIRECT, keys::run),
    Row::data("del", TX, keys::run),
    Row::data("unlink", TX, keys::run),
    Row::data("exists", DIRECT, keys::run),
    Row::data("touch", DIRECT, keys::run),
    Row::data("type", DIRECT, keys::run),
    Row::data("rename", TX, keys::run),
    Row::data("renamenx", TX, keys::run),
    Row::data("copy", TX, keys::run),
    Row::data("expire", TX, keys::run),
    Row::data("pexpire", TX, keys::run),
    Row::data("expireat", TX, keys::run),
    Row::data("pexpireat", TX, keys::run),
    Row::data("ttl", DIRECT, keys::run),
    Row::data("pttl", DIRECT, keys::run),
    Row::data("expiretime", DIRECT, keys::run),
    Row::data("pexpiretime", DIRECT, keys::run),
    Row::data("persist", TX, keys::run),
    Row::data("randomkey", DIRECT, keys::run),
];
