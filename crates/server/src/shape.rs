//! Whether a request has a shape the server takes, checked before it
//! runs or is queued by `MULTI`: a command it knows, Redis's number of
//! arguments, and for a container with a table of subcommands
//! (`XGROUP`, `XINFO`) a subcommand Redis's table has, with its arity. The errors are Redis's.

use crate::commands;
use crate::resp::{Reply, Request};

/// Redis's arity of `name` (negative: at least), if the server knows it.
pub fn arity_of(name: &str) -> Option<i32> {
    commands::arity(name)
        .or_else(|| crate::pubsub::commands::arity(name))
        .or_else(|| crate::scripting::arity(name))
        .or_else(|| crate::compat::arity(name))
        .or(match name {
            "ping" | "hello" | "command" | "info" | "shutdown" => Some(-1),
            "client" | "config" | "slowlog" | "latency" => Some(-2),
            "echo" | "select" => Some(2),
            "wait" => Some(3),
            "auth" | "acl" => Some(-2),
            "quit" | "flushdb" | "flushall" => Some(-1),
            "time" | "save" | "lastsave" | "reset" | "monitor" => Some(1),
            "bgsave" => Some(-1),
            "dbsize" | "multi" | "exec" | "discard" | "unwatch" => Some(1),
            "watch" => Some(-2),
            _ => None,
        })
}

/// The error for request `req` (command `name`, lowercase) if its shape is
/// refused.
pub fn refused(name: &str, req: &Request) -> Option<Reply> {
    let Some(arity) = arity_of(name) else {
        return Some(unknown(req));
    };
    let n = req.len() as i32;
    if (arity > 0 && n != arity) || (arity < 0 && n < -arity) {
        return Some(arity_error(name));
    }
    match name {
        "xgroup" => crate::collections::streams::xgroup::xgroup_arity(req)
            .err()
            .map(|fail| crate::session::to_reply(Err(fail))),
        "xinfo" => crate::collections::streams::info::xinfo_arity(req)
            .err()
            .map(|fail| crate::session::to_reply(Err(fail))),
        "acl" => crate::acl::shape(req)
            .err()
            .map(|fail| crate::session::to_reply(Err(fail))),
        "module" | "cluster" => crate::compat::shape(name, req)
            .err()
            .map(|fail| crate::session::to_reply(Err(fail))),
        "latency" => crate::latency::shape(req)
            .err()
            .map(|fail| crate::session::to_reply(Err(fail))),
        "slowlog" => crate::slowlog::shape(req)
            .err()
            .map(|fail| crate::session::to_reply(Err(fail))),
        "object" | "memory" => crate::collections::object::shape(name, req)
            .err()
            .map(|fail| crate::session::to_reply(Err(fail))),
        _ => None,
    }
}

/// Redis 7's check of a container command's subcommand against its table
/// (lowercase names, arities: negative means "at least"), with Redis's
/// errors.
pub fn subcommand_shape(
    container: &str,
    a: &[Vec<u8>],
    table: &[(&str, i64)],
) -> Result<(), crate::commands::Fail> {
    let sub = String::from_utf8_lossy(&a[1]).to_ascii_lowercase();
    let Some((_, arity)) = table.iter().find(|(name, _)| *name == sub) else {
        return Err(crate::commands::fail(&format!(
            "ERR unknown subcommand '{}'. Try {container} HELP.",
            String::from_utf8_lossy(&a[1])
        )));
    };
    let n = a.len() as i64;
    if (*arity > 0 && n != *arity) || (*arity < 0 && n < -arity) {
        return Err(crate::commands::fail(&format!(
            "ERR wrong number of arguments for '{}|{sub}' command",
            container.to_ascii_lowercase()
        )));
    }
    Ok(())
}

/// Redis's error for a subcommand's arguments it cannot take.
pub fn subcommand_error(container: &str, a: &[Vec<u8>]) -> crate::commands::Fail {
    crate::commands::fail(&format!(
        "ERR unknown subcommand or wrong number of arguments for '{}'. Try {container} HELP.",
        String::from_utf8_lossy(&a[1])
    ))
}

pub fn arity_error(name: &str) -> Reply {
    Reply::err(format!(
        "ERR wrong number of arguments for '{name}' command"
    ))
}

fn unknown(req: &Request) -> Reply {
    let args: String = req[1..]
        .iter()
        .take(20)
        .map(|a| format!("'{}' ", String::from_utf8_lossy(a)))
        .collect();
    Reply::err(format!(
        "ERR unknown command '{}', with args beginning with: {args}",
        String::from_utf8_lossy(&req[0])
    ))
}
