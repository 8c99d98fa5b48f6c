//! `MULTI`'s queue of commands, charged to the clients' input while held.
//!
//! * **Owns**: the queued requests and their charge.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::resp::Request;

/// Commands queued since `MULTI`, charged while held to the input the
/// server's clients hold (`Shared::pending_input`), so that a client that
/// queues without end meets the limits of one that sends without end (the
/// per-client query-buffer limit and its share of `--max-query-buffers`):
/// Redis holds such a queue without a bound of its own.
pub struct Queue {
    requests: Vec<Request>,
    bytes: usize,
    charged: Arc<AtomicUsize>,
}

impl Queue {
    pub(crate) fn new(charged: Arc<AtomicUsize>) -> Queue {
        Queue {
            requests: Vec::new(),
            bytes: 0,
            charged,
        }
    }

    pub(crate) fn push(&mut self, req: Request) {
        let bytes = request_bytes(&req);
        self.bytes += bytes;
        self.charged.fetch_add(bytes, Ordering::Relaxed);
        self.requests.push(req);
    }

    pub(crate) fn len(&self) -> usize {
        self.requests.len()
    }

    /// What the queued requests hold in memory.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    pub(crate) fn requests(&self) -> &[Request] {
        &self.requests
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        self.charged.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

/// What a parsed request holds: its arguments and their vectors.
fn request_bytes(req: &Request) -> usize {
    let vec = std::mem::size_of::<Vec<u8>>();
    vec + req.iter().map(|a| a.len() + vec).sum::<usize>()
}
