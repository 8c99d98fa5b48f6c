//! Transactions as Redis runs them: `MULTI` queues (in [`Session`]),
//! `EXEC` runs the queue in one engine transaction, `WATCH` makes `EXEC`
//! answer null when a watched key was written since.
//!
//! `EXEC` runs the queued commands in one engine transaction, retried on a
//! conflict, so it always applies atomically; server commands queued with
//! them (`SELECT`, `CLIENT`, `CONFIG`, ...) run in their place. `WATCH`
//! reads the watched keys in an engine transaction of its own, whose
//! commit at `EXEC` fails exactly when one of them was written since: EXEC
//! then replies with a null array, as Redis does (see [`exec`]).
//!
//! * **Owns**: a session's [`Queue`] (and its charge to the clients'
//!   input) and [`Watch`], which the [`Session`] holds with its flags.
//! * **Calls**: the engine's transactions, the data commands
//!   (their registry rows' handlers) and, for queued server commands,
//!   `dispatch::control`.

use std::collections::HashSet;

use slsm::Keyspace;

use crate::access::{apply_drops, InTx};
use crate::commands;
use crate::dispatch::control;
use crate::registry::{self, Run};
use crate::resp::Reply;
use crate::scripting;
use crate::session::{to_reply, Session};
use crate::shared::Shared;

pub mod queue;
pub mod watch;

use watch::{Group, Watch};

pub(crate) fn watch(s: &Shared, session: &mut Session, keys: &[Vec<u8>]) -> commands::Outcome {
    let w = session.watch.get_or_insert_with(Watch::default);
    if w.dirty {
        return Ok(Reply::ok()); // EXEC answers null whatever else is watched
    }
    let mut seen = HashSet::new();
    let new: Vec<Vec<u8>> = keys
        .iter()
        .filter(|k| !w.keys.contains(*k) && seen.insert(k.as_slice()))
        .cloned()
        .collect();
    if new.is_empty() {
        return Ok(Reply::ok());
    }
    let flushes = s.store.flushes();
    let ks = s.store.keyspace();
    let mut tx = s.store.db().transaction();
    for k in &new {
        let value = tx.get_in(&ks, k)?;
        w.saw(s, k, value.as_deref(), flushes);
    }
    w.keys.extend(new.iter().cloned());
    w.groups.push(Group { tx, keys: new });
    if fold(s, &ks, w).is_err() {
        // The keys of the groups being folded may be unwatched now: EXEC
        // must not run as if they had not changed.
        w.dirty = true;
        w.groups.clear();
    }
    Ok(Reply::ok())
}

/// Folds the newest groups of `w` while the newest holds at least half as
/// many keys as the one before it (see [`Watch`]).
fn fold(s: &Shared, ks: &Keyspace, w: &mut Watch) -> slsm::Result<()> {
    while let [.., older, newer] = w.groups.as_slice() {
        if newer.keys.len() * 2 < older.keys.len() {
            break;
        }
        let (Some(newer), Some(older)) = (w.groups.pop(), w.groups.pop()) else {
            break;
        };
        // Begun before the two are validated: their commits cover every
        // write to their keys from their `WATCH` up to now, and this one
        // every write from before now on.
        let mut tx = s.store.db().transaction();
        if !unchanged(older.tx)? || !unchanged(newer.tx)? {
            w.dirty = true;
            w.groups.clear();
            return Ok(());
        }
        let mut keys = older.keys;
        keys.extend(newer.keys);
        let now = read_watched(&mut tx, ks, &keys)?;
        if w.touched_unseen(s, &keys, &now) {
            w.dirty = true;
            w.groups.clear();
            return Ok(());
        }
        w.groups.push(Group { tx, keys });
    }
    Ok(())
}

/// Whether nothing `tx` read was written since it began (its commit, which
/// has no writes, only validates).
fn unchanged(tx: slsm::Transaction) -> slsm::Result<bool> {
    match tx.commit() {
        Ok(()) => Ok(true),
        Err(slsm::Error::Conflict) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Whether no watched key was written since its `WATCH`.
fn watched_unchanged(w: Watch) -> slsm::Result<bool> {
    if w.dirty {
        return Ok(false);
    }
    for group in w.groups {
        if !unchanged(group.tx)? {
            return Ok(false);
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
pub(crate) fn exec(s: &Shared, session: &mut Session) -> Reply {
    let Some(queued) = session.queued.take() else {
        return Reply::err("ERR EXEC without MULTI");
    };
    let watch = session.watch.take();
    if session.queue_failed {
        return Reply::err("EXECABORT Transaction discarded because of previous errors.");
    }
    let sp = s.store.spaces();
    let ks = sp.ks.clone();
    let opts = s.write_options();
    let mut tx = s.store.db().transaction();
    let (watched_keys, watched_values) = match watch {
        None => (Vec::new(), Vec::new()),
        Some(mut w) => {
            let keys: Vec<Vec<u8>> = w.keys.drain().collect();
            let values = match read_watched(&mut tx, &ks, &keys) {
                Ok(values) => values,
                Err(e) => return Reply::err(format!("ERR {e}")),
            };
            if w.touched_unseen(s, &keys, &values) {
                return Reply::NullArray;
            }
            match watched_unchanged(w) {
                Ok(true) => (keys, values),
                Ok(false) => return Reply::NullArray,
                Err(e) => return Reply::err(format!("ERR {e}")),
            }
        }
    };
    // Server commands (`SELECT`, `CLIENT`, `CONFIG`, ...) touch no data:
    // each runs once, in its place, even when a conflict makes EXEC run the
    // data commands again.
    let queued = queued.requests();
    // The rules may have changed since the commands were queued: a
    // command now refused answers so, in its place (Redis's EXEC).
    let refused: Vec<Option<Reply>> = queued
        .iter()
        .map(|req| crate::acl::gate::exec_refusal(s, session, req))
        .collect();
    let mut server_replies: Vec<Option<Reply>> = vec![None; queued.len()];
    loop {
        let mut replies = Vec::with_capacity(queued.len());
        let mut drops = Vec::new();
        let mut effects = crate::effects::Effects::default();
        for ((req, server_reply), refused) in
            queued.iter().zip(server_replies.iter_mut()).zip(&refused)
        {
            if let Some(refused) = refused {
                replies.push(refused.clone());
                continue;
            }
            let name = String::from_utf8_lossy(&req[0]).to_ascii_lowercase();
            let mut acc = InTx::new(&mut tx, &sp);
            let run = registry::find(&name).map(|c| c.run);
            let r = match run {
                Some(
                    Run::Data { handler, .. }
                    | Run::Control {
                        in_tx: Some(handler),
                        ..
                    },
                ) => to_reply(handler(&name, req, &mut acc, &s.cursors)),
                // Sent once the transaction commits (below): a subscriber
                // that reads the data when told sees the transaction's
                // writes, and a transaction that fails publishes nothing.
                Some(Run::Publish { .. }) => effects.publish(s, name == "spublish", req),
                Some(Run::Script { .. }) => {
                    let ran = scripting::eval_in(s, &mut acc, req, &mut effects);
                    if ran.killed {
                        // Nothing of the transaction commits.
                        return ran.reply;
                    }
                    ran.reply
                }
                // Counted in `INFO commandstats` by `control` itself.
                _ => {
                    let r = server_reply
                        .get_or_insert_with(|| control(s, session, &name, req.clone()).0)
                        .clone();
                    drops.append(&mut acc.drops);
                    replies.push(r);
                    continue;
                }
            };
            drops.append(&mut acc.drops);
            effects.notices(&mut acc.notices);
            crate::tracking::reads::after_command(s, session, &name, req);
            replies.push(r);
        }
        match tx.commit_opt(&opts) {
            Ok(()) => {
                apply_drops(&sp, drops);
                effects.apply(s);
                // Shown to monitors and counted once they have run for good.
                for (req, reply) in queued.iter().zip(&replies) {
                    let name = String::from_utf8_lossy(&req[0]).to_ascii_lowercase();
                    let hidden = || registry::hidden_from_monitors(&name, req);
                    s.monitors
                        .feed(&name, req, Some(&session.client.addr), hidden);
                    let in_tx = registry::find(&name).is_some_and(|c| match c.run {
                        Run::Data { .. } | Run::Script { .. } => true,
                        Run::Control { in_tx, .. } => in_tx.is_some(),
                        Run::Publish { .. } => false,
                    });
                    if in_tx {
                        s.cmdstats
                            .called(&name, 1, std::time::Duration::ZERO, reply);
                    }
                }
                return Reply::Array(replies);
            }
            Err(slsm::Error::Conflict) => {
                tx = s.store.db().transaction();
                match read_watched(&mut tx, &ks, &watched_keys) {
                    Ok(values) if values == watched_values => {}
                    Ok(_) => return Reply::NullArray,
                    Err(e) => return Reply::err(format!("ERR {e}")),
                }
            }
            Err(e) => return Reply::err(format!("ERR {e}")),
        }
    }
}
