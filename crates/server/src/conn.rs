//! One connection: read, parse every complete request (pipelining), run
//! them, write the replies in one go.

use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use tokio::io::AsyncWriteExt;
use tokio::sync::watch;

use crate::input::Pending;
use crate::pipeline::{run_some, MAX_GROUP, OUTPUT_CHUNK};
use crate::resp::{self, Reply};
use crate::session::{Session, Then};
use crate::shared::Shared;
use crate::tls::Socket;

/// Most bytes of replies the output buffer is allocated for up front:
/// past this, growing costs little against what fills the buffer.
const MAX_EXPECTED_REPLY: usize = 64 * 1024;

/// What a connection's last batch needed (see `serve_client`).
#[derive(Default)]
struct Sizes {
    requests: usize,
    reply_bytes: usize,
}

pub async fn handle(mut socket: Socket, shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
    shared.connections.fetch_add(1, Ordering::Relaxed);
    let clients = shared.clients.fetch_add(1, Ordering::AcqRel) + 1;
    if clients > shared.opts.maxclients as u64 {
        shared.rejected.fetch_add(1, Ordering::Relaxed);
        let _ = socket
            .write_all(b"-ERR max number of clients reached\r\n")
            .await;
        shared.clients.fetch_sub(1, Ordering::AcqRel);
        return;
    }
    let tcp = socket.tcp();
    let _ = tcp.set_nodelay(true);
    let registered = shared.registry.register(
        shared.next_client_id(),
        tcp.peer_addr().ok(),
        tcp.local_addr().ok(),
        tcp.as_raw_fd() as i64,
    );
    let client = Arc::clone(&registered.client);
    let mut session = Session::new(client, &shared.acl);
    shared.tracking.connected(session.id, &session.outbox);
    let mut input = Pending::new(&shared);
    let _ = serve_client(&mut socket, &shared, &mut session, &mut input, &mut stop).await;
    session.leave_pubsub(&shared);
    shared
        .tracking
        .disconnected(session.id, &shared.store.tuning().tracking);
    shared.clients.fetch_sub(1, Ordering::AcqRel);
}

async fn serve_client(
    socket: &mut Socket,
    shared: &Arc<Shared>,
    session: &mut Session,
    input: &mut Pending<'_>,
    stop: &mut watch::Receiver<bool>,
) -> std::io::Result<()> {
    // The last batch's size: the next batch's buffers are allocated at that
    // size at once rather than grown (a pipeline of 16 GETs grew its reply
    // buffer eight times), and nothing is held between batches.
    let mut last = Sizes::default();
    // Input that arrived while the client was blocked, not parsed yet.
    let mut unparsed = false;
    loop {
        if !unparsed {
            let n = tokio::select! {
                read = input.read_from(socket) => read?,
                _ = stop.changed() => return Ok(()),
                _ = session.client.killed() => return Ok(()),
                _ = message_for(session) => {
                    if !send_messages(socket, session, stop).await? {
                        return Ok(());
                    }
                    continue;
                }
            };
            if n == 0 {
                return Ok(());
            }
        }
        if session.client.is_killed() {
            return Ok(());
        }
        // A client that has not logged in gets one request at a time,
        // within Redis's tighter limits: its `AUTH` runs before the next
        // request is parsed.
        let limits = match session.authenticated {
            true => resp::Limits::DEFAULT,
            false => resp::Limits::UNAUTHENTICATED,
        };
        let (requests, used, error) = input.parse(last.requests, limits);
        unparsed = !session.authenticated && error.is_none() && !requests.is_empty();
        input.consume(used);
        last.requests = requests.len();
        if let Some(last) = requests.last() {
            session.publish(last, used);
        }
        let mut requests = requests.into_iter().peekable();
        // A new batch: its reads need a read-index round of their own.
        session.fenced = false;
        let mut out = Vec::with_capacity(last.reply_bytes);
        let mut then = Then::Continue;
        while then == Then::Continue && requests.peek().is_some() {
            if out.len() >= OUTPUT_CHUNK {
                // Written before more runs: a client that does not read its
                // replies holds up only itself, and about one chunk.
                if !send(socket, &out, session, stop).await? {
                    return Ok(());
                }
                out.clear();
            }
            if let Some(c) = shared.cluster.as_ref() {
                if crate::pipeline::starts_group(shared, session, requests.peek()) {
                    let replies =
                        crate::cluster::run::propose_group(shared, c, &mut requests, MAX_GROUP)
                            .await;
                    for reply in replies {
                        reply.encode(session.proto, &mut out);
                    }
                    continue;
                }
            }
            then = on_engine(shared, || {
                run_some(shared, session, &mut requests, &mut out)
            });
            if then == Then::Paused {
                if !out.is_empty() && !send(socket, &out, session, stop).await? {
                    return Ok(());
                }
                out.clear();
                tokio::select! {
                    _ = shared.pause.wait() => {}
                    _ = stop.changed() => return Ok(()),
                    _ = session.client.killed() => return Ok(()),
                }
                then = Then::Continue;
            }
            if then == Then::Block {
                if !out.is_empty() && !send(socket, &out, session, stop).await? {
                    return Ok(());
                }
                out.clear();
                session.client.blocked.store(true, Ordering::Release);
                let served = wait_blocked(socket, shared, session, input, stop).await;
                session.client.blocked.store(false, Ordering::Release);
                let Some(reply) = served? else {
                    return Ok(());
                };
                let (send, next) = session.reply_mode.after_command();
                session.reply_mode = next;
                if send {
                    reply.encode(session.proto, &mut out);
                }
                unparsed = !input.is_empty();
                then = Then::Continue;
            }
        }
        if let Some(e) = &error {
            Reply::err(format!("ERR Protocol error: {}", e.0)).encode(session.proto, &mut out);
        }
        session.client.batch_done();
        last.reply_bytes = out.len().min(MAX_EXPECTED_REPLY);
        if !out.is_empty() && !send(socket, &out, session, stop).await? {
            return Ok(());
        }
        if error.is_some() || then == Then::Close || session.client.is_killed() {
            return Ok(());
        }
        if then == Then::Shutdown {
            let _ = shared.shutdown_now();
            return Ok(());
        }
        if input.over_limit(session.queued_bytes()) {
            return Ok(()); // Redis closes such clients too
        }
    }
}

/// Runs `f`, which calls the engine, on the connection's task. Engine
/// calls take microseconds while data is cached, and a disk read or an
/// fsync (appendfsync always) takes tens of microseconds to milliseconds:
/// only then is handing the worker's other connections to another thread
/// (`block_in_place`) worth its cost, which exceeds a cached read's.
fn on_engine<R>(shared: &Shared, f: impl FnOnce() -> R) -> R {
    // In a cluster a command may wait for the cluster (`cluster::run`).
    match shared.opts.appendfsync == crate::options::Fsync::Always || shared.cluster.is_some() {
        true => tokio::task::block_in_place(f),
        false => f(),
    }
}

/// Waits until the command the client is blocked on pops something or
/// times out (`crate::blocked`): its reply, or `None` if the connection is
/// to close (the client left or was killed, its input grew past its
/// limits, or the server is stopping). Input that arrives meanwhile is
/// kept for after.
async fn wait_blocked(
    socket: &mut Socket,
    shared: &Arc<Shared>,
    session: &mut Session,
    input: &mut Pending<'_>,
    stop: &mut watch::Receiver<bool>,
) -> std::io::Result<Option<Reply>> {
    let Some(blocked) = session.blocked.take() else {
        return Ok(Some(Reply::NullArray));
    };
    let answered = wait_for_reply(socket, shared, session, input, stop, &blocked).await;
    if let Ok(Some(reply)) = &answered {
        // Counted and logged as Redis does it: once answered, the wait not
        // timed.
        let untimed = std::time::Duration::ZERO;
        shared.cmdstats.called(&blocked.name, 1, untimed, reply);
        crate::dispatch::record_if_slow(shared, session, &blocked.name, &blocked.req, untimed);
    }
    answered
}

/// [`wait_blocked`]'s wait: the reply, or `None` if the connection ends.
async fn wait_for_reply(
    socket: &mut Socket,
    shared: &Arc<Shared>,
    session: &mut Session,
    input: &mut Pending<'_>,
    stop: &mut watch::Receiver<bool>,
    blocked: &crate::waiters::Blocked,
) -> std::io::Result<Option<Reply>> {
    let registered = shared.waiters.register(&blocked.keys);
    loop {
        // What the served command changes is the client's own (`NOLOOP`).
        let retry = || crate::blocked::retry(shared, blocked);
        let retried = on_engine(shared, || crate::tracking::writing_as(session.id, retry));
        if let Some(reply) = retried {
            return Ok(Some(reply));
        }
        // Found nothing: a wake this attempt answered goes on to the next
        // waiter (only now, after the attempt: waiters are served in order).
        registered.rearm();
        let Some(pause) = blocked.pause() else {
            return Ok(Some(blocked.timed_out()));
        };
        tokio::select! {
            _ = registered.woken() => {}
            _ = tokio::time::sleep(pause) => {}
            read = input.read_from(socket) => {
                if read? == 0 || input.over_limit(session.queued_bytes()) {
                    return Ok(None);
                }
            }
            _ = stop.changed() => return Ok(None),
            _ = session.client.killed() => return Ok(None),
            _ = session.client.unblocked() => {
                match session.client.take_unblock() {
                    Some(true) => {
                        return Ok(Some(Reply::err("UNBLOCKED client unblocked via CLIENT UNBLOCK")))
                    }
                    Some(false) => return Ok(Some(blocked.timed_out())),
                    None => {}
                }
            }
            // A RESP3 client gets its messages while it waits, as from Redis.
            _ = message_for(session) => {
                if !send_messages(socket, session, stop).await? {
                    return Ok(None);
                }
            }
        }
    }
}

/// Resolves when a message was queued for the client.
async fn message_for(session: &Session) {
    session.outbox.notified().await
}

/// Writes the messages published to the client; false as [`send`].
async fn send_messages(
    socket: &mut Socket,
    session: &Session,
    stop: &mut watch::Receiver<bool>,
) -> std::io::Result<bool> {
    // Publishers run on other threads: a turn of the scheduler lets the
    // messages of their current pipelines join this write.
    tokio::task::yield_now().await;
    let mut out = Vec::new();
    match session.drain_messages(&mut out) {
        true => send(socket, &out, session, stop).await,
        false => Ok(true),
    }
}

/// Writes `out` to the client; false if the client was killed or the
/// server is stopping first (a client that does not read its replies must
/// not hold up either).
async fn send(
    socket: &mut Socket,
    out: &[u8],
    session: &Session,
    stop: &mut watch::Receiver<bool>,
) -> std::io::Result<bool> {
    // Most replies fit the socket's buffer at once: no waiting, so nothing
    // to register with the kill and stop signals (the stop signal is shared
    // by every connection).
    let sent = match socket.try_write(out) {
        Ok(n) => n,
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => 0,
        Err(e) => return Err(e),
    };
    let rest = &out[sent..];
    if rest.is_empty() {
        return Ok(true);
    }
    // A TLS socket holds records until flushed.
    let written = async {
        socket.write_all(rest).await?;
        socket.flush().await
    };
    tokio::select! {
        written = written => written.map(|()| true),
        _ = session.client.killed() => Ok(false),
        _ = stop.changed() => Ok(false),
    }
}
