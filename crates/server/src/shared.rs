//! [`Shared`]: what every connection shares — the store, and each
//! component's state (clients, pub/sub, scripts, statistics, ...).
//!
//! * **Owns**: nothing of its own but the client ids and the shutdown
//!   signal; each field is its component's, which says what it owns.
//! * **Thread safety**: shared by every connection task behind an `Arc`;
//!   each field guards itself.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::watch;

use crate::options::{Fsync, ServerOptions};
use crate::{
    acl, clients, cluster, cmdstats, cursors, monitor, notify, pause, pubsub, slowlog, store,
    waiters,
};

/// What every connection shares.
pub struct Shared {
    pub opts: ServerOptions,
    pub store: store::Store,
    pub cursors: cursors::Cursors,
    /// The connected clients, for `CLIENT LIST` and `CLIENT KILL`.
    pub registry: clients::Clients,
    pub started: Instant,
    pub clients: AtomicU64,
    pub connections: AtomicU64,
    pub commands: AtomicU64,
    pub rejected: AtomicU64,
    /// Collection versions whose elements the sweep deleted
    /// (`collections/sweep.rs`; `INFO stats`).
    pub swept: AtomicU64,
    /// Input held by all clients, in bytes: unparsed, or parsed and queued
    /// in a `MULTI` (`transaction::Queue`).
    pub pending_input: Arc<AtomicUsize>,
    /// `SAVE`, `BGSAVE` and `LASTSAVE`'s state.
    pub saves: Arc<crate::saves::Saves>,
    /// Clients blocked in `BLPOP` and the like, and their wake-up.
    pub waiters: waiters::Waiters,
    /// Who subscribed to which channel or pattern.
    pub pubsub: pubsub::PubSub,
    /// Lua scripts by SHA1.
    pub scripts: crate::scripting::cache::Scripts,
    /// Function libraries (`FUNCTION LOAD`, `FCALL`).
    pub functions: crate::scripting::functions::Functions,
    /// `CLIENT PAUSE`'s hold on clients.
    pub pause: pause::Pause,
    /// `INFO commandstats` and `errorstats`.
    pub cmdstats: cmdstats::CommandStats,
    /// `CONFIG SET`'s stored parameters (`config/`).
    pub config: crate::config::values::Values,
    /// Commands slower than `slowlog-log-slower-than` (`SLOWLOG`).
    pub slowlog: slowlog::SlowLog,
    /// Clients in `MONITOR`.
    pub monitors: monitor::Monitors,
    /// `maxmemory` set at run time and its `noeviction` stop.
    pub maxmemory: crate::maxmemory::MaxMemory,
    /// Client-side caching: who read which keys (`tracking`).
    pub tracking: crate::tracking::Tracking,
    /// Keys whose expiry is to be announced (`notify`).
    pub expiries: notify::Expiries,
    /// `min-replicas-to-write` and `min-replicas-max-lag` (`NOREPLICAS`).
    pub replicas: crate::config::values::Replicas,
    /// This node's cluster (`slsm serve --cluster`); `None` on a single
    /// node, which then runs exactly as if clusters did not exist.
    pub cluster: Option<Arc<cluster::Cluster>>,
    /// The ACL users, their rules and the ACL log (`acl`).
    pub acl: acl::Acl,
    pub(crate) next_id: AtomicU64,
    pub(crate) shutdown: watch::Sender<bool>,
}

impl Shared {
    pub fn write_options(&self) -> slsm::WriteOptions {
        slsm::WriteOptions {
            sync: self.opts.appendfsync == Fsync::Always,
            ..Default::default()
        }
    }

    /// True if writes are refused for want of replicas (`NOREPLICAS`).
    pub fn replicas_short(&self) -> bool {
        self.replicas.short()
    }

    /// Stops the server (SHUTDOWN).
    pub fn shutdown_now(&self) -> bool {
        self.stop()
    }

    /// Tells every connection to close and stops running scripts (one
    /// looping for ever would otherwise hold the shutdown).
    pub(crate) fn stop(&self) -> bool {
        self.scripts.kill_all();
        self.shutdown.send(true).is_ok()
    }

    pub(crate) fn next_client_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed) + 1
    }
}
