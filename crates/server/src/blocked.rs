//! Running a blocking command (`BLPOP`, `BLMOVE`, `BZPOPMIN`, `XREAD ...
//! BLOCK`, `WAIT`, ...) for a session: its first attempt ([`start`]),
//! which registers the client with the waiters (`crate::waiters`) when it
//! finds nothing, and the attempts after a wake ([`retry`]).
//!
//! * **Owns**: nothing; the waiters' registry is `crate::waiters`.

use std::time::{Duration, Instant};

use crate::access::{Access, Direct};
use crate::collections::blocking;
use crate::commands::Fail;
use crate::data_command::run_data;
use crate::resp::{Reply, Request};
use crate::session::{to_reply, Session, Then};
use crate::shared::Shared;
use crate::store::Kind;
use crate::waiters::Blocked;

/// Runs a blocking command: its reply, or, when it found nothing, the wait
/// it starts (`Then::Block`, with `session.blocked` saying for what).
pub fn start(s: &Shared, session: &mut Session, name: &str, mut req: Request) -> (Reply, Then) {
    if name == "xread" {
        let (sp, opts) = (s.store.spaces(), s.write_options());
        let mut direct = Direct::new(&sp, &opts);
        crate::collections::streams::resolve_last_ids(&mut direct, &mut req);
    }
    let outcome = run_data(s, name, &req);
    let nothing = matches!(outcome, Ok(Reply::NullArray | Reply::Null));
    // The attempt read the timeout already: only a valid one gets here.
    let timeout = blocking::timeout(name, &req);
    match (nothing, timeout) {
        (true, Ok(timeout)) => {
            session.blocked = Some(Blocked {
                name: name.to_string(),
                keys: blocking::keys_of(name, &req),
                req,
                // A deadline past what the clock can hold is none.
                deadline: timeout.and_then(|t| Instant::now().checked_add(t)),
            });
            (Reply::NullArray, Then::Block)
        }
        _ => (to_reply(outcome), Then::Continue),
    }
}

/// Runs the command a blocked client waits on again: its reply once it
/// pops something (or fails), `None` while there is still nothing. As in
/// Redis, a key it pops from that turned into another type keeps it
/// waiting, and a `BLMOVE` destination of another type is its answer.
pub fn retry(s: &Shared, blocked: &Blocked) -> Option<Reply> {
    if blocked.name == "wait" {
        // No replica will ever acknowledge: only the timeout ends it.
        return None;
    }
    if blocked.name == "xreadgroup" && !streams_remain(s, blocked) {
        // Its group went with the stream, as in Redis.
        return Some(Reply::err("UNBLOCKED the stream key no longer exists"));
    }
    match run_data(s, &blocked.name, &blocked.req) {
        Ok(Reply::NullArray | Reply::Null) => None,
        Err(Fail::Reply(Reply::Error(e)))
            if e.starts_with("WRONGTYPE") && !source_is_list(s, blocked) =>
        {
            None
        }
        outcome => {
            s.waiters.wake(blocking::wakes(&blocked.name, &blocked.req));
            Some(to_reply(outcome))
        }
    }
}

/// True if every key a blocked `XREADGROUP` reads still holds a stream.
fn streams_remain(s: &Shared, blocked: &Blocked) -> bool {
    let (sp, opts) = (s.store.spaces(), s.write_options());
    let mut direct = Direct::new(&sp, &opts);
    blocked
        .keys
        .iter()
        .all(|k| matches!(direct.get(k), Ok(Some(v)) if v.kind == Kind::Stream))
}

/// True for a `BLMOVE`/`BRPOPLPUSH` whose source holds a list: its
/// `WRONGTYPE` was the destination's.
fn source_is_list(s: &Shared, blocked: &Blocked) -> bool {
    if !matches!(blocked.name.as_str(), "blmove" | "brpoplpush") {
        return false;
    }
    let (sp, opts) = (s.store.spaces(), s.write_options());
    let source = Direct::new(&sp, &opts).get(&blocked.req[1]);
    matches!(source, Ok(Some(v)) if v.kind == Kind::List)
}

/// `WAIT numreplicas timeout`'s arguments, in Redis's order of checks:
/// the count, and the timeout in milliseconds (`None`: 0, for ever).
pub fn wait_args(a: &[Vec<u8>]) -> Result<(i64, Option<Duration>), Fail> {
    let replicas = crate::commands::int_arg(&a[1])?;
    let ms = crate::commands::int_arg(&a[2])
        .map_err(|_| crate::commands::fail("ERR timeout is not an integer or out of range"))?;
    if ms < 0 {
        return Err(crate::commands::fail("ERR timeout is negative"));
    }
    Ok((replicas, (ms > 0).then(|| Duration::from_millis(ms as u64))))
}

/// `WAIT numreplicas timeout`. This server has no replicas, so as Redis
/// without replicas it answers 0 at once when asked for none, and
/// otherwise after the timeout (0: it waits until the client leaves).
/// Every write it acknowledged is already in its log (synced under
/// `--appendfsync always`), which is what a caller of `WAIT` wants to know
/// of durability here.
pub fn start_wait(session: &mut Session, req: Request) -> (Reply, Then) {
    match wait_args(&req) {
        Err(fail) => (to_reply(Err(fail)), Then::Continue),
        Ok((replicas, _)) if replicas <= 0 => (Reply::Int(0), Then::Continue),
        Ok((_, timeout)) => {
            session.blocked = Some(Blocked {
                name: "wait".into(),
                keys: Vec::new(),
                req,
                deadline: timeout.and_then(|t| Instant::now().checked_add(t)),
            });
            (Reply::NullArray, Then::Block)
        }
    }
}
