//! Runs the requests of one read from a client (a pipeline) and encodes
//! their replies.
//!
//! Consecutive requests of one kind run as one engine call, which is where
//! a pipeline's speed comes from: plain `GET`s as one `multi_get` (sorted
//! lookups share their path down the skiplists), blind writes (`SET k v`,
//! `MSET`) as one write batch (one commit, one log record, one sync under
//! `appendfsync always`), and counters (`INCR`, `DECR`, `INCRBY`,
//! `DECRBY`) and stream appends (`XADD`) in one transaction, retried whole
//! on a conflict (clients appending to one stream conflict on every
//! append: a pipeline's appends then commit together, not one by one). The replies
//! are those of running the requests one by one; a group is atomic, which
//! is more than Redis promises between a pipeline's commands and never
//! less. A group whose engine call fails runs again request by request, so
//! each request gets its own error (an oversized key fails only itself).
//!
//! Memory: the connection writes the replies out once they pass
//! [`OUTPUT_CHUNK`] before it runs more of the pipeline (waiting for a slow
//! reader meanwhile), and a group of `GET`s grows only while its replies
//! are small, so a pipeline of `GET`s of large values holds about one
//! chunk of replies, not all of them: a client that sends requests without
//! reading the replies cannot make the server buffer without bound (Redis
//! buffers a normal client's replies without limit by default).
//!
//! Owns nothing between calls but `Session::get_group`; runs on the
//! connection's task.

use std::iter::Peekable;
use std::sync::atomic::Ordering;

use slsm::Keyspace;

use crate::access::InTx;
use crate::cluster::run as cluster;
use crate::commands::Fail;
use crate::dispatch::execute;
use crate::resp::{self, Reply, Request};
use crate::session::{Session, Then};
use crate::shared::Shared;
use crate::store;

/// The most requests one engine call takes (bounds a transaction's retry).
pub const MAX_GROUP: usize = 256;

/// Replies encoded before the connection writes them out.
pub const OUTPUT_CHUNK: usize = 1 << 20;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Get,
    BlindWrite,
    /// A read-modify-write command run in a group's transaction (a counter,
    /// `XADD` or `PFADD`: clients adding to one key would conflict on every
    /// commit), by its lowercase name.
    Grouped(&'static str),
    Other,
}

fn kind(req: &Request) -> Kind {
    let name = req[0].as_slice();
    let is = |n: &str| name.eq_ignore_ascii_case(n.as_bytes());
    if crate::blind_writes::is_blind_write(req) {
        return Kind::BlindWrite;
    }
    match req.len() {
        2 if is("get") => Kind::Get,
        2 if is("incr") => Kind::Grouped("incr"),
        2 if is("decr") => Kind::Grouped("decr"),
        3 if is("incrby") => Kind::Grouped("incrby"),
        3 if is("decrby") => Kind::Grouped("decrby"),
        n if n >= 5 && is("xadd") => Kind::Grouped("xadd"),
        n if n >= 2 && is("pfadd") => Kind::Grouped("pfadd"),
        _ => Kind::Other,
    }
}

/// Runs `requests` in order, encoding their replies into `out`, until they
/// are all run or `out` holds [`OUTPUT_CHUNK`] bytes (the caller writes it
/// and calls again); what the connection does next.
pub fn run_some(
    shared: &Shared,
    session: &mut Session,
    requests: &mut Peekable<std::vec::IntoIter<Request>>,
    out: &mut Vec<u8>,
) -> Then {
    while out.len() < OUTPUT_CHUNK {
        if requests.peek().is_some_and(|r| {
            shared
                .pause
                .holds(|| crate::dispatch::may_replicate(session, r))
        }) {
            return Then::Paused;
        }
        // A leader's run of writes is proposed by the connection's task
        // (`cluster::propose_group`).
        if starts_group(shared, session, requests.peek()) {
            break;
        }
        let Some(first) = requests.next() else {
            break;
        };
        // Redis evicts before every command it runs, under a policy.
        crate::eviction::make_room(shared);
        // In a cluster every write is a log entry and every read follows a
        // read-index round: nothing takes the single node's short cuts.
        // While a script is busy every command goes through `execute`,
        // which answers `BUSY`.
        let plain = session.runs_plain_commands(&shared.acl)
            && shared.cluster.is_none()
            && shared.scripts.busy_error().is_none();
        let k = match plain {
            true => kind(&first),
            false => Kind::Other,
        };
        // A batch of blind writes tells no keyspace notifications (it
        // does not know which keys are new) nor tracking clients: with
        // either on, each runs alone.
        let k = match k {
            Kind::BlindWrite if crate::notify::notice_flags(shared.store.tuning()) != 0 => {
                Kind::Other
            }
            // Writes refused (`NOREPLICAS`, `OOM`) are refused by `execute`.
            Kind::BlindWrite | Kind::Grouped(_)
                if shared.replicas_short() || shared.maxmemory.is_on() =>
            {
                Kind::Other
            }
            k => k,
        };
        if k != Kind::Other {
            let most = match k {
                Kind::Get => session.get_group,
                _ => MAX_GROUP,
            };
            let mut group = vec![first];
            while group.len() < most && requests.peek().is_some_and(|r| kind(r) == k) {
                group.extend(requests.next());
            }
            let before = out.len();
            let len = group.len();
            run_group(shared, session, k, group, out);
            if k == Kind::Get {
                session.get_group = next_get_group(most, len, out.len() - before);
            }
            continue;
        }
        // Messages published to the client go out between replies, those
        // it published to itself before its PUBLISH's reply (as Redis).
        session.drain_messages(out);
        let publishes = is_publish(&first);
        let (reply, then) = execute(shared, session, first);
        if publishes {
            session.drain_messages(out);
        }
        // A blocked command's reply (and its turn in `CLIENT REPLY`) comes
        // when it is served (`conn::wait_blocked`).
        if then != Then::Block {
            let (send, next) = session.reply_mode.after_command();
            session.reply_mode = next;
            if then != Then::Shutdown {
                match send {
                    true => reply.encode(session.proto, out),
                    false => reply.encode_pushes(session.proto, out),
                }
            }
        }
        if then != Then::Continue {
            return then;
        }
    }
    Then::Continue
}

fn is_publish(req: &Request) -> bool {
    let name = req[0].as_slice();
    name.eq_ignore_ascii_case(b"publish") || name.eq_ignore_ascii_case(b"spublish")
}

/// The most `GET`s the next group may take, after a group of `len` (of at
/// most `limit`) whose replies took `bytes`: as many as a chunk holds at
/// that size (at least one) if they were large (over a quarter of a
/// chunk); else twice the limit if the group filled it, and the same limit
/// if the pipeline ended first (its last few `GET`s say nothing of the
/// next pipeline's).
fn next_get_group(limit: usize, len: usize, bytes: usize) -> usize {
    if bytes > OUTPUT_CHUNK / 4 {
        return (len * OUTPUT_CHUNK / bytes).clamp(1, MAX_GROUP);
    }
    match len >= limit {
        true => (limit * 2).min(MAX_GROUP),
        false => limit,
    }
}

fn run_group(
    shared: &Shared,
    session: &mut Session,
    k: Kind,
    group: Vec<Request>,
    out: &mut Vec<u8>,
) {
    let sp = shared.store.spaces();
    let started = std::time::Instant::now();
    let done = match k {
        Kind::Get if group.len() > 1 => gets(&sp.ks, &group, session.proto, out),
        Kind::BlindWrite => writes(shared, &sp.ks, &group, out),
        Kind::Grouped(name) if group.len() > 1 => {
            counters(shared, &sp, name, &group, session.proto, out)
        }
        _ => false,
    };
    if done {
        shared
            .commands
            .fetch_add(group.len() as u64, Ordering::Relaxed);
        count_group(shared, &group, started.elapsed());
        if shared.monitors.any() {
            for req in &group {
                let name = String::from_utf8_lossy(&req[0]).to_ascii_lowercase();
                shared
                    .monitors
                    .feed(&name, req, Some(&session.client.addr), || {
                        crate::registry::hidden_from_monitors(&name, req)
                    });
            }
        }
        // Each member is charged its share of the group's one call.
        let share = started.elapsed() / group.len() as u32;
        if shared.slowlog.is_slow(share) {
            for req in &group {
                let name = String::from_utf8_lossy(&req[0]).to_ascii_lowercase();
                crate::dispatch::record_if_slow(shared, session, &name, req, share);
            }
        }
        return;
    }
    for req in group {
        // None of these closes the connection.
        execute(shared, session, req).0.encode(session.proto, out);
    }
}

/// Counts a group's commands in `INFO commandstats`, a run of one name at
/// a time, each charged its share of the time. Failures of single members
/// are not told apart (a group that fails as a whole is run command by
/// command, and counted there).
fn count_group(shared: &Shared, group: &[Request], took: std::time::Duration) {
    let share = took / group.len() as u32;
    let mut rest = group;
    while let Some(first) = rest.first() {
        let run = rest
            .iter()
            .take_while(|r| r[0].eq_ignore_ascii_case(&first[0]))
            .count();
        let name = String::from_utf8_lossy(&first[0]).to_ascii_lowercase();
        shared
            .cmdstats
            .called(&name, run as u64, share * run as u32, &Reply::Null);
        rest = &rest[run..];
    }
}

/// `GET`s as one lookup; false (nothing written to `out`) if it failed.
fn gets(ks: &Keyspace, group: &[Request], proto: u8, out: &mut Vec<u8>) -> bool {
    let keys: Vec<&[u8]> = group.iter().map(|r| r[1].as_slice()).collect();
    let Ok(values) = ks.multi_get(&keys) else {
        return false;
    };
    // A collection's GET is an error: the requests run one by one.
    if values.iter().flatten().any(|v| store::is_collection(v)) {
        return false;
    }
    let now = store::now_ms();
    for v in values {
        match v
            .as_deref()
            .and_then(|stored| store::live_data(stored, now))
        {
            Some(data) => resp::encode_bulk(data, out),
            None => Reply::Null.encode(proto, out),
        }
    }
    true
}

/// `SET k v` and `MSET`s as one write batch.
fn writes(shared: &Shared, ks: &Keyspace, group: &[Request], out: &mut Vec<u8>) -> bool {
    let batch = crate::blind_writes::batch(ks, group);
    if shared
        .store
        .db()
        .write_opt(batch, &shared.write_options())
        .is_err()
    {
        return false;
    }
    for _ in group {
        out.extend_from_slice(b"+OK\r\n");
    }
    true
}

/// Whether the pipeline's next request starts a run of [`cluster::groupable`]
/// writes this node proposes as one entry (`cluster::run::propose_group`): on the
/// leader, for a session that runs plain commands, unless `CLIENT PAUSE`
/// holds it.
pub fn starts_group(shared: &Shared, session: &Session, next: Option<&Request>) -> bool {
    let (Some(c), Some(req)) = (&shared.cluster, next) else {
        return false;
    };
    session.runs_plain_commands(&shared.acl)
        && c.is_leader()
        && cluster::groupable(req)
        && !shared
            .pause
            .holds(|| crate::dispatch::may_replicate(session, req))
}

/// Counter commands (or `XADD`s, or `PFADD`s) in one transaction, retried whole on a
/// conflict; the clients blocked on the streams appended to are woken
/// once it commits.
fn counters(
    shared: &Shared,
    sp: &store::Spaces,
    name: &str,
    group: &[Request],
    proto: u8,
    out: &mut Vec<u8>,
) -> bool {
    loop {
        let mut tx = shared.store.db().transaction();
        let mut replies = Vec::with_capacity(group.len());
        let mut drops = Vec::new();
        let mut notices = crate::notify::Notices::default();
        for req in group {
            let mut acc = InTx::new(&mut tx, sp);
            match crate::registry::run_data(name, req, &mut acc, &shared.cursors) {
                Ok(r) | Err(Fail::Reply(r)) => replies.push(r),
                Err(Fail::Engine(_)) => return false,
            }
            drops.append(&mut acc.drops);
            notices.append(&mut acc.notices);
        }
        match tx.commit_opt(&shared.write_options()) {
            Ok(()) => {
                crate::access::apply_drops(sp, drops);
                notices.publish(&shared.pubsub, &shared.expiries, &shared.tracking);
                shared
                    .waiters
                    .wake(crate::collections::blocking::wakes_of_all(group));
                replies.iter().for_each(|r| r.encode(proto, out));
                return true;
            }
            Err(slsm::Error::Conflict) => continue,
            Err(_) => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn get_groups_grow_with_small_replies_and_shrink_with_large_ones() {
        // Pipelines of 16 small GETs: the limit climbs past 16 and stays,
        // whatever the short groups at each pipeline's end.
        let mut limit = 1;
        for _ in 0..10 {
            let mut left = 16;
            while left > 0 {
                let len = left.min(limit);
                limit = next_get_group(limit, len, len * 110);
                left -= len;
            }
        }
        assert!(limit >= 16, "{limit}");
        assert_eq!(next_get_group(MAX_GROUP, MAX_GROUP, 1000), MAX_GROUP);
        // 1 MiB values: one at a time.
        assert_eq!(next_get_group(64, 64, 64 << 20), 1);
        // 64 KiB values: a chunk's worth.
        assert_eq!(next_get_group(64, 64, 64 << 16), 16);
    }
}
