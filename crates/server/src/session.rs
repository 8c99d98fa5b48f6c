//! One client's session: authentication, protocol version, name, and
//! `MULTI`/`EXEC`/`WATCH` state; [`execute`] runs one request. What
//! `WATCH` and `EXEC` do with that state is in [`crate::transaction`].

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use crate::blocked::Blocked;
use crate::clients::Client;
use crate::collections::blocking;
use crate::commands::{self, Fail};
use crate::pubsub::commands as pubsub;
use crate::pubsub::Subscriptions;
use crate::resp::{Reply, Request};
use crate::transaction::{self, Queue, Watch};
use crate::Shared;
use crate::{admin, info, shape};

/// What the connection does after a reply.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Then {
    Continue,
    Close,
    Shutdown,
    /// A blocking command found nothing: the connection waits
    /// (`Session::blocked` says for what) before it runs anything else.
    Block,
    /// The next request waits for the end of a `CLIENT PAUSE`
    /// (`crate::pause`).
    Paused,
}

pub struct Session {
    pub id: u64,
    /// The connection as other clients see it (`CLIENT LIST`): its name,
    /// the library it says it is, its last command.
    pub client: Arc<Client>,
    pub proto: u8,
    /// The version HELLO asked for, applied once the rest of HELLO is fine.
    pub pending_proto: u8,
    pub authenticated: bool,
    /// The ACL user it runs as (`acl::refresh` keeps it current).
    pub user: Arc<crate::acl::user::User>,
    /// The users table's epoch `user` was read at.
    pub(crate) acl_epoch: u64,
    /// Commands queued since MULTI (`None`: not in MULTI).
    pub(crate) queued: Option<Queue>,
    /// A command failed to queue: EXEC aborts.
    pub(crate) queue_failed: bool,
    pub(crate) watch: Option<Watch>,
    /// How many pipelined `GET`s the next engine call may take: grows while
    /// their replies are small, shrinks when they are large (see
    /// `pipeline::next_get_group`), so a pipeline of large values never
    /// holds many of them at once.
    pub get_group: usize,
    /// The blocking command the connection waits to run again.
    pub blocked: Option<Blocked>,
    /// Its channels, patterns and shard channels, once it subscribed.
    pub pubsub: Option<Box<Subscriptions>>,
    /// `EXEC` is running the queued commands: they are shown to monitors
    /// once it commits, in their order, then `EXEC` itself (as Redis 7.0).
    pub(crate) in_exec: bool,
    /// `CLIENT REPLY`'s state: whether replies go out.
    pub reply_mode: crate::client_modes::ReplyMode,
    /// In a cluster: `READONLY` was sent (a follower serves reads as it
    /// is, as a Redis Cluster replica does).
    pub readonly: bool,
    /// In a cluster: the read-index round of this batch of requests is
    /// done (`cluster::run::refusal`; the connection clears it per batch).
    pub fenced: bool,
    /// In a cluster: the watched keys and digests of their values
    /// (`cluster::run::watch`).
    pub(crate) watched: Vec<(Vec<u8>, Option<u64>)>,
}

impl Session {
    /// A new connection's session, logged in as `default` if that user
    /// needs no password.
    pub fn new(client: Arc<Client>, acl: &crate::acl::Acl) -> Session {
        Session {
            id: client.id,
            client,
            proto: 2,
            pending_proto: 2,
            authenticated: acl.default_logs_in(),
            user: acl.default_user(),
            acl_epoch: acl.epoch(),
            queued: None,
            queue_failed: false,
            watch: None,
            get_group: 1,
            blocked: None,
            pubsub: None,
            in_exec: false,
            reply_mode: Default::default(),
            readonly: false,
            fenced: false,
            watched: Vec::new(),
        }
    }
}

impl Session {
    /// True when commands run as they come: authenticated as a user
    /// whose rules refuse nothing (and have not changed since it was
    /// read), not queueing a `MULTI`.
    pub fn runs_plain_commands(&self, acl: &crate::acl::Acl) -> bool {
        self.authenticated
            && self.user.unrestricted()
            && self.acl_epoch == acl.epoch()
            && self.queued.is_none()
            && !(self.proto < 3 && self.subscribed())
            && self.reply_mode == crate::client_modes::ReplyMode::On
    }

    /// True while the client has a subscription (`SUBSCRIBE` and the
    /// like): in RESP2 it may then only run pub/sub commands.
    pub fn subscribed(&self) -> bool {
        self.pubsub.as_ref().is_some_and(|p| p.total() > 0)
    }

    /// Appends the messages published to this client since the last call
    /// (none unless it subscribed).
    pub fn drain_messages(&self, out: &mut Vec<u8>) -> bool {
        self.pubsub
            .as_ref()
            .is_some_and(|p| p.sub.drain_into(self.proto, out))
    }

    /// Ends every subscription (the connection closes, or `RESET`).
    pub fn leave_pubsub(&mut self, s: &Shared) {
        if let Some(mut p) = self.pubsub.take() {
            p.leave_all(&s.pubsub);
            s.monitors.remove(&p.sub);
        }
    }

    /// `MONITOR`: from now on every command the server runs is sent here.
    fn monitor(&mut self, s: &Shared) -> Reply {
        let p = self
            .pubsub
            .get_or_insert_with(|| Box::new(Subscriptions::new(&self.client)));
        s.monitors.add(&p.sub);
        Reply::ok()
    }

    /// Commands queued since `MULTI`, `None` outside one.
    pub fn queued_count(&self) -> Option<usize> {
        self.queued.as_ref().map(Queue::len)
    }

    /// Bytes the commands queued since `MULTI` hold (0 outside one).
    pub fn queued_bytes(&self) -> usize {
        self.queued.as_ref().map_or(0, Queue::bytes)
    }

    /// Publishes that the session is about to run a batch of requests,
    /// `bytes` of input, ending with `last` (`CLIENT LIST`'s cmd, qbuf,
    /// idle, multi, resp).
    pub fn publish(&self, last: &Request, bytes: usize) {
        let multi = self.queued_count().map_or(-1, |n| n as i64);
        self.client.publish(last, bytes, self.proto, multi);
    }
}

pub(crate) fn to_reply(outcome: commands::Outcome) -> Reply {
    match outcome {
        Ok(r) => r,
        Err(Fail::Reply(r)) => r,
        Err(Fail::Engine(e)) => Reply::err(format!("ERR {e}")),
    }
}

/// Redis's refusal of a write short of good replicas.
pub const NO_REPLICAS: &str = "NOREPLICAS Not enough good replicas to write.";

/// Runs one request; the reply and what to do next.
pub fn execute(s: &Shared, session: &mut Session, req: Request) -> (Reply, Then) {
    s.commands.fetch_add(1, Ordering::Relaxed);
    let name = String::from_utf8_lossy(&req[0]).to_ascii_lowercase();
    if let Some(refused) = shape::refused(&name, &req) {
        return refuse(s, session, &name, refused, Exec::Aborted);
    }
    crate::acl::refresh(s, session);
    if !session.authenticated && !matches!(name.as_str(), "auth" | "hello" | "quit" | "reset") {
        let refused = Reply::err("NOAUTH Authentication required.");
        return refuse(s, session, &name, refused, Exec::Answered);
    }
    if let Some(refused) = crate::acl::refusal(s, session, &req) {
        return refuse(s, session, &name, refused, Exec::Aborted);
    }
    if let Some(refused) = pubsub::refused_while_subscribed(session, &name) {
        return (refused, Then::Continue);
    }
    if let Some(c) = &s.cluster {
        if let Some(refused) = crate::cluster::run::refusal(c, session, &name, &req) {
            // A redirected EXEC keeps its transaction for the client to
            // follow the redirection with.
            return refuse(s, session, &name, refused, Exec::Answered);
        }
    }
    if let Some(busy) = s.scripts.busy_error() {
        if !crate::scripting::allowed_while_busy(&name, &req) {
            return refuse(s, session, &name, Reply::err(busy), Exec::Aborted);
        }
    }
    if s.replicas_short() && crate::command_table::is_write(&name) {
        return refuse(s, session, &name, Reply::err(NO_REPLICAS), Exec::Aborted);
    }
    if session.queued.is_some()
        && !matches!(
            name.as_str(),
            "exec" | "discard" | "multi" | "watch" | "quit" | "reset"
        )
    {
        if transaction::refused_in_multi(&name) {
            let refused = Reply::err("ERR Command not allowed inside a transaction");
            return refuse(s, session, &name, refused, Exec::Answered);
        }
        if let Some(q) = session.queued.as_mut() {
            q.push(req);
        }
        return (Reply::Simple("QUEUED".into()), Then::Continue);
    }
    let mut wake = match (name.as_str(), &session.queued) {
        ("exec", Some(queue)) => blocking::wakes_of_all(queue.requests()),
        _ => blocking::wakes(&name, &req),
    };
    if s.waiters.count() > 0 {
        wake.extend(blocking::replaced(&name, &req));
    }
    let done = control(s, session, &name, req);
    if !wake.is_empty() {
        s.waiters.wake(wake);
    }
    done
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
    // A script's calls are checked against its caller's rules.
    let caller = crate::acl::caller::caller_of(session);
    let (reply, then) =
        crate::acl::caller::with(caller, || run_command(s, session, name, req, started));
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
        s.monitors.feed(name, &req, Some(&session.client.addr));
    }
    if let Some(c) = &s.cluster {
        if let Some(reply) = crate::cluster::run::clustered(s, c, session, name, &req) {
            crate::slowlog::record_if_slow(s, session, name, &req, started.elapsed());
            return (reply, Then::Continue);
        }
    }
    let reply = match name {
        // A subscribed RESP2 client gets its PONG as an array, as a
        // message would come.
        "ping" if session.proto < 3 && session.subscribed() => Reply::Array(vec![
            Reply::bulk("pong"),
            Reply::Bulk(req.get(1).cloned().unwrap_or_default()),
        ]),
        "ping" => match req.len() {
            1 => Reply::Simple("PONG".into()),
            2 => Reply::Bulk(req[1].clone()),
            _ => shape::arity_error("ping"),
        },
        "publish" => pubsub::publish(s, false, &req),
        "spublish" => pubsub::publish(s, true, &req),
        "pubsub" => to_reply(pubsub::introspect(s, &req)),
        "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "script" | "fcall" | "fcall_ro"
        | "function" => crate::scripting::command(s, name, &req),

        "echo" => Reply::Bulk(req[1].clone()),
        "time" => admin::time_reply(),
        "save" => to_reply(admin::save(s)),
        "bgsave" => to_reply(admin::bgsave(s, &req)),
        "lastsave" => Reply::Int(s.saves.last.load(Ordering::Relaxed) as i64),
        "reset" => crate::client_modes::reset(s, session),
        "quit" => return (Reply::ok(), Then::Close),
        "shutdown" => match admin::shutdown_modifiers(&req[1..]) {
            Some(false) => return (Reply::ok(), Then::Shutdown),
            Some(true) => Reply::err("ERR No shutdown in progress."),
            None => Reply::err("ERR syntax error"),
        },
        "hello" => to_reply(admin::hello(s, session, &req)),
        "auth" => match req.len() {
            2 => to_reply(admin::auth(s, session, None, &req[1]).map(|_| Reply::ok())),
            3 => to_reply(admin::auth(s, session, Some(&req[1]), &req[2]).map(|_| Reply::ok())),
            _ => Reply::err("ERR syntax error"),
        },
        "select" => match crate::commands::int_arg(&req[1]) {
            Ok(0) => Reply::ok(),
            Ok(_) => Reply::err("ERR DB index is out of range"),
            Err(_) => Reply::err("ERR value is not an integer or out of range"),
        },
        "client" => to_reply(crate::clients::command(s, session, &req)),
        "acl" => to_reply(crate::acl::command(s, session, &req)),
        "command" => to_reply(crate::command_docs::command(&req)),
        "config" => to_reply(crate::config::config(s, &req)),
        "info" => to_reply(info::info(s, &req)),
        "slowlog" => to_reply(s.slowlog.command(&req)),
        "latency" => to_reply(crate::latency::command(&req)),
        other if crate::compat::arity(other).is_some() => to_reply(crate::compat::run(other, &req)),
        "monitor" => session.monitor(s),
        "memory" if !req[1].eq_ignore_ascii_case(b"usage") => to_reply(info::memory(s, &req)),
        "dbsize" => to_reply(info::dbsize(s).map(Reply::Int).map_err(Fail::Engine)),
        "flushdb" | "flushall" => match req.get(1).map(|m| m.to_ascii_lowercase()) {
            // ASYNC and SYNC both empty the database before the reply.
            None => admin::flush(s),
            Some(m) if req.len() == 2 && (m == b"async" || m == b"sync") => admin::flush(s),
            Some(_) => Reply::err("ERR syntax error"),
        },
        "multi" => match session.queued {
            Some(_) => Reply::err("ERR MULTI calls can not be nested"),
            None => {
                session.queued = Some(Queue::new(Arc::clone(&s.pending_input)));
                session.queue_failed = false;
                Reply::ok()
            }
        },
        "discard" => match session.queued.take() {
            None => Reply::err("ERR DISCARD without MULTI"),
            Some(_) => {
                session.watch = None;
                Reply::ok()
            }
        },
        "watch" => match session.queued {
            Some(_) => Reply::err("ERR WATCH inside MULTI is not allowed"),
            None => to_reply(transaction::watch(s, session, &req[1..])),
        },
        "unwatch" => {
            session.watch = None;
            session.watched.clear();
            Reply::ok()
        }
        "exec" => {
            session.in_exec = true;
            let reply = transaction::exec(s, session);
            session.in_exec = false;
            s.monitors.feed(name, &req, Some(&session.client.addr));
            reply
        }
        "wait" => return crate::blocked::start_wait(session, req),
        data if blocking::may_block(data, &req) => {
            return crate::blocked::start(s, session, data, req)
        }
        other => match pubsub::subscription_command(other) {
            Some((space, subscribe)) => pubsub::run(s, session, space, subscribe, &req[1..]),
            None => to_reply(crate::data_command::run_data(s, other, &req)),
        },
    };
    crate::slowlog::record_if_slow(s, session, name, &req, started.elapsed());
    (reply, Then::Continue)
}
