//! The door every request goes through: [`execute`] checks it (shape,
//! authentication, ACL rules, subscribed mode, the cluster's leadership,
//! a busy script, replicas, `MULTI`'s queue) and runs it by its row in
//! the registry ([`crate::registry`]); [`control`] runs a command counted
//! in `INFO commandstats`.
//!
//! * **Owns**: nothing; the session's state is the caller's.
//! * **Called by**: the connection (`conn`, `pipeline`), `EXEC` (a
//!   queued server command), the blocked-client wake-up.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::collections::blocking;
use crate::pubsub::commands as pubsub;
use crate::registry::{self, Command, Run, ALLOW_BUSY, DENYOOM, NO_AUTH, NO_MULTI, WRITE};
use crate::resp::{Reply, Request};
use crate::session::{to_reply, Session, Then, NO_REPLICAS};
use crate::shared::Shared;

/// Runs one request; the reply and what to do next.
pub fn execute(s: &Shared, session: &mut Session, req: Request) -> (Reply, Then) {
    s.commands.fetch_add(1, Ordering::Relaxed);
    let name = String::from_utf8_lossy(&req[0]).to_ascii_lowercase();
    let cmd = match registry::checked(&name, &req) {
        Ok(cmd) => cmd,
        Err(refused) => return refuse(s, session, &name, refused, Exec::Aborted),
    };
    if let Some(refused) = admission(s, session, cmd, &name, &req) {
        return refused;
    }
    if session.queued.is_some()
        && !matches!(
            name.as_str(),
            "exec" | "discard" | "multi" | "watch" | "quit" | "reset"
        )
    {
        return queue(s, session, cmd, &name, req);
    }
    let mut wake = match (name.as_str(), &session.queued) {
        ("exec", Some(queue)) => blocking::wakes_of_all(queue.requests()),
        _ => blocking::wakes(&name, &req),
    };
    if s.waiters.count() > 0 {
        wake.extend(blocking::replaced(&name, &req));
    }
    let caching = is_client_caching(&name, &req);
    let done = control(s, session, &name, req);
    if !wake.is_empty() {
        s.waiters.wake(wake);
    }
    // `CLIENT CACHING` holds for the next command, or the next
    // transaction (Redis's `resetClient`).
    if session.caching && !caching && session.queued.is_none() {
        session.caching = false;
    }
    done
}

fn is_client_caching(name: &str, req: &Request) -> bool {
    name == "client"
        && req
            .get(1)
            .is_some_and(|sub| sub.eq_ignore_ascii_case(b"caching"))
}

/// The refusal of a well-formed request, if it may not run now.
fn admission(
    s: &Shared,
    session: &mut Session,
    cmd: &Command,
    name: &str,
    req: &Request,
) -> Option<(Reply, Then)> {
    crate::acl::gate::refresh(s, session);
    if !session.authenticated && !cmd.flags.has(NO_AUTH) {
        let refused = Reply::err("NOAUTH Authentication required.");
        return Some(refuse(s, session, name, refused, Exec::Answered));
    }
    if let Some(refused) = crate::acl::gate::refusal(s, session, req) {
        return Some(refuse(s, session, name, refused, Exec::Aborted));
    }
    if let Some(refused) = pubsub::refused_while_subscribed(session, name) {
        return Some((refused, Then::Continue));
    }
    if let Some(c) = &s.cluster {
        if let Some(refused) = crate::cluster::run::refusal(c, session, name, req) {
            // A redirected EXEC keeps its transaction for the client to
            // follow the redirection with.
            return Some(refuse(s, session, name, refused, Exec::Answered));
        }
    }
    if let Some(busy) = s.scripts.busy_error() {
        if !cmd.flags_of(req).has(ALLOW_BUSY) {
            return Some(refuse(s, session, name, Reply::err(busy), Exec::Aborted));
        }
    }
    if s.maxmemory.is_on() && may_grow(session, cmd, name, req) && s.maxmemory.over(&s.store.db()) {
        let refused = Reply::err(crate::maxmemory::OOM);
        return Some(refuse(s, session, name, refused, Exec::Aborted));
    }
    if s.replicas_short() && cmd.flags.has(WRITE) {
        let refused = Reply::err(NO_REPLICAS);
        return Some(refuse(s, session, name, refused, Exec::Aborted));
    }
    None
}

/// True for what `maxmemory`'s stop refuses (Redis's `denyoom`): such a
/// command, or an `EXEC` holding one. Scripts check their flags as they
/// start (`scripting::shebang`), and their calls one by one.
fn may_grow(session: &Session, cmd: &Command, name: &str, req: &Request) -> bool {
    let grows = |r: &Request| {
        let n = String::from_utf8_lossy(&r[0]).to_ascii_lowercase();
        registry::find(&n).is_some_and(|c| c.flags_of(r).has(DENYOOM))
    };
    match (name, &session.queued) {
        ("exec", Some(queue)) => queue.requests().iter().any(grows),
        _ => cmd.flags_of(req).has(DENYOOM),
    }
}

/// Queues a command sent inside `MULTI`.
fn queue(
    s: &Shared,
    session: &mut Session,
    cmd: &Command,
    name: &str,
    req: Request,
) -> (Reply, Then) {
    if cmd.flags.has(NO_MULTI) {
        let refused = Reply::err("ERR Command not allowed inside a transaction");
        return refuse(s, session, name, refused, Exec::Answered);
    }
    if let Some(q) = session.queued.as_mut() {
        q.push(req);
    }
    (Reply::Simple("QUEUED".into()), Then::Continue)
}

/// What a refused `EXEC` does.
#[derive(PartialEq)]
enum Exec {
    /// As Redis's `rejectCommand`: the transaction is discarded (its
    /// watches too), and the reply says why (`EXECABORT ...`), even
    /// outside one.
    Aborted,
    /// The error is the reply, and the transaction stays.
    Answered,
}

/// A command refused before it runs: a transaction it was to join fails
/// at `EXEC`, and the refusal counts in `INFO commandstats`.
fn refuse(
    s: &Shared,
    session: &mut Session,
    name: &str,
    refused: Reply,
    exec: Exec,
) -> (Reply, Then) {
    s.cmdstats.rejected(name, &refused);
    if name != "exec" {
        if session.queued.is_some() {
            session.queue_failed = true;
        }
        return (refused, Then::Continue);
    }
    if exec == Exec::Answered {
        return (refused, Then::Continue);
    }
    session.queued = None;
    session.watch = None;
    let why = match &refused {
        Reply::Error(e) => e.strip_prefix("ERR ").unwrap_or(e).to_string(),
        _ => String::new(),
    };
    let abort = format!("EXECABORT Transaction discarded because of: {why}");
    (Reply::err(abort), Then::Continue)
}

/// Runs one command, counted in `INFO commandstats` (a blocked command
/// when it is answered: `conn::wait_blocked`).
pub(crate) fn control(
    s: &Shared,
    session: &mut Session,
    name: &str,
    req: Request,
) -> (Reply, Then) {
    let started = Instant::now();
    crate::cmdstats::new_command();
    // A script's calls are checked against its caller's rules.
    let caller = crate::acl::gate::caller_of(session);
    let tracks = session.tracking.is_some();
    let read = tracks.then(|| req.clone());
    let (reply, then) = crate::acl::caller::with(caller, || {
        crate::tracking::writing_as(session.id, || run_command(s, session, name, req, started))
    });
    match read {
        Some(req) => crate::tracking::reads::after_command(s, session, name, &req),
        None => {
            let _ = crate::tracking::take_script_read();
        }
    }
    if then != Then::Block {
        s.cmdstats.called(name, 1, started.elapsed(), &reply);
    }
    (reply, then)
}

fn run_command(
    s: &Shared,
    session: &mut Session,
    name: &str,
    req: Request,
    started: Instant,
) -> (Reply, Then) {
    if !session.in_exec && name != "exec" {
        let hidden = || registry::hidden_from_monitors(name, &req);
        s.monitors
            .feed(name, &req, Some(&session.client.addr), hidden);
    }
    if let Some(c) = &s.cluster {
        if let Some(reply) = crate::cluster::run::clustered(s, c, session, name, &req, control) {
            record_if_slow(s, session, name, &req, started.elapsed());
            return (reply, Then::Continue);
        }
    }
    let Some(cmd) = registry::find(name) else {
        return (
            registry::refused(name, &req).unwrap_or(Reply::Null),
            Then::Continue,
        );
    };
    let (reply, then) = match cmd.run {
        Run::Data { .. } if blocking::may_block(name, &req) => {
            return crate::blocked::start(s, session, name, req)
        }
        Run::Data { mode, handler } => (
            to_reply(crate::data_command::run_with(s, name, mode, handler, &req)),
            Then::Continue,
        ),
        Run::Script { handler } | Run::Publish { handler } | Run::Control { handler, .. } => {
            handler(s, session, name, &req)
        }
    };
    if then == Then::Continue {
        record_if_slow(s, session, name, &req, started.elapsed());
    }
    (reply, then)
}

/// True for what a `WRITE` pause holds: Redis's `write` and
/// `may-replicate` commands (a container's by its subcommand's flags),
/// and an `EXEC` of a transaction holding one.
pub(crate) fn may_replicate(session: &Session, req: &Request) -> bool {
    let name = String::from_utf8_lossy(&req[0]).to_ascii_lowercase();
    match name.as_str() {
        "exec" => session
            .queued
            .as_ref()
            .is_some_and(|q| q.requests().iter().any(writes)),
        _ => writes(req),
    }
}

fn writes(req: &Request) -> bool {
    let name = String::from_utf8_lossy(&req[0]).to_ascii_lowercase();
    crate::registry::find(&name).is_some_and(|c| c.may_replicate(req))
}

/// Logs a command that took `took` if it was slow (`crate::slowlog`).
pub(crate) fn record_if_slow(
    s: &crate::shared::Shared,
    session: &crate::session::Session,
    name: &str,
    args: &[Vec<u8>],
    took: Duration,
) {
    if s.slowlog.is_slow(took) {
        let client_name = String::from_utf8_lossy(&session.client.names().name).into_owned();
        s.slowlog
            .record(name, args, took, &session.client.addr, &client_name);
    }
}
