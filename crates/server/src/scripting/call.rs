//! A script's `redis.call`: a command checked as Redis checks one from a
//! script (known, its arity, allowed in scripts, not a write in a
//! read-only script, the caller's ACL rules) and run in the script's
//! transaction; and the split of `EVAL`'s and `FCALL`'s keys from their
//! arguments.

use crate::access::InTx;
use crate::collections::blocking;
use crate::commands;
use crate::effects::Effects;
use crate::resp::{Reply, Request};
use crate::session::to_reply;
use crate::shared::Shared;

type Arg = Vec<u8>;

/// `numkeys key... arg...` of an `EVAL` or `FCALL`: the keys and the
/// arguments (`not_a_number`: the error for a `numkeys` that is not one).
pub(super) fn split_keys<'a>(
    req: &'a Request,
    not_a_number: &str,
) -> Result<(&'a [Arg], &'a [Arg]), Reply> {
    let n = commands::int_arg(&req[2]).map_err(|_| Reply::err(not_a_number))?;
    if n < 0 {
        return Err(Reply::err("ERR Number of keys can't be negative"));
    }
    let rest = &req[3..];
    if n as u64 > rest.len() as u64 {
        return Err(Reply::err(
            "ERR Number of keys can't be greater than number of args",
        ));
    }
    Ok(rest.split_at(n as usize))
}

/// One `redis.call` of a script, checked as Redis checks it: known,
/// right number of arguments, allowed in scripts, not a write in a
/// read-only script.
pub(super) fn run_command(
    s: &Shared,
    acc: &mut InTx<'_>,
    req: Request,
    gate: super::shebang::Gate,
    effects: &mut Effects,
) -> Reply {
    let name = String::from_utf8_lossy(&req[0]).to_ascii_lowercase();
    let Some(cmd) = crate::registry::find(&name) else {
        return Reply::err("ERR Unknown Redis command called from script");
    };
    if !crate::registry::fits(cmd.arity, req.len()) {
        return Reply::err("ERR Wrong number of args calling Redis command from script");
    }
    let data = cmd.data().is_some() && !blocking::is_blocking(&name);
    let server = matches!(
        name.as_str(),
        "ping" | "echo" | "time" | "publish" | "spublish" | "select"
    );
    if !data && !server {
        return Reply::err("ERR This Redis command is not allowed from script");
    }
    if blocks_in_script(&name, &req) {
        return Reply::err(format!(
            "ERR {name} command is not allowed with BLOCK option from scripts"
        ));
    }
    if let Some(refused) = crate::acl::caller::script_refusal(&s.acl, &req) {
        return Reply::Error(refused);
    }
    if let Some(refused) = refusal(s, &name, cmd, &req, gate, effects) {
        // Counted as the call's, not again as the script's (`cmdstats`).
        let reply = Reply::err(refused);
        s.cmdstats.rejected(&name, &reply);
        crate::cmdstats::script_call_failed(refused);
        return reply;
    }
    s.monitors.feed(&name, &req, None, || {
        crate::registry::hidden_from_monitors(&name, &req)
    });
    match name.as_str() {
        "ping" => match req.get(1) {
            Some(m) => Reply::Bulk(m.clone()),
            None => Reply::Simple("PONG".into()),
        },
        "echo" => Reply::Bulk(req[1].clone()),
        "time" => crate::version::time_reply(),
        "select" => counted(s, &name, || crate::compat::select(&req[1])),
        "publish" | "spublish" => effects.publish(s, name == "spublish", &req),
        _ => {
            crate::tracking::reads::script_called(&name);
            let was = std::mem::replace(&mut acc.in_script, true);
            let reply = counted(s, &name, || {
                to_reply(crate::registry::run_data(&name, &req, acc, &s.cursors))
            });
            acc.in_script = was;
            effects.wrote |= writes(&name);
            effects.ran(req);
            reply
        }
    }
}

/// Why the script's state refuses call `req` of `cmd`, if it does: a write
/// from a read-only script, short of replicas, or (before the script's
/// first write: a script is not stopped half done, Redis's
/// `scriptVerifyOOM`) one that may grow the data under `maxmemory`'s stop.
fn refusal(
    s: &Shared,
    name: &str,
    cmd: &crate::registry::Command,
    req: &Request,
    gate: super::shebang::Gate,
    effects: &Effects,
) -> Option<&'static str> {
    if gate.read_only && writes(name) {
        return Some("ERR Write commands are not allowed from read-only scripts.");
    }
    // A script without a shebang finds out at its first write.
    if s.replicas_short() && writes(name) {
        return Some(crate::session::NO_REPLICAS);
    }
    let grows = cmd.flags_of(req).has(crate::registry::DENYOOM);
    if !gate.allow_oom && !effects.wrote && grows && s.maxmemory.over(&s.store.db()) {
        return Some(crate::maxmemory::OOM);
    }
    None
}

/// Runs a server command of a script, counted as a call.
fn counted(s: &Shared, name: &str, run: impl FnOnce() -> Reply) -> Reply {
    let started = std::time::Instant::now();
    let reply = run();
    s.cmdstats.called(name, 1, started.elapsed(), &reply);
    if let Reply::Error(e) = &reply {
        crate::cmdstats::script_call_failed(e);
    }
    reply
}

/// `XREAD` and `XREADGROUP` with a `BLOCK` option (before `STREAMS`),
/// which Redis refuses in scripts rather than run without blocking.
fn blocks_in_script(name: &str, req: &Request) -> bool {
    if !matches!(name, "xread" | "xreadgroup") {
        return false;
    }
    let mut i = 1;
    while let Some(arg) = req.get(i) {
        let arg = arg.to_ascii_lowercase();
        match arg.as_slice() {
            b"streams" => return false,
            b"block" => return i + 1 < req.len(),
            b"group" => i += 2,
            b"count" => i += 1,
            _ => {}
        }
        i += 1;
    }
    false
}

/// True for commands Redis flags as writes.
fn writes(name: &str) -> bool {
    crate::registry::is_write(name)
}
