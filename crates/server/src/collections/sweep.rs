//! Reclaims the elements no collection owns any more: those of a
//! collection a plain `SET` or `MSET` replaced (they write blindly), and of
//! one that expired (the keys' compaction filter drops its metadata, not
//! its elements). Without this they would stay on disk for good.
//!
//! A pass walks the items keyspace one collection version at a time: it
//! reads the first element at its cursor, looks up the metadata of that
//! element's key, and either skips the whole version's range (the key
//! holds that version) or deletes it with one range deletion. So a pass
//! costs a seek and a lookup per collection, not a read per element.
//!
//! Why a deletion never races a live collection: versions are never
//! reused (`versions.rs`), a collection's metadata and elements are
//! written in one engine transaction, and a version whose metadata is
//! gone or replaced cannot come back. Expiry is the one way back a
//! transaction could take (it read the metadata before the expiry time,
//! say for `PERSIST`, and commits after it), so an expired collection's
//! elements are taken only once it has been expired for [`EXPIRY_GRACE_MS`].
//!
//! * **Owns**: nothing but its cursor (held by the caller).
//! * **Calls**: the keyspaces' reads and `delete_range`.
//! * **Thread safety**: any thread, beside clients' transactions.

use super::coll::{items_prefix, Coll};
use crate::store::{Spaces, Value};

pub use crate::store::EXPIRY_GRACE_MS;

/// One step of a pass at time `now` (ms): up to `budget` collection
/// versions from `cursor` (empty: the start). Returns where the next step
/// starts, `None` once the pass has reached the end; and how many
/// versions it deleted.
pub fn step(
    sp: &Spaces,
    cursor: &[u8],
    budget: usize,
    now: u64,
) -> slsm::Result<(Option<Vec<u8>>, usize)> {
    let mut cursor = cursor.to_vec();
    let mut deleted = 0;
    let as_of = now.saturating_sub(EXPIRY_GRACE_MS);
    for _ in 0..budget {
        let Some(first) = sp.items.range(cursor.as_slice()..).next() else {
            return Ok((None, deleted));
        };
        let (element, _) = first?;
        let Some((key, version)) = parse(&element) else {
            // The version counter, or a key no element has: step past it.
            cursor = element.to_vec();
            cursor.push(0);
            continue;
        };
        let end = items_prefix(key, version.saturating_add(1));
        let owned = match sp.ks.get(key)? {
            Some(stored) => {
                Value::decode(&stored, as_of).and_then(|v| Coll::version_in(&v)) == Some(version)
            }
            None => false,
        };
        if !owned {
            sp.items.delete_range(items_prefix(key, version), &end)?;
            deleted += 1;
        }
        cursor = end;
    }
    Ok((Some(cursor), deleted))
}

/// The key and version an element's key belongs to.
fn parse(element: &[u8]) -> Option<(&[u8], u64)> {
    let len = u32::from_be_bytes(element.get(..4)?.try_into().ok()?) as usize;
    let key = element.get(4..4 + len)?;
    let version = element.get(4 + len..4 + len + 8)?;
    Some((key, u64::from_be_bytes(version.try_into().ok()?)))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::access::atomically;
    use crate::commands;
    use crate::cursors::Cursors;
    use crate::store::{now_ms, Store};

    fn run(store: &Store, args: &[&str]) {
        let req: Vec<Vec<u8>> = args.iter().map(|a| a.as_bytes().to_vec()).collect();
        let name = args[0].to_ascii_lowercase();
        let opts = slsm::WriteOptions::default();
        atomically(
            &store.db(),
            &store.spaces(),
            &opts,
            |acc| match crate::registry::run_data(&name, &req, acc, &Cursors::default()) {
                Err(commands::Fail::Engine(e)) => Err(e),
                _ => Ok(()),
            },
        )
        .unwrap();
    }

    /// Elements in the items keyspace (the version counter aside).
    fn elements(store: &Store) -> usize {
        store
            .spaces()
            .items
            .iter()
            .filter(|e| e.as_ref().unwrap().0.len() > 1)
            .count()
    }

    fn pass(store: &Store, now: u64) -> usize {
        let (mut cursor, mut deleted) = (Vec::new(), 0);
        loop {
            // A budget of 1: every step resumes from a cursor.
            match step(&store.spaces(), &cursor, 1, now).unwrap() {
                (Some(next), n) => (cursor, deleted) = (next, deleted + n),
                (None, n) => return deleted + n,
            }
        }
    }

    #[test]
    fn a_pass_takes_what_no_collection_owns_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let db = slsm::Db::open(dir.path().join("db"), slsm::Options::default()).unwrap();
        let store = Store::new(Arc::new(db), Default::default()).unwrap();
        run(&store, &["RPUSH", "kept", "a", "b", "c"]);
        run(&store, &["HSET", "replaced", "f", "1", "g", "2"]);
        run(&store, &["SET", "replaced", "now a string"]);
        run(&store, &["SADD", "expiring", "x", "y"]);
        run(&store, &["PEXPIRE", "expiring", "1"]);
        run(&store, &["ZADD", "recreated", "1", "old"]);
        run(&store, &["SET", "recreated", "s"]);
        run(&store, &["DEL", "recreated"]);
        run(&store, &["ZADD", "recreated", "2", "new"]);
        // A sorted set's member is two elements (a set this small keeps
        // no count of its rank index).
        assert_eq!(elements(&store), 3 + 2 + 2 + 2 + 2);
        // Ten seconds on: the replaced hash and the old sorted set go; the
        // expired set is within its grace.
        assert_eq!(pass(&store, now_ms() + 10_000), 2);
        assert_eq!(elements(&store), 3 + 2 + 2);
        // Past the grace the expired set goes too.
        assert_eq!(pass(&store, now_ms() + EXPIRY_GRACE_MS + 1_000), 1);
        assert_eq!(elements(&store), 3 + 2);
        assert_eq!(pass(&store, now_ms() + EXPIRY_GRACE_MS + 1_000), 0);
    }
}
