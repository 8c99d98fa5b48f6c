//! `CLIENT`'s subcommands beyond naming, listing and killing (`clients.rs`):
//! `REPLY ON|OFF|SKIP`, `UNBLOCK id [TIMEOUT|ERROR]`, `NO-EVICT`,
//! `TRACKING`, `CACHING`, `GETREDIR`, `TRACKINGINFO`, `PAUSE`, `UNPAUSE`,
//! `HELP`, with Redis 7.0's replies and errors; and `RESET`, which puts
//! every mode of the connection back as it was.
//!
//! Decided and written down:
//! - `TRACKING`, `CACHING`, `GETREDIR` and `TRACKINGINFO` are client-side
//!   caching's (`crate::tracking::command`).
//! - `PAUSE` and `UNPAUSE` hold clients as Redis does (`crate::pause`).
//! - `NO-EVICT` is accepted and changes nothing: clients are never
//!   evicted here.

use std::sync::atomic::Ordering;

use crate::commands::{fail, int_arg, syntax_error, Fail, Outcome};
use crate::resp::Reply;
use crate::session::{ReplyMode, Session};
use crate::shared::Shared;
use crate::tracking::command as tracking;

const HELP: &[&str] = &[
    "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CACHING (YES|NO)",
    "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
    "GETREDIR",
    "    Return the client ID we are redirecting to when tracking is enabled.",
    "GETNAME",
    "    Return the name of the current connection.",
    "ID",
    "    Return the ID of the current connection.",
    "INFO",
    "    Return information about the current client connection.",
    "KILL <ip:port>",
    "    Kill connection made from <ip:port>.",
    "KILL <option> <value> [<option> <value> [...]]",
    "    Kill connections. Options are:",
    "    * ADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made from the specified address",
    "    * LADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made to specified local address",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Kill connections by type.",
    "    * USER <username>",
    "      Kill connections authenticated by <username>.",
    "    * SKIPME (YES|NO)",
    "      Skip killing current connection (default: yes).",
    "LIST [options ...]",
    "    Return information about client connections. Options:",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Return clients of specified type.",
    "UNPAUSE",
    "    Stop the current client pause, resuming traffic.",
    "PAUSE <timeout> [WRITE|ALL]",
    "    Suspend all, or just write, clients for <timeout> milliseconds.",
    "REPLY (ON|OFF|SKIP)",
    "    Control the replies sent to the current connection.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
    "UNBLOCK <clientid> [TIMEOUT|ERROR]",
    "    Unblock the specified blocked client.",
    "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
    "         [OPTIN] [OPTOUT] [NOLOOP]",
    "    Control server assisted client side caching.",
    "TRACKINGINFO",
    "    Report tracking status for the current connection.",
    "NO-EVICT (ON|OFF)",
    "    Protect current client connection from eviction.",
    "HELP",
    "    Prints this help.",
];

impl crate::clients::Client {
    /// Ends the client's wait in a blocking command (`CLIENT UNBLOCK`).
    pub fn request_unblock(&self, with_error: bool) {
        *self
            .unblock_request
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(with_error);
        self.unblock.notify_one();
    }

    /// The pending `CLIENT UNBLOCK`, if any: with an error (true) or as a
    /// timeout.
    pub fn take_unblock(&self) -> Option<bool> {
        self.unblock_request
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    /// Resolves when [`request_unblock`](Self::request_unblock) is called.
    pub async fn unblocked(&self) {
        self.unblock.notified().await
    }
}

/// The subcommands this module answers; `None` for the others.
pub fn command(s: &Shared, session: &mut Session, a: &[Vec<u8>]) -> Option<Outcome> {
    let sub = a.get(1).map(|s| s.to_ascii_lowercase()).unwrap_or_default();
    Some(match (sub.as_slice(), a.len()) {
        (b"help", 2) => Ok(Reply::Array(
            HELP.iter().map(|l| Reply::Simple(l.to_string())).collect(),
        )),
        (b"reply", 3) => reply(session, &a[2]),
        (b"unblock", 3 | 4) => unblock(s, &a[2..]),
        (b"no-evict", 3) => on_off(&a[2]).map(|_| Reply::ok()),
        (b"tracking", n) if n >= 3 => tracking::tracking(s, session, a),
        (b"caching", 3) => tracking::caching(session, &a[2]),
        (b"getredir", 2) => Ok(tracking::getredir(s, session)),
        (b"trackinginfo", 2) => Ok(tracking::info(s, session)),
        (b"unpause", 2) => {
            s.pause.stop();
            Ok(Reply::ok())
        }
        (b"pause", 3 | 4) => pause(s, &a[2..]),
        // Redis's arity for PAUSE is "at least 3": more is its syntax error.
        (b"pause", n) if n > 4 => Err(crate::error::subcommand_error("CLIENT", a)),
        _ => return None,
    })
}

/// `CLIENT PAUSE timeout [WRITE|ALL]` (see `crate::pause`).
fn pause(s: &Shared, args: &[Vec<u8>]) -> Outcome {
    let all = match args.get(1).map(|m| m.to_ascii_lowercase()) {
        None => true,
        Some(m) if m == b"all" => true,
        Some(m) if m == b"write" => false,
        Some(_) => return Err(fail("ERR CLIENT PAUSE mode must be WRITE or ALL")),
    };
    let ms =
        int_arg(&args[0]).map_err(|_| fail("ERR timeout is not an integer or out of range"))?;
    if ms < 0 {
        return Err(fail("ERR timeout is negative"));
    }
    let until = std::time::Instant::now() + std::time::Duration::from_millis(ms as u64);
    s.pause.start(until, all);
    Ok(Reply::ok())
}

fn on_off(arg: &[u8]) -> Result<bool, Fail> {
    match arg.to_ascii_lowercase().as_slice() {
        b"on" => Ok(true),
        b"off" => Ok(false),
        _ => Err(syntax_error()),
    }
}

/// `CLIENT REPLY ON|OFF|SKIP`: `ON` is answered, `OFF` and `SKIP` are not.
fn reply(session: &mut Session, arg: &[u8]) -> Outcome {
    session.reply_mode = match arg.to_ascii_lowercase().as_slice() {
        b"on" => ReplyMode::On,
        b"off" => ReplyMode::Off,
        b"skip" => ReplyMode::SkipThis,
        _ => return Err(syntax_error()),
    };
    Ok(Reply::ok())
}

/// `CLIENT UNBLOCK id [TIMEOUT|ERROR]`: 1 if that client was blocked (it
/// then answers as on its timeout, or with Redis's `-UNBLOCKED` error).
fn unblock(s: &Shared, args: &[Vec<u8>]) -> Outcome {
    let id = int_arg(&args[0])?;
    let with_error = match args.get(1).map(|r| r.to_ascii_lowercase()) {
        None => false,
        Some(r) if r == b"timeout" => false,
        Some(r) if r == b"error" => true,
        Some(_) => return Err(fail("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")),
    };
    let target = s.registry.all().into_iter().find(|c| c.id as i64 == id);
    Ok(Reply::Int(match target {
        Some(c) if c.blocked.load(Ordering::Acquire) => {
            c.request_unblock(with_error);
            1
        }
        _ => 0,
    }))
}

/// `RESET`: the connection as it was when it connected: no transaction,
/// watch, subscription or `MONITOR`, RESP2, replies on, no name, and (with
/// a password) logged out, back to the `default` user.
pub(crate) fn reset(s: &crate::shared::Shared, session: &mut crate::session::Session) -> Reply {
    session.leave_pubsub(s);
    tracking::stop(s, session);
    session.queued = None;
    session.queue_failed = false;
    session.watch = None;
    session.watched.clear();
    session.readonly = false;
    session.proto = 2;
    session.pending_proto = 2;
    session.reply_mode = ReplyMode::On;
    session.authenticated = s.acl.default_logs_in();
    session.user = s.acl.default_user();
    session.client.set_user("default");
    session.client.names().name.clear();
    Reply::Simple("RESET".into())
}
