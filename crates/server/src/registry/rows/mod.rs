//! The registry's rows, one file per command group (Redis's groups, as
//! `COMMAND DOCS` names them): for each command, how it runs and its
//! handler. Redis's facts of the same commands are in
//! `command_docs/commands.json`; `super::table` joins the two.

mod bitmap;
mod cluster;
mod common;
mod connection;
mod generic;
mod geo;
mod hash;
mod hyperloglog;
mod list;
mod pubsub;
mod scripting;
mod server;
mod set;
mod sorted_set;
mod stream;
mod string;
mod transactions;

use super::Row;

/// Every group's rows.
pub const ALL: &[&[Row]] = &[
    connection::ROWS,
    server::ROWS,
    transactions::ROWS,
    string::ROWS,
    generic::ROWS,
    bitmap::ROWS,
    hyperloglog::ROWS,
    list::ROWS,
    hash::ROWS,
    set::ROWS,
    sorted_set::ROWS,
    geo::ROWS,
    stream::ROWS,
    pubsub::ROWS,
    scripting::ROWS,
    cluster::ROWS,
];
