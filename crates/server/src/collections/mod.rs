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
//! that byte order is index order), a hash's field, a set member's hash
//! then the member (`sets.rs` says why), or for a sorted set `m` + member
//! (its score) and `s` + the score in an order-preserving form + member
//! (the score order, walked up or down between the marks that pops from
//! either end leave: `Coll`).
//!
//! The version is new each time a collection is created at a key, so the
//! elements of one that is gone without its elements being deleted (a
//! plain `SET` over it writes blindly, and an expired one is dropped by the
//! keyspace's compaction filter) are never read as the new one's, and a
//! background sweep (`sweep.rs`) deletes them later. `DEL`, `UNLINK`,
//! `RENAME`, `EXPIRE` into the past, popping or removing the last element,
//! and writes that read the key first (`SET ... XX`, `SET ... KEEPTTL`;
//! `SET ... GET` on a collection is `WRONGTYPE`) delete the elements with
//! the key: popping deletes what it pops, the others the
//! version's whole range with one range deletion once the command commits
//! (`Access::drop_elements`; a transaction holds point writes only). If
//! the process dies between the commit and that deletion, the sweep
//! finds the version without metadata and deletes it.
//!
//! Every command here reads before it writes, so it runs in an engine
//! transaction (atomic under concurrent clients, as in Redis); every write
//! rewrites the metadata with a new revision, so `WATCH` on the key sees
//! any change to an element.
//!
//! Costs: point operations (`LPUSH`, `LPOP`, `LINDEX`, `HGET`, `SADD`,
//! `ZSCORE`, ...) read and write O(1) entries; ranges read what they
//! return; a score range starts at its lowest score (or, descending, its
//! highest). A sorted set's ranks come from its rank index
//! (`zsets/counts.rs`: counts per bucket of ~1,024 members of the score
//! order, kept by every write), O(n / 1024 + 1024) entries read where
//! Redis's skiplist takes O(log n).

pub mod blocking;
pub mod coll;
pub mod dump;
pub(crate) mod hashes;
pub(crate) mod lists;
pub mod mpop;
pub mod object;
mod random;
pub mod scan;
pub(crate) mod sets;
pub(crate) mod sort;
pub mod streams;
pub mod sweep;
pub mod versions;
pub(crate) mod zsets;

pub(crate) use coll::STEP;
pub use coll::{wrong_type, Coll};

use std::sync::atomic::{AtomicU64, Ordering};

use crate::access::Access;
use crate::commands::{fail, Fail};
use crate::store::{Kind, Value};

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
/// version at `to`, and the old version's range is dropped.
pub fn move_value(acc: &mut dyn Access, from: &[u8], to: &[u8], v: &Value) -> Result<(), Fail> {
    copy_value(acc, from, to, v)?;
    drop_items_of(acc, from, v)?;
    acc.del(from)?;
    Ok(())
}

/// Writes a copy of `v`, the value of `from`, at `to` (whose old value,
/// if any, the caller has deleted), its expiry too: a collection's
/// elements are copied under a new version.
pub fn copy_value(acc: &mut dyn Access, from: &[u8], to: &[u8], v: &Value) -> Result<(), Fail> {
    if v.kind == Kind::String {
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
        acc.put_item(&new.item_key(sub), value)?;
    }
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

/// A count that may not be negative (`LIMIT`, `COUNT`, `MAXLEN`); Redis
/// answers `message` for a negative one and for one that is not a number.
pub fn non_negative(arg: &[u8], message: &str) -> Result<i64, Fail> {
    match crate::commands::int_arg(arg) {
        Ok(n) if n >= 0 => Ok(n),
        _ => Err(fail(message)),
    }
}

/// A cheap random number (for `SPOP` and `SRANDMEMBER`), not for secrets.
pub fn random_u64() -> u64 {
    if let Some(replayed) = crate::replay::random() {
        return replayed;
    }
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
