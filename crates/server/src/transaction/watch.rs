//! What a client's `WATCH`es hold: the watched keys, in groups of engine
//! transactions, and what the engine's conflict check cannot see.
//!
//! * **Owns**: the groups' transactions (each pins a snapshot).

use std::collections::HashSet;

use crate::shared::Shared;

/// The keys a client watches, in groups: each group's keys were read by one
/// engine transaction, begun at the `WATCH` that added them (or at a fold,
/// below), whose commit (it has no writes) fails if any of them was written
/// since. A key is watched once: watching it again changes nothing, as in
/// Redis, so repeating `WATCH k` holds nothing more.
///
/// Groups fold like the digits of a binary counter: a group holding at
/// least half as many keys as the group before it joins that one (both
/// validated, their keys read again by one new transaction). A client
/// watching `n` keys thus holds at most about `log2 n` transactions, each
/// of which pins a snapshot, and each key is read again O(log n) times,
/// however many `WATCH` commands bring them. One transaction per command
/// would let a client sending `WATCH k` in a loop hold ~300 bytes of the
/// server's memory per command (90 MB for 300,000).
///
/// Two touches no engine write records are counted as Redis counts them:
/// a watched key that existed at its `WATCH` and is gone at `EXEC` without
/// a write (it expired) makes `EXEC` answer null, and so does a `FLUSHALL`
/// or `FLUSHDB` after the `WATCH` of a key that existed then (Redis
/// touches every watched key a flush deletes; a key that did not exist is
/// not touched).
#[derive(Default)]
pub struct Watch {
    pub(super) groups: Vec<Group>,
    pub(super) keys: HashSet<Vec<u8>>,
    /// The watched keys that existed when they were watched.
    pub(super) existed: HashSet<Vec<u8>>,
    /// The store's flush count when the first key of `existed` was
    /// watched: a flush since touched it.
    pub(super) flushes_at_first_existing: Option<u64>,
    /// A watched key was written after its `WATCH` (found while folding),
    /// or a fold failed: `EXEC` will answer null.
    pub(super) dirty: bool,
}

/// Whether stored bytes hold a key that has not expired at `now`.
fn is_live(stored: Option<&[u8]>, now: u64) -> bool {
    stored.is_some_and(|v| crate::store::expiry_of(v, now).is_some())
}

impl Watch {
    /// Records what `WATCH` read of `key` (at flush count `flushes`).
    pub(super) fn saw(&mut self, s: &Shared, key: &[u8], value: Option<&[u8]>, flushes: u64) {
        if is_live(value, s.store.clock.now()) {
            self.existed.insert(key.to_vec());
            self.flushes_at_first_existing.get_or_insert(flushes);
        }
    }

    /// Whether a flush since a `WATCH` touched a key that existed, or a
    /// key exists now where it did not then or the reverse (`now`: the
    /// keys' stored values, as read at `EXEC` or at a fold). A key that
    /// came or went was written or expired, and the writes a flush hid
    /// from the engine's conflict check (they went to new keyspaces) are
    /// among them.
    pub(super) fn touched_unseen(
        &self,
        s: &Shared,
        keys: &[Vec<u8>],
        now: &[Option<Vec<u8>>],
    ) -> bool {
        let at = s.store.clock.now();
        self.flushes_at_first_existing
            .is_some_and(|at| s.store.flushes() != at)
            || keys
                .iter()
                .zip(now)
                .any(|(k, v)| is_live(v.as_deref(), at) != self.existed.contains(k))
    }
}

pub(super) struct Group {
    pub(super) tx: slsm::Transaction,
    pub(super) keys: Vec<Vec<u8>>,
}
