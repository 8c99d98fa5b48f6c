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
//! * **Owns**: nothing beyond a session's [`Watch`]; the queue and the
//!   flags live in the [`Session`].
//! * **Calls**: the engine's transactions, the data commands
//!   (`commands::run`) and, for queued server commands, `session::control`.

use slsm::Keyspace;

use crate::commands;
use crate::resp::Reply;
use crate::session::{control, to_reply, Session};
use crate::store::{Access, InTx};
use crate::Shared;

/// Commands a transaction may not hold. Redis refuses `SHUTDOWN` and `SAVE` (and
/// queues everything else but `MULTI`, `WATCH` and the like, which answer
/// at once). `FLUSHDB` and `FLUSHALL` Redis would queue, but emptying the
/// database is not a write the engine transaction `EXEC` commits can
/// hold, so here they are refused, with Redis's error, rather than run
/// outside the transaction's atomicity.
pub(crate) fn refused_in_multi(name: &str) -> bool {
    matches!(name, "shutdown" | "save" | "flushdb" | "flushall")
}

/// Keys a client watches, and the transactions that read them, one per
/// `WATCH` (a key is watched from its own `WATCH` on): their commits (with
/// no writes) fail if any of the keys was written since.
#[derive(Default)]
pub struct Watch {
    txs: Vec<slsm::Transaction>,
    keys: Vec<Vec<u8>>,
}

pub(crate) fn watch(s: &Shared, session: &mut Session, keys: &[Vec<u8>]) -> commands::Outcome {
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
pub(crate) fn exec(s: &Shared, session: &mut Session) -> Reply {
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
