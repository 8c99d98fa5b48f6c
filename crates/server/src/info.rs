//! `INFO` and `DBSIZE`: what the server says of itself and of its keys.
//! Both count the keys with one scan of the keyspace (the engine keeps no
//! count of live keys: a write does not know whether it adds one).

use std::sync::atomic::Ordering;

use crate::commands::Outcome;
use crate::pubsub::Space;
use crate::resp::Reply;
use crate::shared::Shared;
use crate::version::REDIS_VERSION;

/// `DBSIZE`: live keys.
pub fn dbsize(s: &Shared) -> Result<i64, slsm::Error> {
    Ok(keyspace_counts(s)?.keys as i64)
}

/// What `INFO keyspace` says of database 0.
struct KeyspaceCounts {
    keys: u64,
    /// Keys with an expiry.
    expires: u64,
    /// Their mean time left, in milliseconds (Redis estimates it from a
    /// sample; a scan has them all).
    avg_ttl_ms: u64,
}

/// Live keys and those with an expiry, counted by one scan.
fn keyspace_counts(s: &Shared) -> Result<KeyspaceCounts, slsm::Error> {
    let now = crate::store::now_ms();
    let (mut keys, mut expires, mut ttl_sum) = (0u64, 0u64, 0u128);
    for item in s.store.keyspace().iter() {
        let (_, stored) = item?;
        match crate::store::expiry_of(&stored, now) {
            None => {}
            Some(0) => keys += 1,
            Some(at) => {
                keys += 1;
                expires += 1;
                ttl_sum += u128::from(at - now);
            }
        }
    }
    let avg_ttl_ms = match expires {
        0 => 0,
        n => (ttl_sum / u128::from(n)) as u64,
    };
    Ok(KeyspaceCounts {
        keys,
        expires,
        avg_ttl_ms,
    })
}

/// The sections `INFO` and `INFO default` leave out.
const NOT_DEFAULT: &[&str] = &["commandstats", "latencystats"];

/// `INFO cpu`: the process's CPU time (Redis's `main_thread` fields are the
/// thread answering, since slsm serves on several).
fn cpu_section() -> String {
    let usage = |who| {
        // SAFETY: `getrusage` fills the zeroed struct it is given.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: a valid `who` and a pointer to a live `rusage`.
        unsafe { libc::getrusage(who, &mut u) };
        let secs = |t: libc::timeval| format!("{}.{:06}", t.tv_sec, t.tv_usec);
        (secs(u.ru_stime), secs(u.ru_utime))
    };
    let (sys, user) = usage(libc::RUSAGE_SELF);
    let (sys_children, user_children) = usage(libc::RUSAGE_CHILDREN);
    let (sys_thread, user_thread) = usage(libc::RUSAGE_THREAD);
    format!(
        "# CPU\r\nused_cpu_sys:{sys}\r\nused_cpu_user:{user}\r\nused_cpu_sys_children:{sys_children}\r\nused_cpu_user_children:{user_children}\r\nused_cpu_sys_main_thread:{sys_thread}\r\nused_cpu_user_main_thread:{user_thread}\r\n"
    )
}

pub fn info(s: &Shared, a: &[Vec<u8>]) -> Outcome {
    let stats = s.store.db().stats();
    // `INFO [section ...]`, as Redis 7.0 picks sections: none, or
    // `default`, the default ones; `all` every one, `everything` too.
    let asked: Vec<String> = a[1..]
        .iter()
        .map(|v| String::from_utf8_lossy(v).to_ascii_lowercase())
        .collect();
    let all = asked.iter().any(|a| a == "all" || a == "everything");
    let default = asked.is_empty() || asked.iter().any(|a| a == "default");
    let want = |name: &str| {
        all || (default && !NOT_DEFAULT.contains(&name)) || asked.iter().any(|a| a == name)
    };
    // Sections as Redis writes them: one blank line between two, none at
    // the end.
    let mut sections: Vec<String> = Vec::new();
    if want("server") {
        sections.push(format!(
            "# Server\r\nredis_version:{REDIS_VERSION}\r\nredis_mode:{}\r\nos:{}\r\nprocess_id:{}\r\ntcp_port:{}\r\nuptime_in_seconds:{}\r\nexecutable:slsm\r\nslsm_version:{}\r\n",
            if s.cluster.is_some() { "cluster" } else { "standalone" },
            std::env::consts::OS,
            std::process::id(),
            s.opts.bind.port(),
            s.started.elapsed().as_secs(),
            env!("CARGO_PKG_VERSION"),
        ));
    }
    if want("clients") {
        sections.push(format!(
            "# Clients\r\nconnected_clients:{}\r\nmaxclients:{}\r\nblocked_clients:{}\r\ntracking_clients:{}\r\nslsm_pending_input_bytes:{}\r\nslsm_max_query_buffers:{}\r\n",
            s.clients.load(Ordering::Relaxed),
            s.opts.maxclients,
            s.waiters.count(),
            s.tracking.counts().clients,
            s.pending_input.load(Ordering::Relaxed),
            s.opts.max_query_buffers
        ));
    }
    if want("memory") {
        // One lock at a time: a second guard in the same expression would
        // wait for the first for ever.
        let (functions, libraries) = {
            let registry = s.functions.registry();
            (registry.function_count(), registry.libraries.len())
        };
        sections.push(format!(
            "# Memory\r\nused_memory:{}\r\nmaxmemory:{}\r\nmaxmemory_policy:{}\r\nmem_not_counted_for_evict:0\r\nlazyfree_pending_objects:0\r\nslsm_block_cache_bytes:{}\r\nslsm_block_cache_capacity:{}\r\nslsm_block_cache_hits:{}\r\nslsm_block_cache_misses:{}\r\nslsm_bytes_read_from_files:{}\r\nnumber_of_cached_scripts:{}\r\nnumber_of_functions:{}\r\nnumber_of_libraries:{}\r\n",
            stats.memory.total(),
            s.maxmemory.shown(),
            s.maxmemory.policy_name(),
            stats.memory.cache.usage,
            stats.memory.cache.capacity,
            stats.memory.cache.hits,
            stats.memory.cache.misses,
            stats.memory.cache.bytes_read,
            s.scripts.cached(),
            functions,
            libraries,
        ));
    }
    if want("persistence") {
        sections.push(format!(
            "# Persistence\r\nloading:0\r\naof_enabled:1\r\nappendfsync:{}\r\nrdb_changes_since_last_save:0\r\n",
            s.opts.appendfsync.name()
        ));
    }
    if want("replication") {
        let lines = match &s.cluster {
            Some(c) => crate::cluster::commands::replication_info(c),
            // Redis's fields for a master without replicas (the log's
            // position is not a replication offset: none is kept).
            None => "role:master\r\nconnected_slaves:0\r\nmaster_failover_state:no-failover\r\nmaster_repl_offset:0\r\nsecond_repl_offset:-1\r\nrepl_backlog_active:0\r\nrepl_backlog_size:0\r\nrepl_backlog_first_byte_offset:0\r\nrepl_backlog_histlen:0\r\n".into(),
        };
        sections.push(format!("# Replication\r\n{lines}"));
    }
    if want("cpu") {
        sections.push(cpu_section());
    }
    if want("commandstats") {
        sections.push(format!("# Commandstats\r\n{}", s.cmdstats.command_lines()));
    }
    if want("errorstats") {
        sections.push(format!("# Errorstats\r\n{}", s.cmdstats.error_lines()));
    }
    if want("cluster") {
        let enabled = s.cluster.is_some() as u8;
        sections.push(format!("# Cluster\r\ncluster_enabled:{enabled}\r\n"));
    }
    if want("stats") {
        let tracked = s.tracking.counts();
        sections.push(format!(
            "# Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\nrejected_connections:{}\r\npubsub_channels:{}\r\npubsub_patterns:{}\r\npubsubshard_channels:{}\r\ntracking_total_keys:{}\r\ntracking_total_items:{}\r\ntracking_total_prefixes:{}\r\ntotal_error_replies:{}\r\nevicted_keys:{}\r\nslsm_swept_collections:{}\r\n",
            s.connections.load(Ordering::Relaxed),
            s.commands.load(Ordering::Relaxed),
            s.rejected.load(Ordering::Relaxed),
            s.pubsub.names(Space::Channels),
            s.pubsub.names(Space::Patterns),
            s.pubsub.names(Space::Shards),
            tracked.keys,
            tracked.items,
            tracked.prefixes,
            s.cmdstats.total_errors(),
            s.maxmemory.evicted(),
            s.swept.load(Ordering::Relaxed)
        ));
    }
    if want("keyspace") {
        let k = keyspace_counts(s)?;
        sections.push(match k.keys {
            0 => "# Keyspace\r\n".to_string(),
            n => format!(
                "# Keyspace\r\ndb0:keys={n},expires={},avg_ttl={}\r\n",
                k.expires, k.avg_ttl_ms
            ),
        });
    }
    Ok(Reply::Verbatim(sections.join("\r\n").into_bytes()))
}

const MEMORY_HELP: &[&str] = &[
    "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DOCTOR",
    "    Return memory problems reports.",
    "MALLOC-STATS",
    "    Return internal statistics report from the memory allocator.",
    "PURGE",
    "    Attempt to purge dirty pages for reclamation by the allocator.",
    "STATS",
    "    Return information about the memory usage of the server.",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
    "HELP",
    "    Prints this help.",
];

/// `MEMORY` but `USAGE` (a data command: `collections/object.rs`).
/// `STATS` gives the fields it can fill from the engine's accounting
/// (what `INFO memory` reports) under Redis's names, and the engine's own;
/// the allocator's and replication's fields, which have no counterpart,
/// are left out.
pub fn memory(s: &Shared, a: &[Vec<u8>]) -> Outcome {
    crate::registry::check_subcommand("memory", a)?;
    let stats = s.store.db().stats();
    match a[1].to_ascii_lowercase().as_slice() {
        b"help" => Ok(Reply::Array(
            MEMORY_HELP
                .iter()
                .map(|l| Reply::Simple(l.to_string()))
                .collect(),
        )),
        b"purge" => Ok(Reply::ok()),
        b"malloc-stats" => Ok(Reply::bulk("Stats not supported for the current allocator")),
        b"doctor" => Ok(Reply::Verbatim(
            b"Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.\n".to_vec(),
        )),
        _ => {
            let total = stats.memory.total() as i64;
            let keys = dbsize(s).map_err(crate::commands::Fail::Engine)?;
            let field = |name: &str, v: i64| (Reply::Simple(name.into()), Reply::Int(v));
            Ok(Reply::Map(vec![
                field("total.allocated", total),
                field("keys.count", keys),
                field("keys.bytes-per-key", total.checked_div(keys).unwrap_or(0)),
                field("slsm.memory-budget", stats.memory.budget as i64),
                field("slsm.block-cache.bytes", stats.memory.cache.usage as i64),
                field("slsm.block-cache.capacity", stats.memory.cache.capacity as i64),
            ]))
        }
    }
}
