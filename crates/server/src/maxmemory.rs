//! `maxmemory` at run time, and Redis's `noeviction` stop under it.
//!
//! At start `maxmemory` is the engine's memory budget (`slsm serve
//! --maxmemory`): the engine holds itself within it and keeps the data
//! past it on disk, so nothing is out of memory and no write is refused.
//! `CONFIG SET maxmemory N` at run time, as a Redis user expects:
//! - N becomes the engine's budget (`Db::set_memory_budget`, at least
//!   1 MiB): its block cache shrinks or grows at once;
//! - as Redis with its default policy, `noeviction`, the commands that may
//!   grow the data (flagged `denyoom`; an `EXEC` holding one; a script
//!   whose shebang does not say `allow-oom` or `no-writes`, or the first
//!   write of one without a shebang) are refused with Redis's `OOM` error
//!   while the engine's accounted memory is above N. What the engine
//!   cannot give back (its memory runs, buffers, and the indexes and
//!   filters of its files, sized at open) is its floor: an N below it
//!   stops writes until N is raised, which is what Redis's own suite asks
//!   with `maxmemory 1`.
//! - `CONFIG SET maxmemory 0` (Redis: no limit) puts back the budget the
//!   server started with, and lifts the stop.
//!
//! With `noeviction` (the default) slsm evicts nothing: data past memory
//! lives on disk, not in the way of new writes. The other policies are
//! Redis's cache mode, run by `crate::eviction`.
//!
//! * **Owns**: the value `CONFIG GET maxmemory` reports, whether the stop
//!   is on, the eviction policy and its tuning, and the count of keys
//!   evicted.
//! * **Thread safety**: atomics; a check reads the engine's accounting
//!   (one lock), and only while the stop is on.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};

/// `maxmemory-policy`'s values, Redis's order; the last is the default.
pub const POLICIES: &[&str] = &[
    "volatile-lru",
    "volatile-lfu",
    "volatile-random",
    "volatile-ttl",
    "allkeys-lru",
    "allkeys-lfu",
    "allkeys-random",
    "noeviction",
];

/// Which keys a policy may evict and which of a sample goes first. slsm
/// keeps no access clock per key (it would make every read a write), so
/// the LRU and LFU policies evict at random among their keys, as the
/// `-random` ones do.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Policy {
    NoEviction,
    /// Any key, at random.
    AllKeys,
    /// A key with an expiry, at random.
    Volatile,
    /// The key with the nearest expiry among those sampled.
    VolatileTtl,
}

impl Policy {
    fn of(index: u8) -> Policy {
        match POLICIES.get(index as usize).copied() {
            Some("volatile-ttl") => Policy::VolatileTtl,
            Some(p) if p.starts_with("volatile-") => Policy::Volatile,
            Some(p) if p.starts_with("allkeys-") => Policy::AllKeys,
            _ => Policy::NoEviction,
        }
    }
}

/// Redis's refusal.
pub const OOM: &str = "OOM command not allowed when used memory > 'maxmemory'.";

pub struct MaxMemory {
    /// What `CONFIG GET` shows: the start-up budget until a `CONFIG SET`.
    shown: AtomicU64,
    /// A `CONFIG SET` made it a stop (above 0).
    enforced: AtomicBool,
    startup: u64,
    /// An index into [`POLICIES`].
    policy: AtomicU8,
    /// `maxmemory-samples`: keys looked at for one eviction.
    samples: AtomicU64,
    /// `maxmemory-eviction-tenacity` (0-100).
    tenacity: AtomicU64,
    /// `INFO stats`'s `evicted_keys`.
    evicted: AtomicU64,
}

impl MaxMemory {
    pub fn new(startup_budget: usize) -> MaxMemory {
        MaxMemory {
            shown: AtomicU64::new(startup_budget as u64),
            enforced: AtomicBool::new(false),
            startup: startup_budget as u64,
            policy: AtomicU8::new((POLICIES.len() - 1) as u8),
            samples: AtomicU64::new(5),
            tenacity: AtomicU64::new(10),
            evicted: AtomicU64::new(0),
        }
    }

    pub fn policy(&self) -> Policy {
        Policy::of(self.policy.load(Ordering::Relaxed))
    }

    pub fn policy_name(&self) -> &'static str {
        POLICIES[self.policy.load(Ordering::Relaxed) as usize]
    }

    /// `CONFIG SET maxmemory-policy name` (a checked name).
    pub fn set_policy(&self, name: &str) -> Result<(), String> {
        let index = POLICIES.iter().position(|p| *p == name);
        let index = index.ok_or_else(|| format!("unknown policy {name}"))?;
        self.policy.store(index as u8, Ordering::Relaxed);
        Ok(())
    }

    pub fn samples(&self) -> u64 {
        self.samples.load(Ordering::Relaxed)
    }

    pub fn set_samples(&self, n: u64) {
        self.samples.store(n, Ordering::Relaxed);
    }

    pub fn tenacity(&self) -> u64 {
        self.tenacity.load(Ordering::Relaxed)
    }

    pub fn set_tenacity(&self, n: u64) {
        self.tenacity.store(n, Ordering::Relaxed);
    }

    /// How long one eviction pass may run, from the tenacity as Redis's
    /// `evictionTimeLimitUs` has it: 50 µs a step up to 10 (500 µs, the
    /// default), then 15% more a step; `None` (no limit) at 100.
    pub fn time_limit(&self) -> Option<std::time::Duration> {
        let t = self.tenacity();
        let micros = match t {
            0..=10 => 50 * t,
            11..=99 => (500.0 * 1.15f64.powi(t as i32 - 10)) as u64,
            _ => return None,
        };
        Some(std::time::Duration::from_micros(micros))
    }

    pub fn evicted(&self) -> u64 {
        self.evicted.load(Ordering::Relaxed)
    }

    pub fn count_evicted(&self) {
        self.evicted.fetch_add(1, Ordering::Relaxed);
    }

    pub fn shown(&self) -> u64 {
        self.shown.load(Ordering::Relaxed)
    }

    /// `CONFIG SET maxmemory bytes` on `db`.
    pub fn set(&self, db: &slsm::Db, bytes: u64) -> Result<(), String> {
        let budget = match bytes {
            0 => self.startup,
            n => n.max(slsm::MIN_MEMORY_BUDGET as u64),
        };
        let budget = usize::try_from(budget).unwrap_or(usize::MAX);
        db.set_memory_budget(budget).map_err(|e| e.to_string())?;
        self.shown.store(bytes, Ordering::Relaxed);
        self.enforced.store(bytes > 0, Ordering::Relaxed);
        Ok(())
    }

    /// True once a `CONFIG SET` made `maxmemory` a stop (writes then go
    /// through the check one by one).
    pub fn is_on(&self) -> bool {
        self.enforced.load(Ordering::Relaxed)
    }

    /// True while the stop is on and `db` holds more than it allows.
    pub fn over(&self, db: &slsm::Db) -> bool {
        self.enforced.load(Ordering::Relaxed) && db.memory_usage().total() > self.shown()
    }
}
