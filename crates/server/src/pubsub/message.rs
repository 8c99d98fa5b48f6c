//! One message on its way to one connection, and how it is written in the
//! protocol the client speaks when its connection sends it: a published
//! message, a `MONITOR` line, or a client-side caching push
//! (`crate::tracking`).

use std::sync::Arc;

use crate::resp::encode_bulk;

/// What a queued message costs beyond its bytes.
const MESSAGE_OVERHEAD: usize = 64;

/// The kind of a [`Message`] that is a `MONITOR` line.
pub(super) const MONITOR_LINE: &str = "monitor";
/// An invalidation for a RESP3 connection only (a RESP2 connection
/// cannot tell a push from a reply, so it gets nothing).
pub(super) const INVALIDATE_PUSH: &str = "invalidate";
/// An invalidation redirected to a connection: a push in RESP3, a
/// `message` on `__redis__:invalidate` in RESP2 (the connection
/// subscribed, as Redis requires of a RESP2 redirect target).
pub(super) const INVALIDATE_MESSAGE: &str = "invalidate message";
/// A RESP3 push telling a tracking client its redirect target is gone.
pub(super) const REDIRECT_BROKEN: &str = "tracking-redir-broken";

/// The channel RESP2 invalidations arrive on.
pub const INVALIDATE_CHANNEL: &[u8] = b"__redis__:invalidate";

/// One message: `message`, `pmessage` (with the pattern that matched),
/// `smessage`, a `MONITOR` line, or a tracking push (its payload then the
/// keys as a RESP array, empty for Redis's null: "every key").
pub(super) struct Message {
    pub kind: &'static str,
    pub pattern: Option<Arc<[u8]>>,
    pub channel: Arc<[u8]>,
    pub payload: Arc<[u8]>,
}

impl Message {
    pub fn cost(&self) -> usize {
        MESSAGE_OVERHEAD
            + self.pattern.as_ref().map_or(0, |p| p.len())
            + self.channel.len()
            + self.payload.len()
    }

    /// A push in RESP3, an array in RESP2; a `MONITOR` line is a simple
    /// string in both, as Redis sends it.
    pub fn encode(&self, proto: u8, out: &mut Vec<u8>) {
        match self.kind {
            MONITOR_LINE => {
                out.push(b'+');
                out.extend_from_slice(&self.payload);
                out.extend_from_slice(b"\r\n");
                return;
            }
            INVALIDATE_PUSH | INVALIDATE_MESSAGE | REDIRECT_BROKEN => {
                return self.encode_tracking(proto, out)
            }
            _ => {}
        }
        let n = if self.pattern.is_some() { 4 } else { 3 };
        out.push(if proto >= 3 { b'>' } else { b'*' });
        out.extend_from_slice(format!("{n}\r\n").as_bytes());
        encode_bulk(self.kind.as_bytes(), out);
        if let Some(p) = &self.pattern {
            encode_bulk(p, out);
        }
        encode_bulk(&self.channel, out);
        encode_bulk(&self.payload, out);
    }

    /// Redis's `sendTrackingMessage`: what a RESP2 connection cannot take
    /// is left out.
    fn encode_tracking(&self, proto: u8, out: &mut Vec<u8>) {
        if proto >= 3 {
            out.extend_from_slice(b">2\r\n");
            if self.kind == REDIRECT_BROKEN {
                encode_bulk(REDIRECT_BROKEN.as_bytes(), out);
                out.push(b':');
                out.extend_from_slice(&self.payload);
                out.extend_from_slice(b"\r\n");
                return;
            }
            encode_bulk(b"invalidate", out);
        } else if self.kind == INVALIDATE_MESSAGE {
            out.extend_from_slice(b"*3\r\n");
            encode_bulk(b"message", out);
            encode_bulk(&self.channel, out);
        } else {
            return;
        }
        match (self.payload.is_empty(), proto >= 3) {
            (false, _) => out.extend_from_slice(&self.payload),
            (true, true) => out.extend_from_slice(b"_\r\n"),
            (true, false) => out.extend_from_slice(b"$-1\r\n"),
        }
    }
}

/// `keys` as the RESP array an invalidation carries.
pub(super) fn key_array(keys: &[&[u8]]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", keys.len()).into_bytes();
    keys.iter().for_each(|k| encode_bulk(k, &mut out));
    out
}
