//! The `COMMAND` command: `COMMAND`, `COUNT`, `LIST [FILTERBY MODULE
//! name|ACLCAT category|PATTERN pattern]`, `INFO [name...]`, `DOCS
//! [name...]`, `GETKEYS`, `GETKEYSANDFLAGS` (`getkeys.rs`) and `HELP`,
//! with Redis 7.0's arities and errors.

use crate::commands::Outcome;
use crate::resp::Reply;

/// `COMMAND` and its subcommands (see the module documentation), answered
/// from Redis's own description of the commands (`command_docs/mod.rs`).
pub fn command(a: &[Vec<u8>]) -> Outcome {
    use super::docs::docs;
    use super::info::info;
    use super::table::{lookup, top_level};
    let sub = a.get(1).map(|s| s.to_ascii_lowercase()).unwrap_or_default();
    // The subcommand and its arity were checked before (`registry::checked`).
    match sub.as_slice() {
        b"" | b"info" if a.len() <= 2 => {
            Ok(Reply::Array(top_level().map(|(n, d)| info(n, d)).collect()))
        }
        b"count" => Ok(Reply::Int(top_level().count() as i64)),
        b"list" => command_list(a),
        b"info" => Ok(Reply::Array(
            a[2..]
                .iter()
                .map(|n| lookup(n).map_or(Reply::Null, |(n, d)| info(n, d)))
                .collect(),
        )),
        b"docs" if a.len() == 2 => Ok(Reply::Map(
            top_level()
                .map(|(n, d)| (Reply::bulk(n), docs(n, d)))
                .collect(),
        )),
        // Unknown names are left out, as Redis does.
        b"docs" => Ok(Reply::Map(
            a[2..]
                .iter()
                .filter_map(|n| lookup(n))
                .map(|(n, d)| (Reply::bulk(n), docs(n, d)))
                .collect(),
        )),
        b"help" => Ok(Reply::Array(
            COMMAND_HELP
                .iter()
                .map(|l| Reply::Simple(l.to_string()))
                .collect(),
        )),
        b"getkeys" => super::getkeys::getkeys(a, false),
        _ => super::getkeys::getkeys(a, true),
    }
}

const COMMAND_HELP: &[&str] = &[
    "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "(no subcommand)",
    "    Return details about all Redis commands.",
    "COUNT",
    "    Return the total number of commands in this Redis server.",
    "LIST",
    "    Return a list of all commands in this Redis server.",
    "INFO [<command-name> ...]",
    "    Return details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "DOCS [<command-name> ...]",
    "    Return documentation details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "GETKEYS <full-command>",
    "    Return the keys from a full Redis command.",
    "GETKEYSANDFLAGS <full-command>",
    "    Return the keys and the access flags from a full Redis command.",
    "HELP",
    "    Prints this help.",
];

/// `COMMAND LIST [FILTERBY MODULE name|ACLCAT category|PATTERN pattern]`:
/// every command and subcommand (`container|sub`) that passes the filter.
fn command_list(a: &[Vec<u8>]) -> Outcome {
    use super::info::categories;
    use super::table::top_level;
    let filter = match &a[2..] {
        [] => None,
        [by, kind, arg] if by.eq_ignore_ascii_case(b"filterby") => {
            match kind.to_ascii_lowercase().as_slice() {
                k @ (b"module" | b"aclcat" | b"pattern") => Some((k.to_vec(), arg)),
                _ => return Err(crate::commands::syntax_error()),
            }
        }
        _ => return Err(crate::commands::syntax_error()),
    };
    let passes = |name: &str, d: &serde_json::Value| match &filter {
        None => true,
        Some((kind, arg)) => match kind.as_slice() {
            b"module" => false,
            b"aclcat" => {
                let cat = String::from_utf8_lossy(arg).to_ascii_lowercase();
                categories(d).contains(&cat.as_str())
            }
            // Redis matches without regard to case; the names are lowercase.
            _ => crate::glob::matches(&arg.to_ascii_lowercase(), name.as_bytes()),
        },
    };
    let mut names = Vec::new();
    for (name, d) in top_level() {
        let subs = super::table::subcommands(name);
        for (n, d) in std::iter::once((name, d)).chain(subs) {
            if passes(n, d) {
                names.push(Reply::bulk(n));
            }
        }
    }
    Ok(Reply::Array(names))
}
