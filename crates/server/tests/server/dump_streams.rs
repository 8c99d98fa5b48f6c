//! Streams through `DUMP` and `RESTORE`: streams that redis-server 7.0
//! `DUMP`ed (`tests/data/redis7_stream/`, written by its `make.py`)
//! restore here and answer every read as Redis answered it after the same
//! `RESTORE`, byte for byte (but for `radix-tree-nodes`, the shape of
//! Redis's own tree); a stream built here, with deletions, groups,
//! pending entries and consumers, dumps and restores whole; damaged
//! payloads are refused or restored, never the server's end. That Redis
//! restores what this server dumps is checked against redis-server by
//! `bench/redis/differential.py` (every key, both ways, every 100
//! commands).

use redis::{cmd, Connection, Value};

use crate::common;
use common::{crc64, Raw, Server};

const PAYLOADS: &[(&str, &[u8])] = &[
    ("r_s", include_bytes!("../data/redis7_stream/big.bin")),
    ("r_small", include_bytes!("../data/redis7_stream/small.bin")),
    ("r_empty", include_bytes!("../data/redis7_stream/empty.bin")),
];

/// Redis's replies after the `RESTORE`s: records of `> request words`, a
/// newline, the raw reply, a newline and `<<END>>`.
const REPLIES: &[u8] = include_bytes!("../data/redis7_stream/replies.resp");

fn restore(c: &mut Connection, key: &str, payload: &[u8]) -> redis::RedisResult<()> {
    cmd("RESTORE").arg(key).arg(0).arg(payload).query(c)
}

/// `reply` with the count of `radix-tree-nodes` taken out.
fn without_tree_nodes(reply: &[u8]) -> String {
    let text = String::from_utf8(reply.to_vec()).unwrap();
    let mut out = String::new();
    let mut lines = text.split_inclusive("\r\n");
    while let Some(line) = lines.next() {
        out.push_str(line);
        if line == "radix-tree-nodes\r\n" {
            lines.next();
            out.push_str(":?\r\n");
        }
    }
    out
}

#[test]
fn streams_dumped_by_redis_read_as_in_redis() {
    let s = Server::start(None);
    let mut c = s.conn();
    for (key, payload) in PAYLOADS {
        restore(&mut c, key, payload).unwrap();
    }
    let mut raw = Raw::new(&s);
    let text = String::from_utf8(REPLIES.to_vec()).unwrap();
    let mut checked = 0;
    for record in text.split("\n<<END>>\n").filter(|r| !r.is_empty()) {
        let (request, want) = record.split_once('\n').unwrap();
        let args: Vec<&str> = request.strip_prefix("> ").unwrap().split(' ').collect();
        let got = raw.reply_to(&args);
        assert_eq!(
            without_tree_nodes(&got),
            without_tree_nodes(want.as_bytes()),
            "{request}"
        );
        checked += 1;
    }
    assert_eq!(checked, 24);
}

/// The reads that show all of a stream's state (times included: a
/// restored stream keeps its consumers' and deliveries' times).
fn state(raw: &mut Raw, key: &str) -> Vec<String> {
    [
        &["XRANGE", key, "-", "+"][..],
        &["XINFO", "STREAM", key, "FULL", "COUNT", "0"],
        &["XINFO", "GROUPS", key],
        &["XPENDING", key, "g1"],
        &["XLEN", key],
    ]
    .iter()
    .map(|q| without_tree_nodes(&raw.reply_to(q)))
    .collect()
}

#[test]
fn streams_built_here_restore_whole() {
    let s = Server::start(None);
    let mut c = s.conn();
    let big = "v".repeat(100_000);
    let mut raw = Raw::new(&s);
    for i in 1..=330u64 {
        let id = format!("{}-{i}", 1_000 + i / 7);
        let count = (i as i64 * -9_999_991).to_string();
        let fields: Vec<&str> = match i % 11 {
            0 => vec!["other", "x", "count", &count],
            5 => vec!["name", &big],
            _ => vec!["name", "n", "count", &count],
        };
        let mut request = vec!["XADD", "s", &id];
        request.extend(fields);
        raw.reply_to(&request);
    }
    for request in [
        &["XDEL", "s", "1000-1", "1014-100", "1047-330"][..],
        &["XGROUP", "CREATE", "s", "g1", "0"],
        &[
            "XGROUP",
            "CREATE",
            "s",
            "g2",
            "1020-140",
            "ENTRIESREAD",
            "7",
        ],
        &[
            "XREADGROUP",
            "GROUP",
            "g1",
            "alice",
            "COUNT",
            "5",
            "STREAMS",
            "s",
            ">",
        ],
        &[
            "XREADGROUP",
            "GROUP",
            "g1",
            "bob",
            "COUNT",
            "3",
            "STREAMS",
            "s",
            ">",
        ],
        &["XREADGROUP", "GROUP", "g2", "carol", "STREAMS", "s", ">"],
        &["XACK", "s", "g1", "1000-3"],
        &["XCLAIM", "s", "g1", "bob", "0", "1000-4"],
        &["XGROUP", "CREATECONSUMER", "s", "g1", "dave"],
        &[
            "XSETID",
            "s",
            "2000-0",
            "ENTRIESADDED",
            "400",
            "MAXDELETEDID",
            "1500-0",
        ],
    ] {
        raw.reply_to(request);
    }
    let payload: Vec<u8> = cmd("DUMP").arg("s").query(&mut c).unwrap();
    restore(&mut c, "copy", &payload).unwrap();
    let (original, copy) = (state(&mut raw, "s"), state(&mut raw, "copy"));
    assert!(original[0].len() > 3_000_000, "every entry read");
    for (want, got) in original.iter().zip(&copy) {
        assert_eq!(want.replace("'s'", "'copy'"), *got);
    }
    // The copy works on: new entries after the restored last ID, and the
    // group's next read delivers them.
    raw.reply_to(&["XADD", "copy", "*", "k", "v"]);
    let next: Value = cmd("XREADGROUP")
        .arg(&[
            "GROUP", "g1", "alice", "COUNT", "1000", "STREAMS", "copy", ">",
        ])
        .query(&mut c)
        .unwrap();
    let Value::Array(streams) = next else {
        panic!("{next:?}")
    };
    assert_eq!(streams.len(), 1);
}

/// A payload with one byte changed (the footer made right again) is
/// restored or refused as Redis words it; the server stays up.
#[test]
fn damaged_stream_payloads_are_refused_or_read() {
    let s = Server::start(None);
    let mut c = s.conn();
    let payload = PAYLOADS[0].1;
    let body = &payload[..payload.len() - 10];
    let (mut refused, mut read) = (0, 0);
    for at in (0..body.len()).step_by(3) {
        let mut damaged = body.to_vec();
        damaged[at] ^= 0x21;
        damaged.extend(&payload[body.len()..body.len() + 2]);
        let crc = crc64(&damaged);
        damaged.extend(crc.to_le_bytes());
        match restore(&mut c, "k", &damaged) {
            Ok(()) => {
                read += 1;
                let _: () = cmd("DEL").arg("k").query(&mut c).unwrap();
            }
            Err(e) => {
                assert_eq!(e.detail(), Some("Bad data format"), "at {at}");
                refused += 1;
            }
        }
    }
    assert!(refused > 100, "{refused} refused, {read} read");
    let pong: String = cmd("PING").query(&mut c).unwrap();
    assert_eq!(pong, "PONG");
}
