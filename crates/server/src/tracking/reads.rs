//! The keys a tracking client's command read, remembered for it (Redis's
//! `trackingRememberKeys`, called from `call()`): the keys of a read-only
//! command, and those a script declared if it called one (`EVAL_RO` and
//! `FCALL_RO` alike: a script that only pings tracks nothing).
//!
//! * **Owns**: nothing.
//! * **Called by**: `dispatch` after each command it runs, `EXEC` after
//!   each queued command.

use crate::registry::{self, Run, READONLY};
use crate::session::Session;
use crate::shared::Shared;

/// Client `session` ran `req` (command `name`): remembers the keys it
/// read, if it tracks them.
pub fn after_command(s: &Shared, session: &Session, name: &str, req: &[Vec<u8>]) {
    // Taken whatever the session: a flag left by one script must not
    // count for the next.
    let script_read = super::take_script_read();
    let Some(mode) = session.tracking else {
        return;
    };
    if mode.bcast || (mode.optin && !session.caching) || (mode.optout && session.caching) {
        return;
    }
    let Some(cmd) = registry::find(name) else {
        return;
    };
    let reads = match cmd.run {
        Run::Script { .. } => script_read,
        _ => cmd.flags_of(req).has(READONLY),
    };
    if !reads {
        return;
    }
    let keys = crate::command_docs::key_access(req);
    s.tracking.remember(
        session.id,
        keys.iter().map(|&(at, _, _)| req[at].as_slice()),
    );
}

/// A script's call of `name` (lowercase): noted if it reads only.
pub fn script_called(name: &str) {
    if registry::find(name).is_some_and(|c| c.flags.has(READONLY)) {
        super::script_read();
    }
}
