//! [`Effects`]: what a transaction (`EXEC`) or a script did beyond its
//! writes, done once they commit: its `PUBLISH`es and keyspace
//! notifications are sent, and the clients blocked on the lists and
//! sorted sets it pushed to are woken.
//! A subscriber told of a change then reads it, and a transaction that
//! fails or is retried publishes nothing twice.

use crate::collections::blocking;
use crate::resp::{Reply, Request};
use crate::shared::Shared;

/// What a script (or a transaction) did beyond its writes, done once they
/// commit.
#[derive(Default)]
pub struct Effects {
    /// `(shard, channel, message)`.
    publishes: Vec<(bool, Vec<u8>, Vec<u8>)>,
    /// Its commands that may add elements blocked clients wait for.
    pushes: Vec<Request>,
    /// Its keyspace notifications (`crate::notify`).
    notices: crate::notify::Notices,
    /// It ran a write command (`maxmemory`'s stop lets it finish).
    pub wrote: bool,
}

impl Effects {
    /// A `PUBLISH` (or `SPUBLISH`) `req` to send once the transaction
    /// commits; its reply, the subscribers there are now.
    pub fn publish(&mut self, s: &Shared, shard: bool, req: &Request) -> Reply {
        let receivers = s.pubsub.receivers(shard, &req[1]);
        self.publishes.push((shard, req[1].clone(), req[2].clone()));
        Reply::Int(receivers as i64)
    }

    /// A data command `req` ran: once committed, it may wake clients
    /// blocked on what it pushed.
    pub fn ran(&mut self, req: Request) {
        self.pushes.push(req);
    }

    /// A command's notices (taken from its access), sent after those of
    /// the commands before it.
    pub fn notices(&mut self, notices: &mut crate::notify::Notices) {
        self.notices.append(notices);
    }

    pub fn apply(self, s: &Shared) {
        self.notices.publish(&s.pubsub, &s.expiries, &s.tracking);
        for (shard, channel, message) in self.publishes {
            s.pubsub.publish(shard, &channel, &message);
        }
        let wake = blocking::wakes_of_all(&self.pushes);
        if !wake.is_empty() {
            s.waiters.wake(wake);
        }
    }
}
