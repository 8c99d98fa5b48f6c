//! The HyperLogLog commands (Redis's `hyperloglog` group).

use super::common::{Row, TX};
use crate::commands::hyperloglog;

pub const ROWS: &[Row] = &[
    Row::data("pfadd", TX, hyperloglog::run),
    Row::data("pfcount", TX, hyperloglog::run),
    Row::data("pfmerge", TX, hyperloglog::run),
];
