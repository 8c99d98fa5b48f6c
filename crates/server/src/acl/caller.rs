//! The user a command runs as, on the thread running it, for the checks
//! made inside a command: a script's `redis.call`s (Redis's
//! `scriptVerifyACL`), `redis.acl_check_cmd`, `SORT`'s patterns. Set by
//! `dispatch::control` around each command of a restricted user, and by a
//! cluster node around an entry proposed for one (`Body::AsUser` carries
//! the rules, so every node checks a script's calls alike).
//!
//! Owns the thread-local caller; each check reads the users table's
//! copy the caller holds, and a refusal is logged in the ACL log.

use std::cell::RefCell;
use std::sync::Arc;

use super::catalog;
use super::full_name;
use super::log::{Context, Entry, Reason};
use super::selector::Denied;
use super::user::User;

/// The caller of a running command: its user and connection (named in
/// the log; none for an entry a cluster node applies, whose refusals are
/// answered but not logged).
#[derive(Clone)]
pub struct Caller {
    pub user: Arc<User>,
    pub client: Option<Arc<crate::clients::Client>>,
}

thread_local! {
    static CALLER: RefCell<Option<Caller>> = const { RefCell::new(None) };
}

/// Runs `f` with `caller` as the current script caller (none for an
/// unrestricted user, whose calls need no check).
pub fn with<R>(caller: Option<Caller>, f: impl FnOnce() -> R) -> R {
    let previous = CALLER.with(|c| c.replace(caller));
    let out = f();
    CALLER.with(|c| *c.borrow_mut() = previous);
    out
}

pub fn get() -> Option<Caller> {
    CALLER.with(|c| c.borrow().clone())
}

/// A script's `redis.call`: the refusal if its caller may not run `req`
/// (logged with the `lua` context), Redis's `scriptVerifyACL`.
pub fn script_refusal(acl: &super::Acl, req: &[Vec<u8>]) -> Option<String> {
    let caller = get()?;
    let cmd = catalog::catalog().of_request(req);
    let denied = caller.user.check(cmd, req).err()?;
    let (reason, object, message) = match denied {
        Denied::Command => (
            Reason::Command,
            full_name(cmd, req),
            "can't run this command or subcommand",
        ),
        Denied::Key(i) => (
            Reason::Key,
            String::from_utf8_lossy(&req[i]).into_owned(),
            "can't access at least one of the keys mentioned in the command arguments",
        ),
        Denied::Channel(i) => (
            Reason::Channel,
            String::from_utf8_lossy(&req[i]).into_owned(),
            "can't publish to the channel mentioned in the command",
        ),
    };
    let entry = Entry::new(reason, Context::Lua, object, caller.user.name.clone());
    if let Some(client) = &caller.client {
        acl.record(client, entry);
    }
    Some(format!("ERR The user executing the script {message}"))
}

/// `redis.acl_check_cmd`: whether the script's caller may run `req`.
pub fn may_run(req: &[Vec<u8>]) -> bool {
    match get() {
        None => true,
        Some(caller) => {
            let cmd = catalog::catalog().of_request(req);
            caller.user.check(cmd, req).is_ok()
        }
    }
}

/// Whether the running command's caller may read every key (true for an
/// unrestricted one, and for a command applied from a cluster's log).
pub fn reads_every_key(req: &[Vec<u8>]) -> bool {
    match get() {
        None => true,
        Some(caller) => {
            let cmd = catalog::catalog().of_request(req);
            caller.user.reads_every_key(cmd, req)
        }
    }
}
