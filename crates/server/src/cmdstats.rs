//! `INFO commandstats` and `INFO errorstats`: per command, how many calls
//! ran, the microseconds they took, how many were rejected before running
//! (wrong arity, `NOAUTH`, `BUSY`, refused in `MULTI`) and how many failed
//! (answered an error); per error code (the error's first word), how many
//! errors were answered. Counted as Redis counts them: each command of a
//! `MULTI` and each `redis.call` of a script is a call of its own, and
//! `CONFIG RESETSTAT` clears them all.
//!
//! Owns the counters. Thread-safety: the per-command counters are atomics
//! in a table of the registry's commands (a command's place found through
//! the registry's hash map); the error codes, rarer, sit behind a mutex.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::resp::Reply;

#[derive(Default)]
struct Counters {
    calls: AtomicU64,
    usec: AtomicU64,
    rejected: AtomicU64,
    failed: AtomicU64,
}

pub struct CommandStats {
    /// The served commands' names, in the order their lines are listed.
    names: Vec<&'static str>,
    index: HashMap<&'static str, usize>,
    by_command: Vec<Counters>,
    errors: Mutex<BTreeMap<String, u64>>,
    total_errors: AtomicU64,
}

impl CommandStats {
    /// Counters for each of the commands `names` (the registry's).
    pub fn new(names: impl IntoIterator<Item = &'static str>) -> CommandStats {
        let names: Vec<&'static str> = names.into_iter().collect();
        CommandStats {
            index: names.iter().enumerate().map(|(i, n)| (*n, i)).collect(),
            by_command: names.iter().map(|_| Counters::default()).collect(),
            names,
            errors: Mutex::default(),
            total_errors: AtomicU64::new(0),
        }
    }

    fn counters(&self, name: &str) -> Option<&Counters> {
        self.index.get(name).map(|&i| &self.by_command[i])
    }
}

thread_local! {
    /// The error the last failed call of the script running on this
    /// thread answered (and was counted with).
    static CALL_ERROR: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// A script's call answered `error`, counted already: the script's own
/// reply, when it passes that error on (raised by `redis.call`, or the
/// table of `redis.pcall` returned), is not counted again among the
/// errors (Redis's `ERR_REPLY_FLAG_NO_STATS_UPDATE`); the script still
/// counts as failed.
pub fn script_call_failed(error: &str) {
    CALL_ERROR.with(|c| *c.borrow_mut() = Some(error.to_string()));
}

/// A new top-level command starts on this thread.
pub fn new_command() {
    CALL_ERROR.with(|c| c.borrow_mut().take());
}

/// True if `error` is the failed call's error passed on.
fn passed_on(error: &str) -> bool {
    CALL_ERROR.with(|c| {
        c.borrow_mut()
            .take()
            .is_some_and(|call| error.starts_with(&call))
    })
}

/// The error code of an error reply (its first word), if it is one.
fn error_code(reply: &Reply) -> Option<&str> {
    match reply {
        Reply::Error(e) => Some(e.split(' ').next().unwrap_or("ERR")),
        _ => None,
    }
}

impl CommandStats {
    /// `count` calls of `name` that took `took` together and answered
    /// `reply` (each, for a group).
    pub fn called(&self, name: &str, count: u64, took: Duration, reply: &Reply) {
        let Some(c) = self.counters(name) else {
            return;
        };
        c.calls.fetch_add(count, Ordering::Relaxed);
        c.usec.fetch_add(took.as_micros() as u64, Ordering::Relaxed);
        if let Some(code) = error_code(reply) {
            c.failed.fetch_add(count, Ordering::Relaxed);
            let Reply::Error(e) = reply else { return };
            if !passed_on(e) {
                self.error(code, count);
            }
        }
    }

    /// A call of `name` refused before it ran, with `reply`.
    pub fn rejected(&self, name: &str, reply: &Reply) {
        if let Some(c) = self.counters(name) {
            c.rejected.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(code) = error_code(reply) {
            self.error(code, 1);
        }
    }

    fn error(&self, code: &str, count: u64) {
        self.total_errors.fetch_add(count, Ordering::Relaxed);
        let mut errors = self.errors.lock().unwrap_or_else(|p| p.into_inner());
        // Redis keeps at most 128 codes (past that, only the total grows).
        if errors.len() < 128 || errors.contains_key(code) {
            *errors.entry(code.to_string()).or_default() += count;
        }
    }

    /// Errors answered since the start or the last reset
    /// (`total_error_replies`).
    pub fn total_errors(&self) -> u64 {
        self.total_errors.load(Ordering::Relaxed)
    }

    /// `CONFIG RESETSTAT`.
    pub fn reset(&self) {
        for c in &self.by_command {
            for n in [&c.calls, &c.usec, &c.rejected, &c.failed] {
                n.store(0, Ordering::Relaxed);
            }
        }
        self.errors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        self.total_errors.store(0, Ordering::Relaxed);
    }

    /// `INFO commandstats`'s lines: the commands called or rejected.
    pub fn command_lines(&self) -> String {
        let mut out = String::new();
        for (name, c) in self.names.iter().zip(&self.by_command) {
            let calls = c.calls.load(Ordering::Relaxed);
            let rejected = c.rejected.load(Ordering::Relaxed);
            if calls == 0 && rejected == 0 {
                continue;
            }
            let usec = c.usec.load(Ordering::Relaxed);
            let per_call = match calls {
                0 => 0.0,
                n => usec as f64 / n as f64,
            };
            out.push_str(&format!(
                "cmdstat_{}:calls={calls},usec={usec},usec_per_call={per_call:.2},rejected_calls={rejected},failed_calls={}\r\n",
                name,
                c.failed.load(Ordering::Relaxed),
            ));
        }
        out
    }

    /// `INFO errorstats`'s lines.
    pub fn error_lines(&self) -> String {
        let errors = self.errors.lock().unwrap_or_else(|p| p.into_inner());
        errors
            .iter()
            .map(|(code, n)| format!("errorstat_{code}:count={n}\r\n"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_failures_and_rejections_are_counted_per_command() {
        let stats = CommandStats::new(["get", "incr", "set", "exec"]);
        stats.called("get", 3, Duration::from_micros(30), &Reply::Null);
        stats.called(
            "incr",
            1,
            Duration::ZERO,
            &Reply::err("ERR value is not an integer"),
        );
        stats.rejected(
            "get",
            &Reply::err("ERR wrong number of arguments for 'get' command"),
        );
        stats.called("nosuch", 1, Duration::ZERO, &Reply::Null);
        let lines = stats.command_lines();
        assert!(lines.contains(
            "cmdstat_get:calls=3,usec=30,usec_per_call=10.00,rejected_calls=1,failed_calls=0\r\n"
        ));
        assert!(lines.contains(
            "cmdstat_incr:calls=1,usec=0,usec_per_call=0.00,rejected_calls=0,failed_calls=1\r\n"
        ));
        assert!(!lines.contains("nosuch"));
        assert_eq!(stats.error_lines(), "errorstat_ERR:count=2\r\n");
        assert_eq!(stats.total_errors(), 2);
        stats.reset();
        assert_eq!(stats.command_lines(), "");
        assert_eq!(stats.error_lines(), "");
    }
}
