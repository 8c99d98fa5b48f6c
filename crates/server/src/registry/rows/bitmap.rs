//! The bit commands on strings (Redis's `bitmap` group).

use super::common::{Row, DIRECT, TX};
use crate::commands::bits;

pub const ROWS: &[Row] = &[
    Row::data("setbit", TX, bits::run),
    Row::data("getbit", DIRECT, bits::run),
    Row::data("bitcount", DIRECT, bits::run),
    Row::data("bitpos", DIRECT, bits::run),
    Row::data("bitop", TX, bits::run),
    Row::data("bitfield", TX, bits::run),
    Row::data("bitfield_ro", DIRECT, bits::run),
];
