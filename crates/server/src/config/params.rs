//! The parameters `CONFIG GET` and `CONFIG SET` know: one row each, with
//! its alias, its type and range as Redis 7.0 declares it (`config.c`),
//! and what a `CONFIG SET` of it does in slsm:
//!
//! - [`Set::Live`]: takes effect at once (the slow log's bounds, the
//!   script time after which other clients are answered `BUSY`);
//! - [`Set::Stored`]: accepted, checked and reported back, with no effect,
//!   because what it tunes does not exist in slsm: the in-memory encodings
//!   of Redis's collections (slsm keeps every collection in its own
//!   engine format), Redis's hash-table rehashing and its timer frequency,
//!   and the `save` schedule (every acknowledged write is already in the
//!   log; `SAVE` flushes the memory runs). Clients and Redis's own test
//!   suite set these routinely, and a refusal would stop them for nothing;
//! - [`Set::Startup`]: fixed by `slsm serve`'s flags; `CONFIG SET`
//!   accepts the current value only;
//! - [`Set::Immutable`]: Redis's immutable parameters.
//!
//! Owns nothing: the values of stored parameters live in
//! [`super::Values`]; the live ones are read from and written to the
//! server state they govern.

use std::sync::atomic::Ordering;

use crate::shared::Shared;

/// How a value is written and checked.
#[derive(Clone, Copy)]
pub enum Kind {
    /// An integer in `[min, max]`.
    Int(i64, i64),
    /// A size in bytes, with Redis's unit suffixes (`1kb`, `10m`, `1gb`).
    Memory(i64, i64),
    Bool,
    /// One of these words.
    Enum(&'static [&'static str]),
    /// Any text.
    Text,
}

#[derive(Clone, Copy)]
pub enum Set {
    /// Applies a checked value; `Err` (Redis's reason) if it cannot be
    /// applied now, and `CONFIG SET` rolls back what it applied before.
    Live(fn(&Shared, &str) -> Result<(), String>),
    Stored,
    Startup,
    Immutable,
}

/// Where the current value comes from.
#[derive(Clone, Copy)]
pub enum Get {
    /// The stored value, starting at this default.
    Default(&'static str),
    /// Read from the server's state.
    Read(fn(&Shared) -> String),
}

pub struct Param {
    pub name: &'static str,
    pub alias: Option<&'static str>,
    pub kind: Kind,
    pub get: Get,
    pub set: Set,
}

const fn param(name: &'static str, kind: Kind, get: Get, set: Set) -> Param {
    Param {
        name,
        alias: None,
        kind,
        get,
        set,
    }
}

/// A stored parameter with an alias (Redis 7 renamed `ziplist` to
/// `listpack`; both names work, and `CONFIG GET *` lists both).
const fn aliased(
    name: &'static str,
    alias: &'static str,
    kind: Kind,
    default: &'static str,
) -> Param {
    Param {
        name,
        alias: Some(alias),
        kind,
        get: Get::Default(default),
        set: Set::Stored,
    }
}

const fn stored(name: &'static str, kind: Kind, default: &'static str) -> Param {
    param(name, kind, Get::Default(default), Set::Stored)
}

const fn startup(name: &'static str, kind: Kind, read: fn(&Shared) -> String) -> Param {
    param(name, kind, Get::Read(read), Set::Startup)
}

const LONG: i64 = i64::MAX;
const INT: i64 = i32::MAX as i64;
const YES_NO: Kind = Kind::Bool;

#[rustfmt::skip]
pub const PARAMS: &[Param] = &[
    // What slsm serve's flags fix.
    startup("appendonly", YES_NO, |_| "yes".into()),
    startup(
        "appendfsync",
        Kind::Enum(&["always", "everysec", "no"]),
        |s| s.opts.appendfsync.name().into(),
    ),
    startup("maxclients", Kind::Int(1, INT), |s| {
        s.opts.maxclients.to_string()
    }),
    // The engine's memory budget, and at run time Redis's `noeviction`
    // stop too (`crate::maxmemory`).
    param(
        "maxmemory",
        Kind::Memory(0, LONG),
        Get::Read(|s| s.maxmemory.shown().to_string()),
        Set::Live(|s, v| crate::eviction::set_maxmemory(s, v.parse().unwrap_or(0))),
    ),
    // Redis's cache mode (`crate::eviction`).
    param(
        "maxmemory-policy",
        Kind::Enum(crate::maxmemory::POLICIES),
        Get::Read(|s| s.maxmemory.policy_name().into()),
        Set::Live(crate::eviction::set_policy),
    ),
    param(
        "maxmemory-samples",
        Kind::Int(1, 64),
        Get::Read(|s| s.maxmemory.samples().to_string()),
        Set::Live(|s, v| {
            s.maxmemory.set_samples(v.parse().unwrap_or(5));
            Ok(())
        }),
    ),
    param(
        "maxmemory-eviction-tenacity",
        Kind::Int(0, 100),
        Get::Read(|s| s.maxmemory.tenacity().to_string()),
        Set::Live(|s, v| {
            s.maxmemory.set_tenacity(v.parse().unwrap_or(10));
            Ok(())
        }),
    ),
    startup(
        "proto-max-bulk-len",
        Kind::Memory(1024 * 1024, LONG),
        |_| crate::resp::MAX_BULK.to_string(),
    ),
    startup(
        "client-query-buffer-limit",
        Kind::Memory(1024 * 1024, LONG),
        |_| crate::input::QUERY_BUFFER_LIMIT.to_string(),
    ),
    startup("timeout", Kind::Int(0, INT), |_| "0".into()),
    startup("bind", Kind::Text, |s| s.opts.bind.ip().to_string()),
    startup("port", Kind::Int(0, 65535), |s| {
        s.opts.bind.port().to_string()
    }),
    // The default ACL user's password (`acl`): "" is none.
    param(
        "requirepass",
        Kind::Text,
        Get::Read(|s| s.acl.requirepass()),
        Set::Live(|s, v| {
            s.acl.set_default_password(Some(v));
            Ok(())
        }),
    ),
    param(
        "acllog-max-len",
        Kind::Int(0, LONG),
        Get::Read(|s| s.acl.log_max().to_string()),
        Set::Live(|s, v| {
            s.acl.set_log_max(v.parse().unwrap_or(128));
            Ok(())
        }),
    ),
    param(
        "acl-pubsub-default",
        Kind::Enum(&["allchannels", "resetchannels"]),
        Get::Read(|s| match s.acl.pubsub_default() {
            true => "allchannels".into(),
            false => "resetchannels".into(),
        }),
        Set::Live(|s, v| {
            let all = v.eq_ignore_ascii_case("allchannels");
            s.acl.pubsub_default_all.store(all, Ordering::Relaxed);
            Ok(())
        }),
    ),
    startup("aclfile", Kind::Text, |s| {
        s.acl
            .file
            .as_ref()
            .map_or_else(String::new, |p| p.display().to_string())
    }),
    // Latency events and per-command histograms are not kept (`latency.rs`).
    startup("latency-monitor-threshold", Kind::Int(0, LONG), |_| {
        "0".into()
    }),
    startup("latency-tracking", YES_NO, |_| "no".into()),
    param(
        "databases",
        Kind::Int(1, INT),
        Get::Read(|_| "1".into()),
        Set::Immutable,
    ),
    param(
        "daemonize",
        YES_NO,
        Get::Read(|_| "no".into()),
        Set::Immutable,
    ),
    // Live.
    param(
        "slowlog-log-slower-than",
        Kind::Int(-1, LONG),
        Get::Read(|s| s.slowlog.slower_than_us.load(Ordering::Relaxed).to_string()),
        Set::Live(|s, v| {
            let v = v.parse().unwrap_or(0);
            s.slowlog.slower_than_us.store(v, Ordering::Relaxed);
            Ok(())
        }),
    ),
    param(
        "slowlog-max-len",
        Kind::Int(0, LONG),
        Get::Read(|s| s.slowlog.max_len.load(Ordering::Relaxed).to_string()),
        Set::Live(|s, v| {
            s.slowlog
                .max_len
                .store(v.parse().unwrap_or(0), Ordering::Relaxed);
            s.slowlog.trim();
            Ok(())
        }),
    ),
    Param {
        name: "busy-reply-threshold",
        alias: Some("lua-time-limit"),
        kind: Kind::Int(0, LONG),
        get: Get::Read(|s| s.scripts.busy_after_ms().to_string()),
        set: Set::Live(|s, v| {
            s.scripts.set_busy_after_ms(v.parse().unwrap_or(0));
            Ok(())
        }),
    },
    param(
        "tracking-table-max-keys",
        Kind::Int(0, LONG),
        Get::Read(|s| s.tracking.max_keys().to_string()),
        Set::Live(|s, v| {
            s.tracking.set_max_keys(v.parse().unwrap_or(0));
            Ok(())
        }),
    ),
    param(
        "stream-node-max-entries",
        Kind::Int(0, LONG),
        Get::Read(|s| {
            let t = s.store.spaces().tuning;
            t.stream_node_entries.load(Ordering::Relaxed).to_string()
        }),
        Set::Live(set_stream_node_entries),
    ),
    Param {
        name: "min-replicas-to-write",
        alias: Some("min-slaves-to-write"),
        kind: Kind::Int(0, INT),
        get: Get::Read(|s| s.replicas.to_write.load(Ordering::Relaxed).to_string()),
        set: Set::Live(set_min_replicas),
    },
    Param {
        name: "min-replicas-max-lag",
        alias: Some("min-slaves-max-lag"),
        kind: Kind::Int(0, INT),
        get: Get::Read(|s| s.replicas.max_lag.load(Ordering::Relaxed).to_string()),
        set: Set::Live(|s, v| {
            let lag = v.parse().unwrap_or(0);
            s.replicas.max_lag.store(lag, Ordering::Relaxed);
            Ok(())
        }),
    },
    param(
        "notify-keyspace-events",
        Kind::Text,
        Get::Read(|s| crate::notify::format(s.store.tuning().notify_flags())),
        Set::Live(set_notify_keyspace_events),
    ),
    // Accepted and reported: Redis's encodings, rehashing, timers and
    // snapshot schedule, which slsm does not have (see the module's doc).
    stored("save", Kind::Text, ""),
    aliased("hash-max-listpack-entries", "hash-max-ziplist-entries", Kind::Int(0, LONG), "512"),
    aliased("hash-max-listpack-value", "hash-max-ziplist-value", Kind::Memory(0, LONG), "64"),
    aliased("list-max-listpack-size", "list-max-ziplist-size", Kind::Int(i32::MIN as i64, INT), "-2"),
    stored("list-compress-depth", Kind::Int(0, INT), "0"),
    stored("set-max-intset-entries", Kind::Int(0, LONG), "512"),
    aliased("zset-max-listpack-entries", "zset-max-ziplist-entries", Kind::Int(0, LONG), "128"),
    aliased("zset-max-listpack-value", "zset-max-ziplist-value", Kind::Memory(0, LONG), "64"),
    stored("stream-node-max-bytes", Kind::Memory(0, LONG), "4096"),
    stored("hll-sparse-max-bytes", Kind::Memory(0, LONG), "3000"),
    stored("activerehashing", YES_NO, "yes"),
    stored("hz", Kind::Int(0, INT), "10"),
    stored("dynamic-hz", YES_NO, "yes"),
];

/// A stream's node size decides what `XADD`'s and `XTRIM`'s `~` trims, so
/// a cluster's nodes, which each apply every write, must share it: there
/// it stays at Redis's default.
fn set_stream_node_entries(s: &Shared, v: &str) -> Result<(), String> {
    let n: u64 = v.parse().unwrap_or(0);
    let t = s.store.spaces().tuning;
    let old = t.stream_node_entries.load(Ordering::Relaxed);
    if s.cluster.is_some() && n != old {
        return Err("a cluster's nodes trim streams alike: it stays at its value there".into());
    }
    t.stream_node_entries.store(n, Ordering::Relaxed);
    Ok(())
}

/// A single node has no replicas: above 0, writes are refused
/// (`NOREPLICAS`), as a Redis master without enough good replicas refuses
/// them. A cluster's writes wait for a majority of its nodes already.
fn set_min_replicas(s: &Shared, v: &str) -> Result<(), String> {
    let n: u64 = v.parse().unwrap_or(0);
    if s.cluster.is_some() && n != 0 {
        return Err("a cluster acknowledges a write once a majority of its nodes hold it".into());
    }
    s.replicas.to_write.store(n, Ordering::Relaxed);
    Ok(())
}

/// The classes of keyspace notifications to publish (`crate::notify`).
fn set_notify_keyspace_events(s: &Shared, v: &str) -> Result<(), String> {
    let flags = crate::notify::parse(v.as_bytes())
        .ok_or("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")?;
    s.store.tuning().notify.store(flags, Ordering::Relaxed);
    Ok(())
}

impl Param {
    /// True if `name` (lowercase) is this parameter's name or alias.
    pub fn is(&self, name: &str) -> bool {
        self.name == name || self.alias == Some(name)
    }

    /// `value` as this parameter stores it (a memory value in bytes, a
    /// word in lowercase), or Redis's reason for refusing it.
    pub fn check(&self, value: &[u8]) -> Result<String, String> {
        let text = String::from_utf8_lossy(value);
        match self.kind {
            Kind::Text => Ok(text.into_owned()),
            Kind::Bool => match text.to_ascii_lowercase().as_str() {
                "yes" => Ok("yes".into()),
                "no" => Ok("no".into()),
                _ => Err("argument must be 'yes' or 'no'".into()),
            },
            Kind::Enum(words) => {
                let lower = text.to_ascii_lowercase();
                match words.contains(&lower.as_str()) {
                    true => Ok(lower),
                    false => Err(format!(
                        "argument(s) must be one of the following: {}",
                        words.join(", ")
                    )),
                }
            }
            Kind::Int(min, max) => {
                let v = crate::commands::int_arg(value)
                    .map_err(|_| "argument couldn't be parsed into an integer".to_string())?;
                in_range(v, min, max)
            }
            Kind::Memory(min, max) => {
                let v = memory_value(&text).ok_or("argument must be a memory value")?;
                in_range(v, min, max)
            }
        }
    }
}

fn in_range(v: i64, min: i64, max: i64) -> Result<String, String> {
    match (min..=max).contains(&v) {
        true => Ok(v.to_string()),
        false => Err(format!(
            "argument must be between {min} and {max} inclusive"
        )),
    }
}

/// Redis's `memtoull`: a number of bytes with an optional unit (`k`,
/// `m`, `g` are powers of 1000; `kb`, `mb`, `gb` of 1024; any case).
fn memory_value(text: &str) -> Option<i64> {
    let lower = text.to_ascii_lowercase();
    let digits = lower.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let unit: i64 = match &lower[digits.len()..] {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1024,
        "m" => 1000 * 1000,
        "mb" => 1024 * 1024,
        "g" => 1000 * 1000 * 1000,
        "gb" => 1024 * 1024 * 1024,
        _ => return None,
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<i64>().ok()?.checked_mul(unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_values_read_as_redis_reads_them() {
        assert_eq!(memory_value("4096"), Some(4096));
        assert_eq!(memory_value("1kb"), Some(1024));
        assert_eq!(memory_value("1K"), Some(1000));
        assert_eq!(memory_value("10mb"), Some(10 << 20));
        assert_eq!(memory_value("2GB"), Some(2 << 30));
        for bad in ["", "kb", "1x", "-1", "1.5mb", "99999999999999999999"] {
            assert_eq!(memory_value(bad), None, "{bad}");
        }
    }

    #[test]
    fn every_name_and_alias_is_one_parameters() {
        let mut names: Vec<&str> = PARAMS
            .iter()
            .flat_map(|p| std::iter::once(p.name).chain(p.alias))
            .collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n, "a name is in two rows");
    }
}
