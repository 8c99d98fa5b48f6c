//! Running commands in a cluster: proposing writes to the log and waiting
//! for the state machine's replies, the read-index round before reads,
//! `WATCH` and `EXEC`, and the routing check every request passes
//! (`dispatch::execute` calls [`refusal`] first).
//!
//! Connection code runs on tokio's worker threads inside
//! `block_in_place` (`conn::on_engine` in cluster mode), so waiting for
//! the cluster here blocks one connection, not the runtime. The common
//! case, a leader's run of pipelined writes, is taken out before that:
//! the connection's task awaits it ([`propose_group`]), and no thread
//! is handed over or parked for it.
//!
//! * **Owns**: nothing; a session's `readonly`, `fenced` and `watched`.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use slsm_raft::{Command, Node, OpResult, Response, WriteError};

use super::proposal::{decode_replies, digest, Body, Proposal};
use super::route::{class, redirect, Class};
use super::Cluster;
use crate::registry::Run;
use crate::resp::{Reply, Request};
use crate::session::Session;
use crate::shared::Shared;
use crate::store::{wall_ms, Value};

/// Runs `fut` to its end from connection code (see the module docs), or
/// gives up after `timeout`.
fn wait<T>(timeout: Duration, fut: impl std::future::Future<Output = T>) -> Option<T> {
    let handle = tokio::runtime::Handle::current();
    handle.block_on(async { tokio::time::timeout(timeout, fut).await.ok() })
}

fn refused(req: &Request, e: WriteError) -> Reply {
    match e {
        WriteError::NotLeader(Some((_, m))) => redirect(req, Some(&m.client)),
        WriteError::NotLeader(None) => redirect(req, None),
        WriteError::Failed(why) => Reply::err(format!("CLUSTERDOWN {why}")),
    }
}

fn timed_out() -> Reply {
    Reply::err("TRYAGAIN the cluster did not confirm in time; a write may still apply")
}

/// Proposes `body` and returns the state machine's replies (or the one
/// error every command of it gets).
pub fn propose(c: &Cluster, body: Body) -> Result<Vec<Reply>, Reply> {
    let (node, cmd, first) = entry(c, body)?;
    answer(&first, wait(c.opts.timeout, node.write(cmd)))
}

/// [`propose`] for connection code that may await: the connection's task
/// waits, not a thread.
pub async fn propose_async(c: &Cluster, body: Body) -> Result<Vec<Reply>, Reply> {
    let (node, cmd, first) = entry(c, body)?;
    let outcome = tokio::time::timeout(c.opts.timeout, node.write(cmd)).await;
    answer(&first, outcome.ok())
}

/// The node to propose through, the log entry's command, and the request
/// a refusal redirects by.
fn entry(c: &Cluster, body: Body) -> Result<(&Arc<Node>, Command, Request), Reply> {
    let first = body.first_request();
    // Proposed for a restricted user (`dispatch::control` set the caller):
    // the entry carries its rules.
    let body = match crate::acl::caller::get() {
        Some(caller) => Body::AsUser {
            user: (*caller.user).clone(),
            body: Box::new(body),
        },
        None => body,
    };
    let Some(node) = c.node() else {
        return Err(redirect(&first, None));
    };
    let bytes = Proposal {
        origin: c.me(),
        body,
    }
    .encode();
    Ok((node, Command::app(wall_ms(), bytes), first))
}

/// The state machine's replies from the outcome of a write (`None`: it
/// timed out).
fn answer(
    first: &Request,
    outcome: Option<Result<Response, WriteError>>,
) -> Result<Vec<Reply>, Reply> {
    match outcome {
        None => Err(timed_out()),
        Some(Err(e)) => Err(refused(first, e)),
        Some(Ok(response)) => match response.results.as_slice() {
            [OpResult::App(bytes)] => decode_replies(bytes)
                .ok_or_else(|| Reply::err("ERR the state machine's reply is unreadable")),
            _ => Err(Reply::err("ERR the state machine gave no reply")),
        },
    }
}

/// Proposes the single write `req`: its reply.
pub fn propose_one(s: &Shared, c: &Cluster, req: Request) -> Reply {
    let req = match resolve_evalsha(s, req) {
        Ok(req) => req,
        Err(reply) => return reply,
    };
    match propose(c, Body::Commands(vec![req])) {
        Ok(mut replies) if replies.len() == 1 => replies.pop().unwrap_or(Reply::Null),
        Ok(_) => Reply::err("ERR the state machine gave no reply"),
        Err(reply) => reply,
    }
}

/// True for a request the pipeline may propose with its neighbours in one
/// entry (`Body::Commands`): a well-formed data command that writes and
/// cannot block.
pub fn groupable(req: &Request) -> bool {
    let name = String::from_utf8_lossy(&req[0]).to_ascii_lowercase();
    crate::registry::data_handler(&name).is_some()
        && crate::registry::refused(&name, req).is_none()
        && class(&name, req) == Class::Write
        && !crate::collections::blocking::may_block(&name, req)
}

/// Takes the run of [`groupable`] writes at the front of `requests` (at
/// most `max`), counted as commands run, and proposes it as one entry: a
/// reply for each. The connection's task awaits the cluster (no thread
/// is blocked), which is most of what a pipelined write costs a leader.
pub async fn propose_group<I: Iterator<Item = Request>>(
    shared: &Shared,
    c: &Cluster,
    requests: &mut std::iter::Peekable<I>,
    max: usize,
) -> Vec<Reply> {
    let mut group = Vec::new();
    while group.len() < max && requests.peek().is_some_and(groupable) {
        group.extend(requests.next());
    }
    let n = group.len();
    shared.commands.fetch_add(n as u64, Ordering::Relaxed);
    match propose_async(c, Body::Commands(group)).await {
        Ok(replies) if replies.len() == n => replies,
        Ok(_) => vec![Reply::err("ERR the state machine gave no reply"); n],
        Err(reply) => vec![reply; n],
    }
}

/// `EVALSHA` travels as the `EVAL` of its body, which every node has then
/// (a follower's script cache need not hold what the leader's does).
fn resolve_evalsha(s: &Shared, mut req: Request) -> Result<Request, Reply> {
    if !req[0].eq_ignore_ascii_case(b"evalsha") || req.len() < 2 {
        return Ok(req);
    }
    let sha = String::from_utf8_lossy(&req[1]).to_ascii_lowercase();
    match s.scripts.body_of(&sha) {
        Some(body) => {
            req[0] = b"EVAL".to_vec();
            req[1] = body.to_vec();
            Ok(req)
        }
        None => Err(Reply::err("NOSCRIPT No matching script. Please use EVAL.")),
    }
}

/// The read-index round: returns once a linearizable read may run here.
pub fn barrier(c: &Cluster, req: &Request) -> Result<(), Reply> {
    if c.node().is_none() {
        return Err(redirect(req, None));
    }
    match wait(c.opts.timeout, c.fence.pass()) {
        None => Err(timed_out()),
        Some(Err(e)) => Err(refused(req, e)),
        Some(Ok(())) => Ok(()),
    }
}

/// What a request must get instead of running here, if anything: the
/// redirect of a node that is not the leader, or the error of a read-index
/// round that failed. A read on the leader runs after one round per batch
/// of the connection's requests (`Session::fenced`).
pub fn refusal(c: &Cluster, session: &mut Session, name: &str, req: &Request) -> Option<Reply> {
    let class = class(name, req);
    if class == Class::Anywhere {
        return None;
    }
    if !c.is_leader() {
        if class == Class::Read && session.readonly {
            return None;
        }
        return Some(redirect(req, c.leader().map(|(_, m)| m.client).as_deref()));
    }
    if class == Class::Read && session.queued.is_none() && !session.fenced {
        if let Err(reply) = barrier(c, req) {
            return Some(reply);
        }
        session.fenced = true;
    }
    None
}

/// `WATCH` in a cluster: each key's live value as a linearizable read
/// finds it, kept as a digest for `EXEC`'s entry.
pub fn watch(s: &Shared, c: &Cluster, session: &mut Session, keys: &[Vec<u8>]) -> Reply {
    if let Err(reply) = barrier(c, &[b"watch".to_vec()].to_vec()) {
        return reply;
    }
    let ks = s.store.keyspace();
    let now = crate::store::now_ms();
    for key in keys {
        if session.watched.iter().any(|(k, _)| k == key) {
            continue;
        }
        let stored = match ks.get(key) {
            Ok(v) => v.filter(|v| Value::decode(v, now).is_some()),
            Err(e) => return Reply::err(format!("ERR {e}")),
        };
        session
            .watched
            .push((key.clone(), digest(stored.as_deref())));
    }
    Reply::ok()
}

/// How a server command queued in a cluster's `EXEC` runs here, in its
/// place (`dispatch::control`, handed in by the door that called).
pub type Control = fn(&Shared, &mut Session, &str, Request) -> (Reply, crate::session::Then);

/// `EXEC` in a cluster: the queue as one entry (see `Body::Exec`).
pub fn exec(s: &Shared, c: &Cluster, session: &mut Session, control: Control) -> Reply {
    let Some(queue) = session.queued.take() else {
        return Reply::err("ERR EXEC without MULTI");
    };
    let watched = std::mem::take(&mut session.watched);
    session.watch = None;
    if session.queue_failed {
        return Reply::err("EXECABORT Transaction discarded because of previous errors.");
    }
    let mut queued = Vec::with_capacity(queue.len());
    let mut local = Vec::with_capacity(queue.len());
    // The rules may have changed since the commands were queued: a command
    // now refused is left out of the entry and answered in its place.
    let refused: Vec<Option<Reply>> = queue
        .requests()
        .iter()
        .map(|req| crate::acl::gate::exec_refusal(s, session, req))
        .collect();
    for (req, _) in queue
        .requests()
        .iter()
        .zip(&refused)
        .filter(|(_, r)| r.is_none())
    {
        let name = String::from_utf8_lossy(&req[0]).to_ascii_lowercase();
        // What the log entry applies; the rest runs here, in its place.
        let data = crate::registry::find(&name).is_some_and(|c| {
            matches!(
                c.run,
                Run::Data { .. } | Run::Script { .. } | Run::Publish { .. }
            )
        });
        local.push(match data {
            true => None,
            false => Some(control(s, session, &name, req.clone()).0),
        });
        match resolve_evalsha(s, req.clone()) {
            Ok(req) => queued.push(req),
            Err(reply) => return reply,
        }
    }
    let body = Body::Exec {
        watched,
        queued,
        local,
    };
    match propose(c, body) {
        Ok(mut replies) if replies.len() == 1 => {
            with_refusals(replies.pop().unwrap_or(Reply::NullArray), refused)
        }
        Ok(_) => Reply::err("ERR the state machine gave no reply"),
        Err(reply) => reply,
    }
}

/// An `EXEC`'s replies with the refused commands' refusals put back in
/// their places.
fn with_refusals(reply: Reply, refused: Vec<Option<Reply>>) -> Reply {
    let Reply::Array(ran) = reply else {
        return reply;
    };
    let mut ran = ran.into_iter();
    let all = refused
        .into_iter()
        .map(|r| r.unwrap_or_else(|| ran.next().unwrap_or(Reply::Null)))
        .collect();
    Reply::Array(all)
}

/// What a command does differently in a cluster (`crate::cluster`), if
/// anything: the cluster's own commands, and the writes that are not data
/// commands (`data_command::run_data` proposes those).
pub(crate) fn clustered(
    s: &Shared,
    c: &Cluster,
    session: &mut Session,
    name: &str,
    req: &Request,
    control: Control,
) -> Option<Reply> {
    Some(match name {
        "cluster" => super::commands::cluster(c, req),
        "raft" => super::commands::raft(c, req),
        "role" => super::commands::role(c),
        "readonly" | "readwrite" | "asking" => super::commands::connection_mode(session, name),
        "eval" | "evalsha" | "fcall" | "flushall" | "flushdb" => propose_one(s, c, req.clone()),
        "function" if class(name, req) == Class::Write => propose_one(s, c, req.clone()),
        "watch" if session.queued.is_none() => watch(s, c, session, &req[1..]),
        "exec" => {
            session.in_exec = true;
            let reply = exec(s, c, session, control);
            session.in_exec = false;
            reply
        }
        _ => return None,
    })
}
