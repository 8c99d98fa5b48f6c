//! Publish/subscribe: who listens to which channel, shard channel or
//! pattern, and delivering a published message to them.
//!
//! Messages are not data: they go to the clients subscribed at the moment
//! of `PUBLISH` and nowhere else, and are neither logged nor kept, as in
//! Redis. The commands that use this registry are in [`commands`].
//!
//! A subscriber's messages wait in its outbox until its connection writes
//! them (`conn.rs` wakes on [`Subscriber::notified`]), encoded in the
//! protocol the client speaks at that moment. The outbox is bounded as
//! Redis bounds a pub/sub client's output by default (`client-output-buffer-
//! limit pubsub 32mb 8mb 60`): past 32 MiB, or past 8 MiB for 60 seconds
//! in a row, the client is disconnected, so a subscriber that stops reading
//! cannot make the server hold its messages without end.
//!
//! Thread-safety: one mutex per namespace, held while a message is handed
//! to that namespace's subscribers (each outbox has its own mutex, taken
//! after the registry's, never before). Durability: none, by design.

pub mod commands;
mod message;

pub use message::INVALIDATE_CHANNEL;
use message::{Message, INVALIDATE_MESSAGE, INVALIDATE_PUSH, MONITOR_LINE, REDIRECT_BROKEN};

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

use crate::clients::Client;
use crate::glob;

/// Bytes of undelivered messages that disconnect a subscriber at once.
const HARD_LIMIT: usize = 32 << 20;
/// Bytes of undelivered messages that disconnect a subscriber that holds
/// them for [`SOFT_SECONDS`].
const SOFT_LIMIT: usize = 8 << 20;
const SOFT_SECONDS: Duration = Duration::from_secs(60);

/// The three namespaces a client subscribes in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    /// `SUBSCRIBE`, `PUBLISH`.
    Channels,
    /// `PSUBSCRIBE`: glob patterns over the channels' names.
    Patterns,
    /// `SSUBSCRIBE`, `SPUBLISH` (shard channels; one shard here).
    Shards,
}

impl Space {
    pub const ALL: [Space; 3] = [Space::Channels, Space::Patterns, Space::Shards];

    fn index(self) -> usize {
        self as usize
    }

    /// The kind of a confirmation of a subscription in this space.
    pub fn subscribe_word(self) -> &'static str {
        ["subscribe", "psubscribe", "ssubscribe"][self.index()]
    }

    pub fn unsubscribe_word(self) -> &'static str {
        ["unsubscribe", "punsubscribe", "sunsubscribe"][self.index()]
    }
}

#[derive(Default)]
struct Outbox {
    messages: VecDeque<Message>,
    bytes: usize,
    /// Since when the outbox has held more than [`SOFT_LIMIT`].
    over_soft_since: Option<Instant>,
    /// The client was disconnected for its backlog: nothing more is queued.
    closed: bool,
}

/// A connection that subscribed to something: its queue of messages and
/// the wake-up of its connection task.
pub struct Subscriber {
    pub client: Arc<Client>,
    outbox: Mutex<Outbox>,
    notify: Notify,
}

impl Subscriber {
    pub fn new(client: Arc<Client>) -> Arc<Subscriber> {
        Arc::new(Subscriber {
            client,
            outbox: Mutex::default(),
            notify: Notify::new(),
        })
    }

    fn outbox(&self) -> MutexGuard<'_, Outbox> {
        self.outbox.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues `message`, or disconnects the client if its backlog is past
    /// the limits.
    fn deliver(&self, message: Message) {
        self.deliver_at(message, Instant::now())
    }

    /// [`deliver`](Self::deliver) at time `now`.
    fn deliver_at(&self, message: Message, now: Instant) {
        let mut o = self.outbox();
        if o.closed {
            return;
        }
        o.bytes += message.cost();
        o.messages.push_back(message);
        let since = match o.bytes > SOFT_LIMIT {
            true => *o.over_soft_since.get_or_insert(now),
            false => {
                o.over_soft_since = None;
                now
            }
        };
        if o.bytes > HARD_LIMIT || now.duration_since(since) >= SOFT_SECONDS {
            o.closed = true;
            o.messages = VecDeque::new();
            o.bytes = 0;
            drop(o);
            self.client.kill();
            return;
        }
        drop(o);
        self.notify.notify_one();
    }

    /// Queues a `MONITOR` line (held to the same limits as messages).
    pub fn deliver_line(&self, line: Arc<[u8]>) {
        self.deliver(Message {
            kind: MONITOR_LINE,
            pattern: None,
            channel: Arc::from(&b""[..]),
            payload: line,
        })
    }

    /// Queues an invalidation of `keys` (`None`: of every key, after a
    /// flush) from client-side caching (`crate::tracking`); `redirected`
    /// when it is another client's, which a subscribed RESP2 connection
    /// then gets as a `message` on [`INVALIDATE_CHANNEL`].
    pub fn deliver_invalidation(&self, keys: Option<&[&[u8]]>, redirected: bool) {
        self.deliver(Message {
            kind: match redirected {
                true => INVALIDATE_MESSAGE,
                false => INVALIDATE_PUSH,
            },
            pattern: None,
            channel: Arc::from(INVALIDATE_CHANNEL),
            payload: keys.map_or_else(Vec::new, message::key_array).into(),
        })
    }

    /// Queues the RESP3 push telling a tracking client that its redirect
    /// target, client `id`, is gone.
    pub fn deliver_redirect_broken(&self, id: u64) {
        self.deliver(Message {
            kind: REDIRECT_BROKEN,
            pattern: None,
            channel: Arc::from(&b""[..]),
            payload: id.to_string().into_bytes().into(),
        })
    }

    /// Encodes every queued message into `out`, oldest first, in protocol
    /// `proto`; true if there was any.
    pub fn drain_into(&self, proto: u8, out: &mut Vec<u8>) -> bool {
        let mut o = self.outbox();
        if o.messages.is_empty() {
            return false;
        }
        for m in o.messages.drain(..) {
            m.encode(proto, out);
        }
        o.bytes = 0;
        o.over_soft_since = None;
        true
    }

    /// Resolves when a message was queued since the last time it resolved
    /// (at once if one was: a permit is kept).
    pub async fn notified(&self) {
        self.notify.notified().await
    }
}

/// Who is subscribed to what, per namespace: the subscribers of each
/// channel (or pattern) in the order they subscribed.
#[derive(Default)]
pub struct PubSub {
    spaces: [Mutex<SpaceMap>; 3],
}

/// The subscribers of each name in one namespace. The names are shared
/// with the messages that carry them (a pattern with each `pmessage`), so
/// a publish copies none.
type SpaceMap = HashMap<Arc<[u8]>, Vec<Arc<Subscriber>>>;

impl PubSub {
    fn space(&self, space: Space) -> MutexGuard<'_, SpaceMap> {
        self.spaces[space.index()]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Adds `sub` to `name`'s subscribers (the caller knows it is not one).
    pub fn add(&self, space: Space, name: &[u8], sub: &Arc<Subscriber>) {
        self.space(space)
            .entry(name.into())
            .or_default()
            .push(Arc::clone(sub));
    }

    /// Removes `sub` from `name`'s subscribers.
    pub fn remove(&self, space: Space, name: &[u8], sub: &Arc<Subscriber>) {
        let mut map = self.space(space);
        if let Some(subs) = map.get_mut(name) {
            subs.retain(|s| !Arc::ptr_eq(s, sub));
            if subs.is_empty() {
                map.remove(name);
            }
        }
    }

    /// Sends `payload` on `channel` to its subscribers and to those of
    /// every matching pattern (`PUBLISH`), or to a shard channel's
    /// subscribers (`SPUBLISH`); how many subscriptions received it.
    pub fn publish(&self, shard: bool, channel: &[u8], payload: &[u8]) -> usize {
        let channel: Arc<[u8]> = channel.into();
        let payload: Arc<[u8]> = payload.into();
        let (space, kind) = match shard {
            true => (Space::Shards, "smessage"),
            false => (Space::Channels, "message"),
        };
        let mut received = 0;
        if let Some(subs) = self.space(space).get(&*channel) {
            for sub in subs {
                sub.deliver(Message {
                    kind,
                    pattern: None,
                    channel: Arc::clone(&channel),
                    payload: Arc::clone(&payload),
                });
            }
            received += subs.len();
        }
        if shard {
            return received;
        }
        for (pattern, subs) in self.space(Space::Patterns).iter() {
            if !glob::matches(pattern, &channel) {
                continue;
            }
            for sub in subs {
                sub.deliver(Message {
                    kind: "pmessage",
                    pattern: Some(Arc::clone(pattern)),
                    channel: Arc::clone(&channel),
                    payload: Arc::clone(&payload),
                });
            }
            received += subs.len();
        }
        received
    }

    /// How many subscriptions a `PUBLISH` (or `SPUBLISH`) on `channel`
    /// would reach now.
    pub fn receivers(&self, shard: bool, channel: &[u8]) -> usize {
        if shard {
            return self.count(Space::Shards, channel);
        }
        let patterns: usize = self
            .space(Space::Patterns)
            .iter()
            .filter(|(p, _)| glob::matches(p, channel))
            .map(|(_, subs)| subs.len())
            .sum();
        self.count(Space::Channels, channel) + patterns
    }

    /// The channels (or shard channels) with subscribers whose names match
    /// `pattern` (all of them if `None`).
    pub fn active(&self, space: Space, pattern: Option<&[u8]>) -> Vec<Vec<u8>> {
        self.space(space)
            .keys()
            .filter(|name| pattern.is_none_or(|p| glob::matches(p, name)))
            .map(|name| name.to_vec())
            .collect()
    }

    /// The names in `space` client `id` subscribed to (a scan: for the
    /// rare ACL change that may revoke them).
    pub fn subscriptions_of(&self, space: Space, id: u64) -> Vec<Vec<u8>> {
        self.space(space)
            .iter()
            .filter(|(_, subs)| subs.iter().any(|s| s.client.id == id))
            .map(|(name, _)| name.to_vec())
            .collect()
    }

    /// How many clients subscribed to `name`.
    pub fn count(&self, space: Space, name: &[u8]) -> usize {
        self.space(space).get(name).map_or(0, Vec::len)
    }

    /// How many names in `space` have subscribers (`INFO`'s
    /// `pubsub_channels`, `pubsub_patterns`, `pubsubshard_channels`;
    /// `PUBSUB NUMPAT`).
    pub fn names(&self, space: Space) -> usize {
        self.space(space).len()
    }
}

/// A connection's subscriptions, once it made one.
pub struct Subscriptions {
    pub sub: Arc<Subscriber>,
    names: [std::collections::HashSet<Vec<u8>>; 3],
}

impl Subscriptions {
    /// Subscriptions whose messages go to `outbox` (the connection's).
    pub fn new(outbox: &Arc<Subscriber>) -> Subscriptions {
        Subscriptions {
            sub: Arc::clone(outbox),
            names: Default::default(),
        }
    }

    pub fn count(&self, space: Space) -> usize {
        self.names[space.index()].len()
    }

    /// The count Redis confirms a (un)subscription in `space` with:
    /// channels and patterns together, shard channels on their own.
    pub fn confirmed_count(&self, space: Space) -> usize {
        match space {
            Space::Shards => self.count(Space::Shards),
            _ => self.count(Space::Channels) + self.count(Space::Patterns),
        }
    }

    pub fn total(&self) -> usize {
        Space::ALL.iter().map(|&s| self.count(s)).sum()
    }

    /// Publishes the counts to `CLIENT LIST`.
    fn publish_counts(&self) {
        let counts = Space::ALL.map(|s| self.count(s));
        self.sub.client.set_subscriptions(counts);
    }

    /// Leaves every channel, pattern and shard channel.
    pub fn leave_all(&mut self, registry: &PubSub) {
        for space in Space::ALL {
            for name in std::mem::take(&mut self.names[space.index()]) {
                registry.remove(space, &name, &self.sub);
            }
        }
        self.publish_counts();
    }
}

#[cfg(test)]
mod tests;
