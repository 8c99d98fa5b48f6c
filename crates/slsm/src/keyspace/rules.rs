//! Per-keyspace rules applied to values: time to live, and a compaction
//! filter the user provides (RocksDB's `CompactionFilter`, fjall's
//! compaction filters and TTL).
//!
//! * **TTL**: a keyspace created with a TTL stores every value behind the
//!   time it expires (8 bytes, milliseconds since the Unix epoch, big
//!   endian). Reads hide an expired value at once, as if it were deleted;
//!   merges drop it. The TTL is recorded in the catalog, so it holds across
//!   reopen; it cannot change once the keyspace exists.
//! * **Compaction filter**: called by flushes and merges with each key's
//!   newest value that no snapshot can see, it may keep the value, remove
//!   the key, or replace the value. It is not persisted: pass it to
//!   `Db::keyspace_with` after every open.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use arc_swap::ArcSwap;

/// Bytes a TTL keyspace stores before each value.
pub(crate) const EXPIRY_LEN: usize = 8;

/// What a [`CompactionFilter`] decides for one value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FilterDecision {
    /// Keep the value.
    Keep,
    /// Delete the key (older versions stay hidden).
    Remove,
    /// Replace the value.
    ChangeValue(Vec<u8>),
}

/// Decides, during flushes and merges, what happens to a key's newest
/// value when no snapshot can see it. Must be cheap and deterministic
/// enough that running it again on its own output changes nothing.
pub trait CompactionFilter: Send + Sync {
    /// `key` and `value` as the user wrote them (without TTL bytes).
    fn filter(&self, key: &[u8], value: &[u8]) -> FilterDecision;
}

impl<F: Fn(&[u8], &[u8]) -> FilterDecision + Send + Sync> CompactionFilter for F {
    fn filter(&self, key: &[u8], value: &[u8]) -> FilterDecision {
        self(key, value)
    }
}

/// Options of one keyspace, for [`Db::keyspace_with`](crate::db::Db::keyspace_with).
#[derive(Clone, Default)]
pub struct KeyspaceOptions {
    /// Values expire this long after they are written: reads no longer see
    /// them and merges drop them. Fixed when the keyspace is created
    /// (recorded with it); `None` (default): values never expire. Whole
    /// milliseconds.
    pub ttl: Option<Duration>,
    /// Called on values during flushes and merges (see
    /// [`CompactionFilter`]). Not recorded: give it at every open.
    /// Default `None`.
    pub compaction_filter: Option<Arc<dyn CompactionFilter>>,
}

impl KeyspaceOptions {
    /// Sets [`ttl`](Self::ttl).
    #[must_use]
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = Some(ttl);
        self
    }

    /// Sets [`compaction_filter`](Self::compaction_filter).
    #[must_use]
    pub fn compaction_filter(mut self, filter: impl CompactionFilter + 'static) -> Self {
        self.compaction_filter = Some(Arc::new(filter));
        self
    }
}

impl std::fmt::Debug for KeyspaceOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyspaceOptions")
            .field("ttl", &self.ttl)
            .field("compaction_filter", &self.compaction_filter.is_some())
            .finish()
    }
}

/// The rules of one keyspace, as merges apply them.
#[derive(Clone, Default)]
pub(crate) struct Rules {
    pub ttl_millis: u64,
    pub filter: Option<Arc<dyn CompactionFilter>>,
}

/// What a merge does with one value.
pub(crate) enum Verdict {
    Keep,
    Remove,
    /// The new stored value (TTL bytes included).
    Replace(Vec<u8>),
}

impl Rules {
    /// The verdict on `stored` (the value as stored) of `user_key`.
    pub fn judge(&self, user_key: &[u8], stored: &[u8], now: u64) -> Verdict {
        let (header, value) = match self.ttl_millis {
            0 => (&[][..], stored),
            _ => match expiry(stored) {
                Some(at) if at <= now => return Verdict::Remove,
                Some(_) => stored.split_at(EXPIRY_LEN),
                None => return Verdict::Keep,
            },
        };
        match self.filter.as_ref().map(|f| f.filter(user_key, value)) {
            None | Some(FilterDecision::Keep) => Verdict::Keep,
            Some(FilterDecision::Remove) => Verdict::Remove,
            Some(FilterDecision::ChangeValue(v)) => Verdict::Replace([header, &v].concat()),
        }
    }
}

/// The rules of every keyspace that has some, by id; shared by the facade
/// (which registers them) and the jobs (which read them per merge).
#[derive(Default)]
pub(crate) struct RuleBook {
    by_id: ArcSwap<HashMap<u32, Rules>>,
}

impl RuleBook {
    pub fn set(&self, id: u32, rules: Rules) {
        let mut next = (**self.by_id.load()).clone();
        match rules.ttl_millis == 0 && rules.filter.is_none() {
            true => next.remove(&id),
            false => next.insert(id, rules),
        };
        self.by_id.store(Arc::new(next));
    }

    pub fn current(&self) -> Arc<HashMap<u32, Rules>> {
        self.by_id.load_full()
    }
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// `value` behind its expiry time, `ttl_millis` from now.
pub(crate) fn with_expiry(value: &[u8], ttl_millis: u64) -> Vec<u8> {
    let at = now_millis().saturating_add(ttl_millis);
    [&at.to_be_bytes()[..], value].concat()
}

/// The expiry time of a stored TTL value (`None` if it is too short to
/// carry one: written before... never, but not a reason to panic).
pub(crate) fn expiry(stored: &[u8]) -> Option<u64> {
    Some(u64::from_be_bytes(
        stored.get(..EXPIRY_LEN)?.try_into().ok()?,
    ))
}

/// The user's value of a stored TTL value, or `None` if it has expired.
pub(crate) fn live_value(stored: &[u8], now: u64) -> Option<&[u8]> {
    live_value_start(stored, now).map(|start| &stored[start..])
}

/// Where [`live_value`] starts in `stored`, if it is live.
pub(crate) fn live_value_start(stored: &[u8], now: u64) -> Option<usize> {
    match expiry(stored) {
        Some(at) if at > now => Some(EXPIRY_LEN),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_round_trips_and_judges() {
        let v = with_expiry(b"value", 60_000);
        let now = now_millis();
        assert_eq!(live_value(&v, now), Some(&b"value"[..]));
        assert_eq!(live_value(&v, now + 61_000), None);
        assert_eq!(live_value(b"short", now), None);
        let rules = Rules {
            ttl_millis: 60_000,
            filter: Some(Arc::new(|_: &[u8], v: &[u8]| match v {
                b"drop" => FilterDecision::Remove,
                b"old" => FilterDecision::ChangeValue(b"new".to_vec()),
                _ => FilterDecision::Keep,
            })),
        };
        assert!(matches!(rules.judge(b"k", &v, now), Verdict::Keep));
        assert!(matches!(
            rules.judge(b"k", &v, now + 61_000),
            Verdict::Remove
        ));
        assert!(matches!(
            rules.judge(b"k", &with_expiry(b"drop", 1000), now),
            Verdict::Remove
        ));
        match rules.judge(b"k", &with_expiry(b"old", 1000), now) {
            Verdict::Replace(r) => assert_eq!(live_value(&r, now), Some(&b"new"[..])),
            _ => panic!("replaced"),
        }
    }
}
