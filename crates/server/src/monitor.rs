//! `MONITOR`: every command the server runs, as a line to each monitoring
//! client, in Redis's format: `+<unix time with microseconds> [0 <client
//! address>] "arg" "arg" ...`, each argument quoted and escaped as Redis's
//! `sdscatrepr` does; `[0 lua]` for a script's `redis.call`s.
//!
//! Owns: the monitoring clients (their `pubsub::Subscriber`, whose outbox
//! and limits carry the lines as they carry messages) and their count,
//! read on every command so that no line is built while none watches.
//! As in Redis 7.0: the administrative commands (`CONFIG`, `SAVE`,
//! `SLOWLOG`, `SHUTDOWN`, `MONITOR`, `CLIENT KILL`/`LIST`, ...) are not
//! shown; `EVAL` is, then its script's calls; `AUTH`'s and `HELLO ...
//! AUTH`'s secrets are redacted; a `MULTI`'s commands are shown when
//! `EXEC` commits them, then `EXEC`. A command is shown as it starts,
//! before its reply (Redis 7.0 shows it after: the order between clients
//! may differ, never within one).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::pubsub::Subscriber;

#[derive(Default)]
pub struct Monitors {
    subs: Mutex<Vec<Arc<Subscriber>>>,
    count: AtomicUsize,
}

impl Monitors {
    fn subs(&self) -> MutexGuard<'_, Vec<Arc<Subscriber>>> {
        self.subs.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn add(&self, sub: &Arc<Subscriber>) {
        let mut subs = self.subs();
        if !subs.iter().any(|s| Arc::ptr_eq(s, sub)) {
            subs.push(Arc::clone(sub));
        }
        self.count.store(subs.len(), Ordering::Release);
    }

    pub fn remove(&self, sub: &Arc<Subscriber>) {
        let mut subs = self.subs();
        subs.retain(|s| !Arc::ptr_eq(s, sub));
        self.count.store(subs.len(), Ordering::Release);
    }

    /// True if some client is monitoring.
    pub fn any(&self) -> bool {
        self.count.load(Ordering::Acquire) > 0
    }

    /// Shows request `args` (command `name`, lowercase) run by the client
    /// at `source` (`None`: a script) to every monitor, unless `hidden()`
    /// (asked only while someone monitors) says Redis hides it
    /// (`registry::hidden_from_monitors`).
    pub fn feed(
        &self,
        name: &str,
        args: &[Vec<u8>],
        source: Option<&str>,
        hidden: impl FnOnce() -> bool,
    ) {
        if self.count.load(Ordering::Acquire) == 0 || hidden() {
            return;
        }
        let line: Arc<[u8]> = Arc::from(line(name, args, source));
        for sub in self.subs().iter() {
            sub.deliver_line(Arc::clone(&line));
        }
    }
}

fn line(name: &str, args: &[Vec<u8>], source: Option<&str>) -> Vec<u8> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let mut out = format!("{}.{:06} ", now.as_secs(), now.subsec_micros()).into_bytes();
    match source {
        Some(addr) => out.extend_from_slice(format!("[0 {addr}] ").as_bytes()),
        None => out.extend_from_slice(b"[0 lua] "),
    }
    let secret = secret_positions(name, args);
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        match secret(i) {
            true => out.extend_from_slice(b"\"(redacted)\""),
            false => quote(a, &mut out),
        }
    }
    out
}

/// Which arguments are secrets (`AUTH`'s, `HELLO ... AUTH user pass`),
/// shown as `(redacted)` by `MONITOR` and the slow log, as in Redis.
pub(crate) fn secret_positions<'a>(
    name: &'a str,
    args: &'a [Vec<u8>],
) -> impl Fn(usize) -> bool + 'a {
    let auth_at = args.iter().position(|a| a.eq_ignore_ascii_case(b"auth"));
    move |i| match name {
        "auth" => i > 0,
        "hello" => auth_at.is_some_and(|at| i == at + 1 || i == at + 2),
        _ => false,
    }
}

/// `s` in double quotes, escaped as Redis's `sdscatrepr`.
fn quote(s: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    for &c in s {
        match c {
            b'\\' | b'"' => out.extend_from_slice(&[b'\\', c]),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            7 => out.extend_from_slice(b"\\a"),
            8 => out.extend_from_slice(b"\\b"),
            c if c.is_ascii_graphic() || c == b' ' => out.push(c),
            c => out.extend_from_slice(format!("\\x{c:02x}").as_bytes()),
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_quoted_as_redis_quotes_them() {
        let mut out = Vec::new();
        quote(b"a \"b\"\\\n\r\t\x07\x08\x00\xff", &mut out);
        assert_eq!(out, b"\"a \\\"b\\\"\\\\\\n\\r\\t\\a\\b\\x00\\xff\"");
    }

    #[test]
    fn lines_name_the_client_and_hide_secrets() {
        let args = [b"AUTH".to_vec(), b"user".to_vec(), b"pw".to_vec()];
        let l = String::from_utf8(line("auth", &args, Some("127.0.0.1:5"))).unwrap();
        assert!(
            l.ends_with(" [0 127.0.0.1:5] \"AUTH\" \"(redacted)\" \"(redacted)\""),
            "{l}"
        );
        let l = String::from_utf8(line("get", &[b"GET".to_vec(), b"k".to_vec()], None)).unwrap();
        assert!(l.ends_with(" [0 lua] \"GET\" \"k\""), "{l}");
    }
}
