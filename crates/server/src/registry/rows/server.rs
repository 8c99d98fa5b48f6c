//! The server's commands (Redis's `server` group, with `WAIT` and `MOVE`
//! of `generic`): introspection, configuration, saving, flushing. They
//! run on any node but `FLUSHALL`, `FLUSHDB` (writes) and `ACL` (on the
//! leader, whose users the cluster's entries are checked against).

use super::common::{answer, Class, Row};
use crate::access::Access;
use crate::admin;
use crate::collections::object;
use crate::registry::{Mode, NO_MULTI};
use crate::resp::{Reply, Request};
use crate::session::{to_reply, Session, Then};
use crate::shared::Shared;

pub const ROWS: &[Row] = &[
    Row::control("time", Class::Anywhere, |_, _, _, _| {
        answer(crate::version::time_reply())
    }),
    Row::control("command", Class::Anywhere, |_, _, _, r| {
        answer(to_reply(crate::command_docs::command::command(r)))
    }),
    Row::control("config", Class::Anywhere, |s, _, _, r| {
        answer(to_reply(crate::config::config(s, r)))
    }),
    Row::control("info", Class::Anywhere, |s, _, _, r| {
        answer(to_reply(crate::info::info(s, r)))
    }),
    Row::control("dbsize", Class::Read, dbsize).in_tx(count_keys),
    // Refused in MULTI, where Redis queues them: emptying the database
    // is not a write the engine transaction `EXEC` commits can hold, so
    // they are refused (with Redis's error) rather than run outside the
    // transaction's atomicity.
    Row::control("flushdb", Class::Write, flush).adding(NO_MULTI),
    Row::control("flushall", Class::Write, flush).adding(NO_MULTI),
    Row::control("shutdown", Class::Anywhere, shutdown),
    Row::control("save", Class::Anywhere, |s, _, _, _| {
        answer(to_reply(admin::save(s)))
    }),
    Row::control("bgsave", Class::Anywhere, |s, _, _, r| {
        answer(to_reply(admin::bgsave(s, r)))
    }),
    Row::control("lastsave", Class::Anywhere, |s, _, _, _| {
        let last = s.saves.last.load(std::sync::atomic::Ordering::Relaxed);
        answer(Reply::Int(last as i64))
    }),
    Row::control("monitor", Class::Anywhere, |s, session, _, _| {
        answer(session.monitor(s))
    }),
    Row::control("acl", Class::Leader, |s, session, _, r| {
        answer(to_reply(crate::acl::command::command(s, session, r)))
    }),
    Row::control("latency", Class::Anywhere, |_, _, _, r| {
        answer(to_reply(crate::latency::command(r)))
    }),
    Row::control("slowlog", Class::Anywhere, |s, _, _, r| {
        answer(to_reply(s.slowlog.command(r)))
    }),
    Row::control("memory", Class::Anywhere, memory).in_tx(object::run),
    Row::control("wait", Class::Anywhere, |_, session, _, r| {
        crate::blocked::start_wait(session, r.clone())
    })
    .in_tx(|_, a, _, _| crate::blocked::wait_args(a).map(|_| Reply::Int(0))),
    Row::control("role", Class::Anywhere, compat),
    Row::control("replicaof", Class::Anywhere, compat),
    Row::control("slaveof", Class::Anywhere, compat),
    Row::control("module", Class::Anywhere, compat),
    Row::control("debug", Class::Anywhere, compat),
    Row::control("swapdb", Class::Anywhere, compat),
    Row::control("move", Class::Anywhere, compat),
];

/// The commands of features slsm does not have (replication, modules,
/// `DEBUG`, several databases), answered as `compat.rs` says.
fn compat(_: &Shared, _: &mut Session, name: &str, req: &Request) -> (Reply, Then) {
    answer(to_reply(crate::compat::run(name, req)))
}

fn dbsize(s: &Shared, _: &mut Session, _: &str, _: &Request) -> (Reply, Then) {
    answer(to_reply(
        crate::info::dbsize(s)
            .map(Reply::Int)
            .map_err(crate::commands::Fail::Engine),
    ))
}

/// `DBSIZE` inside a transaction: its live keys as the transaction sees
/// them (its writes included), counted a chunk at a time.
fn count_keys(
    _: &str,
    _: &[Vec<u8>],
    acc: &mut dyn Access,
    _: &crate::cursors::Cursors,
) -> crate::commands::Outcome {
    const CHUNK: usize = 4096;
    let (mut count, mut after) = (0i64, None::<Vec<u8>>);
    loop {
        let keys = acc.keys_after(after.as_deref(), CHUNK)?;
        count += keys.len() as i64;
        if keys.len() < CHUNK {
            return Ok(Reply::Int(count));
        }
        after = keys.into_iter().last();
    }
}

fn flush(s: &Shared, _: &mut Session, _: &str, req: &Request) -> (Reply, Then) {
    answer(match req.get(1).map(|m| m.to_ascii_lowercase()) {
        // ASYNC and SYNC both empty the database before the reply.
        None => admin::flush(s),
        Some(m) if req.len() == 2 && (m == b"async" || m == b"sync") => admin::flush(s),
        Some(_) => Reply::err("ERR syntax error"),
    })
}

fn shutdown(_: &Shared, _: &mut Session, _: &str, req: &Request) -> (Reply, Then) {
    match admin::shutdown_modifiers(&req[1..]) {
        Some(false) => (Reply::ok(), Then::Shutdown),
        Some(true) => answer(Reply::err("ERR No shutdown in progress.")),
        None => answer(Reply::err("ERR syntax error")),
    }
}

/// `MEMORY USAGE` reads a key (in a transaction of its own, as before a
/// write); the other subcommands report on the server.
fn memory(s: &Shared, _: &mut Session, _: &str, req: &Request) -> (Reply, Then) {
    if req[1].eq_ignore_ascii_case(b"usage") {
        let mode = Mode::Transaction;
        return answer(to_reply(crate::data_command::run_with(
            s,
            "memory",
            mode,
            object::run,
            req,
        )));
    }
    answer(to_reply(crate::info::memory(s, req)))
}
