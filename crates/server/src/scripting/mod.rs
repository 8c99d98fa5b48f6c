//! Lua scripts: `EVAL`, `EVALSHA`, `EVAL_RO`, `EVALSHA_RO` and `SCRIPT
//! LOAD|EXISTS|FLUSH|KILL|HELP`, as Redis 7.0 runs them (the interpreter
//! and the conversions are in [`vm`]); functions (`FCALL`, `FUNCTION`)
//! run the same way, from libraries ([`functions`], `function_cmd.rs`).
//!
//! A script runs in one engine transaction: its commands see each other's
//! writes, other clients see all of them or none, and a conflict with
//! another client's commit runs the script again from the start (its
//! writes so far discarded), so a script is atomic as in Redis without
//! stopping the server while it runs. A script that fails part way keeps
//! the writes it made before the error, as in Redis (which has no
//! rollback). What a script does beyond the data happens once its
//! transaction commits: its `PUBLISH`es are sent (a `PUBLISH` in a script
//! answers how many subscribers there are now) and the clients blocked on
//! the lists and sorted sets it pushed to are woken. A script may not
//! block, subscribe, start a transaction or run a script (Redis's "not
//! allowed from script"). `SCRIPT KILL` stops a running script and
//! discards everything it wrote, so it is always safe (Redis refuses once
//! a script has written, since it cannot undo the writes).
//!
//! Owns: the script bodies by SHA1 (`SCRIPT LOAD` and every `EVAL` add to
//! them, `SCRIPT FLUSH` empties them) and the kill switches of running
//! scripts. Thread-safety: a mutex each; the interpreters are per thread.

pub mod cache;
mod call;
mod call_gate;
mod convert;
mod failure;
mod function_cmd;
pub mod functions;
mod library;
mod libs;
mod loader;
mod msgpack;
mod protected;
mod random;
mod registration;
mod running;
mod sandbox;
mod shebang;
pub mod vm;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::access::{apply_drops, InTx};
use crate::commands::{Fail, Outcome};
use crate::effects::Effects;
use crate::resp::{Reply, Request};
use crate::session::to_reply;
use crate::shared::Shared;

pub use cache::{sha1_hex, Scripts};
use call::{run_command, split_keys};
pub use running::{Running, RunningFunction};

/// `EVAL`/`EVALSHA` (and their `_RO` forms) outside `MULTI`: the script
/// in a transaction of its own, retried on a conflict, discarded if the
/// script was killed.
pub fn eval(s: &Shared, req: &Request) -> Reply {
    let sp = s.store.spaces();
    loop {
        let mut tx = s.store.db().transaction();
        let mut acc = InTx::new(&mut tx, &sp);
        let mut effects = Effects::default();
        let ran = eval_in(s, &mut acc, req, &mut effects);
        if ran.killed {
            return ran.reply;
        }
        let drops = acc.drops;
        effects.notices(&mut acc.notices);
        match tx.commit_opt(&s.write_options()) {
            Ok(()) => {
                apply_drops(&sp, drops);
                effects.apply(s);
                return ran.reply;
            }
            Err(slsm::Error::Conflict) => continue,
            Err(e) => return Reply::err(format!("ERR {e}")),
        }
    }
}

/// How a script's run ended.
pub struct Ran {
    pub reply: Reply,
    /// `SCRIPT KILL` stopped it: its transaction must not commit.
    pub killed: bool,
}

/// Runs the script of `req` through `acc` (a transaction the caller
/// commits unless the script was killed), recording into `effects` what to
/// do once it has.
pub fn eval_in(s: &Shared, acc: &mut InTx<'_>, req: &Request, effects: &mut Effects) -> Ran {
    let mut killed = false;
    let is_fcall = [&b"fcall"[..], b"fcall_ro"]
        .iter()
        .any(|n| req[0].eq_ignore_ascii_case(n));
    let reply = match is_fcall {
        true => function_cmd::fcall_in(s, acc, req, effects, &mut killed),
        false => run_script(s, acc, req, effects, &mut killed),
    };
    Ran { reply, killed }
}

fn run_script(
    s: &Shared,
    acc: &mut InTx<'_>,
    req: &Request,
    effects: &mut Effects,
    killed_out: &mut bool,
) -> Reply {
    let name = String::from_utf8_lossy(&req[0]).to_ascii_lowercase();
    let (keys, argv) = match split_keys(req, "ERR value is not an integer or out of range") {
        Ok(split) => split,
        Err(e) => return e,
    };
    let (sha, body) = match name.starts_with("evalsha") {
        false => s.scripts.add(&req[1]),
        true => {
            let sha = String::from_utf8_lossy(&req[1]).to_ascii_lowercase();
            match s.scripts.bodies().get(&sha) {
                Some(body) => (sha, Arc::clone(body)),
                None => return Reply::err("NOSCRIPT No matching script. Please use EVAL."),
            }
        }
    };
    let shebang = match shebang::parse(&body) {
        Ok(shebang) => shebang,
        Err(e) => return Reply::Error(e),
    };
    let gate = match shebang::check_flags(s, shebang.map(|b| b.flags), name.ends_with("_ro")) {
        Ok(gate) => gate,
        Err(refused) => return refused,
    };
    let code = &body[shebang.map_or(0, |b| b.code_at)..];
    let killed = Arc::new(AtomicBool::new(false));
    let run = Running::script(Arc::clone(&killed));
    s.scripts.start(run.clone());
    let flushes = s.scripts.flushes.load(Ordering::Acquire);
    let mut command = |r: Request| run_command(s, acc, r, gate, effects);
    let outcome = {
        vm::with_vm(|vm| {
            if vm.flushes_seen() != flushes {
                vm.forget(flushes);
            }
            let f = vm.function(&sha, code).map_err(Reply::Error)?;
            let limits = vm::Limits {
                killed: Arc::clone(&killed),
            };
            vm.run(&f, vm::Call::Script { keys, argv }, limits, &mut command)
                .map_err(|fail| {
                    Reply::Error(format!(
                        "{} script: {sha}, on @user_script:{}.",
                        fail.message, fail.line
                    ))
                })
        })
    };
    s.scripts.finish(&run);
    *killed_out = killed.load(Ordering::Relaxed);
    match outcome {
        Ok(Ok(reply)) => reply,
        Ok(Err(reply)) => reply,
        Err(e) => Reply::Error(e),
    }
}

const HELP: &[&str] = &[
    "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "EXISTS <sha1> [<sha1> ...]",
    "    Return information about the existence of the scripts in the script cache.",
    "FLUSH [ASYNC|SYNC]",
    "    Flush the Lua scripts cache. Very dangerous on replicas.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the scripts cache.",
    "    * SYNC: Synchronously flush the scripts cache.",
    "KILL",
    "    Kill the currently executing Lua script.",
    "LOAD <script>",
    "    Load a script into the scripts cache without executing it.",
    "HELP",
    "    Prints this help.",
];

/// `SCRIPT LOAD|EXISTS|FLUSH|KILL|HELP`.
pub fn script(s: &Shared, a: &[Vec<u8>]) -> Outcome {
    let sub = a[1].to_ascii_lowercase();
    match (sub.as_slice(), a.len()) {
        (b"load", 3) => match shebang::parse(&a[2]) {
            Err(e) => Ok(Reply::Error(e)),
            Ok(_) => Ok(Reply::bulk(s.scripts.add(&a[2]).0)),
        },
        (b"exists", n) if n >= 3 => {
            let bodies = s.scripts.bodies();
            Ok(Reply::Array(
                a[2..]
                    .iter()
                    .map(|sha| {
                        let sha = String::from_utf8_lossy(sha).to_ascii_lowercase();
                        Reply::Int(bodies.contains_key(&sha) as i64)
                    })
                    .collect(),
            ))
        }
        (b"flush", 2 | 3) => {
            if let Some(mode) = a.get(2).map(|m| m.to_ascii_lowercase()) {
                if mode != b"sync" && mode != b"async" {
                    return Err(Fail::Reply(Reply::err(
                        "ERR SCRIPT FLUSH only support SYNC|ASYNC option",
                    )));
                }
            }
            s.scripts.bodies().clear();
            s.scripts.flushes.fetch_add(1, Ordering::AcqRel);
            Ok(Reply::ok())
        }
        (b"kill", 2) => s.scripts.kill(false),
        (b"help", 2) => Ok(Reply::Array(
            HELP.iter().map(|l| Reply::Simple((*l).into())).collect(),
        )),
        _ => Err(crate::registry::subcommand_refusal("script", a)),
    }
}

/// Runs a scripting command outside `MULTI`.
pub fn command(s: &Shared, name: &str, req: &Request) -> Reply {
    match name {
        "script" => to_reply(script(s, req)),
        "function" => to_reply(function_cmd::function(s, req)),
        _ => eval(s, req),
    }
}
