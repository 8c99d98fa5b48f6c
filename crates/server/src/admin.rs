//! Connection and server commands: HELLO AUTH SAVE BGSAVE FLUSHDB FLUSHALL
//! SHUTDOWN TIME
//! (CLIENT is in `clients.rs`, CONFIG in `config/`, INFO and DBSIZE in
//! `info.rs`).

use std::sync::Arc;

use crate::commands::{fail, int_arg, Fail, Outcome};
use crate::resp::Reply;
use crate::session::Session;
use crate::shared::Shared;

pub fn hello(s: &Shared, session: &mut Session, a: &[Vec<u8>]) -> Outcome {
    let mut i = 1;
    if let Some(v) = a.get(1) {
        let proto = int_arg(v)
            .map_err(|_| fail("ERR Protocol version is not an integer or out of range"))?;
        if !(2..=3).contains(&proto) {
            return Err(fail("NOPROTO unsupported protocol version"));
        }
        session.pending_proto = proto as u8;
        i = 2;
    }
    while i < a.len() {
        match a[i].to_ascii_lowercase().as_slice() {
            b"auth" if i + 2 < a.len() => {
                auth(s, session, Some(&a[i + 1]), &a[i + 2])?;
                i += 3;
            }
            b"setname" if i + 1 < a.len() => {
                crate::client_command::check_name(&a[i + 1])?;
                session.client.names().name = a[i + 1].clone();
                i += 2;
            }
            _ => {
                return Err(fail(&format!(
                    "ERR Syntax error in HELLO option '{}'",
                    String::from_utf8_lossy(&a[i])
                )))
            }
        }
    }
    if !session.authenticated {
        return Err(fail("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"));
    }
    session.proto = session.pending_proto;
    Ok(Reply::Map(vec![
        (Reply::bulk("server"), Reply::bulk("redis")),
        (
            Reply::bulk("version"),
            Reply::bulk(crate::version::REDIS_VERSION),
        ),
        (Reply::bulk("proto"), Reply::Int(session.proto as i64)),
        (Reply::bulk("id"), Reply::Int(session.id as i64)),
        (Reply::bulk("mode"), Reply::bulk("standalone")),
        (Reply::bulk("role"), Reply::bulk("master")),
        (Reply::bulk("modules"), Reply::Array(Vec::new())),
    ]))
}

/// `AUTH [user] password`, and HELLO's `AUTH user password`, through
/// the ACL users (`acl::gate::login`). The one-argument form logs in as
/// `default`, and is refused as Redis refuses it while that user needs
/// no password, since a client sending one expects it to be needed.
pub fn auth(
    s: &Shared,
    session: &mut Session,
    user: Option<&[u8]>,
    password: &[u8],
) -> Result<(), crate::commands::Fail> {
    if user.is_none() && s.acl.default_user().nopass {
        return Err(fail("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"));
    }
    match crate::acl::gate::login(s, session, user.unwrap_or(b"default"), password) {
        true => Ok(()),
        false => Err(fail(
            "WRONGPASS invalid username-password pair or user is disabled.",
        )),
    }
}

/// `FLUSHDB`/`FLUSHALL`: every key dropped; the blocked clients are woken
/// (a stream group reader is told its stream went).
pub fn flush(s: &Shared) -> Reply {
    let reply = crate::session::to_reply(
        s.store
            .flush_all()
            .map(|_| Reply::ok())
            .map_err(Fail::Engine),
    );
    s.waiters.wake_all();
    s.tracking.flushed();
    reply
}

/// `SAVE`: every acknowledged write is in the log already (Redis's AOF),
/// so a save is a flush of the memory runs to run files and a sync, which
/// makes the next start replay no log.
pub fn save(s: &Shared) -> Outcome {
    s.saves
        .flush_and_sync(&s.store.db())
        .map_err(Fail::Engine)?;
    Ok(Reply::ok())
}

/// `BGSAVE [SCHEDULE]`: [`save`] on a blocking thread; the reply comes at
/// once, and `LASTSAVE` changes when it is done.
pub fn bgsave(s: &Shared, a: &[Vec<u8>]) -> Outcome {
    match a.get(1).map(|o| o.to_ascii_lowercase()) {
        None => {}
        Some(o) if o == b"schedule" && a.len() == 2 => {}
        Some(_) => return Err(fail("ERR syntax error")),
    }
    if !s.saves.start_background() {
        return Err(fail("ERR Background save already in progress"));
    }
    let (db, saves) = (s.store.db(), Arc::clone(&s.saves));
    tokio::task::spawn_blocking(move || {
        let _ = saves.flush_and_sync(&db);
        saves.finish_background();
    });
    Ok(Reply::Simple("Background saving started".into()))
}

/// `SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]`, as Redis 7 checks it:
/// `Some(abort)`, or `None` for a syntax error. Saving, waiting for
/// replicas and forcing have no meaning here: every acknowledged write is
/// in the log, and the database is flushed and closed either way.
pub(crate) fn shutdown_modifiers(args: &[Vec<u8>]) -> Option<bool> {
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
