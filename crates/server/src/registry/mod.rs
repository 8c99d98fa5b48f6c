//! The command registry: every command the server serves, one row each,
//! and the one place the server learns a command's facts from — its
//! arity, flags and subcommands, how it reaches the engine, where it may
//! run in a cluster, and its handler.
//!
//! Redis keeps the facts of its commands in `src/commands/*.json` and
//! generates `commands.def` from them; slsm keeps the same JSON (Redis
//! 7.0.15's, merged into `command_docs/commands.json`) and puts beside it,
//! one file per command group ([`rows`]), what only slsm can say: the
//! handler and how the command runs. [`install`] joins the two once, so a
//! fact lives in exactly one of them: Redis's arity, flags and subcommand
//! tables in the JSON (documentation for `COMMAND` too), slsm's routing
//! and handlers in the rows, and the few deliberate differences from
//! Redis as flags a row adds (each with its reason).
//!
//! Everything that decides by a command reads it here: the shape check
//! before a command runs or is queued (`shape`), dispatch
//! (`dispatch`), `EXEC`, scripts' `redis.call`, the pipeline's grouping,
//! `CLIENT PAUSE WRITE`, the busy-script gate, `INFO commandstats`, and
//! the cluster's choice of what goes through the log.
//!
//! * **Owns**: the table, built once and read-only after.
//! * **Thread safety**: a `OnceLock`; every lookup is a shared read.

mod flags;
pub mod rows;
mod shape;

pub use crate::error::{arity_error, subcommand_error};
pub use flags::*;
pub use shape::{check_subcommand, checked, fits, refused, subcommand_refusal};

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::access::Access;
use crate::commands::Outcome;
use crate::cursors::Cursors;
use crate::resp::{Reply, Request};
use crate::session::{Session, Then};
use crate::shared::Shared;

/// A data command: runs against an engine access (straight, in a
/// transaction or at a snapshot), given its lowercase name and arguments.
pub type DataFn = fn(&str, &[Vec<u8>], &mut dyn Access, &Cursors) -> Outcome;

/// A command on the connection or the server.
pub type ControlFn = fn(&Shared, &mut Session, &str, &Request) -> (Reply, Then);

/// How a data command reaches the engine outside `MULTI`.
#[derive(Clone, Copy)]
pub enum Mode {
    /// Straight writes and reads: nothing read decides a write.
    Direct,
    /// In an engine transaction of its own, retried on a conflict: it
    /// reads before it writes, or writes several keys.
    Transaction,
    /// At one snapshot: it reads a collection and writes nothing.
    Snapshot,
    /// As its arguments say (`SET ... NX` reads before it writes).
    ByArgs(fn(&[Vec<u8>]) -> Mode),
}

impl Mode {
    /// The mode for these arguments.
    pub fn of(self, args: &[Vec<u8>]) -> Mode {
        match self {
            Mode::ByArgs(decide) => decide(args),
            fixed => fixed,
        }
    }
}

/// Where a command may run in a cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// On any node, without consensus: the connection's own state, the
    /// node's introspection, `CLUSTER`, `MULTI`.
    Anywhere,
    /// Reads the data: on the leader after a read-index round; on a
    /// follower only after `READONLY` (as it is there).
    Read,
    /// Changes the data: proposed by the leader as a log entry.
    Write,
    /// On the leader only, not as a log entry (pub/sub, `WATCH`).
    Leader,
}

/// Where a server command runs in a cluster.
#[derive(Clone, Copy)]
pub enum Place {
    Fixed(Class),
    ByArgs(fn(&Request) -> Class),
}

/// How a command runs.
#[derive(Clone, Copy)]
pub enum Run {
    /// On the data: `handler` against an engine access, outside `MULTI`
    /// as `mode` says; inside one (and in a log entry, and under a
    /// script's `redis.call`) against the transaction.
    Data { mode: Mode, handler: DataFn },
    /// A script or function (`EVAL`, `FCALL`, ...): `handler` outside
    /// `MULTI`; inside one, or applied from the log, the script runs in
    /// the transaction (`scripting::eval_in`).
    Script { handler: ControlFn },
    /// `PUBLISH` and `SPUBLISH`: inside `MULTI` the message is sent once
    /// the transaction commits.
    Publish { handler: ControlFn },
    /// On the connection or the server. `in_tx`, if set, is what it does
    /// inside `MULTI` instead (against the transaction: `DBSIZE` counts
    /// what it sees); otherwise it runs once, in its place.
    Control {
        place: Place,
        handler: ControlFn,
        in_tx: Option<DataFn>,
    },
}

/// What a row of [`rows`] says of a command.
pub struct Row {
    pub name: &'static str,
    pub run: Run,
    /// Flags slsm adds to Redis's (a deliberate difference).
    pub extra: Flags,
    /// A command Redis does not have: its arity and flags.
    pub own: Option<(i32, Flags)>,
}

impl Row {
    pub const fn data(name: &'static str, mode: Mode, handler: DataFn) -> Row {
        Row::new(name, Run::Data { mode, handler })
    }

    pub const fn control(name: &'static str, class: Class, handler: ControlFn) -> Row {
        Row::placed(name, Place::Fixed(class), handler)
    }

    pub const fn placed(name: &'static str, place: Place, handler: ControlFn) -> Row {
        let in_tx = None;
        Row::new(
            name,
            Run::Control {
                place,
                handler,
                in_tx,
            },
        )
    }

    pub const fn new(name: &'static str, run: Run) -> Row {
        Row {
            name,
            run,
            extra: NONE,
            own: None,
        }
    }

    /// Inside `MULTI`, the command runs `f` against the transaction.
    pub const fn in_tx(mut self, f: DataFn) -> Row {
        if let Run::Control { place, handler, .. } = self.run {
            self.run = Run::Control {
                place,
                handler,
                in_tx: Some(f),
            };
        }
        self
    }

    pub const fn adding(mut self, extra: Flags) -> Row {
        self.extra = extra;
        self
    }

    pub const fn own(mut self, arity: i32, flags: Flags) -> Row {
        self.own = Some((arity, flags));
        self
    }
}

/// One subcommand of a container (`CONFIG GET`): Redis's.
pub struct Sub {
    /// Lowercase, without the container's name.
    pub name: &'static str,
    /// The exact count of words, or at least `-arity`.
    pub arity: i32,
    pub flags: Flags,
}

/// A served command: Redis's facts and slsm's row, joined.
pub struct Command {
    pub name: &'static str,
    /// The exact count of words, or at least `-arity`.
    pub arity: i32,
    pub flags: Flags,
    /// Redis's subcommands, for a container (empty otherwise).
    pub subcommands: Vec<Sub>,
    pub run: Run,
}

impl Command {
    /// The handler of a command on the data.
    pub fn data(&self) -> Option<DataFn> {
        match self.run {
            Run::Data { handler, .. } => Some(handler),
            _ => None,
        }
    }

    pub fn is_script(&self) -> bool {
        matches!(self.run, Run::Script { .. })
    }

    /// A container's subcommand `sub` (any case).
    pub fn subcommand(&self, sub: &[u8]) -> Option<&Sub> {
        let sub = String::from_utf8_lossy(sub).to_ascii_lowercase();
        self.subcommands.iter().find(|s| s.name == sub)
    }

    /// The flags of `req`: its subcommand's for a container, else its own.
    pub fn flags_of(&self, req: &Request) -> Flags {
        match req.get(1).and_then(|sub| self.subcommand(sub)) {
            Some(sub) => sub.flags,
            None => self.flags,
        }
    }

    /// True if `req` changes the data or is sent on to replicas (Redis's
    /// `write` and `may-replicate`: what `CLIENT PAUSE WRITE` holds).
    pub fn may_replicate(&self, req: &Request) -> bool {
        self.flags_of(req).any(WRITE | MAY_REPLICATE)
    }

    /// Where `req` may run in a cluster.
    pub fn class(&self, req: &Request) -> Class {
        match self.run {
            Run::Data { .. } if self.flags.has(WRITE) => Class::Write,
            Run::Data { .. } => Class::Read,
            Run::Script { .. } if self.flags.has(READONLY) => Class::Read,
            Run::Script { .. } => Class::Write,
            Run::Publish { .. } => Class::Leader,
            Run::Control { place, .. } => match place {
                Place::Fixed(class) => class,
                Place::ByArgs(decide) => decide(req),
            },
        }
    }
}

struct Table {
    by_name: HashMap<&'static str, usize>,
    commands: Vec<Command>,
}

static TABLE: OnceLock<Table> = OnceLock::new();

/// Builds the table from `rows` (`rows::ALL`, which the server's start
/// installs before it serves anything). The first call builds it; later
/// ones change nothing. The table is installed rather than named here so
/// that the handlers, several of which look commands up (`EXEC`,
/// scripts, the cluster's log), do not import the rows that name them.
pub fn install(rows: &'static [&'static [Row]]) {
    TABLE.get_or_init(|| {
        let commands: Vec<Command> = rows.iter().flat_map(|g| g.iter()).map(join).collect();
        let by_name = commands
            .iter()
            .enumerate()
            .map(|(i, c)| (c.name, i))
            .collect();
        Table { by_name, commands }
    });
}

/// The installed table (empty before [`install`]; tests install the
/// rows themselves).
fn table() -> &'static Table {
    #[cfg(test)]
    install(rows::ALL);
    static EMPTY: OnceLock<Table> = OnceLock::new();
    TABLE.get().unwrap_or_else(|| {
        EMPTY.get_or_init(|| Table {
            by_name: HashMap::new(),
            commands: Vec::new(),
        })
    })
}

/// Joins a row with Redis's description of its command. A row Redis does
/// not describe (and that says nothing of its own) would take no
/// arguments; `tests::every_row_is_described` keeps that from happening.
fn join(row: &Row) -> Command {
    let described = crate::command_docs::lookup(row.name.as_bytes());
    let (arity, flags) = match (row.own, described) {
        (Some(own), _) => own,
        (None, Some((_, d))) => (json_int(d, "arity"), json_flags(d)),
        (None, None) => (1, NONE),
    };
    let subcommands = crate::command_docs::subcommands(row.name)
        .into_iter()
        .map(|(full, d)| Sub {
            name: full.split_once('|').map_or(full, |(_, sub)| sub),
            arity: json_int(d, "arity"),
            flags: json_flags(d),
        })
        .collect();
    Command {
        name: row.name,
        arity,
        flags: flags.with(row.extra),
        subcommands,
        run: row.run,
    }
}

fn json_int(d: &serde_json::Value, field: &str) -> i32 {
    d.get(field).and_then(|v| v.as_i64()).unwrap_or(0) as i32
}

fn json_flags(d: &serde_json::Value) -> Flags {
    let names = d.get("command_flags").and_then(|f| f.as_array());
    let names = names.into_iter().flatten().filter_map(|n| n.as_str());
    Flags::from_names(names).unwrap_or(NONE)
}

/// The served command `name` (lowercase).
pub fn find(name: &str) -> Option<&'static Command> {
    let t = table();
    t.by_name.get(name).map(|&i| &t.commands[i])
}

/// Every served command, in the rows' order, and its place in that order
/// (`INFO commandstats` keeps its counters by it).
pub fn commands() -> &'static [Command] {
    &table().commands
}

/// The place of `name` in [`commands`].
pub fn index_of(name: &str) -> Option<usize> {
    table().by_name.get(name).copied()
}

/// The handler of data command `name`, if it is one.
pub fn data_handler(name: &str) -> Option<DataFn> {
    find(name).and_then(Command::data)
}

/// Runs data command `name` (lowercase; its shape already checked)
/// against `acc`.
pub fn run_data(name: &str, args: &[Vec<u8>], acc: &mut dyn Access, cursors: &Cursors) -> Outcome {
    match data_handler(name) {
        Some(handler) => handler(name, args, acc, cursors),
        None => Err(crate::commands::fail("ERR unknown command")),
    }
}

/// True for a script or function command (`EVAL`, `FCALL`, ...).
pub fn is_script(name: &str) -> bool {
    find(name).is_some_and(Command::is_script)
}

/// True for a command Redis flags `write`.
pub fn is_write(name: &str) -> bool {
    find(name).is_some_and(|c| c.flags.has(WRITE))
}

#[cfg(test)]
mod tests;
