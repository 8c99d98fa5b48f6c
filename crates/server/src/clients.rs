//! The connected clients: what each connection publishes about itself
//! (the `CLIENT` command that reads and sets it is `client_command.rs`).
//!
//! Owns the registry of [`Client`]s: a connection registers when it is
//! accepted and is removed when it ends (`Registered` drops). A client's
//! own session is the only writer of its entry, once per request batch
//! (not per command), so the registry costs the pipelined path one mutex
//! and two atomic stores per batch. Thread-safe: the map is behind a mutex
//! held only to insert, remove or copy out the entries.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use tokio::sync::Notify;

/// `CLIENT LIST`'s tracking flags: `t`, `R` (its redirect is gone), `B`.
pub const TRACKING_ON: u8 = 1;
pub const TRACKING_BROKEN: u8 = 2;
pub const TRACKING_BCAST: u8 = 4;

/// What a client says about itself (`CLIENT SETNAME`, `CLIENT SETINFO`)
/// and the last command it ran.
#[derive(Default, Clone)]
pub struct Names {
    pub name: Vec<u8>,
    pub lib_name: Vec<u8>,
    pub lib_ver: Vec<u8>,
    pub last_cmd: String,
    /// The ACL user it is logged in as.
    pub user: String,
}

/// One connection, as other clients see it.
pub struct Client {
    pub id: u64,
    pub addr: String,
    pub laddr: String,
    fd: i64,
    created: Instant,
    /// Milliseconds from `created` to the start of its latest request.
    active_ms: AtomicU64,
    /// Input bytes of the batch being run (`CLIENT LIST`'s qbuf).
    qbuf: AtomicU64,
    proto: AtomicU8,
    /// Commands queued since `MULTI`, -1 outside one.
    multi: AtomicI64,
    names: Mutex<Names>,
    killed: AtomicBool,
    kill: Notify,
    /// Its subscriptions: channels, patterns, shard channels.
    subscriptions: [AtomicU64; 3],
    /// Its client-side caching, as `CLIENT LIST` shows it: the
    /// [`TRACKING_ON`], [`TRACKING_BROKEN`], [`TRACKING_BCAST`] bits and
    /// the redirect (-1 when not tracking; `crate::tracking` sets both).
    tracking: AtomicU8,
    redirect: AtomicI64,
    /// Waiting in a blocking command (`CLIENT UNBLOCK` may end it).
    pub(crate) blocked: AtomicBool,
    /// A `CLIENT UNBLOCK` not yet seen: with an error (true) or as a
    /// timeout.
    pub(crate) unblock_request: Mutex<Option<bool>>,
    pub(crate) unblock: Notify,
}

impl Client {
    /// The client's names (held briefly: never across an await).
    pub fn names(&self) -> MutexGuard<'_, Names> {
        self.names.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records a batch of requests, `qbuf` bytes of input, ending with
    /// `last`, in a session speaking `proto` with `multi` commands queued
    /// (or -1). The command is named as Redis names it, a container's with
    /// its subcommand (`client|list`).
    pub fn publish(&self, last: &[Vec<u8>], qbuf: usize, proto: u8, multi: i64) {
        let ms = self.created.elapsed().as_millis() as u64;
        self.active_ms.store(ms, Ordering::Relaxed);
        self.qbuf.store(qbuf as u64, Ordering::Relaxed);
        self.proto.store(proto, Ordering::Relaxed);
        self.multi.store(multi, Ordering::Relaxed);
        let mut names = self.names();
        names.last_cmd.clear();
        // Lowercased in place, printable ASCII only (a command name is),
        // so a batch costs no allocation.
        let mut append = |word: &[u8]| {
            let printable = word.iter().filter(|b| b.is_ascii_graphic());
            names
                .last_cmd
                .extend(printable.map(|b| char::from(b.to_ascii_lowercase())));
        };
        append(&last[0]);
        if let Some(sub) = last.get(1).filter(|_| is_container(&last[0])) {
            append(b"|");
            append(sub);
        }
    }

    /// The batch is answered: its input is no longer held.
    pub fn batch_done(&self) {
        self.qbuf.store(0, Ordering::Relaxed);
    }

    /// Asks the connection to close (`CLIENT KILL`); it does once its
    /// current batch is answered.
    pub fn kill(&self) {
        self.killed.store(true, Ordering::Release);
        self.kill.notify_one();
    }

    /// Publishes how many channels, patterns and shard channels the
    /// client subscribed to.
    pub fn set_subscriptions(&self, counts: [usize; 3]) {
        for (slot, n) in self.subscriptions.iter().zip(counts) {
            slot.store(n as u64, Ordering::Relaxed);
        }
    }

    /// True while it has a subscription (Redis's `CLIENT_PUBSUB`).
    pub fn subscribed(&self) -> bool {
        self.subscriptions
            .iter()
            .any(|n| n.load(Ordering::Relaxed) > 0)
    }

    /// Publishes its client-side caching state (`TRACKING_*` bits and
    /// the redirect, -1 when off) to `CLIENT LIST`.
    pub fn set_tracking(&self, bits: u8, redirect: i64) {
        self.tracking.store(bits, Ordering::Relaxed);
        self.redirect.store(redirect, Ordering::Relaxed);
    }

    /// The ACL user the connection is logged in as.
    pub fn user(&self) -> String {
        self.names().user.clone()
    }

    pub fn set_user(&self, user: &str) {
        let mut names = self.names();
        names.user.clear();
        names.user.push_str(user);
    }

    pub fn is_killed(&self) -> bool {
        self.killed.load(Ordering::Acquire)
    }

    /// Resolves when [`kill`](Self::kill) is called (at once if it was).
    pub async fn killed(&self) {
        self.kill.notified().await
    }

    /// `CLIENT LIST`'s flags, in Redis's order (`N` for none).
    fn flags(&self, multi: bool, subscribed: bool) -> String {
        let tracking = self.tracking.load(Ordering::Relaxed);
        let flags: String = [
            (subscribed, 'P'),
            (multi, 'x'),
            (self.blocked.load(Ordering::Relaxed), 'b'),
            (tracking & TRACKING_ON != 0, 't'),
            (tracking & TRACKING_BROKEN != 0, 'R'),
            (tracking & TRACKING_BCAST != 0, 'B'),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, c)| c)
        .collect();
        match flags.is_empty() {
            true => "N".into(),
            false => flags,
        }
    }

    /// The client's line in `CLIENT LIST` / `CLIENT INFO`, in Redis 7.2's
    /// fields and order (buffer sizes this server does not track are 0).
    pub fn line(&self) -> String {
        let names = self.names().clone();
        let age = self.created.elapsed();
        let active = self.active_ms.load(Ordering::Relaxed);
        let idle = (age.as_millis() as u64).saturating_sub(active) / 1000;
        let multi = self.multi.load(Ordering::Relaxed);
        let [sub, psub, ssub] = self
            .subscriptions
            .each_ref()
            .map(|n| n.load(Ordering::Relaxed));
        let flags = self.flags(multi >= 0, sub + psub + ssub > 0);
        let redir = self.redirect.load(Ordering::Relaxed);
        let qbuf = self.qbuf.load(Ordering::Relaxed);
        let cmd = match names.last_cmd.as_str() {
            "" => "NULL",
            c => c,
        };
        format!(
            "id={} addr={} laddr={} fd={} name={} age={} idle={} flags={flags} db=0 sub={sub} psub={psub} ssub={ssub} multi={multi} qbuf={qbuf} qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r cmd={cmd} user={} redir={redir} resp={} lib-name={} lib-ver={}",
            self.id,
            self.addr,
            self.laddr,
            self.fd,
            String::from_utf8_lossy(&names.name),
            age.as_secs(),
            idle,
            names.user,
            self.proto.load(Ordering::Relaxed),
            String::from_utf8_lossy(&names.lib_name),
            String::from_utf8_lossy(&names.lib_ver),
        )
    }
}

/// True for a command with subcommands (Redis's containers, as
/// `command_docs` lists them), case aside.
fn is_container(name: &[u8]) -> bool {
    static CONTAINERS: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    CONTAINERS
        .get_or_init(|| {
            crate::command_docs::top_level()
                .map(|(n, _)| n)
                .filter(|n| !crate::command_docs::subcommands(n).is_empty())
                .collect()
        })
        .iter()
        .any(|c| c.as_bytes().eq_ignore_ascii_case(name))
}

/// Every connected client, by id (so `CLIENT LIST` is in connection order).
#[derive(Default)]
pub struct Clients {
    map: Mutex<BTreeMap<u64, Arc<Client>>>,
}

impl Clients {
    fn map(&self) -> MutexGuard<'_, BTreeMap<u64, Arc<Client>>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers client `id` of a connection from `peer` to `local` on
    /// descriptor `fd`; removed when the returned guard drops.
    pub fn register(
        &self,
        id: u64,
        peer: Option<SocketAddr>,
        local: Option<SocketAddr>,
        fd: i64,
    ) -> Registered<'_> {
        let show = |a: Option<SocketAddr>| a.map_or_else(String::new, |a| a.to_string());
        let client = Arc::new(Client {
            id,
            addr: show(peer),
            laddr: show(local),
            fd,
            created: Instant::now(),
            active_ms: AtomicU64::new(0),
            qbuf: AtomicU64::new(0),
            proto: AtomicU8::new(2),
            multi: AtomicI64::new(-1),
            names: Mutex::new(Names {
                user: "default".into(),
                ..Names::default()
            }),
            killed: AtomicBool::new(false),
            kill: Notify::new(),
            subscriptions: Default::default(),
            tracking: AtomicU8::new(0),
            redirect: AtomicI64::new(-1),
            blocked: AtomicBool::new(false),
            unblock_request: Mutex::new(None),
            unblock: Notify::new(),
        });
        self.map().insert(id, Arc::clone(&client));
        Registered {
            clients: self,
            client,
        }
    }

    /// The clients connected now, in connection order (a killed one is
    /// gone, even while its connection finishes its last batch).
    pub fn all(&self) -> Vec<Arc<Client>> {
        let map = self.map();
        map.values().filter(|c| !c.is_killed()).cloned().collect()
    }
}

/// A registered client; unregisters it when dropped.
pub struct Registered<'a> {
    clients: &'a Clients,
    pub client: Arc<Client>,
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.clients.map().remove(&self.client.id);
    }
}
