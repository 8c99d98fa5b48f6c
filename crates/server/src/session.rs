//! One client's session: authentication, protocol version, name, and
//! `MULTI`/`EXEC`/`WATCH` state; [`execute`] runs one request.
//!
//! `EXEC` runs the queued commands in one engine transaction, retried on a
//! conflict, so it always applies atomically; server commands queued with
//! them (`SELECT`, `CLIENT`, `CONFIG`, ...) run in their place. `WATCH`
//! reads the watched keys in an engine transaction of its own, whose
//! commit at `EXEC` fails exactly when one of them was written since: EXEC
//! then replies with a null array, as Redis does (see [`exec`]).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::clients::Client;
use crate::commands::{self, Fail};
use crate::resp::{Reply, Request};
use crate::store::{atomically, Access, Direct, InTx};
use crate::Shared;
use crate::{admin, info};
use slsm::Keyspace;

/// Redis's arity of `name` (negative: at least), if the server knows it.
pub fn arity_of(name: &str) -> Option<i32> {
    commands::arity(name).or(match name {
        "ping" | "hello" | "command" | "info" | "shutdown" => Some(-1),
        "client" | "config" => Some(-2),
        "echo" | "select" => Some(2),
        "auth" => Some(-2),
        "quit" | "flushdb" | "flushall" => Some(-1),
        "time" | "save" | "lastsave" | "reset" => Some(1),
        "bgsave" => Some(-1),
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
    watch: Option<Watch>,
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
    if !session.authenticated && !matches!(name.as_str(), "auth" | "hello" | "quit" | "reset") {
        return (
            Reply::err("NOAUTH Authentication required."),
            Then::Continue,
        );
    }
    if session.queued.is_some()
        && !matches!(
            name.as_str(),
            "exec" | "discard" | "multi" | "watch" | "quit" | "reset"
        )
    {
        if refused_in_multi(&name) {
            session.queue_failed = true;
            return (
                Reply::err("ERR Command not allowed inside a transaction"),
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

/// Commands a transaction may not hold. Redis refuses `SHUTDOWN` and `SAVE` (and
/// queues everything else but `MULTI`, `WATCH` and the like, which answer
/// at once). `FLUSHDB` and `FLUSHALL` Redis would queue, but emptying the
/// database is not a write the engine transaction `EXEC` commits can
/// hold, so here they are refused, with Redis's error, rather than run
/// outside the transaction's atomicity.
fn refused_in_multi(name: &str) -> bool {
    matches!(name, "shutdown" | "save" | "flushdb" | "flushall")
}

/// `SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]`, as Redis 7 checks it:
/// `Some(abort)`, or `None` for a syntax error. Saving, waiting for
/// replicas and forcing have no meaning here: every acknowledged write is
/// in the log, and the database is flushed and closed either way.
fn shutdown_modifiers(args: &[Vec<u8>]) -> Option<bool> {
    let (mut save, mut nosave, mut abort, mut other) = (false, false, false, false);
    for arg in args {
        match arg.to_ascii_lowercase().as_slice() {
            b"save" => save = true,
            b"nosave" => nosave = true,
            b"abort" => abort = true,
            b"now" | b"force" => other = true,
            _ => return None,
        }
    }
    match (save && nosave) || (abort && (save || nosave || other)) {
        true => None,
        false => Some(abort),
    }
}

/// `RESET`: the connection as it was when it connected: no transaction or
/// watch, RESP2, no name, and (with a password) not authenticated.
fn reset(s: &Shared, session: &mut Session) -> Reply {
    session.queued = None;
    session.queue_failed = false;
    session.watch = None;
    session.proto = 2;
    session.pending_proto = 2;
    session.authenticated = s.opts.requirepass.is_none();
    session.client.names().name.clear();
    Reply::Simple("RESET".into())
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
        "save" => to_reply(admin::save(s)),
        "bgsave" => to_reply(admin::bgsave(s, &req)),
        "lastsave" => Reply::Int(s.saves.last.load(Ordering::Relaxed) as i64),
        "reset" => reset(s, session),
        "quit" => return (Reply::ok(), Then::Close),
        "shutdown" => match shutdown_modifiers(&req[1..]) {
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

/// Keys a client watches, and the transactions that read them, one per
/// `WATCH` (a key is watched from its own `WATCH` on): their commits (with
/// no writes) fail if any of the keys was written since.
#[derive(Default)]
pub struct Watch {
    txs: Vec<slsm::Transaction>,
    keys: Vec<Vec<u8>>,
}

fn watch(s: &Shared, session: &mut Session, keys: &[Vec<u8>]) -> commands::Outcome {
    let ks = s.store.keyspace();
    let mut tx = s.store.db.transaction();
    for k in keys {
        tx.get_in(&ks, k)?;
    }
    let w = session.watch.get_or_insert_with(Watch::default);
    w.txs.push(tx);
    w.keys.extend(keys.iter().cloned());
    Ok(Reply::ok())
}

/// Whether no watched key was written since its `WATCH`.
fn watched_unchanged(w: Watch) -> slsm::Result<bool> {
    for tx in w.txs {
        match tx.commit() {
            Ok(()) => {}
            Err(slsm::Error::Conflict) => return Ok(false),
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

/// The stored values of `keys` as `tx` reads them (which also puts them in
/// its read set, so that its commit fails if they are written meanwhile).
fn read_watched(
    tx: &mut slsm::Transaction,
    ks: &Keyspace,
    keys: &[Vec<u8>],
) -> slsm::Result<Vec<Option<Vec<u8>>>> {
    keys.iter()
        .map(|k| tx.get_in(ks, k).map(|v| v.map(|v| v.to_vec())))
        .collect()
}

/// `EXEC`: the queued commands in one engine transaction, as Redis runs
/// them: on the data as it is at `EXEC` (not as it was at `WATCH`), and
/// not at all (a null reply) if a watched key was written since `WATCH`.
///
/// The watch is checked by committing the transactions `WATCH` read the
/// keys in (they have no writes: the commit only validates), after the
/// transaction that runs the commands has begun and before it reads the
/// watched keys itself; together they cover every write to a watched key
/// from `WATCH` to the commit. A conflict on another key the commands read
/// runs them again; a retry that finds a watched key changed (as the two
/// transactions read it) replies null.
fn exec(s: &Shared, session: &mut Session) -> Reply {
    let Some(queued) = session.queued.take() else {
        return Reply::err("ERR EXEC without MULTI");
    };
    let watch = session.watch.take();
    if session.queue_failed {
        return Reply::err("EXECABORT Transaction discarded because of previous errors.");
    }
    let ks = s.store.keyspace();
    let opts = s.write_options();
    let mut tx = s.store.db.transaction();
    let (watched_keys, mut watched_values) = match watch {
        None => (Vec::new(), Vec::new()),
        Some(mut w) => {
            let keys = std::mem::take(&mut w.keys);
            match watched_unchanged(w) {
                Ok(true) => {}
                Ok(false) => return Reply::NullArray,
                Err(e) => return Reply::err(format!("ERR {e}")),
            }
            match read_watched(&mut tx, &ks, &keys) {
                Ok(values) => (keys, values),
                Err(e) => return Reply::err(format!("ERR {e}")),
            }
        }
    };
    // Server commands (`SELECT`, `CLIENT`, `CONFIG`, ...) touch no data:
    // each runs once, in its place, even when a conflict makes EXEC run the
    // data commands again.
    let mut server_replies: Vec<Option<Reply>> = vec![None; queued.len()];
    loop {
        let mut replies = Vec::with_capacity(queued.len());
        for (req, server_reply) in queued.iter().zip(server_replies.iter_mut()) {
            let name = String::from_utf8_lossy(&req[0]).to_ascii_lowercase();
            let r = match commands::arity(&name) {
                Some(_) => to_reply(commands::run(
                    &name,
                    req,
                    &mut InTx {
                        tx: &mut tx,
                        ks: &ks,
                    },
                    &s.cursors,
                )),
                // As the transaction sees the keys (its writes included).
                None if name == "dbsize" => to_reply(count_keys(&mut InTx {
                    tx: &mut tx,
                    ks: &ks,
                })),
                None => server_reply
                    .get_or_insert_with(|| control(s, session, &name, req.clone()).0)
                    .clone(),
            };
            replies.push(r);
        }
        match tx.commit_opt(&opts) {
            Ok(()) => return Reply::Array(replies),
            Err(slsm::Error::Conflict) => {
                tx = s.store.db.transaction();
                match read_watched(&mut tx, &ks, &watched_keys) {
                    Ok(values) if values == watched_values => watched_values = values,
                    Ok(_) => return Reply::NullArray,
                    Err(e) => return Reply::err(format!("ERR {e}")),
                }
            }
            Err(e) => return Reply::err(format!("ERR {e}")),
        }
    }
}

/// `DBSIZE` through `acc`: its live keys, counted a chunk at a time.
fn count_keys(acc: &mut dyn Access) -> commands::Outcome {
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
