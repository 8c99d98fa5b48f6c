//! One client's session: authentication, protocol version, name, and
//! `MULTI`/`EXEC`/`WATCH` state; `dispatch::execute` runs one request
//! against it. What `WATCH` and `EXEC` do with that state is in
//! [`crate::transaction`].

use std::sync::Arc;

use crate::clients::Client;
use crate::commands::{self, Fail};
use crate::pubsub::{Subscriber, Subscriptions};
use crate::resp::{Reply, Request};
use crate::shared::Shared;
use crate::transaction::queue::Queue;
use crate::transaction::watch::Watch;
use crate::waiters::Blocked;

/// What the connection does after a reply.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Then {
    Continue,
    Close,
    Shutdown,
    /// A blocking command found nothing: the connection waits
    /// (`Session::blocked` says for what) before it runs anything else.
    Block,
    /// The next request waits for the end of a `CLIENT PAUSE`
    /// (`crate::pause`).
    Paused,
}

pub struct Session {
    pub id: u64,
    /// The connection as other clients see it (`CLIENT LIST`): its name,
    /// the library it says it is, its last command.
    pub client: Arc<Client>,
    pub proto: u8,
    /// The version HELLO asked for, applied once the rest of HELLO is fine.
    pub pending_proto: u8,
    pub authenticated: bool,
    /// The ACL user it runs as (`acl::gate::refresh` keeps it current).
    pub user: Arc<crate::acl::user::User>,
    /// The users table's epoch `user` was read at.
    pub(crate) acl_epoch: u64,
    /// Commands queued since MULTI (`None`: not in MULTI).
    pub(crate) queued: Option<Queue>,
    /// A command failed to queue: EXEC aborts.
    pub(crate) queue_failed: bool,
    pub(crate) watch: Option<Watch>,
    /// How many pipelined `GET`s the next engine call may take: grows while
    /// their replies are small, shrinks when they are large (see
    /// `pipeline::next_get_group`), so a pipeline of large values never
    /// holds many of them at once.
    pub get_group: usize,
    /// The blocking command the connection waits to run again.
    pub blocked: Option<Blocked>,
    /// Where messages to it wait until the connection writes them: what
    /// it subscribed to, `MONITOR` lines, client-side caching pushes.
    pub outbox: Arc<Subscriber>,
    /// Its channels, patterns and shard channels, once it subscribed.
    pub pubsub: Option<Box<Subscriptions>>,
    /// Its client-side caching mode, while `CLIENT TRACKING` is on.
    pub(crate) tracking: Option<crate::tracking::Mode>,
    /// `CLIENT CACHING` was sent for the next command (or transaction).
    pub(crate) caching: bool,
    /// `EXEC` is running the queued commands: they are shown to monitors
    /// once it commits, in their order, then `EXEC` itself (as Redis 7.0).
    pub(crate) in_exec: bool,
    /// `CLIENT REPLY`'s state: whether replies go out.
    pub reply_mode: ReplyMode,
    /// In a cluster: `READONLY` was sent (a follower serves reads as it
    /// is, as a Redis Cluster replica does).
    pub readonly: bool,
    /// In a cluster: the read-index round of this batch of requests is
    /// done (`cluster::run::refusal`; the connection clears it per batch).
    pub fenced: bool,
    /// In a cluster: the watched keys and digests of their values
    /// (`cluster::run::watch`).
    pub(crate) watched: Vec<(Vec<u8>, Option<u64>)>,
}

impl Session {
    /// A new connection's session, logged in as `default` if that user
    /// needs no password.
    pub fn new(client: Arc<Client>, acl: &crate::acl::Acl) -> Session {
        Session {
            id: client.id,
            outbox: Subscriber::new(Arc::clone(&client)),
            client,
            proto: 2,
            pending_proto: 2,
            authenticated: acl.default_logs_in(),
            user: acl.default_user(),
            acl_epoch: acl.epoch(),
            queued: None,
            queue_failed: false,
            watch: None,
            get_group: 1,
            blocked: None,
            pubsub: None,
            tracking: None,
            caching: false,
            in_exec: false,
            reply_mode: Default::default(),
            readonly: false,
            fenced: false,
            watched: Vec::new(),
        }
    }
}

impl Session {
    /// True when commands run as they come: authenticated as a user
    /// whose rules refuse nothing (and have not changed since it was
    /// read), not queueing a `MULTI`.
    pub fn runs_plain_commands(&self, acl: &crate::acl::Acl) -> bool {
        self.authenticated
            && self.user.unrestricted()
            && self.acl_epoch == acl.epoch()
            && self.queued.is_none()
            && !(self.proto < 3 && self.subscribed())
            && self.reply_mode == ReplyMode::On
            && self.tracking.is_none()
    }

    /// True while the client has a subscription (`SUBSCRIBE` and the
    /// like): in RESP2 it may then only run pub/sub commands.
    pub fn subscribed(&self) -> bool {
        self.pubsub.as_ref().is_some_and(|p| p.total() > 0)
    }

    /// Appends the messages sent to this client since the last call.
    pub fn drain_messages(&self, out: &mut Vec<u8>) -> bool {
        self.outbox.drain_into(self.proto, out)
    }

    /// Ends every subscription (the connection closes, or `RESET`).
    pub fn leave_pubsub(&mut self, s: &Shared) {
        if let Some(mut p) = self.pubsub.take() {
            p.leave_all(&s.pubsub);
            s.monitors.remove(&p.sub);
        }
    }

    /// `MONITOR`: from now on every command the server runs is sent here.
    pub(crate) fn monitor(&mut self, s: &Shared) -> Reply {
        let p = self
            .pubsub
            .get_or_insert_with(|| Box::new(Subscriptions::new(&self.outbox)));
        s.monitors.add(&p.sub);
        Reply::ok()
    }

    /// Commands queued since `MULTI`, `None` outside one.
    pub fn queued_count(&self) -> Option<usize> {
        self.queued.as_ref().map(Queue::len)
    }

    /// Bytes the commands queued since `MULTI` hold (0 outside one).
    pub fn queued_bytes(&self) -> usize {
        self.queued.as_ref().map_or(0, Queue::bytes)
    }

    /// Publishes that the session is about to run a batch of requests,
    /// `bytes` of input, ending with `last` (`CLIENT LIST`'s cmd, qbuf,
    /// idle, multi, resp).
    pub fn publish(&self, last: &Request, bytes: usize) {
        let multi = self.queued_count().map_or(-1, |n| n as i64);
        self.client.publish(last, bytes, self.proto, multi);
    }
}

pub(crate) fn to_reply(outcome: commands::Outcome) -> Reply {
    match outcome {
        Ok(r) => r,
        Err(Fail::Reply(r)) => r,
        Err(Fail::Engine(e)) => Reply::err(format!("ERR {e}")),
    }
}

/// Redis's refusal of a write short of good replicas.
pub const NO_REPLICAS: &str = "NOREPLICAS Not enough good replicas to write.";

/// What `CLIENT REPLY` asked: whether the next replies are sent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReplyMode {
    #[default]
    On,
    Off,
    /// `SKIP` was the last command: the next command's reply is dropped.
    SkipNext,
    /// The reply being sent now is dropped (the command after `SKIP`, or
    /// `REPLY OFF`/`SKIP` itself).
    SkipThis,
}

impl ReplyMode {
    /// Whether the reply of the command that just ran goes out, and the
    /// mode for the next one.
    pub fn after_command(self) -> (bool, ReplyMode) {
        match self {
            ReplyMode::On => (true, ReplyMode::On),
            ReplyMode::Off => (false, ReplyMode::Off),
            ReplyMode::SkipNext => (false, ReplyMode::On),
            ReplyMode::SkipThis => (false, ReplyMode::SkipNext),
        }
    }
}
