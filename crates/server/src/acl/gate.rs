//! The checks a session's commands pass on their way in: its user kept
//! current with the table ([`refresh`]), `AUTH`'s login, and the refusal
//! of a command, key or channel its rules do not allow (logged, in
//! Redis's words), at the door and again at `EXEC`.
//!
//! * **Owns**: nothing; the users and the log are [`super::Acl`]'s.

use std::sync::Arc;

use super::caller::Caller;
use super::catalog;
use super::full_name;
use super::log::{self, Context, Reason};
use super::selector::Denied;
use crate::resp::Reply;
use crate::session::Session;
use crate::shared::Shared;

/// Brings the session's user up to date with the table: a changed user is
/// re-read; a deleted one leaves the session logged out as `default`
/// (its connection is being closed).
pub fn refresh(s: &Shared, session: &mut Session) {
    let epoch = s.acl.epoch();
    if session.acl_epoch == epoch {
        return;
    }
    session.acl_epoch = epoch;
    match s.acl.user(&session.user.name) {
        Some(u) => session.user = u,
        None => {
            session.user = s.acl.default_user();
            session.authenticated = false;
        }
    }
}

/// `AUTH`/`HELLO`'s login as `name`: the session's user on success, a
/// `auth` entry in the log on failure.
pub fn login(s: &Shared, session: &mut Session, name: &[u8], password: &[u8]) -> bool {
    let name = String::from_utf8_lossy(name).into_owned();
    match s.acl.user(&name).filter(|u| u.accepts(password)) {
        Some(u) => {
            session.client.set_user(&u.name);
            session.user = u;
            session.authenticated = true;
            session.acl_epoch = s.acl.epoch();
            true
        }
        None => {
            let context = context_of(session);
            let entry = log::Entry::new(Reason::Auth, context, "AUTH".into(), name);
            s.acl.record(&session.client, entry);
            false
        }
    }
}

fn context_of(session: &Session) -> Context {
    match session.queued.is_some() {
        true => Context::Multi,
        false => Context::Toplevel,
    }
}

/// The refusal of a command the session's user may not run, logged, in
/// Redis's words (`processCommand`); `None` if it may run.
pub fn refusal(s: &Shared, session: &Session, req: &[Vec<u8>]) -> Option<Reply> {
    if session.user.unrestricted() {
        return None;
    }
    let cmd = catalog::catalog().of_request(req);
    let denied = session.user.check(cmd, req).err()?;
    log_denied(s, session, context_of(session), cmd, req, denied);
    Some(Reply::err(match denied {
        Denied::Command => format!(
            "NOPERM this user has no permissions to run the '{}' command",
            full_name(cmd, req)
        ),
        Denied::Key(_) => {
            "NOPERM this user has no permissions to access one of the keys used as arguments".into()
        }
        Denied::Channel(_) => {
            "NOPERM this user has no permissions to access one of the channels used as arguments"
                .into()
        }
    }))
}

/// `EXEC`'s check of a queued command: the rules may have changed since
/// it was queued (`execCommand`).
pub fn exec_refusal(s: &Shared, session: &Session, req: &[Vec<u8>]) -> Option<Reply> {
    if session.user.unrestricted() {
        return None;
    }
    let cmd = catalog::catalog().of_request(req);
    let denied = session.user.check(cmd, req).err()?;
    log_denied(s, session, Context::Multi, cmd, req, denied);
    let reason = match denied {
        Denied::Command => "no permission to execute the command or subcommand",
        Denied::Key(_) => "no permission to touch the specified keys",
        Denied::Channel(_) => "no permission to access one of the channels used as arguments",
    };
    Some(Reply::err(format!("NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: {reason}")))
}

fn log_denied(
    s: &Shared,
    session: &Session,
    context: Context,
    cmd: Option<&catalog::Command>,
    req: &[Vec<u8>],
    denied: Denied,
) {
    let (reason, object) = match denied {
        Denied::Command => (Reason::Command, full_name(cmd, req)),
        Denied::Key(i) => (Reason::Key, String::from_utf8_lossy(&req[i]).into_owned()),
        Denied::Channel(i) => (
            Reason::Channel,
            String::from_utf8_lossy(&req[i]).into_owned(),
        ),
    };
    let entry = log::Entry::new(reason, context, object, session.user.name.clone());
    s.acl.record(&session.client, entry);
}

/// The script caller for a session: `None` when its user is unrestricted.
pub fn caller_of(session: &Session) -> Option<Caller> {
    match session.user.unrestricted() {
        true => None,
        false => Some(Caller {
            user: Arc::clone(&session.user),
            client: Some(Arc::clone(&session.client)),
        }),
    }
}
