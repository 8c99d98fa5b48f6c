//! Server commands for things this server does not have, answered as a
//! redis-server 7.0 without them answers, so clients that ask get what
//! they expect rather than an unknown command:
//! - `ROLE`: a master with no replicas. `REPLICAOF`/`SLAVEOF NO ONE` is
//!   `OK` (it is a master already); following another server is refused,
//!   there being no replication.
//! - `MODULE LIST` is empty; loading or unloading answers Redis 7.0's
//!   error with `enable-module-command no`, its default.
//! - `DEBUG` answers Redis 7.0's error with `enable-debug-command no`, its
//!   default.
//! - `SWAPDB` and `MOVE` answer as Redis with `databases 1` does.
//! - `CLUSTER` (each of Redis 7.0's subcommands, checked for its arity
//!   first), `READONLY`, `READWRITE` and `ASKING` answer as Redis with
//!   `cluster-enabled no`, its default: cluster support disabled. A
//!   cluster-aware client learns at once that this is a single server.
//!   (`slsm serve --cluster` answers them itself, and `RAFT`, its own:
//!   `cluster/commands.rs`.)

use crate::commands::{fail, int_arg, Outcome};
use crate::resp::Reply;

const MODULE_HELP: &[&str] = &[
    "MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LIST",
    "    Return a list of loaded modules.",
    "LOAD <path> [<arg> ...]",
    "    Load a module library from <path>, passing to it any optional arguments.",
    "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
    "    Load a module library from <path>, while passing it module configurations and optional arguments.",
    "UNLOAD <name>",
    "    Unload a module.",
    "HELP",
    "    Prints this help.",
];

fn help(lines: &[&str]) -> Reply {
    Reply::Array(lines.iter().map(|l| Reply::Simple(l.to_string())).collect())
}

pub fn run(name: &str, a: &[Vec<u8>]) -> Outcome {
    crate::registry::check_subcommand(name, a)?;
    let sub = a.get(1).map(|s| s.to_ascii_lowercase()).unwrap_or_default();
    match name {
        "role" => Ok(Reply::Array(vec![
            Reply::bulk("master"),
            Reply::Int(0),
            Reply::Array(Vec::new()),
        ])),
        "replicaof" | "slaveof" => match (a[1].eq_ignore_ascii_case(b"no"), a[2].eq_ignore_ascii_case(b"one")) {
            (true, true) => Ok(Reply::ok()),
            _ => Err(fail("ERR replication is not supported by slsm serve: it is always a master")),
        },
        "module" => match sub.as_slice() {
            b"list" => Ok(Reply::Array(Vec::new())),
            b"help" => Ok(help(MODULE_HELP)),
            _ => Err(fail("ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.")),
        },
        "debug" => Err(fail("ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.")),
        "swapdb" => {
            let first = int_arg(&a[1]).map_err(|_| fail("ERR invalid first DB index"))?;
            let second = int_arg(&a[2]).map_err(|_| fail("ERR invalid second DB index"))?;
            match (first, second) {
                (0, 0) => Ok(Reply::ok()),
                _ => Err(fail("ERR DB index is out of range")),
            }
        }
        "cluster" | "readonly" | "readwrite" | "asking" | "raft" => {
            Err(fail("ERR This instance has cluster support disabled"))
        }
        _ => match int_arg(&a[2])? {
            0 => Err(fail("ERR source and destination objects are the same")),
            _ => Err(fail("ERR DB index is out of range")),
        },
    }
}

/// `SELECT index`: only database 0 exists (as Redis with `databases 1`);
/// a script may select it too.
pub fn select(index: &[u8]) -> Reply {
    match int_arg(index) {
        Ok(0) => Reply::ok(),
        Ok(_) => Reply::err("ERR DB index is out of range"),
        Err(_) => Reply::err("ERR value is not an integer or out of range"),
    }
}
