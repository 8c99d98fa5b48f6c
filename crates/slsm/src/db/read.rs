//! The read path: point lookups newest to oldest (memory runs, then disk
//! runs level by level), batched lookups with finger search and sorted
//! sweeps, range iterators and snapshots.

use std::ops::{Bound, RangeBounds};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::{Db, Shared};
use crate::bloom::hash_key;
use crate::error::{Error, Result};
use crate::iter::user::Source;
use crate::iter::Iter;
use crate::key::{self, MAX_KEY_SIZE};
use crate::memtable::{decode_hit, Found, Hit};
use crate::slice::Slice;
use crate::version::{DiskRun, Version};

fn check_key(key: &[u8]) -> Result<()> {
    if key.len() > MAX_KEY_SIZE {
        return Err(Error::InvalidArgument(format!(
            "key of {} bytes exceeds the limit of {MAX_KEY_SIZE} bytes",
            key.len()
        )));
    }
    Ok(())
}

fn resolve(found: Found<'_>) -> Option<Slice> {
    match found {
        Found::Value(v) => Some(Slice::copy_from(v)),
        Found::Deleted => None,
    }
}

impl Shared {
    /// The sequence number to read at: the snapshot's, or the latest
    /// published one. Read *after* loading the version, so every version the
    /// read may need is still in that version's runs.
    fn read_seq(&self, snapshot: Option<u64>) -> u64 {
        snapshot.unwrap_or_else(|| self.visible())
    }

    fn get_at(&self, user_key: &[u8], snapshot: Option<u64>) -> Result<Option<Slice>> {
        check_key(user_key)?;
        let version = self.current.load();
        let snapshot = self.read_seq(snapshot);
        let hash = hash_key(user_key);
        let lookup = key::LookupKey::new(user_key, snapshot);
        let lookup = lookup.as_bytes();
        // All filter blocks this lookup may probe load in parallel: one
        // cache-miss latency instead of one per run.
        for mem in &version.mems {
            mem.prefetch_filter(hash);
        }
        for run in version.disk_runs_newest_first() {
            if run.file.overlaps_user_key(user_key) {
                run.file.prefetch_filter(hash);
            }
        }
        // Newest to oldest. A source's range tombstones are checked before
        // its filters: they may delete the key in every older source.
        for mem in &version.mems {
            let range_del = mem.covering_range_del(user_key, snapshot);
            let hit = if mem.may_contain(user_key, hash) {
                mem.get(user_key, lookup)
            } else {
                None
            };
            if let Some(found) = settle(hit, range_del) {
                return Ok(resolve(found));
            }
        }
        for run in version.disk_runs_newest_first() {
            let range_del = run.covering_range_del(user_key, snapshot);
            let hit = self.probe_run(run, user_key, hash, lookup)?;
            if let Some(found) = settle(hit, range_del) {
                return Ok(resolve(found));
            }
        }
        Ok(None)
    }

    /// Looks `user_key` up in one run file: min/max and Bloom checks, then
    /// fence pointers and the block.
    fn probe_run<'a>(
        &self,
        run: &'a DiskRun,
        user_key: &[u8],
        hash: u64,
        lookup: &[u8],
    ) -> Result<Option<Hit<'a>>> {
        let file = &run.file;
        if !file.overlaps_user_key(user_key) {
            return Ok(None);
        }
        self.counters.bloom_checks.add(1);
        if !file.may_contain_hash(hash) {
            self.counters.bloom_negatives.add(1);
            return Ok(None);
        }
        let hit = file
            .seek(lookup)?
            .and_then(|(ikey, value)| decode_hit(user_key, ikey, value));
        if hit.is_none() {
            self.counters.bloom_false_positives.add(1);
        }
        Ok(hit)
    }

    fn multi_get_at(&self, keys: &[&[u8]], snapshot: Option<u64>) -> Result<Vec<Option<Slice>>> {
        keys.iter().try_for_each(|k| check_key(k))?;
        let version = self.current.load();
        let snapshot = self.read_seq(snapshot);
        let mut order: Vec<usize> = (0..keys.len()).collect();
        order.sort_by(|&a, &b| keys[a].cmp(keys[b]));
        let lookups: Vec<Vec<u8>> = keys.iter().map(|k| key::lookup_key(k, snapshot)).collect();
        let hashes: Vec<u64> = keys.iter().map(|k| hash_key(k)).collect();
        let mut results: Vec<Option<Slice>> = vec![None; keys.len()];
        let mut pending = order;
        let ctx = Batch {
            keys,
            lookups: &lookups,
            hashes: &hashes,
            snapshot,
        };
        for mem in &version.mems {
            let mut finger = mem.finger();
            pending.retain(|&i| {
                let range_del = mem.covering_range_del(keys[i], snapshot);
                let hit = if mem.may_contain(keys[i], hashes[i]) {
                    finger
                        .seek_ge(&lookups[i])
                        .and_then(|(k, v)| decode_hit(keys[i], k, v))
                } else {
                    None
                };
                match settle(hit, range_del) {
                    Some(found) => {
                        results[i] = resolve(found);
                        false
                    }
                    None => true,
                }
            });
        }
        self.multi_get_disk(&version, &ctx, &mut pending, &mut results)?;
        Ok(results)
    }

    /// Looks the still-unresolved keys up in every run file, newest first,
    /// one sorted sweep over each file's fence pointers.
    fn multi_get_disk(
        &self,
        version: &Version,
        ctx: &Batch<'_>,
        pending: &mut Vec<usize>,
        results: &mut [Option<Slice>],
    ) -> Result<()> {
        let mut probe: Vec<usize> = Vec::new();
        let mut range_dels: Vec<Option<u64>> = vec![None; ctx.keys.len()];
        let mut resolved = vec![false; ctx.keys.len()];
        for run in version.disk_runs_newest_first() {
            if pending.is_empty() {
                break;
            }
            let file = &run.file;
            probe.clear();
            for &i in pending.iter() {
                range_dels[i] = run.covering_range_del(ctx.keys[i], ctx.snapshot);
                if range_dels[i].is_some() {
                    // Deleted here unless this run has a newer version.
                    results[i] = None;
                    resolved[i] = true;
                }
                if !file.overlaps_user_key(ctx.keys[i]) {
                    continue;
                }
                self.counters.bloom_checks.add(1);
                if file.may_contain_hash(ctx.hashes[i]) {
                    probe.push(i);
                } else {
                    self.counters.bloom_negatives.add(1);
                }
            }
            if !probe.is_empty() {
                let sorted: Vec<&[u8]> = probe.iter().map(|&i| ctx.lookups[i].as_slice()).collect();
                let mut misses = 0u64;
                file.multi_seek(&sorted, &mut |j, hit| {
                    let i = probe[j];
                    let hit = hit.and_then(|(k, v)| decode_hit(ctx.keys[i], k, v));
                    if hit.is_none() {
                        misses += 1;
                    }
                    if let Some(found) = settle(hit, range_dels[i]) {
                        results[i] = resolve(found);
                        resolved[i] = true;
                    }
                })?;
                self.counters.bloom_false_positives.add(misses);
            }
            pending.retain(|&i| !resolved[i]);
        }
        Ok(())
    }

    fn iter_at<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R, snapshot: Option<u64>) -> Iter {
        let own = |b: Bound<&K>| match b {
            Bound::Included(k) => Bound::Included(k.as_ref().to_vec()),
            Bound::Excluded(k) => Bound::Excluded(k.as_ref().to_vec()),
            Bound::Unbounded => Bound::Unbounded,
        };
        let lower = own(range.start_bound());
        let upper = own(range.end_bound());
        let version = self.current.load_full();
        let snapshot = self.read_seq(snapshot);
        let mut sources: Vec<Source> = version
            .mems
            .iter()
            .map(|m| Source::Mem(Arc::clone(m)))
            .collect();
        sources.extend(
            version
                .disk_runs_newest_first()
                .map(|r| Source::Run(Arc::clone(&r.file))),
        );
        Iter::new(sources, snapshot, lower, upper)
    }

    fn visible(&self) -> u64 {
        self.visible_seq.load(Ordering::Acquire)
    }

    fn acquire_snapshot(&self) -> u64 {
        let mut snaps = self.snapshots.lock();
        // Read the sequence under the lock so a merge that lists snapshots
        // never misses one that is being taken.
        let seq = self.visible();
        *snaps.entry(seq).or_insert(0) += 1;
        seq
    }

    fn release_snapshot(&self, seq: u64) {
        let mut snaps = self.snapshots.lock();
        if let Some(n) = snaps.get_mut(&seq) {
            *n -= 1;
            if *n == 0 {
                snaps.remove(&seq);
            }
        }
    }

    /// Live snapshot sequence numbers, ascending.
    pub(crate) fn snapshot_list(&self) -> Vec<u64> {
        self.snapshots.lock().keys().copied().collect()
    }
}

struct Batch<'a> {
    keys: &'a [&'a [u8]],
    lookups: &'a [Vec<u8>],
    hashes: &'a [u64],
    snapshot: u64,
}

/// The answer a source gives, from its newest visible version (`hit`) and
/// its newest covering range tombstone: `None` means "ask older sources".
#[inline]
fn settle(hit: Option<Hit<'_>>, range_del: Option<u64>) -> Option<Found<'_>> {
    match hit {
        Some(h) => Some(h.unless_covered(range_del)),
        None => range_del.map(|_| Found::Deleted),
    }
}

/// The smallest key greater than every key starting with `prefix`, if any.
fn prefix_end(prefix: &[u8]) -> Bound<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xFF {
            end.push(last + 1);
            return Bound::Excluded(end);
        }
    }
    Bound::Unbounded
}

fn prefix_range(prefix: &[u8]) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    (Bound::Included(prefix.to_vec()), prefix_end(prefix))
}

impl Db {
    /// The value of `key`, or `None` if it is absent or deleted.
    pub fn get(&self, key: &[u8]) -> Result<Option<Slice>> {
        self.shared.get_at(key, None)
    }

    /// Looks up many keys at once (any order, duplicates allowed); results
    /// come in the caller's order. The batch is sorted once and searched with
    /// finger search in every memory run and one sorted sweep per run file.
    pub fn multi_get(&self, keys: &[&[u8]]) -> Result<Vec<Option<Slice>>> {
        self.shared.multi_get_at(keys, None)
    }

    /// An iterator over the keys in `range` (any kind of bounds), as of now.
    pub fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Iter {
        self.shared.iter_at(range, None)
    }

    /// An iterator over every key that starts with `prefix`.
    pub fn prefix(&self, prefix: &[u8]) -> Iter {
        self.shared.iter_at(prefix_range(prefix), None)
    }

    /// An iterator over the whole database.
    pub fn iter(&self) -> Iter {
        self.range::<&[u8], _>(..)
    }

    /// A consistent, read-only view of the database as of now. Merges keep
    /// every version the snapshot can see until it is dropped.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            seq: self.shared.acquire_snapshot(),
            shared: Arc::clone(&self.shared),
        }
    }
}

/// A point-in-time view of a [`Db`]: reads through it ignore every write
/// made after it was taken.
///
/// `Snapshot` is `Send + Sync` and may outlive the `Db` handle (it keeps
/// the database files and the directory lock alive until it is dropped).
pub struct Snapshot {
    shared: Arc<Shared>,
    seq: u64,
}

impl Snapshot {
    /// The sequence number the snapshot reads at.
    pub fn sequence(&self) -> u64 {
        self.seq
    }

    /// [`Db::get`] as of the snapshot.
    pub fn get(&self, key: &[u8]) -> Result<Option<Slice>> {
        self.shared.get_at(key, Some(self.seq))
    }

    /// [`Db::multi_get`] as of the snapshot.
    pub fn multi_get(&self, keys: &[&[u8]]) -> Result<Vec<Option<Slice>>> {
        self.shared.multi_get_at(keys, Some(self.seq))
    }

    /// [`Db::range`] as of the snapshot.
    pub fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Iter {
        self.shared.iter_at(range, Some(self.seq))
    }

    /// [`Db::prefix`] as of the snapshot.
    pub fn prefix(&self, prefix: &[u8]) -> Iter {
        self.shared.iter_at(prefix_range(prefix), Some(self.seq))
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        self.shared.release_snapshot(self.seq);
    }
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot").field("seq", &self.seq).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_end_increments_last_byte() {
        assert_eq!(prefix_end(b"ab"), Bound::Excluded(b"ac".to_vec()));
        assert_eq!(prefix_end(b"a\xff"), Bound::Excluded(b"b".to_vec()));
        assert_eq!(prefix_end(b"\xff\xff"), Bound::Unbounded);
        assert_eq!(prefix_end(b""), Bound::Unbounded);
    }
}
