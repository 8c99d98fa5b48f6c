//! Client-side caching (Redis's `CLIENT TRACKING`, `tracking.c`): which
//! clients read which keys, and the invalidation messages a write sends
//! them.
//!
//! Two modes, as in Redis 7.0:
//! - **default**: a read-only command of a tracking client remembers the
//!   keys it named (the tracking table: key → client ids, kept when the
//!   key does not exist); the next change of a key sends each of them
//!   `invalidate [key]` once and forgets the key. `OPTIN` remembers only
//!   after `CLIENT CACHING yes`, `OPTOUT` all but after `CLIENT CACHING no`.
//! - **BCAST**: a client names prefixes (none: every key) and is told of
//!   every changed key under them, one message per prefix for all the keys
//!   one command (or transaction, or script) changed, sorted.
//!
//! `NOLOOP` leaves out the keys the client changed itself. `REDIRECT id`
//! sends the messages to another connection: a RESP3 push there, or a
//! `message` on `__redis__:invalidate` to a subscribed RESP2 connection;
//! a redirect whose target is gone is reported to the tracking client
//! (`tracking-redir-broken`, RESP3). Without a redirect a RESP2 client
//! gets nothing: RESP2 cannot tell a push from a reply. `FLUSHALL` and
//! `FLUSHDB` send every tracking client `invalidate` with a null (every
//! key). `tracking-table-max-keys` bounds the table: past it, keys are
//! forgotten, their clients told, until it fits.
//!
//! A write learns that keys are tracked from `Tuning::tracking` when it
//! starts (`notify::TRACKED`): a write that started before the first
//! client turned tracking on may commit after that client's read without
//! telling it (a window of one command, at that moment only).
//!
//! * **Owns**: the tracking table, the prefix table, each tracking
//!   client's options, and every connection's outbox by client id (to
//!   reach a redirect's target).
//! * **Called by**: `tracking::command` (`CLIENT TRACKING`, `CACHING`,
//!   `GETREDIR`, `TRACKINGINFO`), `tracking::reads` (the keys a command
//!   read), `notify::Notices::publish` (the keys a write changed), the
//!   flush, `INFO` and `CONFIG`.
//! * **Thread safety**: one mutex over the tables, held while the
//!   messages are queued (each outbox's own lock is taken after it, never
//!   before). **Durability**: none; tracking belongs to connections.

pub mod command;
mod options;
pub mod reads;
mod tables;

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::clients::Client;
use crate::pubsub::Subscriber;
pub use options::{Mode, Options};
use tables::Tables;

/// Redis's default `tracking-table-max-keys`.
pub const DEFAULT_MAX_KEYS: usize = 1_000_000;

/// `CLIENT TRACKINGINFO`'s view of one client.
pub struct Info {
    pub options: Options,
    pub broken: bool,
}

/// Counts for `INFO`.
pub struct Counts {
    pub keys: usize,
    pub items: usize,
    pub prefixes: usize,
    pub clients: usize,
}

/// The server's tracking state.
pub struct Tracking {
    tables: Mutex<Tables>,
    max_keys: AtomicUsize,
}

impl Default for Tracking {
    fn default() -> Tracking {
        Tracking {
            tables: Mutex::default(),
            max_keys: AtomicUsize::new(DEFAULT_MAX_KEYS),
        }
    }
}

thread_local! {
    /// The client whose command runs on this thread (for `NOLOOP`).
    static WRITER: Cell<u64> = const { Cell::new(0) };
    /// A script running on this thread called a read-only command.
    static SCRIPT_READ: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` as client `id`'s command: the keys it changes are its own.
pub fn writing_as<R>(id: u64, f: impl FnOnce() -> R) -> R {
    let was = WRITER.replace(id);
    let out = f();
    WRITER.set(was);
    out
}

/// A script's `redis.call` ran a read-only command (Redis then tracks the
/// keys the script declared).
pub fn script_read() {
    SCRIPT_READ.set(true);
}

/// Whether a script read since the last call (and forgets it).
pub fn take_script_read() -> bool {
    SCRIPT_READ.replace(false)
}

impl Tracking {
    fn tables(&self) -> MutexGuard<'_, Tables> {
        self.tables.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A connection's outbox, by which messages reach it.
    pub fn connected(&self, id: u64, outbox: &Arc<Subscriber>) {
        self.tables().outboxes.insert(id, Arc::downgrade(outbox));
    }

    /// The connection of client `id` closed: it tracks nothing more and
    /// can no longer be redirected to.
    pub fn disconnected(&self, id: u64, on: &AtomicBool) {
        let mut t = self.tables();
        t.disable(id);
        t.outboxes.remove(&id);
        on.store(!t.trackers.is_empty(), Ordering::SeqCst);
    }

    /// True if client `id` is connected (a redirect's target must be).
    pub fn is_connected(&self, id: u64) -> bool {
        let t = self.tables();
        t.outboxes.get(&id).is_some_and(|w| w.strong_count() > 0)
    }

    /// `CLIENT TRACKING ON` for `client`, its options checked; `on` is
    /// set while any client tracks.
    pub fn enable(&self, client: &Arc<Client>, options: Options, on: &AtomicBool) {
        let mut t = self.tables();
        t.enable(client, options);
        on.store(true, Ordering::SeqCst);
    }

    /// `CLIENT TRACKING OFF` (or `RESET`).
    pub fn disable(&self, id: u64, on: &AtomicBool) {
        let mut t = self.tables();
        t.disable(id);
        on.store(!t.trackers.is_empty(), Ordering::SeqCst);
    }

    /// Client `id`'s tracking, if it tracks.
    pub fn info(&self, id: u64) -> Option<Info> {
        let t = self.tables();
        t.trackers.get(&id).map(|tr| Info {
            options: tr.options.clone(),
            broken: tr.broken,
        })
    }

    /// Redis's error if a prefix of `new` overlaps one client `id` has or
    /// another of `new`.
    pub fn prefix_collision(&self, id: u64, new: &[Vec<u8>]) -> Option<String> {
        let t = self.tables();
        let own = t.trackers.get(&id).map(|tr| tr.options.prefixes.clone());
        tables::collision(own.as_deref().unwrap_or(&[]), new)
    }

    /// Client `id` read `keys`: each change of one is sent to it once.
    pub fn remember<'k>(&self, id: u64, keys: impl Iterator<Item = &'k [u8]>) {
        let max = self.max_keys.load(Ordering::Relaxed);
        let mut t = self.tables();
        t.remember(id, keys);
        t.evict_over(max);
    }

    /// `keys` changed (by the client whose command runs on this thread,
    /// if one does).
    pub fn changed(&self, keys: &[Vec<u8>]) {
        let writer = WRITER.get();
        self.tables().changed(keys, writer);
    }

    /// Every key is gone (`FLUSHALL`, `FLUSHDB`).
    pub fn flushed(&self) {
        self.tables().flushed();
    }

    /// `tracking-table-max-keys` (0: no bound), applied at once.
    pub fn set_max_keys(&self, max: usize) {
        self.max_keys.store(max, Ordering::Relaxed);
        self.tables().evict_over(max);
    }

    pub fn max_keys(&self) -> usize {
        self.max_keys.load(Ordering::Relaxed)
    }

    pub fn counts(&self) -> Counts {
        let t = self.tables();
        Counts {
            keys: t.keys.len(),
            items: t.items,
            prefixes: t.prefixes.len(),
            clients: t.trackers.len(),
        }
    }
}

#[cfg(test)]
mod tests;
