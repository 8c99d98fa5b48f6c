//! Stream consumer groups (`XGROUP`, `XREADGROUP`, `XACK`, `XPENDING`,
//! `XCLAIM`, `XAUTOCLAIM`) answer as redis-server 7.0 answered the same
//! requests on one connection, byte for byte: delivery of new entries
//! and of a consumer's history (a deleted entry as `[id, nil]`), `NOACK`,
//! the pending summary and ranges, claims with `JUSTID`, `FORCE`,
//! `RETRYCOUNT`, `LASTID`, automatic claims that drop deleted entries,
//! `SETID` back, consumers created and deleted, and the errors in
//! Redis's order. Then what a table cannot show: workers blocked on a
//! group sharing its entries, and a restart.

use std::collections::BTreeSet;

use redis::cmd;

use crate::common;
use common::{expect_replies, wait_blocked, Server};

/// What `XREADGROUP` answers, as the redis crate reads it: per stream, its
/// entries (ID, then fields and values).
type Read = Vec<(String, Vec<(String, Vec<String>)>)>;
/// `XPENDING`'s summary: count, lowest and highest ID, per consumer.
type Summary = (
    i64,
    Option<String>,
    Option<String>,
    Option<Vec<(String, String)>>,
);

const REDIS_REPLIES: &[(&[&str], &str)] = &[
    (&["xadd", "s", "1-0", "a", "1"], "$3\r\n1-0\r\n"),
    (&["xadd", "s", "2-0", "b", "2"], "$3\r\n2-0\r\n"),
    (&["xadd", "s", "3-0", "c", "3"], "$3\r\n3-0\r\n"),
    (&["set", "str", "v"], "+OK\r\n"),
    (&["xgroup", "create", "s", "g", "0"], "+OK\r\n"),
    (&["xgroup", "create", "s", "g", "0"], "-BUSYGROUP Consumer Group name already exists\r\n"),
    (&["xgroup", "create", "nosuch", "g", "0"], "-ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.\r\n"),
    (&["xgroup", "create", "nosuch", "g", "$", "mkstream"], "+OK\r\n"),
    (&["xlen", "nosuch"], ":0\r\n"),
    (&["xgroup", "create", "str", "g", "0"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["xgroup", "create", "s", "g2", "$"], "+OK\r\n"),
    (&["xgroup", "create", "s", "g3", "bad"], "-ERR Invalid stream ID specified as stream command argument\r\n"),
    (&["xgroup", "create", "s", "g3", "0", "foo"], "-ERR unknown subcommand or wrong number of arguments for 'create'. Try XGROUP HELP.\r\n"),
    (&["xgroup", "create", "s", "g3", "0", "entriesread", "-5"], "-ERR value for ENTRIESREAD must be positive or -1\r\n"),
    (&["xgroup", "create", "s", "g3", "0", "entriesread", "5"], "+OK\r\n"),
    (&["xgroup", "foo", "s", "g"], "-ERR unknown subcommand 'foo'. Try XGROUP HELP.\r\n"),
    (&["xgroup", "help"], "*17\r\n+XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+CREATE <key> <groupname> <id|$> [option]\r\n+    Create a new consumer group. Options are:\r\n+    * MKSTREAM\r\n+      Create the empty stream if it does not exist.\r\n+    * ENTRIESREAD entries_read\r\n+      Set the group's entries_read counter (internal use).\r\n+CREATECONSUMER <key> <groupname> <consumer>\r\n+    Create a new consumer in the specified group.\r\n+DELCONSUMER <key> <groupname> <consumer>\r\n+    Remove the specified consumer.\r\n+DESTROY <key> <groupname>\r\n+    Remove the specified group.\r\n+SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]\r\n+    Set the current group ID and entries_read counter.\r\n+HELP\r\n+    Prints this help.\r\n"),
    (&["xgroup", "create", "s"], "-ERR wrong number of arguments for 'xgroup|create' command\r\n"),
    (&["xgroup", "setid", "s", "nog", "0"], "-NOGROUP No such consumer group 'nog' for key name 's'\r\n"),
    (&["xgroup", "createconsumer", "s", "g", "alice"], ":1\r\n"),
    (&["xgroup", "createconsumer", "s", "g", "alice"], ":0\r\n"),
    (&["xgroup", "createconsumer", "s", "nog", "alice"], "-NOGROUP No such consumer group 'nog' for key name 's'\r\n"),
    (&["xreadgroup", "group", "g", "alice", "streams", "s", ">"], "*1\r\n*2\r\n$1\r\ns\r\n*3\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n*2\r\n$3\r\n3-0\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n"),
    (&["xreadgroup", "group", "g", "bob", "count", "1", "streams", "s", ">"], "*-1\r\n"),
    (&["xadd", "s", "4-0", "d", "4"], "$3\r\n4-0\r\n"),
    (&["xreadgroup", "group", "g", "bob", "count", "1", "streams", "s", ">"], "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n4-0\r\n*2\r\n$1\r\nd\r\n$1\r\n4\r\n"),
    (&["xreadgroup", "group", "g", "bob", "streams", "s", ">"], "*-1\r\n"),
    (&["xreadgroup", "group", "g", "alice", "streams", "s", "0"], "*1\r\n*2\r\n$1\r\ns\r\n*3\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n*2\r\n$3\r\n3-0\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n"),
    (&["xreadgroup", "group", "g", "alice", "count", "2", "streams", "s", "0"], "*1\r\n*2\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n"),
    (&["xreadgroup", "group", "g", "alice", "streams", "s", "1-0"], "*1\r\n*2\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n2-0\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n*2\r\n$3\r\n3-0\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n"),
    (&["xreadgroup", "group", "g", "carol", "streams", "s", "0"], "*1\r\n*2\r\n$1\r\ns\r\n*0\r\n"),
    (&["xreadgroup", "group", "nog", "alice", "streams", "s", ">"], "-NOGROUP No such key 's' or consumer group 'nog' in XREADGROUP with GROUP option\r\n"),
    (&["xreadgroup", "group", "g", "alice", "streams", "nosuchkey", ">"], "-NOGROUP No such key 'nosuchkey' or consumer group 'g' in XREADGROUP with GROUP option\r\n"),
    (&["xreadgroup", "group", "g", "alice", "streams", "s", "$"], "-ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.\r\n"),
    (&["xreadgroup", "group", "g", "alice", "streams", "str", ">"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["xreadgroup", "group", "g", "alice", "streams", "s"], "-ERR wrong number of arguments for 'xreadgroup' command\r\n"),
    (&["xreadgroup", "streams", "s", ">"], "-ERR wrong number of arguments for 'xreadgroup' command\r\n"),
    (&["xreadgroup", "group", "g", "streams", "s", ">"], "-ERR wrong number of arguments for 'xreadgroup' command\r\n"),
    (&["xread", "group", "g", "alice", "streams", "s", ">"], "-ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.\r\n"),
    (&["xread", "noack", "streams", "s", "0"], "-ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.\r\n"),
    (&["xreadgroup", "group", "g2", "dave", "noack", "streams", "s", ">"], "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n4-0\r\n*2\r\n$1\r\nd\r\n$1\r\n4\r\n"),
    (&["xpending", "s", "g2"], "*4\r\n:0\r\n$-1\r\n$-1\r\n*-1\r\n"),
    (&["xpending", "s", "g"], "*4\r\n:4\r\n$3\r\n1-0\r\n$3\r\n4-0\r\n*2\r\n*2\r\n$5\r\nalice\r\n$1\r\n3\r\n*2\r\n$3\r\nbob\r\n$1\r\n1\r\n"),
    (&["xpending", "s", "nog"], "-NOGROUP No such key 's' or consumer group 'nog'\r\n"),
    (&["xpending", "nosuch", "g"], "*4\r\n:0\r\n$-1\r\n$-1\r\n*-1\r\n"),
    (&["xpending", "str", "g"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["xpending", "s", "g", "-", "+", "10", "nobody"], "*0\r\n"),
    (&["xpending", "s", "g", "-", "+", "0"], "*0\r\n"),
    (&["xpending", "s", "g", "-", "+", "x"], "-ERR value is not an integer or out of range\r\n"),
    (&["xpending", "s", "g", "(1-0", "+", "10", "zzz"], "*0\r\n"),
    (&["xpending", "s", "g", "-", "+"], "-ERR syntax error\r\n"),
    (&["xpending", "s", "g", "idle", "5", "-", "+"], "-ERR syntax error\r\n"),
    (&["xpending", "s", "g", "foo", "-", "+", "10"], "-ERR value is not an integer or out of range\r\n"),
    (&["xack", "s", "g", "1-0", "1-0", "9-0"], ":1\r\n"),
    (&["xack", "s", "g", "bad"], "-ERR Invalid stream ID specified as stream command argument\r\n"),
    (&["xack", "s", "nog", "1-0"], ":0\r\n"),
    (&["xack", "nosuch", "g", "1-0"], ":0\r\n"),
    (&["xack", "str", "g", "1-0"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["xpending", "s", "g"], "*4\r\n:3\r\n$3\r\n2-0\r\n$3\r\n4-0\r\n*2\r\n*2\r\n$5\r\nalice\r\n$1\r\n2\r\n*2\r\n$3\r\nbob\r\n$1\r\n1\r\n"),
    (&["xdel", "s", "2-0"], ":1\r\n"),
    (&["xreadgroup", "group", "g", "alice", "streams", "s", "0"], "*1\r\n*2\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n2-0\r\n*-1\r\n*2\r\n$3\r\n3-0\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n"),
    (&["xclaim", "s", "g", "bob", "0", "2-0", "3-0", "justid"], "*1\r\n$3\r\n3-0\r\n"),
    (&["xpending", "s", "g"], "*4\r\n:2\r\n$3\r\n3-0\r\n$3\r\n4-0\r\n*1\r\n*2\r\n$3\r\nbob\r\n$1\r\n2\r\n"),
    (&["xclaim", "s", "g", "carol", "0", "3-0", "4-0", "retrycount", "7"], "*2\r\n*2\r\n$3\r\n3-0\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n*2\r\n$3\r\n4-0\r\n*2\r\n$1\r\nd\r\n$1\r\n4\r\n"),
    (&["xclaim", "s", "g", "carol", "0", "1-0"], "*0\r\n"),
    (&["xclaim", "s", "g", "carol", "0", "1-0", "force", "justid"], "*1\r\n$3\r\n1-0\r\n"),
    (&["xclaim", "s", "g", "carol", "x", "1-0"], "-ERR Invalid min-idle-time argument for XCLAIM\r\n"),
    (&["xclaim", "s", "g", "carol", "0", "1-0", "foo"], "-ERR Unrecognized XCLAIM option 'foo'\r\n"),
    (&["xclaim", "s", "g", "carol", "0", "1-0", "idle", "x"], "-ERR Invalid IDLE option argument for XCLAIM\r\n"),
    (&["xclaim", "s", "g", "carol", "0", "1-0", "lastid", "100-0", "justid"], "*1\r\n$3\r\n1-0\r\n"),
    (&["xclaim", "s", "nog", "carol", "0", "1-0"], "-NOGROUP No such key 's' or consumer group 'nog'\r\n"),
    (&["xclaim", "str", "g", "carol", "0", "1-0"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["xreadgroup", "group", "g", "alice", "streams", "s", ">"], "*-1\r\n"),
    (&["xadd", "s", "200-0", "e", "5"], "$5\r\n200-0\r\n"),
    (&["xreadgroup", "group", "g", "alice", "streams", "s", ">"], "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$5\r\n200-0\r\n*2\r\n$1\r\ne\r\n$1\r\n5\r\n"),
    (&["xpending", "s", "g"], "*4\r\n:4\r\n$3\r\n1-0\r\n$5\r\n200-0\r\n*2\r\n*2\r\n$5\r\nalice\r\n$1\r\n1\r\n*2\r\n$5\r\ncarol\r\n$1\r\n3\r\n"),
    (&["xautoclaim", "s", "g", "erin", "0", "0", "count", "2"], "*3\r\n$3\r\n4-0\r\n*2\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n3-0\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n*0\r\n"),
    (&["xautoclaim", "s", "g", "erin", "0", "0", "count", "2", "justid"], "*3\r\n$3\r\n4-0\r\n*2\r\n$3\r\n1-0\r\n$3\r\n3-0\r\n*0\r\n"),
    (&["xautoclaim", "s", "g", "erin", "0", "(3-0"], "*3\r\n$3\r\n0-0\r\n*2\r\n*2\r\n$3\r\n4-0\r\n*2\r\n$1\r\nd\r\n$1\r\n4\r\n*2\r\n$5\r\n200-0\r\n*2\r\n$1\r\ne\r\n$1\r\n5\r\n*0\r\n"),
    (&["xautoclaim", "s", "g", "erin", "0", "0", "count", "0"], "-ERR COUNT must be > 0\r\n"),
    (&["xautoclaim", "s", "g", "erin", "0", "0", "foo"], "-ERR syntax error\r\n"),
    (&["xautoclaim", "s", "g", "erin", "x", "0"], "-ERR Invalid min-idle-time argument for XAUTOCLAIM\r\n"),
    (&["xautoclaim", "s", "nog", "erin", "0", "0"], "-NOGROUP No such key 's' or consumer group 'nog'\r\n"),
    (&["xdel", "s", "200-0"], ":1\r\n"),
    (&["xautoclaim", "s", "g", "frank", "0", "0"], "*3\r\n$3\r\n0-0\r\n*3\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n3-0\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n*2\r\n$3\r\n4-0\r\n*2\r\n$1\r\nd\r\n$1\r\n4\r\n*1\r\n$5\r\n200-0\r\n"),
    (&["xpending", "s", "g"], "*4\r\n:3\r\n$3\r\n1-0\r\n$3\r\n4-0\r\n*1\r\n*2\r\n$5\r\nfrank\r\n$1\r\n3\r\n"),
    (&["xgroup", "delconsumer", "s", "g", "frank"], ":3\r\n"),
    (&["xgroup", "delconsumer", "s", "g", "nobody"], ":0\r\n"),
    (&["xpending", "s", "g"], "*4\r\n:0\r\n$-1\r\n$-1\r\n*-1\r\n"),
    (&["xgroup", "setid", "s", "g", "0"], "+OK\r\n"),
    (&["xreadgroup", "group", "g", "zed", "count", "1", "streams", "s", ">"], "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"),
    (&["xgroup", "setid", "s", "g", "$"], "+OK\r\n"),
    (&["xgroup", "setid", "s", "g", "bad"], "-ERR Invalid stream ID specified as stream command argument\r\n"),
    (&["xgroup", "setid", "s", "g", "1", "entriesread", "3"], "+OK\r\n"),
    (&["xgroup", "destroy", "s", "g"], ":1\r\n"),
    (&["xgroup", "destroy", "s", "g"], ":0\r\n"),
    (&["xgroup", "destroy", "nosuch", "g"], ":1\r\n"),
    (&["xpending", "s", "g"], "-NOGROUP No such key 's' or consumer group 'g'\r\n"),
    (&["xgroup", "create", "s", "g", "0", "mkstream"], "+OK\r\n"),
    (&["xreadgroup", "group", "g", "x", "count", "2", "noack", "streams", "s", ">"], "*1\r\n*2\r\n$1\r\ns\r\n*2\r\n*2\r\n$3\r\n1-0\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n3-0\r\n*2\r\n$1\r\nc\r\n$1\r\n3\r\n"),
    (&["xpending", "s", "g"], "*4\r\n:0\r\n$-1\r\n$-1\r\n*-1\r\n"),
    (&["type", "s"], "+stream\r\n"),
    (&["del", "s"], ":1\r\n"),
    (&["xgroup", "create", "s", "g", "0"], "-ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.\r\n"),
];

#[test]
fn consumer_groups_answer_as_redis_does() {
    let s = Server::start(None);
    expect_replies(&s, REDIS_REPLIES);
}

/// Four workers blocked on one group share 400 entries appended by two
/// producers: each entry goes to exactly one worker, and once every worker
/// acknowledged what it got nothing is pending.
#[test]
fn blocked_workers_share_a_group_s_entries_once_each() {
    let s = Server::start(None);
    let mut c = s.conn();
    let _: () = cmd("XGROUP")
        .arg(&["CREATE", "jobs", "workers", "$", "MKSTREAM"])
        .query(&mut c)
        .unwrap();
    let workers: Vec<_> = (0..4)
        .map(|w| {
            let mut conn = s.conn();
            std::thread::spawn(move || {
                let mut got = Vec::new();
                loop {
                    let reply: redis::Value = cmd("XREADGROUP")
                        .arg(&[
                            "GROUP",
                            "workers",
                            &format!("w{w}"),
                            "COUNT",
                            "7",
                            "BLOCK",
                            "500",
                        ])
                        .arg(&["STREAMS", "jobs", ">"])
                        .query(&mut conn)
                        .unwrap();
                    if reply == redis::Value::Nil {
                        return got;
                    }
                    let streams: Read = redis::from_redis_value(&reply).unwrap();
                    for (id, fields) in &streams[0].1 {
                        let acked: i64 = cmd("XACK")
                            .arg(&["jobs", "workers", id])
                            .query(&mut conn)
                            .unwrap();
                        assert_eq!(acked, 1);
                        got.push(fields[1].clone());
                    }
                }
            })
        })
        .collect();
    wait_blocked(&mut c, 4);
    let producers: Vec<_> = (0..2)
        .map(|p| {
            let mut conn = s.conn();
            std::thread::spawn(move || {
                for i in 0..200 {
                    let _: String = cmd("XADD")
                        .arg(&["jobs", "*", "job", &format!("{p}-{i}")])
                        .query(&mut conn)
                        .unwrap();
                }
            })
        })
        .collect();
    producers.into_iter().for_each(|p| p.join().unwrap());
    let mut all = Vec::new();
    for w in workers {
        all.extend(w.join().unwrap());
    }
    assert_eq!(all.len(), 400, "every entry delivered once");
    let distinct: BTreeSet<_> = all.iter().collect();
    assert_eq!(distinct.len(), 400);
    let summary: Summary = cmd("XPENDING")
        .arg(&["jobs", "workers"])
        .query(&mut c)
        .unwrap();
    assert_eq!(summary, (0, None, None, None));
}

/// A group, its pending entries and its consumers survive a restart.
#[test]
fn groups_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    {
        let s = Server::start_at(tempfile::tempdir().unwrap(), db.clone(), |_| {});
        let mut c = s.conn();
        let _: String = cmd("XADD")
            .arg(&["s", "1-0", "f", "v"])
            .query(&mut c)
            .unwrap();
        let _: String = cmd("XADD")
            .arg(&["s", "2-0", "f", "w"])
            .query(&mut c)
            .unwrap();
        let _: () = cmd("XGROUP")
            .arg(&["CREATE", "s", "g", "0"])
            .query(&mut c)
            .unwrap();
        let _: redis::Value = cmd("XREADGROUP")
            .arg(&["GROUP", "g", "alice", "COUNT", "1", "STREAMS", "s", ">"])
            .query(&mut c)
            .unwrap();
    }
    let s = Server::start_at(tempfile::tempdir().unwrap(), db, |_| {});
    let mut c = s.conn();
    let pending: Vec<(String, String, i64, i64)> = cmd("XPENDING")
        .arg(&["s", "g", "-", "+", "10"])
        .query(&mut c)
        .unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(
        (pending[0].0.as_str(), pending[0].1.as_str(), pending[0].3),
        ("1-0", "alice", 1)
    );
    let next: Read = cmd("XREADGROUP")
        .arg(&["GROUP", "g", "bob", "STREAMS", "s", ">"])
        .query(&mut c)
        .unwrap();
    assert_eq!(next[0].1[0].0, "2-0");
}

/// Redis 7.0's edge cases: an entry `XCLAIM ... FORCE` puts in the pending
/// list counts one delivery (two without `JUSTID`, which counts the claim
/// too), and the last possible ID given to `XREADGROUP` asks for new
/// entries, as `>` does (Redis holds `>` as that ID).
#[test]
fn forced_claims_and_the_last_id_as_redis_has_them() {
    let s = Server::start(None);
    let mut c = s.conn();
    for id in ["1-0", "2-0", "3-0"] {
        let _: String = cmd("XADD").arg(&["s", id, "f", "v"]).query(&mut c).unwrap();
    }
    let _: () = cmd("XGROUP")
        .arg(&["CREATE", "s", "g", "0"])
        .query(&mut c)
        .unwrap();
    let _: Vec<String> = cmd("XCLAIM")
        .arg(&["s", "g", "a", "0", "1-0", "FORCE", "JUSTID"])
        .query(&mut c)
        .unwrap();
    let _: redis::Value = cmd("XCLAIM")
        .arg(&["s", "g", "a", "0", "2-0", "FORCE"])
        .query(&mut c)
        .unwrap();
    let pending: Vec<(String, String, i64, i64)> = cmd("XPENDING")
        .arg(&["s", "g", "-", "+", "10"])
        .query(&mut c)
        .unwrap();
    let counts: Vec<(&str, i64)> = pending.iter().map(|p| (p.0.as_str(), p.3)).collect();
    assert_eq!(counts, vec![("1-0", 1), ("2-0", 2)]);
    let max = "18446744073709551615-18446744073709551615";
    let read: Read = cmd("XREADGROUP")
        .arg(&["GROUP", "g", "b", "COUNT", "1", "STREAMS", "s", max])
        .query(&mut c)
        .unwrap();
    assert_eq!(read[0].1[0].0, "1-0");
}

/// A reader blocked in `XREADGROUP` is answered Redis's `UNBLOCKED` error
/// when its stream goes (deleted, replaced by another type, in a `MULTI`
/// too, or flushed); a plain `XREAD` waits on for the next stream.
#[test]
fn a_blocked_group_reader_is_told_when_its_stream_goes() {
    let s = Server::start(None);
    let mut c = s.conn();
    let replace: &[&[&[&str]]] = &[
        &[&["DEL", "s"]],
        &[&["SET", "s", "v"]],
        &[&["MULTI"], &["DEL", "s"], &["SADD", "s", "e1"], &["EXEC"]],
        &[&["FLUSHALL"]],
    ];
    for commands in replace {
        let _: redis::Value = cmd("DEL").arg("s").query(&mut c).unwrap();
        let _: String = cmd("XADD")
            .arg(&["s", "666", "f", "v"])
            .query(&mut c)
            .unwrap();
        let _: String = cmd("XGROUP")
            .arg(&["CREATE", "s", "g", "$"])
            .query(&mut c)
            .unwrap();
        let mut reader = s.conn();
        let blocked = std::thread::spawn(move || {
            cmd("XREADGROUP")
                .arg(&["GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">"])
                .query::<redis::Value>(&mut reader)
                .unwrap_err()
                .to_string()
        });
        wait_blocked(&mut c, 1);
        for command in *commands {
            let _: redis::Value = cmd(command[0]).arg(&command[1..]).query(&mut c).unwrap();
        }
        let e = blocked.join().unwrap();
        assert!(e.contains("no longer exists"), "{commands:?}: {e}");
    }
    let _: redis::Value = cmd("DEL").arg("s").query(&mut c).unwrap();
    let _: String = cmd("XADD")
        .arg(&["s", "666", "f", "v"])
        .query(&mut c)
        .unwrap();
    let mut reader = s.conn();
    let blocked = std::thread::spawn(move || {
        cmd("XREAD")
            .arg(&["BLOCK", "0", "STREAMS", "s", "$"])
            .query::<redis::Value>(&mut reader)
            .unwrap()
    });
    wait_blocked(&mut c, 1);
    let _: String = cmd("SET").arg("s").arg("v").query(&mut c).unwrap();
    let _: i64 = cmd("DEL").arg("s").query(&mut c).unwrap();
    let _: String = cmd("XADD")
        .arg(&["s", "667", "f", "v"])
        .query(&mut c)
        .unwrap();
    let got = format!("{:?}", blocked.join().unwrap());
    assert!(got.contains("667-0"), "{got}");
}
