//! `maxmemory` at run time: the engine's budget follows, and below what
//! the engine holds the commands that may grow the data are refused with
//! Redis's `OOM` error (its `noeviction` policy), as are `EXEC`s holding
//! one and scripts that may write; reads, deletes, `no-writes` and
//! `allow-oom` scripts go on; `0` lifts the stop and puts back the
//! start-up budget.

use redis::cmd;

use crate::common;
use common::{error_of, Server};

const OOM: &str = "command not allowed when used memory > 'maxmemory'.";

fn config(c: &mut redis::Connection, name: &str) -> String {
    let pairs: Vec<String> = cmd("CONFIG").arg("GET").arg(name).query(c).unwrap();
    pairs[1].clone()
}

fn info_field(c: &mut redis::Connection, section: &str, field: &str) -> String {
    let info: String = cmd("INFO").arg(section).query(c).unwrap();
    let line = info
        .lines()
        .find(|l| l.starts_with(&format!("{field}:")))
        .unwrap_or_else(|| panic!("no {field} in {info}"));
    line[field.len() + 1..].to_string()
}

fn set_maxmemory(c: &mut redis::Connection, value: &str) {
    let _: () = cmd("CONFIG")
        .arg(&["SET", "maxmemory", value])
        .query(c)
        .unwrap();
}

#[test]
fn a_maxmemory_below_what_the_engine_holds_stops_what_may_grow_the_data() {
    let s = Server::start_with(|o| o.engine.memory_budget = 32 << 20);
    let mut c = s.conn();
    assert_eq!(config(&mut c, "maxmemory"), (32u64 << 20).to_string());
    let _: () = cmd("SET").arg(&["k", "v"]).query(&mut c).unwrap();

    set_maxmemory(&mut c, "1");
    assert_eq!(config(&mut c, "maxmemory"), "1");
    assert_eq!(info_field(&mut c, "memory", "maxmemory"), "1");
    assert!(error_of(&mut c, &["SET", "k2", "v"]).contains(OOM));
    assert!(error_of(&mut c, &["LPUSH", "l", "a"]).contains(OOM));
    // Reads and deletes go on.
    let v: String = cmd("GET").arg("k").query(&mut c).unwrap();
    assert_eq!(v, "v");
    // A transaction holding a write is refused when it is queued, and so
    // its EXEC.
    let _: () = cmd("MULTI").query(&mut c).unwrap();
    assert!(error_of(&mut c, &["SET", "k3", "v"]).contains(OOM));
    let e = error_of(&mut c, &["EXEC"]);
    assert!(e.contains("Transaction discarded"), "{e}");
    // Scripts: one that may write is refused before it runs; one without
    // a shebang at its first write; `no-writes` and `allow-oom` run.
    assert!(error_of(&mut c, &["EVAL", "#!lua\nreturn 1", "0"]).contains(OOM));
    let e = error_of(&mut c, &["EVAL", "return redis.call('set','x','y')", "0"]);
    assert!(e.contains(OOM), "{e}");
    let one: i64 = cmd("EVAL")
        .arg(&["#!lua flags=no-writes\nreturn 1", "0"])
        .query(&mut c)
        .unwrap();
    assert_eq!(one, 1);
    let ok: String = cmd("EVAL")
        .arg(&[
            "#!lua flags=allow-oom\nreturn redis.call('set','x','y')",
            "0",
        ])
        .query(&mut c)
        .unwrap();
    assert_eq!(ok, "OK");
    let n: i64 = cmd("DEL").arg(&["k", "x"]).query(&mut c).unwrap();
    assert_eq!(n, 2);

    // Lifted: writes go on, the start-up budget is back.
    set_maxmemory(&mut c, "0");
    assert_eq!(config(&mut c, "maxmemory"), "0");
    let _: () = cmd("SET").arg(&["k2", "v"]).query(&mut c).unwrap();
}

#[test]
fn a_maxmemory_the_engine_fits_in_becomes_its_budget() {
    let s = Server::start_with(|o| o.engine.memory_budget = 32 << 20);
    let mut c = s.conn();
    set_maxmemory(&mut c, "16mb");
    assert_eq!(config(&mut c, "maxmemory"), (16u64 << 20).to_string());
    let mut pipe = redis::pipe();
    for i in 0..20_000 {
        pipe.cmd("SET")
            .arg(format!("key{i}"))
            .arg("x".repeat(100))
            .ignore();
    }
    let _: () = pipe.query(&mut c).unwrap();
    let cache: u64 = info_field(&mut c, "memory", "slsm_block_cache_capacity")
        .parse()
        .unwrap();
    assert!(
        cache < 16 << 20,
        "the cache follows the smaller budget: {cache}"
    );
    let v: String = cmd("GET").arg("key19999").query(&mut c).unwrap();
    assert_eq!(v.len(), 100);
    assert!(error_of(&mut c, &["CONFIG", "SET", "maxmemory", "lots"]).contains("memory value"));
}

fn query_strings(c: &mut redis::Connection, args: &[&str]) -> Vec<String> {
    let mut command = cmd(args[0]);
    args[1..].iter().for_each(|a| {
        command.arg(*a);
    });
    command.query(c).unwrap()
}

fn stat(c: &mut redis::Connection, field: &str) -> u64 {
    info_field(c, "stats", field).parse().unwrap()
}

#[test]
fn an_allkeys_policy_evicts_every_key_under_a_bound_the_engine_cannot_meet() {
    let s = Server::start_with(|o| o.engine.memory_budget = 32 << 20);
    let mut c = s.conn();
    assert_eq!(config(&mut c, "maxmemory-policy"), "noeviction");
    for i in 0..50 {
        let _: () = cmd("SET")
            .arg(format!("s{i}"))
            .arg(i)
            .query(&mut c)
            .unwrap();
    }
    let _: () = cmd("HSET")
        .arg(&["h", "f1", "a", "f2", "b"])
        .query(&mut c)
        .unwrap();
    let _: () = cmd("CONFIG")
        .arg(&["SET", "notify-keyspace-events", "Ee"])
        .query(&mut c)
        .unwrap();
    let mut sub = s.conn();
    let mut ps = sub.as_pubsub();
    ps.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    ps.psubscribe("__keyevent@0__:evicted").unwrap();

    let _: () = cmd("CONFIG")
        .arg(&["SET", "maxmemory-policy", "allkeys-lru"])
        .query(&mut c)
        .unwrap();
    assert_eq!(stat(&mut c, "evicted_keys"), 0, "nothing while under");
    // Below the engine's floor: evicted at the CONFIG SET, each told.
    set_maxmemory(&mut c, "1");
    let mut told = std::collections::BTreeSet::new();
    for _ in 0..51 {
        let m = ps.get_message().expect("an evicted notice per key");
        told.insert(m.get_payload::<String>().unwrap());
    }
    assert_eq!(told.len(), 51);
    assert!(told.contains("h"));
    let keys = query_strings(&mut c, &["KEYS", "*"]);
    assert!(keys.is_empty(), "{keys:?}");
    assert_eq!(stat(&mut c, "evicted_keys"), 51);
    // Still over with nothing left to evict: the stop holds.
    assert!(error_of(&mut c, &["SET", "k", "v"]).contains(OOM));

    set_maxmemory(&mut c, "0");
    let _: () = cmd("HSET").arg(&["h", "f3", "c"]).query(&mut c).unwrap();
    // The evicted hash's elements went with it.
    let fields = query_strings(&mut c, &["HKEYS", "h"]);
    assert_eq!(fields, vec!["f3"]);
}

#[test]
fn a_volatile_policy_evicts_only_keys_with_an_expiry_nearest_first() {
    let s = Server::start_with(|o| o.engine.memory_budget = 32 << 20);
    let mut c = s.conn();
    for i in 0..20 {
        let _: () = cmd("SET")
            .arg(format!("keep{i}"))
            .arg(i)
            .query(&mut c)
            .unwrap();
    }
    for (key, ttl) in [("soon", 100), ("later", 5000), ("latest", 9000)] {
        let _: () = cmd("SET")
            .arg(&[key, "v", "EX"])
            .arg(ttl)
            .query(&mut c)
            .unwrap();
    }
    let _: () = cmd("CONFIG")
        .arg(&["SET", "maxmemory-policy", "volatile-ttl"])
        .query(&mut c)
        .unwrap();
    // One eviction per pass (the least time a pass may run): one at the
    // CONFIG SET, one before each command after it.
    let _: () = cmd("CONFIG")
        .arg(&["SET", "maxmemory-eviction-tenacity", "0"])
        .query(&mut c)
        .unwrap();
    set_maxmemory(&mut c, "1");
    let left = |c: &mut redis::Connection| {
        let mut k = query_strings(c, &["KEYS", "*"]);
        k.sort();
        k
    };
    let after_two = left(&mut c);
    assert_eq!(after_two.len(), 21, "{after_two:?}");
    assert!(after_two.contains(&"latest".to_string()), "{after_two:?}");
    let rest = left(&mut c);
    assert_eq!(rest.len(), 20, "{rest:?}");
    assert!(rest.iter().all(|k| k.starts_with("keep")), "{rest:?}");
    // Keys without an expiry stay, and writes are refused once nothing is
    // left to take.
    assert!(error_of(&mut c, &["SET", "new", "v"]).contains(OOM));
    assert_eq!(left(&mut c).len(), 20);
    assert_eq!(stat(&mut c, "evicted_keys"), 3);

    assert!(
        error_of(&mut c, &["CONFIG", "SET", "maxmemory-policy", "lru"]).contains("must be one of")
    );
    assert_eq!(config(&mut c, "maxmemory-policy"), "volatile-ttl");
    set_maxmemory(&mut c, "0");
}
