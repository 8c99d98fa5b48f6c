//! The geospatial commands (Redis's `geo` group), on sorted sets.

use super::common::{Row, SNAPSHOT, TX};
use crate::collections::zsets;

pub const ROWS: &[Row] = &[
    Row::data("geoadd", TX, zsets::run),
    Row::data("geopos", SNAPSHOT, zsets::run),
    Row::data("geohash", SNAPSHOT, zsets::run),
    Row::data("geodist", SNAPSHOT, zsets::run),
    Row::data("georadius", TX, zsets::run),
    Row::data("georadius_ro", SNAPSHOT, zsets::run),
    Row::data("georadiusbymember", TX, zsets::run),
    Row::data("georadiusbymember_ro", SNAPSHOT, zsets::run),
    Row::data("geosearch", SNAPSHOT, zsets::run),
    Row::data("geosearchstore", TX, zsets::run),
];
