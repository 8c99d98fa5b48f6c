//! The connected clients and the `CLIENT` command (`LIST`, `INFO`, `KILL`,
//! `ID`, `SETNAME`, `GETNAME`, `SETINFO`): what each connection publishes
//! about itself.
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

use crate::commands::{fail, Fail, Outcome};
use crate::resp::Reply;
use crate::session::Session;
use crate::Shared;

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
        let flags = match (multi >= 0, sub + psub + ssub > 0) {
            (true, _) => "x",
            (false, true) => "P",
            (false, false) => "N",
        };
        let qbuf = self.qbuf.load(Ordering::Relaxed);
        let cmd = match names.last_cmd.as_str() {
            "" => "NULL",
            c => c,
        };
        format!(
            "id={} addr={} laddr={} fd={} name={} age={} idle={} flags={flags} db=0 sub={sub} psub={psub} ssub={ssub} multi={multi} qbuf={qbuf} qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r cmd={cmd} user={} redir=-1 resp={} lib-name={} lib-ver={}",
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

/// `CLIENT subcommand ...`.
pub fn command(s: &Shared, session: &mut Session, a: &[Vec<u8>]) -> Outcome {
    let sub = a.get(1).map(|s| s.to_ascii_lowercase()).unwrap_or_default();
    let me = &session.client;
    match (sub.as_slice(), a.len()) {
        (b"setname", 3) => {
            check_name(&a[2])?;
            me.names().name = a[2].clone();
            Ok(Reply::ok())
        }
        (b"getname", 2) => Ok(match me.names().name.clone() {
            name if name.is_empty() => Reply::Null,
            name => Reply::Bulk(name),
        }),
        (b"id", 2) => Ok(Reply::Int(session.id as i64)),
        (b"info", 2) => Ok(Reply::Verbatim(format!("{}\n", me.line()).into_bytes())),
        (b"list", _) => list(s, &a[2..]),
        (b"kill", n) if n >= 3 => crate::client_kill::kill(s, session, &a[2..]),
        (b"setinfo", 4) => set_info(me, &a[2], &a[3]),
        _ => crate::client_modes::command(s, session, a)
            .unwrap_or_else(|| Err(crate::registry::subcommand_refusal("client", a))),
    }
}

/// A name `CLIENT SETNAME` or `HELLO ... SETNAME` accepts.
pub fn check_name(name: &[u8]) -> Result<(), Fail> {
    match has_space_or_special(name) {
        true => Err(fail(
            "ERR Client names cannot contain spaces, newlines or special characters.",
        )),
        false => Ok(()),
    }
}

/// What Redis refuses in a client's name and library fields: spaces,
/// control characters and anything past `~`.
fn has_space_or_special(value: &[u8]) -> bool {
    value.iter().any(|&c| c <= b' ' || c > b'~')
}

/// `CLIENT LIST [TYPE normal|master|replica|pubsub] [ID id ...]`: every
/// client here is of type normal.
fn list(s: &Shared, args: &[Vec<u8>]) -> Outcome {
    let mut ids: Option<Vec<u64>> = None;
    let mut normal = true;
    let mut i = 0;
    while i < args.len() {
        match args[i].to_ascii_lowercase().as_slice() {
            b"type" if i + 1 < args.len() => {
                let t = args[i + 1].to_ascii_lowercase();
                if !matches!(t.as_slice(), b"normal" | b"master" | b"replica" | b"pubsub") {
                    return Err(fail(&format!(
                        "ERR Unknown client type '{}'",
                        String::from_utf8_lossy(&args[i + 1])
                    )));
                }
                normal = t == b"normal";
                i += 2;
            }
            b"id" if i + 1 < args.len() => {
                let mut wanted = Vec::new();
                for id in &args[i + 1..] {
                    match std::str::from_utf8(id).ok().and_then(|v| v.parse().ok()) {
                        Some(n) if n > 0 => wanted.push(n),
                        _ => return Err(fail("ERR Invalid client ID")),
                    }
                }
                ids = Some(wanted);
                i = args.len();
            }
            _ => return Err(fail("ERR syntax error")),
        }
    }
    let mut out = String::new();
    for c in s.registry.all() {
        if normal && ids.as_ref().is_none_or(|w| w.contains(&c.id)) {
            out.push_str(&c.line());
            out.push('\n');
        }
    }
    Ok(Reply::Verbatim(out.into_bytes()))
}

/// `CLIENT SETINFO LIB-NAME|LIB-VER value`: what a client library says
/// it is (shown in `CLIENT INFO` and `CLIENT LIST`).
fn set_info(me: &Client, attr: &[u8], value: &[u8]) -> Outcome {
    let attr = attr.to_ascii_lowercase();
    if attr != b"lib-name" && attr != b"lib-ver" {
        return Err(fail(&format!(
            "ERR Unrecognized option '{}'",
            String::from_utf8_lossy(&attr)
        )));
    }
    if has_space_or_special(value) {
        return Err(fail(&format!(
            "ERR {} cannot contain spaces, newlines or special characters.",
            String::from_utf8_lossy(&attr)
        )));
    }
    let mut names = me.names();
    match attr.as_slice() {
        b"lib-name" => names.lib_name = value.to_vec(),
        _ => names.lib_ver = value.to_vec(),
    }
    Ok(Reply::ok())
}
