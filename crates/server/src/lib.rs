//! `slsm serve`: a Redis-protocol server on the slsm engine, so redis-cli,
//! redis-benchmark and every Redis client library use slsm unchanged, with
//! data far larger than memory and durable as Redis's AOF promises.
//!
//! * RESP2 and RESP3 (`HELLO 3`), pipelining, one task per connection on a
//!   multi-threaded tokio runtime; under `appendfsync always` engine calls
//!   run in `block_in_place`, so an fsync never stalls other clients' I/O.
//! * Strings with expiry (`store.rs`), lists, hashes, sets and sorted sets
//!   (`collections`), key commands, `MULTI`/`EXEC`/`WATCH`
//!   on the engine's optimistic transactions (`session.rs`); read-modify-
//!   write commands (`INCR`, `SETNX`, `APPEND`, ...) are atomic under
//!   concurrent clients.
//! * Durability as Redis users read it: `--appendfsync always` acknowledges
//!   a write after it is synced, `everysec` syncs at least once a second,
//!   `no` leaves it to the OS (a write survives a crash of the server
//!   process in every mode).
//! * Protocol limits as Redis has them (`resp.rs`); a malformed request
//!   gets `-ERR Protocol error: ...` and the connection is closed; a
//!   client's unparsed input is capped at 1 GiB (Redis's
//!   `client-query-buffer-limit`), and all clients' together at
//!   `max_query_buffers` (a client over its share of it is closed).
//! * A pipeline's consecutive GETs, blind writes and counter commands run
//!   as one engine call each (`pipeline.rs`).

pub mod access;
pub mod acl;
pub mod admin;
pub mod blocked;
pub mod client_kill;
pub mod client_modes;
pub mod clients;
pub mod cluster;
pub mod cmdstats;
pub mod collections;
pub mod command_docs;
pub mod commands;
pub mod compat;
pub mod config;
mod conn;
pub mod cursors;
mod data_command;
mod dispatch;
pub mod effects;
pub mod fdlimit;
pub mod glob;
pub mod incrbyfloat;
pub mod info;
mod inline;
pub mod latency;
pub mod monitor;
pub mod notify;
mod open;
mod options;
pub mod pause;
mod pipeline;
pub mod pubsub;
pub mod registry;
pub mod replay;
pub mod reply;
pub mod resp;
pub mod scripting;
pub mod session;
pub mod slowlog;
pub mod store;
pub mod tls;
mod transaction;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::TcpListener;
use tokio::sync::watch;

pub use options::{Fsync, ServerOptions};

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
    pub saves: Arc<admin::Saves>,
    /// Clients blocked in `BLPOP` and the like, and their wake-up.
    pub waiters: blocked::Waiters,
    /// Who subscribed to which channel or pattern.
    pub pubsub: pubsub::PubSub,
    /// Lua scripts by SHA1.
    pub scripts: scripting::Scripts,
    /// Function libraries (`FUNCTION LOAD`, `FCALL`).
    pub functions: scripting::functions::Functions,
    /// `CLIENT PAUSE`'s hold on clients.
    pub pause: pause::Pause,
    /// `INFO commandstats` and `errorstats`.
    pub cmdstats: cmdstats::CommandStats,
    /// `CONFIG SET`'s stored parameters (`config/`).
    pub config: config::Values,
    /// Commands slower than `slowlog-log-slower-than` (`SLOWLOG`).
    pub slowlog: slowlog::SlowLog,
    /// Clients in `MONITOR`.
    pub monitors: monitor::Monitors,
    /// Keys whose expiry is to be announced (`notify`).
    pub expiries: notify::Expiries,
    /// `min-replicas-to-write` and `min-replicas-max-lag` (`NOREPLICAS`).
    pub replicas: config::Replicas,
    /// This node's cluster (`slsm serve --cluster`); `None` on a single
    /// node, which then runs exactly as if clusters did not exist.
    pub cluster: Option<Arc<cluster::Cluster>>,
    /// The ACL users, their rules and the ACL log (`acl`).
    pub acl: acl::Acl,
    next_id: AtomicU64,
    shutdown: watch::Sender<bool>,
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
    fn stop(&self) -> bool {
        self.scripts.kill_all();
        self.shutdown.send(true).is_ok()
    }

    fn next_client_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed) + 1
    }
}

/// A running server: its address, and a handle to stop it.
pub struct Running {
    pub addr: SocketAddr,
    /// The TLS listener's address (`--tls-port`), if there is one.
    pub tls_addr: Option<SocketAddr>,
    shared: Arc<Shared>,
    done: tokio::sync::oneshot::Receiver<()>,
}

impl Running {
    /// Asks the server to stop (as SHUTDOWN or SIGTERM do).
    pub fn shutdown(&self) {
        let _ = self.shared.stop();
    }

    /// Waits until the server has stopped and the database is closed.
    pub async fn stopped(self) {
        let _ = self.done.await;
    }
}

/// Opens the database, binds, and serves in the background of the current
/// tokio runtime (multi-threaded).
pub async fn start(mut opts: ServerOptions) -> Result<Running, String> {
    opts.check()?;
    let (maxclients, warning) = fdlimit::fit_maxclients(opts.maxclients);
    if let Some(warning) = warning {
        eprintln!("slsm serve: {warning}");
    }
    opts.maxclients = maxclients;
    let acl = acl::Acl::new(
        opts.requirepass.as_deref(),
        opts.aclfile.clone(),
        opts.acl_pubsub_default_all,
    )?;
    if !opts.bind.ip().is_loopback() && acl.default_logs_in() {
        return Err(format!(
            "refusing to listen on {}: the ACL file leaves the default user without a password",
            opts.bind
        ));
    }
    let opened = match &opts.cluster {
        None => open::single(&opts)?,
        Some(c) => open::clustered(&opts, c)?,
    };
    let open::Opened {
        db,
        store,
        functions,
        cluster,
    } = opened;
    let listener = TcpListener::bind(opts.bind)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", opts.bind))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let tls = tls::listen(&opts).await?;
    let tls_addr = tls.as_ref().map(|(_, _, at)| *at);
    let (tx, rx) = watch::channel(false);
    let shared = Arc::new(Shared {
        opts,
        store,
        cursors: cursors::Cursors::default(),
        registry: clients::Clients::default(),
        started: Instant::now(),
        clients: AtomicU64::new(0),
        connections: AtomicU64::new(0),
        commands: AtomicU64::new(0),
        rejected: AtomicU64::new(0),
        swept: AtomicU64::new(0),
        pending_input: Arc::new(AtomicUsize::new(0)),
        saves: Arc::new(admin::Saves::new()),
        waiters: blocked::Waiters::default(),
        pubsub: pubsub::PubSub::default(),
        scripts: scripting::Scripts::default(),
        functions,
        pause: pause::Pause::default(),
        cmdstats: cmdstats::CommandStats::default(),
        config: config::Values::default(),
        slowlog: slowlog::SlowLog::default(),
        monitors: monitor::Monitors::default(),
        expiries: notify::Expiries::default(),
        replicas: config::Replicas::default(),
        cluster: cluster.as_ref().map(|(c, _, _)| Arc::clone(c)),
        acl,
        next_id: AtomicU64::new(0),
        shutdown: tx,
    });
    if let Some((c, machine, sm)) = cluster {
        machine.serve(&shared);
        cluster::start_node(&c, sm).await?;
    }
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    if let Some((listener, acceptor, _)) = tls {
        tokio::spawn(tls::serve(
            listener,
            acceptor,
            Arc::clone(&shared),
            rx.clone(),
        ));
    }
    tokio::spawn(serve(listener, Arc::clone(&shared), rx, db, done_tx));
    Ok(Running {
        addr,
        tls_addr,
        shared,
        done: done_rx,
    })
}

/// How long the server waits after a failed `accept` before the next.
pub(crate) const ACCEPT_BACKOFF: Duration = Duration::from_millis(10);

async fn serve(
    listener: TcpListener,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
    db: Arc<slsm::Db>,
    done: tokio::sync::oneshot::Sender<()>,
) {
    // A cluster's log is synced before a write is acknowledged; its state
    // machine's database changes with snapshots, so none is held here.
    let db = shared.cluster.is_none().then_some(db);
    if let (Fsync::EverySec, Some(db)) = (shared.opts.appendfsync, &db) {
        tokio::spawn(sync_every_second(Arc::clone(db), stop.clone()));
    }
    let sweeper = tokio::spawn(sweep_collections(Arc::clone(&shared), stop.clone()));
    tokio::spawn(notify::watch_expiries(Arc::clone(&shared), stop.clone()));
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((socket, _)) => {
                    let socket = tls::Socket::Plain(socket);
                    tokio::spawn(conn::handle(socket, Arc::clone(&shared), stop.clone()));
                }
                // Out of descriptors (or another transient failure): the
                // connection stays queued, and accepting again at once
                // would spin; a client leaving frees one meanwhile.
                Err(_) => tokio::time::sleep(ACCEPT_BACKOFF).await,
            },
            _ = stop.changed() => break,
        }
    }
    drop(listener);
    // Let connections see the stop and finish their current command; the
    // sweep finishes its step (it holds the database).
    tokio::time::sleep(Duration::from_millis(50)).await;
    let _ = sweeper.await;
    if let Some(node) = shared.cluster.as_ref().and_then(|c| c.node()) {
        node.shutdown().await;
    }
    let store_db = shared.store.db();
    drop(shared);
    let _ = tokio::task::spawn_blocking(move || {
        let _ = store_db.flush();
        let _ = store_db.sync();
        drop(store_db);
        drop(db);
    })
    .await;
    let _ = done.send(());
}

async fn sync_every_second(db: Arc<slsm::Db>, mut stop: watch::Receiver<bool>) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(1)) => {
                let db = Arc::clone(&db);
                let _ = tokio::task::spawn_blocking(move || db.sync()).await;
            }
            _ = stop.changed() => return,
        }
    }
}

/// Collection versions one sweep step looks at.
const SWEEP_BUDGET: usize = 1024;

/// Runs the sweep of unowned collection elements, a step at a time, until
/// the server stops (see `collections/sweep.rs`). A failed step starts
/// the pass again later.
async fn sweep_collections(shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
    let interval = shared.opts.sweep_interval;
    let mut cursor = Some(Vec::new());
    loop {
        let pause = match cursor {
            Some(_) => interval,
            None => interval * 60,
        };
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            _ = stop.changed() => return,
        }
        let (spaces, from) = (shared.store.spaces(), cursor.take().unwrap_or_default());
        let now = shared.store.clock.now();
        let step = tokio::task::spawn_blocking(move || {
            collections::sweep::step(&spaces, &from, SWEEP_BUDGET, now)
        });
        match step.await {
            Ok(Ok((next, deleted))) => {
                shared.swept.fetch_add(deleted as u64, Ordering::Relaxed);
                cursor = next;
            }
            _ => cursor = None,
        }
    }
}

/// Serves until SIGTERM, SIGINT or SHUTDOWN; then flushes and closes the
/// database. Blocks the calling thread (it builds its own runtime).
pub fn run(opts: ServerOptions) -> Result<(), String> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(opts.threads)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async move {
        let running = start(opts).await?;
        eprintln!(
            "slsm serve: ready to accept connections on {}",
            running.addr
        );
        if let Some(tls) = running.tls_addr {
            eprintln!("slsm serve: ready to accept TLS connections on {tls}");
        }
        let shared = Arc::clone(&running.shared);
        tokio::spawn(async move {
            let mut term =
                match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                    Ok(s) => s,
                    Err(_) => return,
                };
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            let _ = shared.stop();
        });
        running.stopped().await;
        eprintln!("slsm serve: database closed, bye");
        Ok(())
    })
}
