//! What runs right now: each script's and function's kill switch, and
//! for a function what `FUNCTION STATS` shows; `SCRIPT KILL` and
//! `FUNCTION KILL` as Redis answers them; and whether the server is busy:
//! once a script or function has run longer than `busy-reply-threshold`
//! (`lua-time-limit`), other clients' commands are answered `BUSY`, as
//! Redis answers them, but for the few Redis lets through (`SCRIPT KILL`,
//! `FUNCTION KILL`, `SHUTDOWN`, ...: the `allow_busy` flag of their registry rows). Until then
//! they are served beside it: a script runs in its own transaction, not
//! by holding the server (see `scripting/mod.rs`).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use super::Scripts;
use crate::commands::{Fail, Outcome};
use crate::resp::Reply;

/// A script or function being run: its kill switch, and for a function
/// what `FUNCTION STATS` shows.
#[derive(Clone)]
pub struct Running {
    killed: Arc<AtomicBool>,
    started: Instant,
    function: Option<Arc<RunningFunction>>,
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
        }
    }
}

/// How long a script may run before other clients are answered `BUSY`
/// (Redis's default `busy-reply-threshold`, in milliseconds).
pub const BUSY_AFTER_MS: u64 = 5_000;

/// Counts the running scripts and holds the busy threshold, so a command
/// checks for a busy server with one atomic load when none runs.
pub struct Busy {
    running: AtomicUsize,
    after_ms: AtomicU64,
}

impl Default for Busy {
    fn default() -> Busy {
        Busy {
            running: AtomicUsize::new(0),
            after_ms: AtomicU64::new(BUSY_AFTER_MS),
        }
    }
}

const BUSY_EVAL: &str =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
const BUSY_FUNCTION: &str =
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";

impl Scripts {
    pub(super) fn start(&self, run: Running) {
        self.running().push(run);
        self.busy.running.fetch_add(1, Ordering::AcqRel);
    }

    pub(super) fn finish(&self, run: &Running) {
        self.running()
            .retain(|r| !Arc::ptr_eq(&r.killed, &run.killed));
        self.busy.running.fetch_sub(1, Ordering::AcqRel);
    }

    /// `BUSY`'s error if a script or function has run past the threshold
    /// (naming the kill command for the oldest one's kind).
    pub fn busy_error(&self) -> Option<&'static str> {
        if self.busy.running.load(Ordering::Acquire) == 0 {
            return None;
        }
        let after = std::time::Duration::from_millis(self.busy_after_ms());
        let running = self.running();
        let oldest = running.iter().min_by_key(|r| r.started)?;
        match (oldest.started.elapsed() >= after, oldest.function.is_some()) {
            (false, _) => None,
            (true, false) => Some(BUSY_EVAL),
            (true, true) => Some(BUSY_FUNCTION),
        }
    }

    pub fn busy_after_ms(&self) -> u64 {
        self.busy.after_ms.load(Ordering::Relaxed)
    }

    pub fn set_busy_after_ms(&self, ms: u64) {
        self.busy.after_ms.store(ms, Ordering::Relaxed);
    }

    /// Stops every running script and function (shutdown).
    pub fn kill_all(&self) {
        let running = self.running();
        running
            .iter()
            .for_each(|r| r.killed.store(true, Ordering::Relaxed));
    }

    /// `SCRIPT KILL` (`functions` false) or `FUNCTION KILL`: stops the
    /// scripts (or functions) running. Redis's errors when none is, with
    /// a `BUSY` naming the other command when one of the other kind is.
    pub(super) fn kill(&self, functions: bool) -> Outcome {
        let running = self.running();
        let (ours, others): (Vec<&Running>, Vec<&Running>) = running
            .iter()
            .partition(|r| r.function.is_some() == functions);
        ours.iter()
            .for_each(|r| r.killed.store(true, Ordering::Relaxed));
        match (ours.is_empty(), others.is_empty(), functions) {
            (false, _, _) => Ok(Reply::ok()),
            (true, true, _) => Err(Fail::Reply(Reply::err(
                "NOTBUSY No scripts in execution right now.",
            ))),
            (true, false, true) => Err(Fail::Reply(Reply::err(
                "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.",
            ))),
            (true, false, false) => Err(Fail::Reply(Reply::err(
                "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.",
            ))),
        }
    }

    /// The longest-running function, for `FUNCTION STATS`.
    pub(super) fn running_function(&self) -> Option<Arc<RunningFunction>> {
        self.running()
            .iter()
            .filter_map(|r| r.function.clone())
            .min_by_key(|f| f.started)
    }
}
