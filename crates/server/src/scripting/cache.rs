//! The scripts the server holds by SHA1 (`SCRIPT LOAD`, `EVAL`), and the
//! scripts running now (`SCRIPT KILL`, `BUSY`: `running.rs`).
//!
//! * **Owns**: the bodies, the flush count the interpreters watch, the
//!   running scripts. **Thread safety**: mutexes and atomics.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::running::{Busy, Running, RunningFunction};
use crate::error::{Fail, Outcome};
use crate::resp::Reply;

/// What the server keeps of scripts.
#[derive(Default)]
pub struct Scripts {
    pub(super) bodies: Mutex<HashMap<String, Arc<[u8]>>>,
    /// Bumped by `SCRIPT FLUSH`: each thread's interpreter forgets its
    /// compiled scripts when it sees a new value.
    pub(super) flushes: AtomicU64,
    pub(super) running: Mutex<Vec<Running>>,
    pub(super) busy: Busy,
}

impl Scripts {
    pub(super) fn bodies(&self) -> MutexGuard<'_, HashMap<String, Arc<[u8]>>> {
        self.bodies.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn running(&self) -> MutexGuard<'_, Vec<Running>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Scripts held by their SHA1 (`INFO`'s `number_of_cached_scripts`).
    pub fn cached(&self) -> usize {
        self.bodies().len()
    }

    /// The body of the script `sha` (lowercase hex), if held.
    pub fn body_of(&self, sha: &str) -> Option<Arc<[u8]>> {
        self.bodies().get(sha).cloned()
    }

    pub(super) fn add(&self, body: &[u8]) -> (String, Arc<[u8]>) {
        let sha = sha1_hex(body);
        let body = Arc::clone(
            self.bodies()
                .entry(sha.clone())
                .or_insert_with(|| body.into()),
        );
        (sha, body)
    }
}

pub fn sha1_hex(bytes: &[u8]) -> String {
    sha1_smol::Sha1::from(bytes).digest().to_string()
}

const BUSY_EVAL: &str =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
const BUSY_FUNCTION: &str =
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";

/// A script applied from a cluster's log runs on every node, each on its
/// own; a kill on one node would discard its effects there only. Redis's
/// answer for a script that may not be killed, and its way out.
const UNKILLABLE_REPLICATED: &str = "UNKILLABLE The script runs on every node of the cluster from the replicated log; killing it on one node would make their data differ. Wait for it to end, or stop the node with SHUTDOWN NOSAVE.";

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
        if ours.iter().any(|r| r.replicated) {
            return Err(Fail::Reply(Reply::err(UNKILLABLE_REPLICATED)));
        }
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
