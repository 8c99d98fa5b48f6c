//! How Redis strings live in slsm: one keyspace, each value stored behind
//! its expiry time (8 bytes, milliseconds since the Unix epoch, big
//! endian; 0 for none). Expired values read as missing at once, and the
//! keyspace's compaction filter drops them from disk in merges.
//!
//! Commands reach the data through [`Access`]: straight through the
//! keyspace (single-key writes and reads), or inside one engine
//! transaction (read-modify-write commands, `MULTI`/`EXEC`, `WATCH`), which
//! makes them atomic under concurrent clients.

use std::ops::Bound;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use slsm::{FilterDecision, Keyspace, KeyspaceOptions, Transaction, WriteOptions};

/// Name of the keyspace the server keeps its keys in.
pub const KEYSPACE: &str = "redis";
const HEADER: usize = 8;

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A live value: its bytes and its expiry (0: none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Value {
    pub data: Vec<u8>,
    pub expires_at: u64,
}

impl Value {
    pub fn new(data: Vec<u8>, expires_at: u64) -> Value {
        Value { data, expires_at }
    }

    fn encode(&self) -> Vec<u8> {
        let mut stored = Vec::new();
        encode_into(&self.data, self.expires_at, &mut stored);
        stored
    }

    /// The value of stored bytes, `None` if it has expired (or is too short
    /// to be ours, which only another program could have written).
    fn decode(stored: &[u8], now: u64) -> Option<Value> {
        let (data, at) = split(stored, now)?;
        Some(Value::new(data.to_vec(), at))
    }
}

/// Replaces `stored` with the stored form of `data` expiring at `expires_at`.
pub fn encode_into(data: &[u8], expires_at: u64, stored: &mut Vec<u8>) {
    stored.clear();
    stored.extend_from_slice(&expires_at.to_be_bytes());
    stored.extend_from_slice(data);
}

/// The data of stored bytes, `None` if it has expired.
pub fn live_data(stored: &[u8], now: u64) -> Option<&[u8]> {
    split(stored, now).map(|(data, _)| data)
}

/// When stored bytes expire (0: never), `None` if they have expired.
pub fn expiry_of(stored: &[u8], now: u64) -> Option<u64> {
    split(stored, now).map(|(_, at)| at)
}

fn split(stored: &[u8], now: u64) -> Option<(&[u8], u64)> {
    let at = u64::from_be_bytes(stored.get(..HEADER)?.try_into().ok()?);
    match at != 0 && at <= now {
        true => None,
        false => Some((&stored[HEADER..], at)),
    }
}

/// Opens the server's keyspace, with the filter that drops expired values.
pub fn open_keyspace(db: &slsm::Db) -> slsm::Result<Keyspace> {
    let filter = |_key: &[u8], stored: &[u8]| match Value::decode(stored, now_ms()) {
        Some(_) => FilterDecision::Keep,
        None => FilterDecision::Remove,
    };
    db.keyspace_with(
        KEYSPACE,
        KeyspaceOptions::default().compaction_filter(filter),
    )
}

/// Reads and writes of one command.
pub trait Access {
    fn get(&mut self, key: &[u8]) -> slsm::Result<Option<Value>>;
    fn set(&mut self, key: &[u8], value: &Value) -> slsm::Result<()>;
    fn del(&mut self, key: &[u8]) -> slsm::Result<()>;
    /// Live keys from `after` (exclusive) on, at most `limit`.
    fn keys_after(&mut self, after: Option<&[u8]>, limit: usize) -> slsm::Result<Vec<Vec<u8>>>;
}

/// Straight through the keyspace.
pub struct Direct<'a> {
    pub ks: &'a Keyspace,
    pub opts: &'a WriteOptions,
}

impl Access for Direct<'_> {
    fn get(&mut self, key: &[u8]) -> slsm::Result<Option<Value>> {
        Ok(self.ks.get(key)?.and_then(|v| Value::decode(&v, now_ms())))
    }

    fn set(&mut self, key: &[u8], value: &Value) -> slsm::Result<()> {
        self.ks.put_opt(key, value.encode(), self.opts)
    }

    fn del(&mut self, key: &[u8]) -> slsm::Result<()> {
        self.ks.delete_opt(key, self.opts)
    }

    fn keys_after(&mut self, after: Option<&[u8]>, limit: usize) -> slsm::Result<Vec<Vec<u8>>> {
        live_keys(self.ks.range::<Vec<u8>, _>(range_after(after)), limit)
    }
}

/// Inside an engine transaction (its reads are validated at commit).
pub struct InTx<'a> {
    pub tx: &'a mut Transaction,
    pub ks: &'a Keyspace,
}

impl Access for InTx<'_> {
    fn get(&mut self, key: &[u8]) -> slsm::Result<Option<Value>> {
        Ok(self
            .tx
            .get_in(self.ks, key)?
            .and_then(|v| Value::decode(&v, now_ms())))
    }

    fn set(&mut self, key: &[u8], value: &Value) -> slsm::Result<()> {
        self.tx.put_in(self.ks, key, value.encode())
    }

    fn del(&mut self, key: &[u8]) -> slsm::Result<()> {
        self.tx.delete_in(self.ks, key)
    }

    fn keys_after(&mut self, after: Option<&[u8]>, limit: usize) -> slsm::Result<Vec<Vec<u8>>> {
        live_keys(
            self.tx
                .range_in::<Vec<u8>, _>(self.ks, range_after(after))?,
            limit,
        )
    }
}

/// The keys after `after` (all keys without it).
fn range_after(after: Option<&[u8]>) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    match after {
        Some(a) => (Bound::Excluded(a.to_vec()), Bound::Unbounded),
        None => (Bound::Unbounded, Bound::Unbounded),
    }
}

/// The first `limit` keys of `entries` whose values have not expired.
fn live_keys(
    entries: impl Iterator<Item = slsm::Result<(slsm::Slice, slsm::Slice)>>,
    limit: usize,
) -> slsm::Result<Vec<Vec<u8>>> {
    let now = now_ms();
    let mut out = Vec::new();
    for item in entries {
        let (k, v) = item?;
        if Value::decode(&v, now).is_some() {
            out.push(k.to_vec());
            if out.len() >= limit {
                break;
            }
        }
    }
    Ok(out)
}

/// Runs `f` in a transaction until it commits without a conflict (a
/// read-modify-write command under concurrent clients).
pub fn atomically<T>(
    db: &slsm::Db,
    ks: &Keyspace,
    opts: &WriteOptions,
    mut f: impl FnMut(&mut InTx<'_>) -> slsm::Result<T>,
) -> slsm::Result<T> {
    loop {
        let mut tx = db.transaction();
        let out = f(&mut InTx { tx: &mut tx, ks })?;
        match tx.commit_opt(opts) {
            Ok(()) => return Ok(out),
            Err(slsm::Error::Conflict) => continue,
            Err(e) => return Err(e),
        }
    }
}

/// The database and its keyspace, swapped whole by `FLUSHDB`.
pub struct Store {
    pub db: Arc<slsm::Db>,
    ks: std::sync::RwLock<Keyspace>,
}

impl Store {
    pub fn new(db: Arc<slsm::Db>) -> slsm::Result<Store> {
        let ks = open_keyspace(&db)?;
        Ok(Store {
            db,
            ks: std::sync::RwLock::new(ks),
        })
    }

    pub fn keyspace(&self) -> Keyspace {
        self.ks.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Drops every key (the keyspace goes, its files in the background).
    pub fn flush_all(&self) -> slsm::Result<()> {
        let mut ks = self.ks.write().unwrap_or_else(|p| p.into_inner());
        self.db.drop_keyspace(KEYSPACE)?;
        *ks = open_keyspace(&self.db)?;
        Ok(())
    }
}
