//! `COMMAND`'s replies from Redis's own description of each command
//! (`commands.json`, written by `data/make_command_docs.py` from Redis
//! 7.0.15's `src/commands/*.json`), built as `server.c`'s
//! `addReplyCommandInfo` and `addReplyCommandDocs` build them: the flags,
//! ACL categories (with those Redis derives from the flags), tips, key
//! specs, the legacy first/last/step derived from the key specs, the
//! arguments, history and subcommands. So `redis-cli` shows its argument
//! hints, and a client that learns keys and flags from `COMMAND` learns
//! what it would from redis-server.
//!
//! Redis's descriptions are its own (BSD-3-Clause, `REDIS-COPYING` here).
//!
//! The same descriptions are the facts of the served commands (arity,
//! flags, subcommands) that the command registry (`crate::registry`)
//! joins with its rows.

pub mod command;
mod docs;
mod getkeys;
mod info;
mod table;

pub use docs::docs;
pub use getkeys::key_access;
pub use info::{categories, info, CATEGORIES};
pub use table::{every_command, lookup, subcommands, top_level};
