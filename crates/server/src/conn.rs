//! One connection: read, parse every complete request (pipelining), run
//! them, write the replies in one go.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;

use crate::resp::{self, Reply};
use crate::session::{execute, Session, Then};
use crate::Shared;

/// Unparsed input a client may have pending (Redis's default
/// `client-query-buffer-limit`).
const QUERY_BUFFER_LIMIT: usize = 1 << 30;

pub async fn handle(mut socket: TcpStream, shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
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
    let _ = socket.set_nodelay(true);
    let mut session = Session::new(shared.next_client_id(), shared.opts.requirepass.is_some());
    let _ = serve_client(&mut socket, &shared, &mut session, &mut stop).await;
    shared.clients.fetch_sub(1, Ordering::AcqRel);
}

async fn serve_client(
    socket: &mut TcpStream,
    shared: &Arc<Shared>,
    session: &mut Session,
    stop: &mut watch::Receiver<bool>,
) -> std::io::Result<()> {
    let mut input: Vec<u8> = Vec::with_capacity(16 * 1024);
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = tokio::select! {
            read = socket.read(&mut chunk) => read?,
            _ = stop.changed() => return Ok(()),
        };
        if n == 0 {
            return Ok(());
        }
        input.extend_from_slice(&chunk[..n]);
        let (requests, used, error) = parse_all(&input);
        input.drain(..used);
        let mut out = Vec::new();
        let then = if requests.is_empty() {
            Then::Continue
        } else {
            // Engine calls take microseconds while data is cached, and a
            // disk read or an fsync (appendfsync always) takes tens of
            // microseconds to milliseconds: only then is handing the worker's
            // other connections to another thread (block_in_place) worth its
            // cost, which exceeds a cached read's.
            let (replies, then) = match shared.opts.appendfsync == crate::Fsync::Always {
                true => tokio::task::block_in_place(|| run_all(shared, session, requests)),
                false => run_all(shared, session, requests),
            };
            out = replies;
            then
        };
        if let Some(e) = &error {
            Reply::err(format!("ERR Protocol error: {}", e.0)).encode(session.proto, &mut out);
        }
        if !out.is_empty() {
            socket.write_all(&out).await?;
        }
        if error.is_some() || then == Then::Close {
            return Ok(());
        }
        if then == Then::Shutdown {
            let _ = shared.shutdown_now();
            return Ok(());
        }
        if input.len() > QUERY_BUFFER_LIMIT {
            return Ok(()); // Redis closes such clients too
        }
    }
}

/// Every complete request in `input`, the bytes they used, and a protocol
/// error met after them.
fn parse_all(input: &[u8]) -> (Vec<resp::Request>, usize, Option<resp::ProtocolError>) {
    let mut requests = Vec::new();
    let mut used = 0;
    loop {
        match resp::parse(&input[used..]) {
            Ok(Some((req, n))) => {
                used += n;
                if !req.is_empty() {
                    requests.push(req);
                }
            }
            Ok(None) => return (requests, used, None),
            Err(e) => return (requests, used, Some(e)),
        }
    }
}

fn run_all(
    shared: &Shared,
    session: &mut Session,
    requests: Vec<resp::Request>,
) -> (Vec<u8>, Then) {
    let mut out = Vec::new();
    for req in requests {
        let (reply, then) = execute(shared, session, req);
        if then != Then::Shutdown {
            reply.encode(session.proto, &mut out);
        }
        if then != Then::Continue {
            return (out, then);
        }
    }
    (out, Then::Continue)
}
