//! What runs right now: each script's and function's kill switch, and
//! for a function what `FUNCTION STATS` shows; `SCRIPT KILL` and
//! `FUNCTION KILL` as Redis answers them.

use std::sync::atomic::{AtomicBool, Ordering};
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
            function: Some(Arc::new(RunningFunction {
                name,
                command,
                started,
            })),
        }
    }
}

impl Scripts {
    pub(super) fn start(&self, run: Running) {
        self.running().push(run);
    }

    pub(super) fn finish(&self, run: &Running) {
        self.running()
            .retain(|r| !Arc::ptr_eq(&r.killed, &run.killed));
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
