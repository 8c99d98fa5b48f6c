//! `WATCH` counts as touches what Redis counts: a `FLUSHALL` or `FLUSHDB`
//! (from any client) of a watched key that existed, and a watched key that
//! expired; a flush does not touch a key that did not exist.

use crate::common;
use std::time::Duration;

use common::Server;

/// `WATCH key`, then `between` on another connection, then `MULTI; PING;
/// EXEC`: whether the transaction ran.
fn exec_runs(s: &Server, setup: &[&[&str]], between: &[&[&str]]) -> bool {
    let mut c = s.conn();
    let mut other = s.conn();
    for cmd in setup {
        let _: redis::Value = redis::cmd(cmd[0]).arg(&cmd[1..]).query(&mut c).unwrap();
    }
    let _: String = redis::cmd("WATCH").arg("x").query(&mut c).unwrap();
    for cmd in between {
        if cmd[0] == "SLEEP" {
            std::thread::sleep(Duration::from_millis(cmd[1].parse().unwrap()));
            continue;
        }
        let _: redis::Value = redis::cmd(cmd[0]).arg(&cmd[1..]).query(&mut other).unwrap();
    }
    let _: String = redis::cmd("MULTI").query(&mut c).unwrap();
    let _: String = redis::cmd("PING").query(&mut c).unwrap();
    let r: Option<Vec<String>> = redis::cmd("EXEC").query(&mut c).unwrap();
    let _: String = redis::cmd("FLUSHALL").query(&mut c).unwrap();
    r.is_some()
}

#[test]
fn a_flush_touches_the_watched_keys_that_existed() {
    let s = Server::start(None);
    let set: &[&str] = &["SET", "x", "30"];
    assert!(!exec_runs(&s, &[set], &[&["FLUSHALL"]]), "FLUSHALL");
    assert!(!exec_runs(&s, &[set], &[&["FLUSHDB"]]), "FLUSHDB");
    assert!(
        !exec_runs(&s, &[set], &[&["FLUSHALL", "ASYNC"]]),
        "FLUSHALL ASYNC"
    );
    // Flushed and written again: still touched.
    assert!(
        !exec_runs(&s, &[set], &[&["FLUSHALL"], &["SET", "x", "30"]]),
        "recreated"
    );
    // A key that did not exist is not touched by a flush...
    assert!(
        exec_runs(&s, &[&["DEL", "x"], &["SET", "y", "1"]], &[&["FLUSHALL"]]),
        "absent key"
    );
    // ...but is by a write after it.
    assert!(
        !exec_runs(&s, &[&["DEL", "x"]], &[&["FLUSHALL"], &["SET", "x", "1"]]),
        "created after a flush"
    );
    assert!(
        exec_runs(&s, &[set], &[&["SET", "other", "1"]]),
        "an unrelated write"
    );
}

#[test]
fn a_watched_key_that_expires_is_touched() {
    let s = Server::start(None);
    assert!(!exec_runs(
        &s,
        &[&["SET", "x", "foo"], &["PEXPIRE", "x", "100"]],
        &[&["SLEEP", "300"]]
    ));
    // Expiry set but not reached: untouched.
    assert!(exec_runs(
        &s,
        &[&["SET", "x", "foo"], &["EXPIRE", "x", "100"]],
        &[]
    ));
}

#[test]
fn watching_many_keys_still_sees_a_flush() {
    let s = Server::start(None);
    let mut c = s.conn();
    let mut other = s.conn();
    let _: String = redis::cmd("SET").arg("x").arg("1").query(&mut c).unwrap();
    // Enough WATCH commands for their groups to fold (transaction.rs).
    let _: String = redis::cmd("WATCH").arg("x").query(&mut c).unwrap();
    for i in 0..40 {
        let _: String = redis::cmd("WATCH")
            .arg(format!("k{i}"))
            .query(&mut c)
            .unwrap();
    }
    let _: String = redis::cmd("FLUSHALL").query(&mut other).unwrap();
    for i in 40..80 {
        let _: String = redis::cmd("WATCH")
            .arg(format!("k{i}"))
            .query(&mut c)
            .unwrap();
    }
    let _: String = redis::cmd("MULTI").query(&mut c).unwrap();
    let _: String = redis::cmd("PING").query(&mut c).unwrap();
    let r: Option<Vec<String>> = redis::cmd("EXEC").query(&mut c).unwrap();
    assert!(r.is_none());
}
