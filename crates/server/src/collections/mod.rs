//! Redis's lists, hashes, sets and sorted sets on slsm's keyspaces.
//!
//! A collection is one key in the server's keyspace holding its metadata
//! (a [`Coll`]: kind, version, revision, list ends or element count,
//! behind the expiry word; see `store.rs`) and one entry per element in
//! the items keyspace, under
//!
//! ```text
//! u32 BE length of the key | key | u64 BE version | sub-key
//! ```
//!
//! so a collection's elements are one contiguous, ordered range. The
//! sub-key is a list element's index (`i64` with its sign bit flipped, so
//! that byte order is index order), a hash's field, a set's member, or for
//! a sorted set `m` + member (its score) and `s` + the score in an
//! order-preserving form + member (the score order).
//!
//! The version is new each time a collection is created at a key, so the
//! elements of one that is gone without its elements being deleted (a
//! plain `SET` over it writes blindly, and an expired one is dropped by the
//! keyspace's compaction filter) are never read as the new one's. They
//! stay on disk, unreachable, until `FLUSHDB`: reclaiming them would need a
//! pass over the items keyspace, which is not built. `DEL`, `UNLINK`,
//! `RENAME`, `EXPIRE` into the past, popping or removing the last element,
//! and writes that read the key first (`SET ... GET`, `SET ... NX`) delete
//! the elements with the key.
//!
//! Every command here reads before it writes, so it runs in an engine
//! transaction (atomic under concurrent clients, as in Redis); every write
//! rewrites the metadata with a new revision, so `WATCH` on the key sees
//! any change to an element.
//!
//! Costs: point operations (`LPUSH`, `LPOP`, `LINDEX`, `HGET`, `SADD`,
//! `ZSCORE`, ...) read and write O(1) entries; ranges read what they
//! return. Unlike Redis's skiplist, a sorted set's rank is found by
//! walking the score order: `ZRANK`, a `ZRANGE` starting at rank r and
//! `ZPOPMAX` cost O(r) (or O(n)) entries read.

mod hashes;
mod lists;
mod sets;
mod versions;
mod zsets;

pub use versions::Versions;

use std::sync::atomic::{AtomicU64, Ordering};

use crate::commands::{fail, Fail, Outcome};
use crate::store::{Access, Item, Kind, Value};

/// Elements read from the engine per step when a whole collection is
/// walked (deleted, renamed, listed).
pub(crate) const STEP: usize = 4096;

/// Every collection command.
pub const NAMES: &[&str] = &[
    "lpush",
    "rpush",
    "lpushx",
    "rpushx",
    "lpop",
    "rpop",
    "llen",
    "lrange",
    "lindex",
    "lset",
    "ltrim",
    "lrem",
    "linsert",
    "rpoplpush",
    "lmove",
    "hset",
    "hmset",
    "hsetnx",
    "hget",
    "hmget",
    "hdel",
    "hlen",
    "hexists",
    "hstrlen",
    "hgetall",
    "hkeys",
    "hvals",
    "hincrby",
    "hincrbyfloat",
    "sadd",
    "srem",
    "sismember",
    "smismember",
    "smembers",
    "scard",
    "spop",
    "srandmember",
    "smove",
    "sinter",
    "sunion",
    "sdiff",
    "zadd",
    "zincrby",
    "zscore",
    "zmscore",
    "zcard",
    "zrem",
    "zcount",
    "zrank",
    "zrevrank",
    "zrange",
    "zrevrange",
    "zrangebyscore",
    "zrevrangebyscore",
    "zpopmin",
    "zpopmax",
];

/// The arity of a collection command (Redis's: negative means "at
/// least"), or `None` if it is not one.
pub fn arity(name: &str) -> Option<i32> {
    lists::arity(name)
        .or_else(|| hashes::arity(name))
        .or_else(|| sets::arity(name))
        .or_else(|| zsets::arity(name))
}

/// Runs collection command `name` (lowercase; arity already checked).
pub fn run(name: &str, a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    if lists::arity(name).is_some() {
        lists::run(name, a, acc)
    } else if hashes::arity(name).is_some() {
        hashes::run(name, a, acc)
    } else if sets::arity(name).is_some() {
        sets::run(name, a, acc)
    } else {
        zsets::run(name, a, acc)
    }
}

pub fn wrong_type() -> Fail {
    fail("WRONGTYPE Operation against a key holding the wrong kind of value")
}

/// A collection's metadata.
#[derive(Clone, Debug)]
pub struct Coll {
    pub key: Vec<u8>,
    pub kind: Kind,
    pub expires_at: u64,
    /// New for each collection created at the key (see the module docs).
    pub version: u64,
    /// Bumped by every write (see the module docs).
    pub rev: u64,
    /// A list's elements are at indexes `head..tail`.
    pub head: i64,
    pub tail: i64,
    /// Elements of a hash, set or sorted set.
    pub len: i64,
}

const META_LEN: usize = 40;

impl Coll {
    /// The collection of kind `kind` at `key`; `None` if the key is
    /// missing, a `WRONGTYPE` error if it holds another kind.
    pub fn load(acc: &mut dyn Access, key: &[u8], kind: Kind) -> Result<Option<Coll>, Fail> {
        match acc.get(key)? {
            None => Ok(None),
            Some(v) if v.kind != kind => Err(wrong_type()),
            Some(v) => Coll::decode(key, &v).map(Some),
        }
    }

    /// [`load`](Self::load), or a new, empty collection.
    pub fn load_or_new(acc: &mut dyn Access, key: &[u8], kind: Kind) -> Result<Coll, Fail> {
        match Coll::load(acc, key, kind)? {
            Some(c) => Ok(c),
            None => Ok(Coll {
                key: key.to_vec(),
                kind,
                expires_at: 0,
                version: acc.new_version()?,
                rev: 0,
                head: 0,
                tail: 0,
                len: 0,
            }),
        }
    }

    fn decode(key: &[u8], v: &Value) -> Result<Coll, Fail> {
        let d = &v.data;
        if d.len() != META_LEN {
            return Err(fail("ERR corrupt collection metadata"));
        }
        let word = |i: usize| u64::from_be_bytes(d[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
        Ok(Coll {
            key: key.to_vec(),
            kind: v.kind,
            expires_at: v.expires_at,
            version: word(0),
            rev: word(1),
            head: word(2) as i64,
            tail: word(3) as i64,
            len: word(4) as i64,
        })
    }

    /// Elements held.
    pub fn count(&self) -> i64 {
        match self.kind {
            Kind::List => self.tail - self.head,
            _ => self.len,
        }
    }

    /// Writes the metadata with a new revision; an empty collection is
    /// deleted, as Redis deletes a key whose last element goes.
    pub fn save(&mut self, acc: &mut dyn Access) -> Result<(), Fail> {
        if self.count() <= 0 {
            acc.del(&self.key)?;
            return Ok(());
        }
        self.rev += 1;
        let mut data = Vec::with_capacity(META_LEN);
        for w in [
            self.version,
            self.rev,
            self.head as u64,
            self.tail as u64,
            self.len as u64,
        ] {
            data.extend_from_slice(&w.to_be_bytes());
        }
        let value = Value {
            data,
            expires_at: self.expires_at,
            kind: self.kind,
        };
        acc.set(&self.key, &value)?;
        Ok(())
    }

    /// Where this collection's elements start in the items keyspace.
    pub fn prefix(&self) -> Vec<u8> {
        items_prefix(&self.key, self.version)
    }

    /// The items-keyspace key of element `sub`.
    pub fn item_key(&self, sub: &[u8]) -> Vec<u8> {
        let mut k = self.prefix();
        k.extend_from_slice(sub);
        k
    }

    /// Elements whose sub-keys are in `from..to` (`None`: to the end),
    /// ascending, at most `limit`, as (sub-key, value).
    pub fn items(
        &self,
        acc: &mut dyn Access,
        from: &[u8],
        to: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<Item>, Fail> {
        let prefix = self.prefix();
        let start = self.item_key(from);
        let end = match to {
            Some(to) => self.item_key(to),
            None => items_prefix(&self.key, self.version + 1),
        };
        let mut out = acc.items(&start, &end, limit)?;
        for (k, _) in &mut out {
            k.drain(..prefix.len());
        }
        Ok(out)
    }

    /// Calls `f` on every element, ascending, a step at a time; stops
    /// early when `f` returns false.
    pub fn for_each(
        &self,
        acc: &mut dyn Access,
        mut f: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<(), Fail> {
        let mut from = Vec::new();
        loop {
            let batch = self.items(acc, &from, None, STEP)?;
            let done = batch.len() < STEP;
            for (sub, value) in &batch {
                if !f(sub, value) {
                    return Ok(());
                }
            }
            match batch.last() {
                Some((last, _)) if !done => {
                    from = last.clone();
                    from.push(0);
                }
                _ => return Ok(()),
            }
        }
    }

    /// Deletes every element (not the metadata).
    pub fn drop_items(&self, acc: &mut dyn Access) -> Result<(), Fail> {
        let mut subs = Vec::new();
        self.for_each(acc, |sub, _| {
            subs.push(sub.to_vec());
            true
        })?;
        for sub in subs {
            acc.del_item(&self.item_key(&sub))?;
        }
        Ok(())
    }
}

/// The items-keyspace prefix of the elements of version `version` of the
/// collection at `key`.
fn items_prefix(key: &[u8], version: u64) -> Vec<u8> {
    let mut p = Vec::with_capacity(4 + key.len() + 8);
    p.extend_from_slice(&(key.len() as u32).to_be_bytes());
    p.extend_from_slice(key);
    p.extend_from_slice(&version.to_be_bytes());
    p
}

/// Deletes `key`, whatever it holds (its elements too); false if it was
/// missing.
pub fn delete_key(acc: &mut dyn Access, key: &[u8]) -> Result<bool, Fail> {
    let Some(v) = acc.get(key)? else {
        return Ok(false);
    };
    drop_items_of(acc, key, &v)?;
    acc.del(key)?;
    Ok(true)
}

/// Deletes the elements of `v` (the value at `key`) if it is a collection.
pub fn drop_items_of(acc: &mut dyn Access, key: &[u8], v: &Value) -> Result<(), Fail> {
    if v.kind != Kind::String {
        Coll::decode(key, v)?.drop_items(acc)?;
    }
    Ok(())
}

/// Moves the value `v` of `from` to `to` (whose old value, if any, the
/// caller has deleted): a collection's elements are copied under a new
/// version at `to` and deleted at `from`.
pub fn move_value(acc: &mut dyn Access, from: &[u8], to: &[u8], v: &Value) -> Result<(), Fail> {
    if v.kind == Kind::String {
        acc.del(from)?;
        acc.set(to, v)?;
        return Ok(());
    }
    let old = Coll::decode(from, v)?;
    let mut new = old.clone();
    new.key = to.to_vec();
    new.version = acc.new_version()?;
    let mut items = Vec::new();
    old.for_each(acc, |sub, value| {
        items.push((sub.to_vec(), value.to_vec()));
        true
    })?;
    for (sub, value) in &items {
        acc.del_item(&old.item_key(sub))?;
        acc.put_item(&new.item_key(sub), value)?;
    }
    acc.del(from)?;
    new.save(acc)
}

/// Redis's `start stop` rules (`LRANGE`, `LTRIM`, `ZRANGE`): the
/// inclusive range of positions they select among `len`, `None` if empty
/// (negative counts from the end; clamped).
pub fn positions(start: i64, stop: i64, len: i64) -> Option<(i64, i64)> {
    let start = if start < 0 {
        (len + start).max(0)
    } else {
        start
    };
    let stop = if stop < 0 { len + stop } else { stop };
    if start > stop || start >= len {
        return None;
    }
    Some((start, stop.min(len - 1)))
}

/// A count argument that must be positive (`LPOP`, `SPOP`, `ZPOPMIN`
/// ...): Redis's error otherwise.
pub fn positive_count(arg: &[u8]) -> Result<usize, Fail> {
    let n = crate::commands::int_arg(arg)
        .map_err(|_| fail("ERR value is out of range, must be positive"))?;
    usize::try_from(n).map_err(|_| fail("ERR value is out of range, must be positive"))
}

/// A cheap random number (for `SPOP` and `SRANDMEMBER`), not for secrets.
pub fn random_u64() -> u64 {
    static STATE: AtomicU64 = AtomicU64::new(0);
    let mut x = STATE.load(Ordering::Relaxed);
    if x == 0 {
        x = crate::store::now_ms() | 1;
    }
    // xorshift64*
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    STATE.store(x, Ordering::Relaxed);
    x.wrapping_mul(0x2545_F491_4F6C_DD1D)
}
