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
//! before a command runs or is queued (`shape.rs`), the door
//! (`crate::dispatch`), `EXEC`, scripts' `redis.call`, the pipeline's
//! grouping, `CLIENT PAUSE WRITE`, the busy-script gate, `MONITOR`,
//! `INFO commandstats`, and the cluster's choice of what goes through the
//! log. The row types are `types.rs`'s, the table `table.rs`'s.
//!
//! * **Owns**: the table (`table.rs`), built once at start and read-only
//!   after.
//! * **Thread safety**: a `OnceLock`; every lookup is a shared read.

mod flags;
pub mod rows;
mod shape;
mod table;
mod types;

pub use crate::error::{arity_error, subcommand_error};
pub use flags::*;
pub use shape::{check_subcommand, checked, fits, refused, subcommand_refusal};
pub use table::{
    commands, data_handler, find, hidden_from_monitors, index_of, install, is_script, is_write,
    run_data,
};
pub use types::{Class, Command, ControlFn, DataFn, Mode, Place, Row, Run, Sub};

#[cfg(test)]
mod tests;
