//! Redis's eviction policies under `maxmemory`: Redis's cache mode.
//!
//! With a policy other than `noeviction` and a `maxmemory` set at run
//! time, whenever the engine's accounted memory is above `maxmemory` keys
//! are deleted before the next command runs (and when `CONFIG SET` lowers
//! the bound), as Redis's `performEvictions` does: one at a time, each
//! with an `evicted` keyspace notification, its tracking invalidation and
//! its WATCH touched, until the memory is back under the bound, no key
//! the policy may take is left, or the pass has run its time (Redis's
//! `maxmemory-eviction-tenacity`, 500 µs by default). What is still over
//! after that refuses the commands that may grow the data with `OOM`
//! (`crate::maxmemory`).
//!
//! What differs from Redis, on purpose:
//! - A deleted key's memory comes back when merges drop it (a tombstone
//!   goes into a memory run first), so once the engine holds more than the
//!   bound, each pass evicts for its whole time and the stop lasts until
//!   the merges catch up, where Redis's `used_memory` drops at each
//!   delete. Under a bound the engine's floor alone passes (its memory
//!   runs and buffers, and the indexes and filters its files need) the
//!   keys the policy may take are evicted, as Redis does under a bound
//!   below its own overhead.
//! - No access clock is kept per key (it would make every read a write):
//!   the `-lru` and `-lfu` policies take a random key of their set, as the
//!   `-random` ones do. `volatile-ttl` takes the nearest expiry among
//!   `maxmemory-samples` random keys (among every key, in a database of
//!   up to 1,024 keys).
//! - Keys with an expiry are found by sampling (slsm has no table of them),
//!   so in a large database with few of them a `volatile-` policy may
//!   find none and evict nothing.
//! - A cluster evicts nothing (each node's memory is its own, and an
//!   eviction would have to go through the log): the policy is refused
//!   there.
//!
//! * **Owns**: nothing; the policy, its tuning and the count of evicted
//!   keys are `crate::maxmemory`'s.
//! * **Called by**: `pipeline` (before each command a client sends) and
//!   `CONFIG SET` of `maxmemory` and `maxmemory-policy`.
//! * **Thread safety**: each eviction is an engine transaction of its
//!   own (read the key, delete it and its elements), retried on a
//!   conflict; two clients' passes may run at once.

use std::collections::HashSet;
use std::time::Instant;

use crate::access::{atomically, Access, Direct};
use crate::collections::{delete_key, random_u64};
use crate::commands::keys::KeySample;
use crate::commands::Fail;
use crate::maxmemory::Policy;
use crate::notify::EVICTED;
use crate::shared::Shared;

/// `CONFIG SET maxmemory bytes`, then a pass if it is now over.
pub fn set_maxmemory(s: &Shared, bytes: u64) -> Result<(), String> {
    s.maxmemory.set(&s.store.db(), bytes)?;
    make_room(s);
    Ok(())
}

/// `CONFIG SET maxmemory-policy name` (a checked name): the one door for
/// the policy and for what the data commands see of it (`Tuning::lfu`),
/// then a pass if the engine is over.
pub fn set_policy(s: &Shared, name: &str) -> Result<(), String> {
    if s.cluster.is_some() && name != "noeviction" {
        return Err("a cluster evicts nothing: maxmemory-policy is noeviction there".into());
    }
    s.maxmemory.set_policy(name)?;
    let lfu = name.ends_with("-lfu");
    s.store
        .tuning()
        .lfu
        .store(lfu, std::sync::atomic::Ordering::Relaxed);
    make_room(s);
    Ok(())
}

/// Evicts keys while the engine is above `maxmemory` and the policy
/// allows (see the [module docs](self)).
pub fn make_room(s: &Shared) {
    let mm = &s.maxmemory;
    let policy = mm.policy();
    if policy == Policy::NoEviction || s.cluster.is_some() || !mm.is_on() {
        return;
    }
    let db = s.store.db();
    if !mm.over(&db) {
        return;
    }
    let started = Instant::now();
    let limit = mm.time_limit();
    let sp = s.store.spaces();
    let opts = s.write_options();
    let mut reads = Direct::new(&sp, &opts);
    let Ok(sample) = KeySample::new(&mut reads) else {
        return;
    };
    let mut evicted = HashSet::new();
    loop {
        let victim = choose(&mut reads, &sample, &evicted, policy, mm.samples());
        let Ok(Some(key)) = victim else {
            return;
        };
        if !evict(s, &key, policy).unwrap_or(false) {
            return;
        }
        mm.count_evicted();
        evicted.insert(key);
        if !mm.over(&db) || limit.is_some_and(|l| started.elapsed() >= l) {
            return;
        }
    }
}

/// The key `policy` evicts next, `None` if it may take none.
fn choose(
    acc: &mut dyn Access,
    sample: &KeySample,
    evicted: &HashSet<Vec<u8>>,
    policy: Policy,
    samples: u64,
) -> Result<Option<Vec<u8>>, Fail> {
    let keys: Vec<Vec<u8>> = match sample.whole() {
        Some(all) => all
            .iter()
            .filter(|k| !evicted.contains(*k))
            .cloned()
            .collect(),
        None => {
            let mut picks = Vec::new();
            for _ in 0..samples.max(1) {
                picks.extend(sample.pick(acc)?);
            }
            picks
        }
    };
    let keys = match policy {
        Policy::AllKeys => keys,
        _ => with_expiry(acc, keys, policy == Policy::VolatileTtl)?,
    };
    Ok(match keys.is_empty() {
        true => None,
        false if policy == Policy::VolatileTtl => keys.into_iter().next(),
        false => {
            let i = (random_u64() % keys.len() as u64) as usize;
            Some(keys.into_iter().nth(i).unwrap_or_default())
        }
    })
}

/// The keys of `keys` that expire; the nearest expiry first if `by_ttl`.
fn with_expiry(
    acc: &mut dyn Access,
    keys: Vec<Vec<u8>>,
    by_ttl: bool,
) -> Result<Vec<Vec<u8>>, Fail> {
    let mut expiring = Vec::new();
    for key in keys {
        if let Some(v) = acc.get(&key)? {
            if v.expires_at != 0 {
                expiring.push((v.expires_at, key));
            }
        }
    }
    if by_ttl {
        expiring.sort();
    }
    Ok(expiring.into_iter().map(|(_, k)| k).collect())
}

/// Deletes `key` as an eviction: false if it is gone, or (under a
/// `volatile-` policy) no longer expires.
fn evict(s: &Shared, key: &[u8], policy: Policy) -> slsm::Result<bool> {
    let volatile = matches!(policy, Policy::Volatile | Policy::VolatileTtl);
    let sp = s.store.spaces();
    let (deleted, notices) = atomically(&s.store.db(), &sp, &s.write_options(), |acc| {
        match acc.get(key)? {
            None => return Ok(false),
            Some(v) if volatile && v.expires_at == 0 => return Ok(false),
            Some(_) => {}
        }
        match delete_key(acc, key) {
            Ok(true) => {
                acc.notify(EVICTED, "evicted", key);
                Ok(true)
            }
            Ok(false) | Err(Fail::Reply(_)) => Ok(false),
            Err(Fail::Engine(e)) => Err(e),
        }
    })?;
    notices.publish(&s.pubsub, &s.expiries, &s.tracking);
    Ok(deleted)
}
