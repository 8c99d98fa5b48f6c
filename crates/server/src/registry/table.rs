//! The table itself: built once from the rows ([`install`]) and looked up
//! by name.
//!
//! * **Owns**: the table, read-only once built. **Thread safety**: a
//!   `OnceLock`.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::flags::{Flags, ADMIN, NONE, SKIP_MONITOR, WRITE};
use super::types::{Command, DataFn, Row, Sub};
use crate::access::Access;
use crate::commands::Outcome;
use crate::cursors::Cursors;

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
    install(super::rows::ALL);
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

/// True for a request Redis keeps from `MONITOR` (`call()`): a command,
/// or for a container its subcommand, flagged `admin` or
/// `skip_monitor`. Scripts and functions are flagged so but show
/// themselves before their calls, as Redis's `evalGenericCommand` and
/// `fcallCommandGeneric` do.
pub fn hidden_from_monitors(name: &str, args: &[Vec<u8>]) -> bool {
    find(name).is_some_and(|c| !c.is_script() && c.flags_of(args).any(ADMIN | SKIP_MONITOR))
}
