//! [`ServerMachine`]: how a cluster node's state machine applies the
//! server's log entries ([`Proposal`]s): the same Redis commands the
//! single-node server runs, in one engine transaction per entry with the
//! entry's stamp (`slsm_raft::Stamp`) (an entry of plain `SET`s and
//! `MSET`s in one batch, as the single node writes a pipeline of them:
//! with no read, it costs a follower about half as much), at the entry's clock and with its
//! random numbers (`crate::replay`), so every node reaches the same state
//! and the leader's client gets the state machine's reply.
//!
//! * **Owns**: the replicated clock the server's expiry reads outside
//!   commands (`store::Clock::Replicated`), and the database until the
//!   server is built around it.
//! * **Calls**: the data commands (their registry rows' handlers), scripts
//!   (`scripting::eval_in`), `Store::flush_all`, `FUNCTION`.
//! * **Thread safety**: openraft applies on one thread at a time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use slsm::Db;
use slsm_raft::{Machine, Stamp};

use super::proposal::{digest, encode_replies, Body, Proposal};
use crate::access::{apply_drops, InTx};
use crate::collections::blocking;
use crate::commands;
use crate::effects::Effects;
use crate::registry::Run;
use crate::resp::{Reply, Request};
use crate::session::to_reply;
use crate::shared::Shared;
use crate::store::Value;

/// The server's side of a node's state machine. See the
/// [module docs](self).
pub struct ServerMachine {
    me: u64,
    engine: slsm::Options,
    clock: Arc<AtomicU64>,
    shared: OnceLock<Weak<Shared>>,
    /// The database attached before the server existed.
    attached: Mutex<Option<Arc<Db>>>,
}

impl ServerMachine {
    pub fn new(me: u64, engine: slsm::Options) -> ServerMachine {
        ServerMachine {
            me,
            engine,
            clock: Arc::new(AtomicU64::new(0)),
            shared: OnceLock::new(),
            attached: Mutex::new(None),
        }
    }

    /// The replicated clock, for the store's expiry.
    pub fn clock(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.clock)
    }

    /// The database the state machine opened (taken once, to build the
    /// server around).
    pub fn take_attached(&self) -> Option<Arc<Db>> {
        self.attached.lock().ok()?.take()
    }

    /// The server the entries are applied to, from now on.
    pub fn serve(&self, shared: &Arc<Shared>) {
        let _ = self.shared.set(Arc::downgrade(shared));
    }

    fn server(&self) -> slsm::Result<Arc<Shared>> {
        self.shared
            .get()
            .and_then(Weak::upgrade)
            .ok_or_else(|| slsm::Error::Closed("the server has stopped".into()))
    }
}

impl Machine for ServerMachine {
    fn options(&self) -> slsm::Options {
        self.engine.clone()
    }

    fn attach(&self, db: &Arc<Db>, clock: u64) -> slsm::Result<()> {
        self.clock.store(clock, Ordering::Release);
        match self.shared.get().and_then(Weak::upgrade) {
            Some(s) => {
                s.store.replace_db(Arc::clone(db))?;
                s.functions.reload(db)
            }
            None => {
                if let Ok(mut slot) = self.attached.lock() {
                    *slot = Some(Arc::clone(db));
                }
                Ok(())
            }
        }
    }

    fn apply(&self, _db: &Db, bytes: &[u8], stamp: &Stamp<'_>) -> slsm::Result<Vec<u8>> {
        let s = self.server()?;
        let replies = match Proposal::decode(bytes) {
            None => vec![Reply::err("ERR a log entry this node cannot read")],
            Some(p) => {
                let mine = p.origin == self.me;
                crate::replay::with(stamp.clock, stamp.index, || {
                    apply_body(&s, p.body, stamp, mine)
                })?
            }
        };
        self.clock.fetch_max(stamp.clock, Ordering::AcqRel);
        Ok(encode_replies(&replies))
    }
}

fn lower(req: &Request) -> String {
    String::from_utf8_lossy(&req[0]).to_ascii_lowercase()
}

fn apply_body(s: &Shared, body: Body, stamp: &Stamp<'_>, mine: bool) -> slsm::Result<Vec<Reply>> {
    match body {
        Body::Commands(reqs) => match reqs.as_slice() {
            [req] if matches!(lower(req).as_str(), "flushall" | "flushdb") => {
                // Not a transaction's write: the stamp follows on its own
                // (a crash between the two empties the database again).
                let flushed = s.store.flush_all();
                s.tracking.flushed();
                Ok(vec![to_reply(
                    flushed.map(|_| Reply::ok()).map_err(commands::Fail::Engine),
                )])
            }
            [req] if lower(req) == "function" => {
                Ok(vec![crate::scripting::command(s, "function", req)])
            }
            _ if blind(s, &reqs) => blind_writes(s, &reqs, stamp),
            _ => in_transaction(s, &reqs, &[], stamp, mine),
        },
        Body::Exec {
            watched,
            queued,
            local,
        } => {
            if !watched_unchanged(s, &watched)? {
                return Ok(vec![Reply::NullArray]);
            }
            let replies = in_transaction(s, &queued, &local, stamp, mine)?;
            Ok(vec![Reply::Array(replies)])
        }
        Body::AsUser { user, body } => {
            let caller = crate::acl::caller::Caller {
                user: std::sync::Arc::new(user),
                client: None,
            };
            crate::acl::caller::with(Some(caller), || apply_body(s, *body, stamp, mine))
        }
    }
}

/// Whether `reqs` may be applied as the single node applies a pipeline's
/// plain `SET`s and `MSET`s (`pipeline::blind_writes`): one batch, no
/// reads, no transaction. Not when a notice or a tracking invalidation is
/// owed for each key, nor for a restricted user (whose rules the
/// commands' handlers check).
fn blind(s: &Shared, reqs: &[Request]) -> bool {
    reqs.iter().all(crate::blind_writes::is_blind_write)
        && crate::notify::notice_flags(s.store.tuning()) == 0
        && crate::acl::caller::get().is_none()
}

/// Applies blind writes with the entry's stamp in one batch: `+OK` each.
fn blind_writes(s: &Shared, reqs: &[Request], stamp: &Stamp<'_>) -> slsm::Result<Vec<Reply>> {
    let mut batch = crate::blind_writes::batch(&s.store.spaces().ks, reqs);
    stamp.put_in_batch(&mut batch);
    s.store
        .db()
        .write_opt(batch, &slsm::WriteOptions::default())?;
    Ok(vec![Reply::ok(); reqs.len()])
}

/// Whether every watched key's live value is what `WATCH` read.
fn watched_unchanged(s: &Shared, watched: &[(Vec<u8>, Option<u64>)]) -> slsm::Result<bool> {
    let ks = s.store.keyspace();
    let now = crate::store::now_ms();
    for (key, was) in watched {
        let stored = ks.get(key)?;
        let live = stored.filter(|v| Value::decode(v, now).is_some());
        if digest(live.as_deref()) != *was {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Runs `reqs` in one engine transaction committed with `stamp`, retried
/// whole on a conflict (only the node's own sweep of unowned elements
/// can conflict): each command's reply, or its `local` one.
fn in_transaction(
    s: &Shared,
    reqs: &[Request],
    local: &[Option<Reply>],
    stamp: &Stamp<'_>,
    mine: bool,
) -> slsm::Result<Vec<Reply>> {
    let sp = s.store.spaces();
    loop {
        let mut tx = s.store.db().transaction();
        let mut replies = Vec::with_capacity(reqs.len());
        let mut drops = Vec::new();
        let mut effects = Effects::default();
        // Every node tells its own subscribers of the writes it applies
        // (as a Redis replica does); the publishes are the proposer's.
        let mut notices = crate::notify::Notices::default();
        let mut killed = false;
        for (i, req) in reqs.iter().enumerate() {
            if let Some(Some(r)) = local.get(i) {
                replies.push(r.clone());
                continue;
            }
            let name = lower(req);
            let mut acc = InTx::new(&mut tx, &sp);
            let reply = match crate::registry::find(&name).map(|c| c.run) {
                Some(Run::Publish { .. }) => effects.publish(s, name == "spublish", req),
                Some(Run::Script { .. }) => {
                    let ran = crate::scripting::eval_in(s, &mut acc, req, &mut effects);
                    killed |= ran.killed;
                    ran.reply
                }
                Some(Run::Data { handler, .. }) => {
                    to_reply(handler(&name, req, &mut acc, &s.cursors))
                }
                _ => Reply::err(format!("ERR '{name}' cannot be applied from the log")),
            };
            drops.append(&mut acc.drops);
            notices.append(&mut acc.notices);
            replies.push(reply);
            if killed {
                break;
            }
        }
        if killed {
            // Only a shutdown stops a script applied from the log
            // (`SCRIPT KILL` refuses one): the entry is left unapplied, so
            // the node applies it whole again when it restarts.
            return Err(slsm::Error::Closed(
                "a script of this entry was stopped by shutdown".into(),
            ));
        }
        stamp.put_in_tx(&mut tx)?;
        match tx.commit_opt(&slsm::WriteOptions::default()) {
            Ok(()) => {
                apply_drops(&sp, drops);
                notices.publish(&s.pubsub, &s.expiries, &s.tracking);
                if mine {
                    effects.apply(s);
                }
                s.waiters.wake(blocking::wakes_of_all(reqs));
                return Ok(replies);
            }
            Err(slsm::Error::Conflict) => continue,
            Err(e) => return Err(e),
        }
    }
}
