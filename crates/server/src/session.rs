//! One client's session: authentication, protocol version, name, and
//! `MULTI`/`EXEC`/`WATCH` state; [`execute`] runs one request.
//!
//! `WATCH` opens an engine transaction and reads the watched keys in it;
//! `EXEC` runs the queued commands inside that transaction, and its commit
//! fails with a conflict exactly when a watched key (or anything else the
//! queued commands read) was written since: EXEC then replies with a null
//! array, as Redis does. Without WATCH, EXEC retries on a conflict, so it
//! always applies atomically.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::clients::Client;
use crate::commands::{self, Fail};
use crate::resp::{Reply, Request};
use crate::store::{atomically, Direct, InTx};
use crate::Shared;
use crate::{admin, info};

/// Redis's arity of `name` (negative: at least), if the server knows it.
pub fn arity_of(name: &str) -> Option<i32> {
    commands::arity(name).or(match name {
        "ping" | "hello" | "client" | "command" | "config" | "info" | "shutdown" => Some(-1),
        "echo" | "select" => Some(2),
        "auth" => Some(-2),
        "quit" | "flushdb" | "flushall" => Some(-1),
        "time" => Some(1),
        "dbsize" | "multi" | "exec" | "discard" | "unwatch" => Some(1),
        "watch" => Some(-2),
        _ => None,
    })
}

/// What the connection does after a reply.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Then {
    Continue,
    Close,
    Shutdown,
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
    /// Commands queued since MULTI (`None`: not in MULTI).
    queued: Option<Vec<Request>>,
    /// A command failed to queue: EXEC aborts.
    queue_failed: bool,
    watch: Option<slsm::Transaction>,
    /// How many pipelined `GET`s the next engine call may take: grows while
    /// their replies are small, shrinks when they are large (see
    /// `pipeline::next_get_group`), so a pipeline of large values never
    /// holds many of them at once.
    pub get_group: usize,
}

impl Session {
    pub fn new(client: Arc<Client>, needs_auth: bool) -> Session {
        Session {
            id: client.id,
            client,
            proto: 2,
            pending_proto: 2,
            authenticated: !needs_auth,
            queued: None,
            queue_failed: false,
            watch: None,
            get_group: 1,
        }
    }
}

impl Session {
    /// True when commands run as they come: authenticated, not queueing a
    /// `MULTI`.
    pub fn runs_plain_commands(&self) -> bool {
        self.authenticated && self.queued.is_none()
    }

    /// Commands queued since `MULTI`, `None` outside one.
    pub fn queued_count(&self) -> Option<usize> {
        self.queued.as_ref().map(Vec::len)
    }

    /// Publishes that the session is about to run a batch of requests
    /// ending with command `last` (`CLIENT LIST`'s cmd, idle, multi, resp).
    pub fn publish(&self, last: &[u8]) {
        let multi = self.queued_count().map_or(-1, |n| n as i64);
        self.client.publish(last, self.proto, multi);
    }
}

fn arity_error(name: &str) -> Reply {
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

fn to_reply(outcome: commands::Outcome) -> Reply {
    match outcome {
        Ok(r) => r,
        Err(Fail::Reply(r)) => r,
        Err(Fail::Engine(e)) => Reply::err(format!("ERR {e}")),
    }
}

/// Runs one request; the reply and what to do next.
pub fn execute(s: &Shared, session: &mut Session, req: Request) -> (Reply, Then) {
    s.commands.fetch_add(1, Ordering::Relaxed);
    let name = String::from_utf8_lossy(&req[0]).to_ascii_lowercase();
    let Some(arity) = arity_of(&name) else {
        if session.queued.is_some() {
            session.queue_failed = true;
        }
        return (unknown(&req), Then::Continue);
    };
    let n = req.len() as i32;
    if (arity > 0 && n != arity) || (arity < 0 && n < -arity) {
        if name == "exec" {
            // Redis aborts the transaction (and says so even outside one),
            // unwatching its keys.
            session.queued = None;
            session.watch = None;
            return (
                Reply::err(format!(
                    "EXECABORT Transaction discarded because of: wrong number of arguments for '{name}' command"
                )),
                Then::Continue,
            );
        }
        if session.queued.is_some() {
            session.queue_failed = true;
        }
        return (arity_error(&name), Then::Continue);
    }
    if !session.authenticated && !matches!(name.as_str(), "auth" | "hello" | "quit") {
        return (
            Reply::err("NOAUTH Authentication required."),
            Then::Continue,
        );
    }
    if session.queued.is_some()
        && !matches!(
            name.as_str(),
            "exec" | "discard" | "multi" | "watch" | "quit"
        )
    {
        if commands::arity(&name).is_none() && !matches!(name.as_str(), "ping" | "echo" | "time") {
            // Server commands are not queued in a transaction here.
            session.queue_failed = true;
            return (
                Reply::err(format!(
                    "ERR Command '{name}' not allowed inside a transaction"
                )),
                Then::Continue,
            );
        }
        if let Some(q) = session.queued.as_mut() {
            q.push(req);
        }
        return (Reply::Simple("QUEUED".into()), Then::Continue);
    }
    control(s, session, &name, req)
}

/// `TIME`: the Unix time, seconds and microseconds, as two bulk strings.
fn time_reply() -> Reply {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    Reply::Array(vec![
        Reply::bulk(now.as_secs().to_string()),
        Reply::bulk(now.subsec_micros().to_string()),
    ])
}

fn flush(s: &Shared) -> Reply {
    to_reply(
        s.store
            .flush_all()
            .map(|_| Reply::ok())
            .map_err(Fail::Engine),
    )
}

fn control(s: &Shared, session: &mut Session, name: &str, req: Request) -> (Reply, Then) {
    let reply = match name {
        "ping" => match req.len() {
            1 => Reply::Simple("PONG".into()),
            2 => Reply::Bulk(req[1].clone()),
            _ => arity_error("ping"),
        },
        "echo" => Reply::Bulk(req[1].clone()),
        "time" => time_reply(),
        "quit" => return (Reply::ok(), Then::Close),
        "shutdown" => return (Reply::ok(), Then::Shutdown),
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
        "command" => to_reply(admin::command(&req)),
        "config" => to_reply(admin::config(s, &req)),
        "info" => to_reply(info::info(s, &req)),
        "dbsize" => to_reply(info::dbsize(s).map(Reply::Int).map_err(Fail::Engine)),
        "flushdb" | "flushall" => match req.get(1).map(|m| m.to_ascii_lowercase()) {
            // ASYNC and SYNC both empty the database before the reply.
            None => flush(s),
            Some(m) if req.len() == 2 && (m == b"async" || m == b"sync") => flush(s),
            Some(_) => Reply::err("ERR syntax error"),
        },
        "multi" => match session.queued {
            Some(_) => Reply::err("ERR MULTI calls can not be nested"),
            None => {
                session.queued = Some(Vec::new());
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
            None => to_reply(watch(s, session, &req[1..])),
        },
        "unwatch" => {
            session.watch = None;
            Reply::ok()
        }
        "exec" => exec(s, session),
        data => to_reply(run_data(s, data, &req)),
    };
    (reply, Then::Continue)
}

/// A data command outside MULTI: straight, or atomically when it reads
/// before it writes.
fn run_data(s: &Shared, name: &str, req: &Request) -> commands::Outcome {
    let ks = s.store.keyspace();
    let opts = s.write_options();
    if commands::needs_transaction(name, req) {
        let mut failure = None;
        let out = atomically(&s.store.db, &ks, &opts, |acc| {
            match commands::run(name, req, acc, &s.cursors) {
                Ok(r) => Ok(Some(r)),
                Err(Fail::Engine(e)) => Err(e),
                Err(Fail::Reply(r)) => {
                    failure = Some(r);
                    Ok(None)
                }
            }
        })?;
        return match (out, failure) {
            (Some(r), _) => Ok(r),
            (None, Some(r)) => Err(Fail::Reply(r)),
            (None, None) => Ok(Reply::Null),
        };
    }
    commands::run(
        name,
        req,
        &mut Direct {
            ks: &ks,
            opts: &opts,
        },
        &s.cursors,
    )
}

fn watch(s: &Shared, session: &mut Session, keys: &[Vec<u8>]) -> commands::Outcome {
    let ks = s.store.keyspace();
    let tx = session
        .watch
        .get_or_insert_with(|| s.store.db.transaction());
    for k in keys {
        tx.get_in(&ks, k)?;
    }
    Ok(Reply::ok())
}

fn exec(s: &Shared, session: &mut Session) -> Reply {
    let Some(queued) = session.queued.take() else {
        return Reply::err("ERR EXEC without MULTI");
    };
    let watched = session.watch.take();
    if session.queue_failed {
        return Reply::err("EXECABORT Transaction discarded because of previous errors.");
    }
    let ks = s.store.keyspace();
    let opts = s.write_options();
    let watching = watched.is_some();
    let mut tx = watched.unwrap_or_else(|| s.store.db.transaction());
    loop {
        let mut replies = Vec::with_capacity(queued.len());
        for req in &queued {
            let name = String::from_utf8_lossy(&req[0]).to_ascii_lowercase();
            let r = match name.as_str() {
                "ping" => Reply::Simple("PONG".into()),
                "echo" => Reply::Bulk(req[1].clone()),
                "time" => time_reply(),
                _ => to_reply(commands::run(
                    &name,
                    req,
                    &mut InTx {
                        tx: &mut tx,
                        ks: &ks,
                    },
                    &s.cursors,
                )),
            };
            replies.push(r);
        }
        match tx.commit_opt(&opts) {
            Ok(()) => return Reply::Array(replies),
            Err(slsm::Error::Conflict) if watching => return Reply::NullArray,
            Err(slsm::Error::Conflict) => tx = s.store.db.transaction(),
            Err(e) => return Reply::err(format!("ERR {e}")),
        }
    }
}
