//! A client's unparsed input: the bytes read and not yet parsed, counted
//! in the server-wide total for as long as they are held, the limits on
//! them, and parsing every complete request out of them.
//!
//! * **Owns**: one connection's input buffer and its share of
//!   `Shared::pending_input`.
//! * Thread-safety: a `Pending` belongs to its connection's task; the total
//!   it adds to is an atomic.

use std::sync::atomic::Ordering;

use tokio::io::AsyncReadExt;

use crate::resp;
use crate::shared::Shared;
use crate::tls::Socket;

/// Unparsed input a client may have pending (Redis's default
/// `client-query-buffer-limit`).
pub const QUERY_BUFFER_LIMIT: usize = 1 << 30;
/// Input buffered per idle client, and the most a read adds.
const READ_SIZE: usize = 16 * 1024;
/// A client's share of the server-wide input cap never falls below this.
const MIN_FAIR_SHARE: usize = 64 * 1024;
/// Most requests of one batch the request list is allocated for up front:
/// past this, growing costs little against what fills the buffer.
const MAX_EXPECTED_REQUESTS: usize = 1024;

/// A client's unparsed input, counted in the server-wide total
/// (`Shared::pending_input`) for as long as it is held.
pub struct Pending<'a> {
    bytes: Vec<u8>,
    /// How far the parse of the incomplete request `bytes` starts with got.
    progress: resp::Progress,
    shared: &'a Shared,
}

impl<'a> Pending<'a> {
    pub fn new(shared: &'a Shared) -> Self {
        Pending {
            bytes: Vec::with_capacity(READ_SIZE),
            progress: resp::Progress::default(),
            shared,
        }
    }

    pub async fn read_from(&mut self, socket: &mut Socket) -> std::io::Result<usize> {
        self.bytes.reserve(READ_SIZE);
        let n = socket.read_buf(&mut self.bytes).await?;
        self.shared.pending_input.fetch_add(n, Ordering::Relaxed);
        Ok(n)
    }

    /// Every complete request held, the bytes they used (to `consume`),
    /// and a protocol error met after them; `expected` is how many the
    /// last batch had.
    pub fn parse(
        &mut self,
        expected: usize,
        limits: resp::Limits,
    ) -> (Vec<resp::Request>, usize, Option<resp::ProtocolError>) {
        parse_all(&self.bytes, &mut self.progress, expected, limits)
    }

    /// True once every byte read has been parsed and consumed.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    pub fn consume(&mut self, used: usize) {
        self.bytes.drain(..used);
        self.shared.pending_input.fetch_sub(used, Ordering::Relaxed);
        if self.bytes.is_empty() && self.bytes.capacity() > 4 * READ_SIZE {
            self.bytes = Vec::with_capacity(READ_SIZE); // a big value has passed
        }
    }

    /// True if this client, holding this input and `queued` bytes of
    /// commands queued in a `MULTI`, holds more than it may: Redis's
    /// per-client limit, or, while all clients together hold more than the
    /// server's cap, more than its fair share of that cap (so a few hostile
    /// clients cannot exhaust memory, and a client holding little is never
    /// closed for them).
    pub fn over_limit(&self, queued: usize) -> bool {
        let mine = self.bytes.len() + queued;
        let cap = self.shared.opts.max_query_buffers;
        let clients = self.shared.clients.load(Ordering::Relaxed).max(1) as usize;
        mine > QUERY_BUFFER_LIMIT
            || (self.shared.pending_input.load(Ordering::Relaxed) > cap
                && mine > (cap / clients).max(MIN_FAIR_SHARE))
    }
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        self.shared
            .pending_input
            .fetch_sub(self.bytes.len(), Ordering::Relaxed);
    }
}

/// Every complete request in `input`, the bytes they used, and a protocol
/// error met after them.
fn parse_all(
    input: &[u8],
    progress: &mut resp::Progress,
    expected: usize,
    limits: resp::Limits,
) -> (Vec<resp::Request>, usize, Option<resp::ProtocolError>) {
    let mut requests = Vec::with_capacity(expected.min(MAX_EXPECTED_REQUESTS));
    let mut used = 0;
    loop {
        match resp::parse_limited(&input[used..], progress, limits) {
            Ok(Some((req, n))) => {
                used += n;
                if !req.is_empty() {
                    requests.push(req);
                    if limits == resp::Limits::UNAUTHENTICATED {
                        return (requests, used, None);
                    }
                }
            }
            Ok(None) => return (requests, used, None),
            Err(e) => return (requests, used, Some(e)),
        }
    }
}
