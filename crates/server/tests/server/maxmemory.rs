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

fn info_field(c: &mut redis::Connection, field: &str) -> String {
    let info: String = cmd("INFO").arg("memory").query(c).unwrap();
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
    assert_eq!(info_field(&mut c, "maxmemory"), "1");
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
    let cache: u64 = info_field(&mut c, "slsm_block_cache_capacity")
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
