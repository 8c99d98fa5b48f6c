//! How one command reaches the data ([`Access`]): straight through the
//! keyspaces ([`Direct`]: blind writes and single reads), inside an engine
//! transaction ([`InTx`]: commands that read before they write, and
//! `MULTI`/`EXEC`), or at a snapshot ([`AtSnapshot`]: commands that only
//! read several entries, such as `LRANGE` or `ZRANGE`, which must see one
//! moment of the data but have nothing to commit).
//!
//! Owns nothing: each is a borrow of the keyspaces (and the transaction or
//! snapshot) for one command.

pub mod snapshot;

use std::ops::Bound;

use slsm::{Transaction, WriteOptions};

use crate::notify::{self, Notices};
use crate::resp::Bulks;
use crate::store::{now_ms, Spaces, Value};

/// An element of a collection: its key in the items keyspace and value.
pub type Item = (Vec<u8>, Vec<u8>);

/// Reads and writes of one command.
pub trait Access {
    fn get(&mut self, key: &[u8]) -> slsm::Result<Option<Value>>;
    fn set(&mut self, key: &[u8], value: &Value) -> slsm::Result<()>;
    fn del(&mut self, key: &[u8]) -> slsm::Result<()>;
    /// Live keys from `after` (exclusive) on, at most `limit`.
    fn keys_after(&mut self, after: Option<&[u8]>, limit: usize) -> slsm::Result<Vec<Vec<u8>>>;
    /// An element of a collection (`collections` makes the keys).
    fn item(&mut self, key: &[u8]) -> slsm::Result<Option<Vec<u8>>>;
    fn put_item(&mut self, key: &[u8], value: &[u8]) -> slsm::Result<()>;
    fn del_item(&mut self, key: &[u8]) -> slsm::Result<()>;
    /// Elements with keys in `from..to`, ascending, at most `limit`, each
    /// key less its first `strip` bytes (the collection's prefix).
    fn items(
        &mut self,
        from: &[u8],
        to: &[u8],
        limit: usize,
        strip: usize,
    ) -> slsm::Result<Vec<Item>>;
    /// [`items`](Self::items) from the top of `from..to` down: the last
    /// `limit` entries, descending.
    fn items_rev(
        &mut self,
        from: &[u8],
        to: &[u8],
        limit: usize,
        strip: usize,
    ) -> slsm::Result<Vec<Item>>;
    /// The values of [`items`](Self::items), in one buffer.
    fn values(&mut self, from: &[u8], to: &[u8], limit: usize) -> slsm::Result<Bulks> {
        let items = self.items(from, to, limit, 0)?;
        let mut out = Bulks::with_capacity(items.len());
        items.iter().for_each(|(_, v)| out.push(v));
        Ok(out)
    }
    /// A version no collection had before (see `collections`).
    fn new_version(&mut self) -> slsm::Result<u64>;
    /// Deletes every element in `from..to`: the whole range of a version
    /// no collection owns once this command's writes apply (its metadata
    /// is deleted or replaced by them). One range deletion, however many
    /// elements: right away, or once the transaction has committed.
    fn drop_elements(&mut self, from: &[u8], to: &[u8]) -> slsm::Result<()>;
    /// The parameters `CONFIG SET` tunes commands with.
    fn tuning(&self) -> &crate::store::Tuning;
    /// A keyspace notification of the command (Redis's
    /// `notifyKeyspaceEvent`; classes in `crate::notify`), published once
    /// its writes commit. A reading access has nothing to tell.
    fn notify(&mut self, _class: u32, _event: &'static str, _key: &[u8]) {}
    /// True while a script's `redis.call` runs the command (`SORT` then
    /// orders a set it would leave unsorted, as Redis does, so that the
    /// script's result does not depend on the set's layout).
    fn in_script_call(&self) -> bool {
        false
    }
}

/// Element ranges to delete once a transaction has committed.
pub type Drops = Vec<(Vec<u8>, Vec<u8>)>;

/// Deletes `drops` (after the commit that made them unowned). A failure
/// leaves them to the sweep (`collections/sweep.rs`), which deletes any
/// version without metadata; the command has succeeded either way.
pub fn apply_drops(sp: &Spaces, drops: Drops) {
    for (from, to) in drops {
        if sp.items.delete_range(&from, &to).is_err() {
            return;
        }
    }
}

/// Straight through the keyspaces.
pub struct Direct<'a> {
    pub sp: &'a Spaces,
    pub opts: &'a WriteOptions,
    /// What its commands told ([`Access::notify`]): the caller publishes
    /// them once they return.
    pub notices: Notices,
}

impl<'a> Direct<'a> {
    pub fn new(sp: &'a Spaces, opts: &'a WriteOptions) -> Direct<'a> {
        let notices = Notices::new(notify::notice_flags(&sp.tuning));
        Direct { sp, opts, notices }
    }
}

impl Access for Direct<'_> {
    fn get(&mut self, key: &[u8]) -> slsm::Result<Option<Value>> {
        Ok(self
            .sp
            .ks
            .get(key)?
            .and_then(|v| Value::decode(&v, now_ms())))
    }

    fn set(&mut self, key: &[u8], value: &Value) -> slsm::Result<()> {
        if self.notices.wants(notify::NEW) && self.get(key)?.is_none() {
            self.notices.push(notify::NEW, "new", key);
        }
        self.notices.expires(key, value.expires_at);
        self.sp.ks.put_opt(key, value.encode(), self.opts)
    }

    fn del(&mut self, key: &[u8]) -> slsm::Result<()> {
        self.sp.ks.delete_opt(key, self.opts)
    }

    fn keys_after(&mut self, after: Option<&[u8]>, limit: usize) -> slsm::Result<Vec<Vec<u8>>> {
        live_keys(self.sp.ks.range::<Vec<u8>, _>(range_after(after)), limit)
    }

    fn item(&mut self, key: &[u8]) -> slsm::Result<Option<Vec<u8>>> {
        Ok(self.sp.items.get(key)?.map(|v| v.to_vec()))
    }

    fn put_item(&mut self, key: &[u8], value: &[u8]) -> slsm::Result<()> {
        self.sp.items.put_opt(key, value, self.opts)
    }

    fn del_item(&mut self, key: &[u8]) -> slsm::Result<()> {
        self.sp.items.delete_opt(key, self.opts)
    }

    fn items(
        &mut self,
        from: &[u8],
        to: &[u8],
        limit: usize,
        strip: usize,
    ) -> slsm::Result<Vec<Item>> {
        collect_lent(self.sp.items.range(from..to), limit, strip)
    }

    fn values(&mut self, from: &[u8], to: &[u8], limit: usize) -> slsm::Result<Bulks> {
        collect_values(self.sp.items.range(from..to), limit)
    }

    fn items_rev(
        &mut self,
        from: &[u8],
        to: &[u8],
        limit: usize,
        strip: usize,
    ) -> slsm::Result<Vec<Item>> {
        collect_items(self.sp.items.range(from..to).rev(), limit, strip)
    }

    fn new_version(&mut self) -> slsm::Result<u64> {
        self.sp.versions.next(&self.sp.items)
    }

    fn tuning(&self) -> &crate::store::Tuning {
        &self.sp.tuning
    }

    fn notify(&mut self, class: u32, event: &'static str, key: &[u8]) {
        self.notices.push(class, event, key);
    }

    fn drop_elements(&mut self, from: &[u8], to: &[u8]) -> slsm::Result<()> {
        self.sp.items.delete_range(from, to)
    }
}

/// Inside an engine transaction (its reads are validated at commit).
pub struct InTx<'a> {
    pub tx: &'a mut Transaction,
    pub sp: &'a Spaces,
    /// Element ranges to delete once `tx` commits ([`apply_drops`]): a
    /// transaction holds no range deletions, and a collection of millions
    /// of elements must not become a write set of millions.
    pub drops: Drops,
    /// What its commands told ([`Access::notify`]), to publish once `tx`
    /// commits.
    pub notices: Notices,
    /// A script's command is running ([`Access::in_script_call`]).
    pub in_script: bool,
}

impl<'a> InTx<'a> {
    pub fn new(tx: &'a mut Transaction, sp: &'a Spaces) -> InTx<'a> {
        InTx {
            tx,
            sp,
            drops: Vec::new(),
            notices: Notices::new(notify::notice_flags(&sp.tuning)),
            in_script: false,
        }
    }
}

impl Access for InTx<'_> {
    fn get(&mut self, key: &[u8]) -> slsm::Result<Option<Value>> {
        Ok(self
            .tx
            .get_in(&self.sp.ks, key)?
            .and_then(|v| Value::decode(&v, now_ms())))
    }

    fn set(&mut self, key: &[u8], value: &Value) -> slsm::Result<()> {
        if self.notices.wants(notify::NEW) && self.get(key)?.is_none() {
            self.notices.push(notify::NEW, "new", key);
        }
        self.notices.expires(key, value.expires_at);
        self.tx.put_in(&self.sp.ks, key, value.encode())
    }

    fn del(&mut self, key: &[u8]) -> slsm::Result<()> {
        self.tx.delete_in(&self.sp.ks, key)
    }

    fn keys_after(&mut self, after: Option<&[u8]>, limit: usize) -> slsm::Result<Vec<Vec<u8>>> {
        live_keys(
            self.tx
                .range_in::<Vec<u8>, _>(&self.sp.ks, range_after(after))?,
            limit,
        )
    }

    fn item(&mut self, key: &[u8]) -> slsm::Result<Option<Vec<u8>>> {
        Ok(self.tx.get_in(&self.sp.items, key)?.map(|v| v.to_vec()))
    }

    fn put_item(&mut self, key: &[u8], value: &[u8]) -> slsm::Result<()> {
        self.tx.put_in(&self.sp.items, key, value)
    }

    fn del_item(&mut self, key: &[u8]) -> slsm::Result<()> {
        self.tx.delete_in(&self.sp.items, key)
    }

    fn items(
        &mut self,
        from: &[u8],
        to: &[u8],
        limit: usize,
        strip: usize,
    ) -> slsm::Result<Vec<Item>> {
        collect_items(self.tx.range_in(&self.sp.items, from..to)?, limit, strip)
    }

    fn items_rev(
        &mut self,
        from: &[u8],
        to: &[u8],
        limit: usize,
        strip: usize,
    ) -> slsm::Result<Vec<Item>> {
        let entries = self.tx.range_in(&self.sp.items, from..to)?.rev();
        collect_items(entries, limit, strip)
    }

    fn new_version(&mut self) -> slsm::Result<u64> {
        self.sp.versions.next(&self.sp.items)
    }

    fn tuning(&self) -> &crate::store::Tuning {
        &self.sp.tuning
    }

    fn notify(&mut self, class: u32, event: &'static str, key: &[u8]) {
        self.notices.push(class, event, key);
    }

    fn drop_elements(&mut self, from: &[u8], to: &[u8]) -> slsm::Result<()> {
        self.drops.push((from.to_vec(), to.to_vec()));
        Ok(())
    }

    fn in_script_call(&self) -> bool {
        self.in_script
    }
}

/// The first `limit` entries of `entries`, owned, each key less its first
/// `strip` bytes.
fn collect_items(
    entries: impl Iterator<Item = slsm::Result<(slsm::Slice, slsm::Slice)>>,
    limit: usize,
    strip: usize,
) -> slsm::Result<Vec<Item>> {
    entries
        .take(limit)
        .map(|e| e.map(|(k, v)| (k.get(strip..).unwrap_or_default().to_vec(), Vec::from(v))))
        .collect()
}

/// [`collect_items`] from an engine iterator, copying each entry once
/// out of the iterator's own buffers (no intermediate `Slice`s: a
/// `LRANGE` of 600 spent a quarter of its time in the allocator).
fn collect_lent(mut entries: slsm::Iter, limit: usize, strip: usize) -> slsm::Result<Vec<Item>> {
    let mut out = Vec::with_capacity(limit.min(1024));
    while out.len() < limit {
        let lent =
            entries.next_with(|k, v| (k.get(strip..).unwrap_or_default().to_vec(), v.to_vec()));
        match lent {
            Some(entry) => out.push(entry?),
            None => break,
        }
    }
    Ok(out)
}

/// The values of an engine iterator's first `limit` entries, copied once
/// into one buffer.
fn collect_values(mut entries: slsm::Iter, limit: usize) -> slsm::Result<Bulks> {
    let mut out = Bulks::with_capacity(limit.min(1024));
    while out.len() < limit {
        match entries.next_with(|_, v| out.push(v)) {
            Some(done) => done?,
            None => break,
        }
    }
    Ok(out)
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
/// read-modify-write command under concurrent clients); its result and
/// the notices of the attempt that committed.
pub fn atomically<T>(
    db: &slsm::Db,
    sp: &Spaces,
    opts: &WriteOptions,
    mut f: impl FnMut(&mut InTx<'_>) -> slsm::Result<T>,
) -> slsm::Result<(T, Notices)> {
    loop {
        let mut tx = db.transaction();
        let mut acc = InTx::new(&mut tx, sp);
        let out = f(&mut acc)?;
        let (drops, notices) = (acc.drops, acc.notices);
        match tx.commit_opt(opts) {
            Ok(()) => {
                apply_drops(sp, drops);
                return Ok((out, notices));
            }
            Err(slsm::Error::Conflict) => continue,
            Err(e) => return Err(e),
        }
    }
}
