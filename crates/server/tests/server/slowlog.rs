//! The slow log: `SLOWLOG` and its two `CONFIG` parameters answer as
//! redis-server 7.0 answered the same requests (`REDIS_REPLIES`: errors,
//! help, ranges); with the threshold at 0 every command is logged newest
//! first with its arguments cut as Redis cuts them, its client's address
//! and name, secrets redacted, members of a pipelined group too; the
//! length bound holds; a negative threshold logs nothing.

use redis::{cmd, Value};

use crate::common;
use common::{expect_replies, Server};

const REDIS_REPLIES: &[(&[&str], &str)] = &[
    (&["slowlog", "len"], ":0\r\n"),
    (&["slowlog", "get"], "*0\r\n"),
    (&["slowlog", "get", "x"], "-ERR count should be greater than or equal to -1\r\n"),
    (&["slowlog", "get", "-2"], "-ERR count should be greater than or equal to -1\r\n"),
    (&["slowlog", "get", "1", "2"], "-ERR unknown subcommand or wrong number of arguments for 'get'. Try SLOWLOG HELP.\r\n"),
    (&["slowlog", "foo"], "-ERR unknown subcommand 'foo'. Try SLOWLOG HELP.\r\n"),
    (&["slowlog"], "-ERR wrong number of arguments for 'slowlog' command\r\n"),
    (&["slowlog", "len", "x"], "-ERR wrong number of arguments for 'slowlog|len' command\r\n"),
    (&["slowlog", "reset", "x"], "-ERR wrong number of arguments for 'slowlog|reset' command\r\n"),
    (&["slowlog", "help"], "*12\r\n+SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+GET [<count>]\r\n+    Return top <count> entries from the slowlog (default: 10, -1 mean all).\r\n+    Entries are made of:\r\n+    id, timestamp, time in microseconds, arguments array, client IP and port,\r\n+    client name\r\n+LEN\r\n+    Return the length of the slowlog.\r\n+RESET\r\n+    Reset the slowlog.\r\n+HELP\r\n+    Prints this help.\r\n"),
    (&["config", "set", "slowlog-max-len", "x"], "-ERR CONFIG SET failed (possibly related to argument 'slowlog-max-len') - argument couldn't be parsed into an integer\r\n"),
    (&["config", "set", "slowlog-max-len", "-1"], "-ERR CONFIG SET failed (possibly related to argument 'slowlog-max-len') - argument must be between 0 and 9223372036854775807 inclusive\r\n"),
    (&["config", "set", "slowlog-log-slower-than", "-2"], "-ERR CONFIG SET failed (possibly related to argument 'slowlog-log-slower-than') - argument must be between -1 and 9223372036854775807 inclusive\r\n"),
    (&["config", "set", "slowlog-log-slower-than", "x"], "-ERR CONFIG SET failed (possibly related to argument 'slowlog-log-slower-than') - argument couldn't be parsed into an integer\r\n"),
    (&["config", "set", "slowlog-max-len", "5", "slowlog-log-slower-than", "x"], "-ERR CONFIG SET failed (possibly related to argument 'slowlog-log-slower-than') - argument couldn't be parsed into an integer\r\n"),
    (&["config", "get", "slowlog-max-len"], "*2\r\n$15\r\nslowlog-max-len\r\n$3\r\n128\r\n"),
    (&["config", "get", "slowlog*"], "*4\r\n$23\r\nslowlog-log-slower-than\r\n$5\r\n10000\r\n$15\r\nslowlog-max-len\r\n$3\r\n128\r\n"),
    (&["config", "set", "slowlog-max-len", "128"], "+OK\r\n"),
    (&["config", "get", "slowlog-max-len"], "*2\r\n$15\r\nslowlog-max-len\r\n$3\r\n128\r\n"),
];

#[test]
fn slowlog_answers_as_redis_does() {
    let s = Server::start(None);
    expect_replies(&s, REDIS_REPLIES);
}

fn entries(c: &mut redis::Connection) -> Vec<Vec<Value>> {
    cmd("SLOWLOG").arg("GET").arg(-1).query(c).unwrap()
}

fn args_of(entry: &[Value]) -> Vec<String> {
    match &entry[3] {
        Value::Array(args) => args
            .iter()
            .map(|a| match a {
                Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
                other => panic!("{other:?}"),
            })
            .collect(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_command_is_logged_at_threshold_zero() {
    let s = Server::start(None);
    let mut c = s.conn();
    let _: () = cmd("CLIENT")
        .arg("SETNAME")
        .arg("logger")
        .query(&mut c)
        .unwrap();
    let _: () = cmd("CONFIG")
        .arg(&["SET", "slowlog-log-slower-than", "0"])
        .query(&mut c)
        .unwrap();
    let _: () = cmd("SLOWLOG").arg("RESET").query(&mut c).unwrap();
    let long = "v".repeat(200);
    let _: () = cmd("SET").arg("k").arg(&long).query(&mut c).unwrap();
    let _: Value = cmd("AUTH")
        .arg("secret")
        .query(&mut c)
        .unwrap_or(Value::Nil);
    // A pipeline of GETs: one engine call, each member logged.
    let mut p = redis::pipe();
    for _ in 0..3 {
        p.cmd("GET").arg("k");
    }
    let _: Vec<String> = p.query(&mut c).unwrap();
    let logged = entries(&mut c);
    // Newest first: the three GETs, AUTH, SET, then SLOWLOG RESET.
    let names: Vec<String> = logged
        .iter()
        .map(|e| args_of(e)[0].to_lowercase())
        .collect();
    assert_eq!(names[..6], ["get", "get", "get", "auth", "set", "slowlog"]);
    assert_eq!(args_of(&logged[3]), ["AUTH", "(redacted)"]);
    let set = args_of(&logged[4]);
    assert_eq!(set[2], format!("{}... (72 more bytes)", "v".repeat(128)));
    let ids: Vec<i64> = logged
        .iter()
        .map(|e| match e[0] {
            Value::Int(id) => id,
            _ => panic!(),
        })
        .collect();
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "{ids:?}");
    assert_eq!(logged[4][5], Value::BulkString(b"logger".to_vec()));
    match &logged[4][4] {
        Value::BulkString(addr) => assert!(addr.starts_with(b"127.0.0.1:")),
        other => panic!("{other:?}"),
    }
    // The bound: lowering it drops the oldest.
    let _: () = cmd("CONFIG")
        .arg(&["SET", "slowlog-max-len", "2"])
        .query(&mut c)
        .unwrap();
    let len: i64 = cmd("SLOWLOG").arg("LEN").query(&mut c).unwrap();
    assert!(len <= 2, "{len}");
    // A negative threshold: nothing more is logged.
    let _: () = cmd("CONFIG")
        .arg(&["SET", "slowlog-log-slower-than", "-1"])
        .query(&mut c)
        .unwrap();
    let _: () = cmd("SLOWLOG").arg("RESET").query(&mut c).unwrap();
    let _: Option<String> = cmd("GET").arg("k").query(&mut c).unwrap();
    assert!(entries(&mut c).is_empty());
}
