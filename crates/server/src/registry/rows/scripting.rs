//! The scripting commands (Redis's `scripting` group): `EVAL`, `FCALL`
//! and their forms run a script (in a cluster, the writing forms through
//! the log); `SCRIPT` and `FUNCTION` manage them. Handlers in
//! `crate::scripting`.

use super::common::{answer, Class, Place, Row};
use crate::registry::{ControlFn, Run};
use crate::resp::Request;

const SCRIPT: ControlFn = |s, _, name, r| answer(crate::scripting::command(s, name, r));

pub const ROWS: &[Row] = &[
    Row::new("eval", Run::Script { handler: SCRIPT }),
    Row::new("evalsha", Run::Script { handler: SCRIPT }),
    Row::new("eval_ro", Run::Script { handler: SCRIPT }),
    Row::new("evalsha_ro", Run::Script { handler: SCRIPT }),
    Row::new("fcall", Run::Script { handler: SCRIPT }),
    Row::new("fcall_ro", Run::Script { handler: SCRIPT }),
    Row::control("script", Class::Anywhere, SCRIPT),
    Row::placed("function", Place::ByArgs(function_class), SCRIPT),
];

/// `FUNCTION`'s reading subcommands run where reads do; the rest change
/// the libraries every node holds, so they go through the log.
fn function_class(req: &Request) -> Class {
    match req.get(1).map(|s| s.to_ascii_lowercase()).as_deref() {
        Some(b"list" | b"dump" | b"stats" | b"help") => Class::Read,
        _ => Class::Write,
    }
}
