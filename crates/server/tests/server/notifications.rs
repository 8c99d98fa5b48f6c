//! Keyspace notifications (`notify-keyspace-events`): each command family
//! tells what Redis 7.0 tells, in its order, for the classes enabled, once
//! its writes commit; nothing when nothing changed; `new` and `expired`.

use crate::common;
use std::time::Duration;

use common::Server;
use redis::Connection;

fn config_set(c: &mut Connection, flags: &str) {
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("notify-keyspace-events")
        .arg(flags)
        .query(c)
        .unwrap();
}

fn run(c: &mut Connection, args: &[&str]) -> redis::Value {
    let mut cmd = redis::cmd(args[0]);
    args[1..].iter().for_each(|a| {
        cmd.arg(*a);
    });
    cmd.query(c).unwrap()
}

/// What subscribers are told while `commands` run under `flags`: a keyevent
/// notice as `"event key"`, a keyspace one as `"key: event"`, in order.
fn told(s: &Server, flags: &str, commands: &[&[&str]]) -> Vec<String> {
    told_after(s, flags, |c| {
        for args in commands {
            run(c, args);
        }
    })
}

fn told_after(s: &Server, flags: &str, act: impl FnOnce(&mut Connection)) -> Vec<String> {
    let mut c = s.conn();
    config_set(&mut c, flags);
    let mut sub = s.conn();
    let mut ps = sub.as_pubsub();
    ps.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    ps.psubscribe("__key*@0__:*").unwrap();
    ps.subscribe("end").unwrap();
    act(&mut c);
    // The notices are published before each command's reply: a message
    // sent after the last reply ends them.
    run(&mut c, &["PUBLISH", "end", "."]);
    let mut out = Vec::new();
    loop {
        let m = ps.get_message().expect("a message before the end marker");
        let channel = m.get_channel_name().to_string();
        let payload: String = m.get_payload().unwrap();
        if channel == "end" {
            return out;
        }
        if let Some(event) = channel.strip_prefix("__keyevent@0__:") {
            out.push(format!("{event} {payload}"));
        } else if let Some(key) = channel.strip_prefix("__keyspace@0__:") {
            out.push(format!("{key}: {payload}"));
        }
    }
}

#[test]
fn the_flags_read_back_as_redis_writes_them_and_bad_ones_are_refused() {
    let s = Server::start(None);
    let mut c = s.conn();
    for (given, shown) in [
        ("gKE", "gKE"),
        ("$lshzxeKE", "$lshzxeKE"),
        ("KA", "AK"),
        ("", ""),
    ] {
        config_set(&mut c, given);
        let got: Vec<String> = redis::cmd("CONFIG")
            .arg("GET")
            .arg("notify-keyspace-events")
            .query(&mut c)
            .unwrap();
        assert_eq!(got[1], shown);
    }
    let e = common::error_of(&mut c, &["CONFIG", "SET", "notify-keyspace-events", "KEq"]);
    assert!(e.contains("Invalid event class character"), "{e}");
}

#[test]
fn nothing_is_told_by_default() {
    let s = Server::start(None);
    let mut c = s.conn();
    let mut sub = s.conn();
    let mut ps = sub.as_pubsub();
    ps.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    ps.psubscribe("*").unwrap();
    run(&mut c, &["SET", "k", "v"]);
    run(&mut c, &["LPUSH", "l", "a"]);
    run(&mut c, &["PUBLISH", "end", "."]);
    assert_eq!(ps.get_message().unwrap().get_channel_name(), "end");
}

#[test]
fn both_kinds_of_channel_and_the_classes_mask() {
    let s = Server::start(None);
    assert_eq!(
        told(&s, "KEA", &[&["SET", "foo", "bar"]]),
        ["foo: set", "set foo"]
    );
    // Only lists: the SET is not told.
    assert_eq!(
        told(
            &s,
            "El",
            &[&["SET", "foo", "bar"], &["LPUSH", "mylist", "a"]]
        ),
        ["lpush mylist"]
    );
}

#[test]
fn strings_and_generic_commands() {
    let s = Server::start(None);
    let got = told(
        &s,
        "EA",
        &[
            &["SET", "a", "1", "EX", "100"],
            &["INCRBY", "a", "2"],
            &["INCRBYFLOAT", "a", "0.5"],
            &["APPEND", "a", "x"],
            &["SETRANGE", "a", "0", "y"],
            &["MSET", "b", "1", "c", "2"],
            &["PERSIST", "a"],
            &["PERSIST", "a"],
            &["RENAME", "b", "d"],
            &["COPY", "d", "e"],
            &["EXPIRE", "e", "100"],
            &["DEL", "c", "nothing"],
            &["GETDEL", "d"],
            &["SETBIT", "bits", "3", "1"],
            &["SETBIT", "bits", "3", "1"],
            &["PFADD", "h", "x"],
            &["PFADD", "h", "x"],
        ],
    );
    assert_eq!(
        got,
        [
            "set a",
            "expire a",
            "incrby a",
            "incrbyfloat a",
            "append a",
            "setrange a",
            "set b",
            "set c",
            "persist a",
            "rename_from b",
            "rename_to d",
            "copy_to e",
            "expire e",
            "del c",
            "del d",
            "setbit bits",
            "pfadd h",
        ]
    );
}

#[test]
fn lists_tell_pushes_pops_and_the_deletion_of_an_emptied_list() {
    let s = Server::start(None);
    let got = told(
        &s,
        "KEl",
        &[
            &["LPUSH", "l", "a"],
            &["RPUSH", "l", "b"],
            &["RPOP", "l"],
            &["LMOVE", "l", "m", "LEFT", "RIGHT"],
        ],
    );
    assert_eq!(
        got,
        [
            "l: lpush", "lpush l", "l: rpush", "rpush l", "l: rpop", "rpop l", "m: rpush",
            "rpush m", "l: lpop", "lpop l",
        ]
    );
    // The generic class tells the deletion.
    let got = told(&s, "Elg", &[&["LPOP", "m"], &["LPUSHX", "gone", "x"]]);
    assert_eq!(got, ["lpop m", "del m"]);
}

#[test]
fn sets_tell_only_changes() {
    let s = Server::start(None);
    let got = told(
        &s,
        "Ks",
        &[
            &["SADD", "myset", "a", "b", "c", "d"],
            &["SREM", "myset", "x"],
            &["SADD", "myset", "x", "y", "z"],
            &["SADD", "myset", "x"],
            &["SREM", "myset", "x"],
            &["SADD", "dst", "a"],
            &["SMOVE", "myset", "dst", "a"],
            &["SMOVE", "myset", "dst", "b"],
        ],
    );
    assert_eq!(
        got,
        [
            "myset: sadd",
            "myset: sadd",
            "myset: srem",
            "dst: sadd",
            "myset: srem",
            "myset: srem",
            "dst: sadd",
        ]
    );
}

#[test]
fn sorted_sets_hashes_and_stores() {
    let s = Server::start(None);
    let got = told(
        &s,
        "Ezhg",
        &[
            &["ZADD", "z", "1", "a", "2", "b"],
            &["ZADD", "z", "1", "a"],
            &["ZINCRBY", "z", "1", "a"],
            &["ZREM", "z", "x"],
            &["ZUNIONSTORE", "u", "1", "z"],
            &["ZREMRANGEBYSCORE", "z", "0", "1"],
            &["ZPOPMIN", "z"],
            &["HSET", "h", "f", "1"],
            &["HINCRBY", "h", "f", "10"],
            &["HDEL", "h", "f"],
        ],
    );
    assert_eq!(
        got,
        [
            "zadd z",
            "zincr z",
            "zunionstore u",
            "zpopmin z",
            "hset h",
            "hincrby h",
            "hdel h",
            "del h",
        ]
    );
}

#[test]
fn streams_tell_as_redis_does() {
    let s = Server::start(None);
    let got = told_after(&s, "Kt", |c2| {
        run(c2, &["XGROUP", "CREATE", "st", "g", "$", "MKSTREAM"]);
        run(c2, &["XGROUP", "CREATECONSUMER", "st", "g", "Bob"]);
        run(c2, &["XADD", "st", "1", "f", "A"]);
        run(
            c2,
            &["XREADGROUP", "GROUP", "g", "Alice", "STREAMS", "st", ">"],
        );
        run(c2, &["XCLAIM", "st", "g", "Mike", "0", "1", "FORCE"]);
        // Lee does not exist; Bob does: neither is told.
        run(c2, &["XGROUP", "DELCONSUMER", "st", "g", "Lee"]);
        run(c2, &["XAUTOCLAIM", "st", "g", "Bob", "0", "1"]);
        run(c2, &["XGROUP", "DELCONSUMER", "st", "g", "Bob"]);
    });
    assert_eq!(
        got,
        [
            "st: xgroup-create",
            "st: xgroup-createconsumer",
            "st: xadd",
            "st: xgroup-createconsumer",
            "st: xgroup-createconsumer",
            "st: xgroup-delconsumer",
        ]
    );
}

#[test]
fn new_keys_are_told_once() {
    let s = Server::start(None);
    let got = told(
        &s,
        "En",
        &[
            &["SET", "foo", "bar"],
            &["SET", "foo", "baz"],
            &["SET", "bar", "bar"],
            &["SADD", "s", "a"],
        ],
    );
    assert_eq!(got, ["new foo", "new bar", "new s"]);
    // Pipelined SETs (which otherwise run as one write batch) too.
    let got = told_after(&s, "E$n", |c| {
        let _: () = redis::pipe()
            .cmd("SET")
            .arg("p1")
            .arg("1")
            .ignore()
            .cmd("SET")
            .arg("p2")
            .arg("1")
            .ignore()
            .cmd("SET")
            .arg("p1")
            .arg("2")
            .ignore()
            .query(c)
            .unwrap();
    });
    assert_eq!(got, ["new p1", "set p1", "new p2", "set p2", "set p1"]);
}

#[test]
fn an_expiry_is_told_when_it_passes_unless_the_key_changed() {
    let s = Server::start(None);
    let got = told_after(&s, "Ex", |c| {
        run(c, &["PSETEX", "foo", "100", "1"]);
        run(c, &["PSETEX", "kept", "100", "1"]);
        // Overwritten without an expiry: it does not expire.
        run(c, &["SET", "kept", "2"]);
        run(c, &["SET", "later", "1", "PX", "150"]);
        std::thread::sleep(Duration::from_millis(700));
    });
    assert_eq!(got, ["expired foo", "expired later"]);
}

#[test]
fn transactions_and_scripts_tell_once_they_commit() {
    let s = Server::start(None);
    let got = told_after(&s, "E$g", |c| {
        let _: () = redis::pipe()
            .atomic()
            .cmd("SET")
            .arg("a")
            .arg("1")
            .cmd("DEL")
            .arg("a")
            .query(c)
            .unwrap();
        run(
            c,
            &["EVAL", "redis.call('set', KEYS[1], 'x') return 1", "1", "b"],
        );
        // A transaction discarded tells nothing.
        run(c, &["MULTI"]);
        run(c, &["SET", "never", "1"]);
        run(c, &["DISCARD"]);
    });
    assert_eq!(got, ["set a", "del a", "set b"]);
}

/// A command that changes nothing writes nothing, so a WATCH of its key
/// holds (the suite's "SMOVE only notify dstset when the addition is
/// successful").
#[test]
fn a_set_command_that_changes_nothing_leaves_a_watch_holding() {
    let s = Server::start(None);
    let mut c = s.conn();
    let mut other = s.conn();
    run(&mut c, &["SADD", "src", "a", "b"]);
    run(&mut c, &["SADD", "dst", "a"]);
    for change_nothing in [
        &["SMOVE", "src", "dst", "a"][..],
        &["SADD", "dst", "a"][..],
        &["SREM", "dst", "zz"][..],
    ] {
        run(&mut c, &["WATCH", "dst"]);
        run(&mut other, change_nothing);
        let done: Option<Vec<i64>> = redis::pipe()
            .atomic()
            .cmd("SCARD")
            .arg("dst")
            .query(&mut c)
            .unwrap();
        assert!(done.is_some(), "{change_nothing:?} broke the WATCH");
    }
}
