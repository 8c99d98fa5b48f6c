//! Whether a request has a shape the server takes, checked before it runs
//! or is queued by `MULTI` (Redis's `processCommand`): a command it
//! serves, Redis's number of arguments, and for a container its
//! subcommand and that subcommand's arity. The errors are Redis's.
//!
//! * **Owns**: nothing; reads the registry.

use super::table::find;
use super::types::Command;
use crate::error::{arity_error, fail, Fail};
use crate::resp::{Reply, Request};

/// The error for request `req` (command `name`, lowercase) if its shape is
/// refused.
pub fn refused(name: &str, req: &Request) -> Option<Reply> {
    checked(name, req).err()
}

/// The served command `name` (lowercase) if `req` has its shape, else
/// the error.
pub fn checked(name: &str, req: &Request) -> Result<&'static Command, Reply> {
    let Some(cmd) = find(name) else {
        return Err(unknown(req));
    };
    if !fits(cmd.arity, req.len()) {
        return Err(arity_error(name));
    }
    if req.len() >= 2 && !cmd.subcommands.is_empty() {
        subcommand_shape(cmd, req).map_err(|fail| crate::session::to_reply(Err(fail)))?;
    }
    Ok(cmd)
}

/// True if `n` words fit `arity` (negative: at least `-arity`).
pub fn fits(arity: i32, n: usize) -> bool {
    let n = n as i64;
    let arity = i64::from(arity);
    (arity > 0 && n == arity) || (arity <= 0 && n >= -arity)
}

/// Redis 7's check of a container command's subcommand against its table,
/// with Redis's errors.
pub fn subcommand_shape(cmd: &Command, a: &[Vec<u8>]) -> Result<(), Fail> {
    let container = cmd.name.to_ascii_uppercase();
    let Some(sub) = cmd.subcommand(&a[1]) else {
        return Err(fail(&format!(
            "ERR unknown subcommand '{}'. Try {container} HELP.",
            String::from_utf8_lossy(&a[1])
        )));
    };
    if !fits(sub.arity, a.len()) {
        return Err(fail(&format!(
            "ERR wrong number of arguments for '{}|{}' command",
            cmd.name, sub.name
        )));
    }
    Ok(())
}

/// The check of [`subcommand_shape`] for the served container `name`, for
/// the handlers that a script's `redis.call` reaches without it.
pub fn check_subcommand(name: &str, a: &[Vec<u8>]) -> Result<(), Fail> {
    match find(name) {
        Some(cmd) if a.len() >= 2 && !cmd.subcommands.is_empty() => subcommand_shape(cmd, a),
        _ => Ok(()),
    }
}

/// Redis 7's error for a container's subcommand its handler cannot take
/// (`CLIENT`, `CONFIG`): the wrong number of arguments for one Redis has,
/// else an unknown subcommand.
pub fn subcommand_refusal(container: &str, a: &[Vec<u8>]) -> Fail {
    let sub = String::from_utf8_lossy(a.get(1).map_or(&b""[..], |v| v));
    let lower = sub.to_ascii_lowercase();
    match find(container).and_then(|c| c.subcommand(lower.as_bytes())) {
        Some(_) => fail(&format!(
            "ERR wrong number of arguments for '{container}|{lower}' command"
        )),
        None => fail(&format!(
            "ERR unknown subcommand '{sub}'. Try {} HELP.",
            container.to_ascii_uppercase()
        )),
    }
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
