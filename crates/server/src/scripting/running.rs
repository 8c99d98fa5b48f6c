//! What runs right now: each script's and function's kill switch, and
//! for a function what `FUNCTION STATS` shows; `SCRIPT KILL` and
//! `FUNCTION KILL` as Redis answers them; and whether the server is busy:
//! once a script or function has run longer than `busy-reply-threshold`
//! (`lua-time-limit`), other clients' commands are answered `BUSY`, as
//! Redis answers them, but for the few Redis lets through (`SCRIPT KILL`,
//! `FUNCTION KILL`, `SHUTDOWN`, ...: the `allow_busy` flag of their registry rows). Until then
//! they are served beside it: a script runs in its own transaction, not
//! by holding the server (see `scripting/mod.rs`).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::Arc;
use std::time::Instant;

/// A script or function being run: its kill switch, and for a function
/// what `FUNCTION STATS` shows.
#[derive(Clone)]
pub struct Running {
    pub(super) killed: Arc<AtomicBool>,
    pub(super) started: Instant,
    pub(super) function: Option<Arc<RunningFunction>>,
    /// Applied from a cluster's log: every node runs it, so killing it on
    /// one would make the nodes' data differ (`SCRIPT KILL` refuses).
    pub(super) replicated: bool,
}

pub struct RunningFunction {
    pub name: String,
    pub command: Vec<Vec<u8>>,
    pub started: Instant,
}

impl Running {
    pub(super) fn script(killed: Arc<AtomicBool>) -> Running {
        Running {
            killed,
            started: Instant::now(),
            function: None,
            replicated: crate::replay::clock().is_some(),
        }
    }

    pub(super) fn function(
        killed: Arc<AtomicBool>,
        name: String,
        command: Vec<Vec<u8>>,
    ) -> Running {
        let started = Instant::now();
        Running {
            killed,
            started,
            function: Some(Arc::new(RunningFunction {
                name,
                command,
                started,
            })),
            replicated: crate::replay::clock().is_some(),
        }
    }
}

/// How long a script may run before other clients are answered `BUSY`
/// (Redis's default `busy-reply-threshold`, in milliseconds).
pub const BUSY_AFTER_MS: u64 = 5_000;

/// Counts the running scripts and holds the busy threshold, so a command
/// checks for a busy server with one atomic load when none runs.
pub struct Busy {
    pub(super) running: AtomicUsize,
    pub(super) after_ms: AtomicU64,
}

impl Default for Busy {
    fn default() -> Busy {
        Busy {
            running: AtomicUsize::new(0),
            after_ms: AtomicU64::new(BUSY_AFTER_MS),
        }
    }
}
