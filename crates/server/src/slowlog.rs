//! The slow log: `SLOWLOG GET [count] | LEN | RESET | HELP`, as Redis 7.0
//! keeps it. A command whose execution took at least
//! `slowlog-log-slower-than` microseconds (default 10,000; 0 logs every
//! command, a negative value none) is recorded with an increasing id, the
//! Unix time it finished, its duration, its first 32 arguments (each cut
//! at 128 bytes, Redis's markers for what was cut), the client's address
//! and name; the newest `slowlog-max-len` (default 128) are kept. Both
//! settings are read and changed with `CONFIG GET`/`SET`.
//!
//! Owns: the entries, behind one mutex taken only to record a slow
//! command or to answer `SLOWLOG`; the thresholds are atomics read on
//! every command. A pipeline's grouped commands (one engine call for a
//! run of `GET`s or `SET`s) are timed as the group, each member charged
//! its share. `EXEC` is not logged (as in Redis), nor are the commands it
//! runs (Redis logs those one by one); a blocked command is timed without
//! its wait. `AUTH` and `HELLO ... AUTH` arguments are redacted, as in
//! Redis.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::commands::{fail, Fail, Outcome};
use crate::resp::Reply;

/// Redis's `SLOWLOG_ENTRY_MAX_ARGC` and `SLOWLOG_ENTRY_MAX_STRING`.
const MAX_ARGS: usize = 32;
const MAX_STRING: usize = 128;

const HELP: &[&str] = &[
    "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET [<count>]",
    "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
    "    Entries are made of:",
    "    id, timestamp, time in microseconds, arguments array, client IP and port,",
    "    client name",
    "LEN",
    "    Return the length of the slowlog.",
    "RESET",
    "    Reset the slowlog.",
    "HELP",
    "    Prints this help.",
];

struct Entry {
    id: u64,
    unix_seconds: u64,
    micros: u64,
    args: Vec<Vec<u8>>,
    addr: String,
    name: String,
}

pub struct SlowLog {
    entries: Mutex<VecDeque<Entry>>,
    next_id: AtomicU64,
    pub slower_than_us: AtomicI64,
    pub max_len: AtomicU64,
}

impl Default for SlowLog {
    fn default() -> Self {
        SlowLog {
            entries: Mutex::new(VecDeque::new()),
            next_id: AtomicU64::new(0),
            slower_than_us: AtomicI64::new(10_000),
            max_len: AtomicU64::new(128),
        }
    }
}

impl SlowLog {
    fn entries(&self) -> std::sync::MutexGuard<'_, VecDeque<Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// True if a command that took `took` is to be logged.
    pub fn is_slow(&self, took: Duration) -> bool {
        let threshold = self.slower_than_us.load(Ordering::Relaxed);
        threshold >= 0 && took.as_micros() >= threshold as u128
    }

    /// Logs request `args` (command `name`, lowercase) of the client at
    /// `addr` named `client_name`, which took `took`, if it is slow.
    pub fn record(
        &self,
        name: &str,
        args: &[Vec<u8>],
        took: Duration,
        addr: &str,
        client_name: &str,
    ) {
        if name == "exec" || !self.is_slow(took) {
            return;
        }
        let entry = Entry {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            unix_seconds: crate::saves::unix_seconds(),
            micros: took.as_micros() as u64,
            args: logged_args(name, args),
            addr: addr.to_string(),
            name: client_name.to_string(),
        };
        let mut entries = self.entries();
        entries.push_front(entry);
        entries.truncate(self.max_len.load(Ordering::Relaxed) as usize);
    }

    /// `SLOWLOG ...`.
    pub fn command(&self, a: &[Vec<u8>]) -> Outcome {
        let sub = a.get(1).map(|s| s.to_ascii_lowercase()).unwrap_or_default();
        match (sub.as_slice(), a.len()) {
            (b"help", 2) => Ok(Reply::Array(
                HELP.iter().map(|l| Reply::Simple(l.to_string())).collect(),
            )),
            (b"len", 2) => Ok(Reply::Int(self.entries().len() as i64)),
            (b"reset", 2) => {
                self.entries().clear();
                Ok(Reply::ok())
            }
            (b"get", 2 | 3) => {
                let count = match a.get(2) {
                    None => 10,
                    Some(arg) => count_arg(arg)?,
                };
                let entries = self.entries();
                let count = count.min(entries.len());
                Ok(Reply::Array(
                    entries.iter().take(count).map(entry_reply).collect(),
                ))
            }
            _ => Err(crate::error::subcommand_error("SLOWLOG", a)),
        }
    }

    /// Drops entries past a lowered `slowlog-max-len`.
    pub fn trim(&self) {
        let max = self.max_len.load(Ordering::Relaxed) as usize;
        self.entries().truncate(max);
    }
}

/// `SLOWLOG GET`'s count: -1 for all, else at least 0.
fn count_arg(arg: &[u8]) -> Result<usize, Fail> {
    match crate::commands::int_arg(arg) {
        Ok(-1) => Ok(usize::MAX),
        Ok(n) if n >= 0 => Ok(n as usize),
        _ => Err(fail("ERR count should be greater than or equal to -1")),
    }
}

fn entry_reply(e: &Entry) -> Reply {
    Reply::Array(vec![
        Reply::Int(e.id as i64),
        Reply::Int(e.unix_seconds as i64),
        Reply::Int(e.micros as i64),
        Reply::Array(e.args.iter().cloned().map(Reply::Bulk).collect()),
        Reply::bulk(e.addr.as_str()),
        Reply::bulk(e.name.as_str()),
    ])
}

/// The arguments as Redis logs them: at most 32 (the last saying how many
/// more there were), each at most 128 bytes (saying how many more), the
/// secrets of `AUTH` and `HELLO ... AUTH` redacted.
fn logged_args(name: &str, args: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let redacted = crate::monitor::secret_positions(name, args);
    let kept = args.len().min(MAX_ARGS);
    (0..kept)
        .map(|i| {
            if kept != args.len() && i == kept - 1 {
                return format!("... ({} more arguments)", args.len() - kept + 1).into_bytes();
            }
            if redacted(i) {
                return b"(redacted)".to_vec();
            }
            let a = &args[i];
            match a.len() > MAX_STRING {
                true => [
                    &a[..MAX_STRING],
                    format!("... ({} more bytes)", a.len() - MAX_STRING).as_bytes(),
                ]
                .concat(),
                false => a.clone(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_requests_are_cut_as_redis_cuts_them() {
        let args: Vec<Vec<u8>> = (0..40).map(|i| vec![b'a'; i * 10]).collect();
        let logged = logged_args("mset", &args);
        assert_eq!(logged.len(), 32);
        assert_eq!(logged[31], b"... (9 more arguments)");
        assert_eq!(logged[12].len(), 120);
        assert_eq!(
            logged[13],
            [&[b'a'; 128][..], b"... (2 more bytes)"].concat()
        );
        let auth = logged_args(
            "hello",
            &[
                b"HELLO".to_vec(),
                b"3".to_vec(),
                b"AUTH".to_vec(),
                b"u".to_vec(),
                b"p".to_vec(),
            ],
        );
        assert_eq!(auth[3], b"(redacted)");
        assert_eq!(auth[4], b"(redacted)");
    }

    #[test]
    fn keeps_the_newest_up_to_its_length() {
        let log = SlowLog::default();
        log.slower_than_us.store(0, Ordering::Relaxed);
        log.max_len.store(3, Ordering::Relaxed);
        for i in 0..5u8 {
            log.record(
                "get",
                &[b"GET".to_vec(), vec![i]],
                Duration::from_micros(5),
                "a:1",
                "",
            );
        }
        let entries = log.entries();
        let ids: Vec<u64> = entries.iter().map(|e| e.id).collect();
        assert_eq!(ids, [4, 3, 2]);
        drop(entries);
        log.slower_than_us.store(-1, Ordering::Relaxed);
        log.record("get", &[b"GET".to_vec()], Duration::from_secs(1), "a:1", "");
        assert_eq!(log.entries().len(), 3);
    }
}
