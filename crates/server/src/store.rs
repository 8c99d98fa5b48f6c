//! How Redis keys live in slsm: one keyspace, each value stored behind
//! its expiry time (8 bytes, milliseconds since the Unix epoch, big
//! endian; 0 for none). Expired values read as missing at once, and the
//! keyspace's compaction filter drops them from disk in merges.
//!
//! A string's value follows the expiry as it is. A list, hash, set or
//! sorted set keeps only its metadata there (the expiry's top bit set,
//! which no expiry time has, then its [`Kind`] and its `Meta`, see
//! `collections`); its elements live in a second keyspace, one entry each
//! (`collections` describes their keys).
//!
//! Commands reach the data through [`Access`]: straight through the
//! keyspace (single-key writes and reads), or inside one engine
//! transaction (read-modify-write commands, `MULTI`/`EXEC`, `WATCH`), which
//! makes them atomic under concurrent clients.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

use slsm::{FilterDecision, Keyspace, KeyspaceOptions};

use crate::collections::versions::Versions;

/// Name of the keyspace the server keeps its keys in.
pub const KEYSPACE: &str = "redis";
/// Name of the keyspace the elements of collections live in.
pub const ITEMS_KEYSPACE: &str = "redis-items";

/// How long a collection must have been expired before the sweep
/// (`collections/sweep.rs`) takes its elements.
pub const EXPIRY_GRACE_MS: u64 = 60_000;
const HEADER: usize = 8;
/// Set in the expiry word of a collection's metadata: expiry times are at
/// most `i64::MAX` milliseconds, so strings never have it.
const COLLECTION: u64 = 1 << 63;

/// What a key holds (`TYPE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    String,
    List,
    Hash,
    Set,
    ZSet,
    Stream,
}

impl Kind {
    /// The name `TYPE` answers.
    pub fn name(self) -> &'static str {
        match self {
            Kind::String => "string",
            Kind::List => "list",
            Kind::Hash => "hash",
            Kind::Set => "set",
            Kind::ZSet => "zset",
            Kind::Stream => "stream",
        }
    }

    fn tag(self) -> u8 {
        self as u8
    }

    fn of_tag(tag: u8) -> Option<Kind> {
        [Kind::List, Kind::Hash, Kind::Set, Kind::ZSet, Kind::Stream]
            .into_iter()
            .find(|k| k.tag() == tag)
    }
}

/// Milliseconds since the Unix epoch: the wall clock's, or, while a
/// replicated entry is applied, the entry's (`crate::replay`).
pub fn now_ms() -> u64 {
    if let Some(clock) = crate::replay::clock() {
        return clock;
    }
    wall_ms()
}

/// The wall clock, in milliseconds since the Unix epoch.
pub fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A live value: its kind, its bytes (a collection's: its metadata) and
/// its expiry (0: none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Value {
    pub data: Vec<u8>,
    pub expires_at: u64,
    pub kind: Kind,
}

impl Value {
    /// A string.
    pub fn new(data: Vec<u8>, expires_at: u64) -> Value {
        Value {
            data,
            expires_at,
            kind: Kind::String,
        }
    }

    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut stored = Vec::new();
        match self.kind {
            Kind::String => encode_into(&self.data, self.expires_at, &mut stored),
            kind => {
                stored.extend_from_slice(&(self.expires_at | COLLECTION).to_be_bytes());
                stored.push(kind.tag());
                stored.extend_from_slice(&self.data);
            }
        }
        stored
    }

    /// The value of stored bytes, `None` if it has expired (or is too short
    /// to be ours, which only another program could have written).
    pub fn decode(stored: &[u8], now: u64) -> Option<Value> {
        let (data, at) = split(stored, now)?;
        if !is_collection(stored) {
            return Some(Value::new(data.to_vec(), at));
        }
        let (&tag, meta) = data.split_first()?;
        Some(Value {
            data: meta.to_vec(),
            expires_at: at,
            kind: Kind::of_tag(tag)?,
        })
    }
}

/// True if stored bytes are a collection's metadata, not a string.
pub fn is_collection(stored: &[u8]) -> bool {
    stored.first().is_some_and(|b| b & 0x80 != 0)
}

/// Replaces `stored` with the stored form of `data` expiring at `expires_at`.
pub fn encode_into(data: &[u8], expires_at: u64, stored: &mut Vec<u8>) {
    stored.clear();
    stored.extend_from_slice(&expires_at.to_be_bytes());
    stored.extend_from_slice(data);
}

/// The data of a stored string, `None` if it has expired (or is a
/// collection: see [`is_collection`]).
pub fn live_data(stored: &[u8], now: u64) -> Option<&[u8]> {
    match is_collection(stored) {
        true => None,
        false => split(stored, now).map(|(data, _)| data),
    }
}

/// When stored bytes expire (0: never), `None` if they have expired.
pub fn expiry_of(stored: &[u8], now: u64) -> Option<u64> {
    split(stored, now).map(|(_, at)| at)
}

fn split(stored: &[u8], now: u64) -> Option<(&[u8], u64)> {
    let at = u64::from_be_bytes(stored.get(..HEADER)?.try_into().ok()?) & !COLLECTION;
    match at != 0 && at <= now {
        true => None,
        false => Some((&stored[HEADER..], at)),
    }
}

/// Where expiry takes its time from outside commands (the compaction
/// filter, the sweep): the wall clock, or in a cluster the replicated
/// clock of the last applied entry (`cluster`), which every later entry's
/// clock is at or past, so a value a node drops as expired is expired for
/// every entry it will still apply, on every node.
#[derive(Clone, Default)]
pub enum Clock {
    #[default]
    Wall,
    Replicated(Arc<AtomicU64>),
}

impl Clock {
    /// Milliseconds since the Unix epoch.
    pub fn now(&self) -> u64 {
        match self {
            Clock::Wall => now_ms(),
            Clock::Replicated(at) => at.load(Ordering::Acquire),
        }
    }
}

/// Opens the server's keyspace, with the filter that drops values expired
/// by `clock`.
///
/// An expired collection's metadata is kept for the sweep's grace (see
/// `collections/sweep.rs`): until then its elements are not reclaimed, and
/// the metadata says so.
pub fn open_keyspace(db: &slsm::Db, clock: Clock) -> slsm::Result<Keyspace> {
    let filter = move |_key: &[u8], stored: &[u8]| {
        let now = clock.now();
        let as_of = match is_collection(stored) {
            true => now.saturating_sub(EXPIRY_GRACE_MS),
            false => now,
        };
        match Value::decode(stored, as_of) {
            Some(_) => FilterDecision::Keep,
            None => FilterDecision::Remove,
        }
    };
    db.keyspace_with(
        KEYSPACE,
        KeyspaceOptions::default().compaction_filter(filter),
    )
}

/// The keyspaces commands work on, where collections get their versions,
/// and the parameters commands read (cheap to clone: handles).
#[derive(Clone)]
pub struct Spaces {
    pub ks: Keyspace,
    pub items: Keyspace,
    pub versions: Arc<Versions>,
    pub tuning: Arc<Tuning>,
}

/// What `CONFIG SET` tunes in the data commands themselves.
pub struct Tuning {
    /// `stream-node-max-entries`: the node size by which a stream's `~`
    /// trimming removes whole nodes, as Redis's does
    /// (`collections/streams/trim.rs`).
    pub stream_node_entries: std::sync::atomic::AtomicU64,
    /// `notify-keyspace-events`: the classes of keyspace notifications
    /// published (`crate::notify`; 0: none, Redis's default).
    pub notify: std::sync::atomic::AtomicU32,
    /// Some client tracks keys (`crate::tracking`): every write tells the
    /// keys it changes.
    pub tracking: std::sync::atomic::AtomicBool,
    /// `maxmemory-policy` is an LFU one (`crate::maxmemory`): `OBJECT
    /// FREQ` answers and `OBJECT IDLETIME` does not, as in Redis.
    pub lfu: std::sync::atomic::AtomicBool,
}

impl Tuning {
    pub fn notify_flags(&self) -> u32 {
        self.notify.load(std::sync::atomic::Ordering::Relaxed)
    }
}

impl Default for Tuning {
    fn default() -> Tuning {
        Tuning {
            stream_node_entries: std::sync::atomic::AtomicU64::new(100),
            notify: std::sync::atomic::AtomicU32::new(0),
            tracking: std::sync::atomic::AtomicBool::new(false),
            lfu: std::sync::atomic::AtomicBool::new(false),
        }
    }
}

/// The database and its keyspaces, swapped whole by `FLUSHDB` (the
/// keyspaces) and in a cluster by a snapshot install (the database too).
pub struct Store {
    current: RwLock<(Arc<slsm::Db>, Spaces)>,
    pub clock: Clock,
    /// How many times every key was dropped at once (`FLUSHALL`,
    /// `FLUSHDB`, a snapshot installed): `WATCH` counts such a drop as a
    /// write to every watched key that existed (`transaction.rs`).
    flushes: std::sync::atomic::AtomicU64,
    /// The keyspaces' tuning, the same whichever keyspaces are current.
    tuning: Arc<Tuning>,
}

impl Store {
    pub fn new(db: Arc<slsm::Db>, clock: Clock) -> slsm::Result<Store> {
        let spaces = open_spaces(&db, None, &clock)?;
        Ok(Store {
            tuning: Arc::clone(&spaces.tuning),
            current: RwLock::new((db, spaces)),
            clock,
            flushes: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// What `CONFIG SET` tunes the data commands with.
    pub fn tuning(&self) -> &Tuning {
        &self.tuning
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, (Arc<slsm::Db>, Spaces)> {
        self.current.read().unwrap_or_else(|p| p.into_inner())
    }

    /// The database the keys live in now.
    pub fn db(&self) -> Arc<slsm::Db> {
        Arc::clone(&self.read().0)
    }

    /// The keyspace of the keys (strings and collections' metadata).
    pub fn keyspace(&self) -> Keyspace {
        self.spaces().ks
    }

    pub fn spaces(&self) -> Spaces {
        self.read().1.clone()
    }

    /// How many times every key was dropped at once so far.
    pub fn flushes(&self) -> u64 {
        self.flushes.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Drops every key (the keyspaces go, their files in the background).
    pub fn flush_all(&self) -> slsm::Result<()> {
        let mut current = self.current.write().unwrap_or_else(|p| p.into_inner());
        self.flushes
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        let (db, spaces) = &mut *current;
        db.drop_keyspace(KEYSPACE)?;
        db.drop_keyspace(ITEMS_KEYSPACE)?;
        *spaces = open_spaces(db, Some(spaces), &self.clock)?;
        Ok(())
    }

    /// Serves `db` from now on (a cluster node installed a snapshot).
    pub fn replace_db(&self, db: Arc<slsm::Db>) -> slsm::Result<()> {
        let mut current = self.current.write().unwrap_or_else(|p| p.into_inner());
        self.flushes
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        let spaces = open_spaces(&db, Some(&current.1), &self.clock)?;
        *current = (db, spaces);
        Ok(())
    }
}

/// The keyspaces of `db`, with what the previous ones carried over
/// (`None` at the start).
fn open_spaces(db: &slsm::Db, previous: Option<&Spaces>, clock: &Clock) -> slsm::Result<Spaces> {
    let ks = open_keyspace(db, clock.clone())?;
    let items = db.keyspace(ITEMS_KEYSPACE)?;
    let (versions, tuning) = match previous {
        Some(p) => (Arc::clone(&p.versions), Arc::clone(&p.tuning)),
        None => Default::default(),
    };
    versions.reset();
    Ok(Spaces {
        ks,
        items,
        versions,
        tuning,
    })
}
