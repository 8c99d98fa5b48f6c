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
pub mod blind_writes;
pub mod blocked;
pub mod client_command;
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
pub mod error;
pub mod eviction;
pub mod fdlimit;
pub mod glob;
pub mod incrbyfloat;
pub mod info;
mod inline;
mod input;
pub mod latency;
pub mod maxmemory;
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
pub mod saves;
pub mod scripting;
pub mod session;
pub mod shared;
pub mod slowlog;
pub mod store;
pub mod tls;
pub mod tracking;
mod transaction;
pub mod version;
pub mod waiters;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::net::TcpListener;
use tokio::sync::watch;

pub use options::{Fsync, ServerOptions};
pub use shared::Shared;

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
    registry::install(registry::rows::ALL);
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
    let tls = listen_tls(&opts).await?;
    let tls_addr = tls.as_ref().map(|(_, _, at)| *at);
    let (tx, rx) = watch::channel(false);
    let maxmemory = maxmemory::MaxMemory::new(opts.engine.memory_budget);
    let shared = Arc::new(Shared {
        opts,
        maxmemory,
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
        saves: Arc::new(saves::Saves::new()),
        waiters: waiters::Waiters::default(),
        pubsub: pubsub::PubSub::default(),
        tracking: tracking::Tracking::default(),
        scripts: scripting::Scripts::default(),
        functions,
        pause: pause::Pause::default(),
        cmdstats: cmdstats::CommandStats::new(registry::commands().iter().map(|c| c.name)),
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
        let server = Arc::downgrade(&shared);
        let stop = move || {
            if let Some(s) = server.upgrade() {
                s.stop();
            }
        };
        cluster::node::start_node(&c, sm, stop).await?;
    }
    let (done_tx, done_rx) = tokio::sync::oneshot::channel();
    if let Some((listener, acceptor, _)) = tls {
        tokio::spawn(serve_tls(
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
    tokio::spawn(watch_expiries(Arc::clone(&shared), stop.clone()));
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

/// The TLS listener and acceptor `--tls-port` asks for, and the address
/// it listens on (`None` without TLS).
async fn listen_tls(
    opts: &ServerOptions,
) -> Result<Option<(TcpListener, tokio_rustls::TlsAcceptor, SocketAddr)>, String> {
    let Some(t) = &opts.tls else {
        return Ok(None);
    };
    let acceptor = tls::acceptor(t)?;
    let at = SocketAddr::new(opts.bind.ip(), t.port);
    let listener = TcpListener::bind(at)
        .await
        .map_err(|e| format!("cannot listen on {at} (TLS): {e}"))?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    Ok(Some((listener, acceptor, bound)))
}

/// Accepts TLS connections until the server stops.
async fn serve_tls(
    listener: TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => {
                    let (acceptor, shared, stop) = (acceptor.clone(), Arc::clone(&shared), stop.clone());
                    tokio::spawn(async move {
                        let _ = tcp.set_nodelay(true);
                        let handshake = tokio::time::timeout(tls::HANDSHAKE_TIMEOUT, acceptor.accept(tcp));
                        if let Ok(Ok(tls)) = handshake.await {
                            conn::handle(tls::Socket::Tls(Box::new(tls)), shared, stop).await;
                        }
                    });
                }
                Err(_) => tokio::time::sleep(ACCEPT_BACKOFF).await,
            },
            _ = stop.changed() => break,
        }
    }
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

/// The expiry watch's loop (`notify::expire_due`): every
/// `notify::EXPIRY_TICK`, until the server stops.
pub async fn watch_expiries(
    s: std::sync::Arc<Shared>,
    mut stop: tokio::sync::watch::Receiver<bool>,
) {
    loop {
        tokio::select! {
            _ = tokio::time::sleep(notify::EXPIRY_TICK) => {}
            _ = stop.changed() => return,
        }
        if s.expiries.is_empty() {
            continue;
        }
        let shared = std::sync::Arc::clone(&s);
        let _ = tokio::task::spawn_blocking(move || {
            let sp = shared.store.spaces();
            let (p, e, t) = (&shared.pubsub, &shared.expiries, &shared.tracking);
            notify::expire_due(p, e, t, &sp, store::now_ms())
        })
        .await;
    }
}

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
        let cluster = shared.cluster.clone();
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
        match cluster.as_ref().and_then(|c| c.stopped()) {
            Some(why) => Err(why.to_string()),
            None => Ok(()),
        }
    })
}
