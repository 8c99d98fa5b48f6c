//! The rest of the command surface, each reply asserted: expiry variants
//! of the string commands, the server commands clients send when they
//! connect (COMMAND DOCS/INFO, CONFIG GET, CLIENT SETINFO), SCAN TYPE,
//! pipelines grouped into one engine call, and the server-wide cap on
//! clients' unparsed input.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use redis::{cmd, Commands, Value};

use crate::common;
use common::{error_of, replies, request, Server};

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

#[test]
fn getex_psetex_msetnx_setrange() {
    let s = Server::start(None);
    let mut c = s.conn();
    let _: () = c.set("k", "v").unwrap();
    let getex = |c: &mut redis::Connection, args: &[&str]| -> Option<String> {
        cmd("GETEX").arg("k").arg(args).query(c).unwrap()
    };
    assert_eq!(getex(&mut c, &[]).as_deref(), Some("v"));
    assert_eq!(c.ttl::<_, i64>("k").unwrap(), -1);
    assert_eq!(getex(&mut c, &["EX", "100"]).as_deref(), Some("v"));
    assert!((99..=100).contains(&c.ttl::<_, i64>("k").unwrap()));
    assert_eq!(getex(&mut c, &["PX", "50000"]).as_deref(), Some("v"));
    assert!((49_000..=50_000).contains(&c.pttl::<_, i64>("k").unwrap()));
    let at = (now_ms() / 1000 + 200).to_string();
    assert_eq!(getex(&mut c, &["EXAT", &at]).as_deref(), Some("v"));
    assert!((198..=200).contains(&c.ttl::<_, i64>("k").unwrap()));
    let at = (now_ms() + 300_000).to_string();
    assert_eq!(getex(&mut c, &["PXAT", &at]).as_deref(), Some("v"));
    assert!((298..=300).contains(&c.ttl::<_, i64>("k").unwrap()));
    assert_eq!(getex(&mut c, &["PERSIST"]).as_deref(), Some("v"));
    assert_eq!(c.ttl::<_, i64>("k").unwrap(), -1);
    let e = error_of(&mut c, &["GETEX", "k", "EX", "0"]);
    assert!(e.contains("invalid expire time"), "{e}");
    assert_eq!(
        cmd("GETEX")
            .arg("missing")
            .query::<Option<String>>(&mut c)
            .unwrap(),
        None
    );

    let _: () = cmd("PSETEX")
        .arg("p")
        .arg(80)
        .arg("x")
        .query(&mut c)
        .unwrap();
    assert!((1..=80).contains(&c.pttl::<_, i64>("p").unwrap()));
    std::thread::sleep(Duration::from_millis(150));
    assert_eq!(c.get::<_, Option<String>>("p").unwrap(), None);
    let e = error_of(&mut c, &["PSETEX", "p", "0", "x"]);
    assert!(e.contains("invalid expire time in 'psetex'"), "{e}");

    let ok: bool = cmd("MSETNX")
        .arg("n1")
        .arg("1")
        .arg("n2")
        .arg("2")
        .query(&mut c)
        .unwrap();
    assert!(ok);
    assert_eq!(
        c.mget::<_, Vec<String>>(&["n1", "n2"]).unwrap(),
        vec!["1", "2"]
    );
    let ok: bool = cmd("MSETNX")
        .arg("n3")
        .arg("3")
        .arg("n1")
        .arg("9")
        .query(&mut c)
        .unwrap();
    assert!(!ok);
    assert!(
        !c.exists::<_, bool>("n3").unwrap(),
        "MSETNX is all or nothing"
    );
    assert_eq!(c.get::<_, String>("n1").unwrap(), "1");

    assert_eq!(c.setrange::<_, _, i64>("fresh", 3, "ab").unwrap(), 5);
    assert_eq!(c.get::<_, Vec<u8>>("fresh").unwrap(), b"\0\0\0ab");
    assert_eq!(c.setrange::<_, _, i64>("fresh", 1, "Z").unwrap(), 5);
    assert_eq!(c.get::<_, Vec<u8>>("fresh").unwrap(), b"\0Z\0ab");
    assert_eq!(c.setrange::<_, _, i64>("none", 0, "").unwrap(), 0);
    assert!(!c.exists::<_, bool>("none").unwrap());
    let e = error_of(&mut c, &["SETRANGE", "fresh", "-1", "x"]);
    assert!(e.contains("offset is out of range"), "{e}");
}

#[test]
fn command_docs_and_info_describe_the_commands() {
    let s = Server::start(None);
    let mut c = s.conn();
    let count: i64 = cmd("COMMAND").arg("COUNT").query(&mut c).unwrap();
    let list: Vec<String> = cmd("COMMAND").arg("LIST").query(&mut c).unwrap();
    // LIST names subcommands too (`config|get`), as Redis's does; COUNT
    // counts commands.
    let top = list.iter().filter(|n| !n.contains('|')).count();
    assert_eq!(top as i64, count);
    assert!(list.iter().any(|n| n == "getex"));
    let info: Vec<Value> = cmd("COMMAND")
        .arg("INFO")
        .arg("get")
        .arg("MSET")
        .arg("nosuch")
        .query(&mut c)
        .unwrap();
    assert_eq!(info.len(), 3);
    let Value::Array(get) = &info[0] else {
        panic!("{:?}", info[0])
    };
    assert_eq!(get[0], Value::BulkString(b"get".to_vec()));
    assert_eq!(get[1], Value::Int(2));
    assert_eq!(&get[3..6], &[Value::Int(1), Value::Int(1), Value::Int(1)]);
    let Value::Array(mset) = &info[1] else {
        panic!("{:?}", info[1])
    };
    assert_eq!(mset[1], Value::Int(-3));
    assert_eq!(&mset[3..6], &[Value::Int(1), Value::Int(-1), Value::Int(2)]);
    assert_eq!(info[2], Value::Nil);
    // RESP2: a flat array of name, docs pairs; unknown names left out.
    let docs: Vec<Value> = cmd("COMMAND")
        .arg("DOCS")
        .arg("set")
        .arg("nosuch")
        .query(&mut c)
        .unwrap();
    assert_eq!(docs.len(), 2);
    assert_eq!(docs[0], Value::BulkString(b"set".to_vec()));
    let Value::Array(fields) = &docs[1] else {
        panic!("{:?}", docs[1])
    };
    assert!(fields.contains(&Value::BulkString(b"summary".to_vec())));
    assert!(fields.contains(&Value::BulkString(b"string".to_vec())));
    let all: Vec<Value> = cmd("COMMAND").arg("DOCS").query(&mut c).unwrap();
    assert_eq!(all.len() as i64, 2 * count);
}

#[test]
fn config_get_patterns_set_and_client_setinfo() {
    let s = Server::start_with(|o| o.maxclients = 77);
    let mut c = s.conn();
    let cfg = |c: &mut redis::Connection, pattern: &str| -> Vec<(String, String)> {
        let flat: Vec<String> = cmd("CONFIG").arg("GET").arg(pattern).query(c).unwrap();
        flat.chunks(2)
            .map(|p| (p[0].clone(), p[1].clone()))
            .collect()
    };
    assert_eq!(
        cfg(&mut c, "appendonly"),
        vec![("appendonly".into(), "yes".into())]
    );
    assert_eq!(
        cfg(&mut c, "APPENDFSYNC"),
        vec![("appendfsync".into(), "no".into())]
    );
    let max: Vec<String> = cfg(&mut c, "max*").into_iter().map(|p| p.0).collect();
    assert_eq!(
        max,
        vec![
            "maxclients",
            "maxmemory",
            "maxmemory-policy",
            "maxmemory-samples",
            "maxmemory-eviction-tenacity"
        ]
    );
    assert_eq!(cfg(&mut c, "maxclients")[0].1, "77");
    assert_eq!(cfg(&mut c, "maxmemory-policy")[0].1, "noeviction");
    assert!(cfg(&mut c, "nosuch*").is_empty());
    // Pairs in the server's order (Redis's is its dictionary's).
    let two: std::collections::HashMap<String, String> = cmd("CONFIG")
        .arg("GET")
        .arg("save")
        .arg("databases")
        .query(&mut c)
        .unwrap();
    let want = [("save", ""), ("databases", "1")];
    let want = want
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(two, want);
    // CONFIG SET: the current value is accepted, a change refused clearly.
    let _: () = cmd("CONFIG")
        .arg("SET")
        .arg("appendfsync")
        .arg("no")
        .query(&mut c)
        .unwrap();
    let e = error_of(&mut c, &["CONFIG", "SET", "appendfsync", "always"]);
    assert!(e.contains("slsm serve"), "{e}");
    let e = error_of(&mut c, &["CONFIG", "SET", "nosuch", "1"]);
    assert!(e.contains("Unknown option"), "{e}");
    let _: () = cmd("CONFIG").arg("RESETSTAT").query(&mut c).unwrap();
    // The counter restarts: the INFO that reads it is the one command since.
    let stats: String = cmd("INFO").arg("stats").query(&mut c).unwrap();
    assert!(stats.contains("total_commands_processed:1\r\n"), "{stats}");

    for (attr, value) in [("lib-name", "redis-rs"), ("LIB-VER", "0.1")] {
        let _: () = cmd("CLIENT")
            .arg("SETINFO")
            .arg(attr)
            .arg(value)
            .query(&mut c)
            .unwrap();
    }
    let info: String = cmd("CLIENT").arg("INFO").query(&mut c).unwrap();
    assert!(info.contains(" lib-name=redis-rs lib-ver=0.1"), "{info}");
    let e = error_of(&mut c, &["CLIENT", "SETINFO", "lib-name"]);
    assert!(e.contains("wrong number of arguments"), "{e}");
    let e = error_of(&mut c, &["CLIENT", "SETINFO", "color", "red"]);
    assert!(e.contains("Unrecognized option 'color'"), "{e}");
}

#[test]
fn scan_type_filters_by_type() {
    let s = Server::start(None);
    let mut c = s.conn();
    for i in 0..30 {
        let _: () = c.set(format!("s{i}"), i).unwrap();
    }
    let scan_all = |c: &mut redis::Connection, ty: &str| -> Vec<String> {
        let (mut cursor, mut keys) = (0u64, Vec::new());
        loop {
            let (next, batch): (u64, Vec<String>) = cmd("SCAN")
                .arg(cursor)
                .arg("COUNT")
                .arg(7)
                .arg("TYPE")
                .arg(ty)
                .query(c)
                .unwrap();
            keys.extend(batch);
            if next == 0 {
                return keys;
            }
            cursor = next;
        }
    };
    assert_eq!(scan_all(&mut c, "string").len(), 30);
    assert_eq!(scan_all(&mut c, "STRING").len(), 30);
    assert!(scan_all(&mut c, "hash").is_empty());
    assert!(scan_all(&mut c, "list").is_empty());
}

#[test]
fn pipelined_groups_reply_as_one_by_one() {
    let s = Server::start(None);
    let too_long = "k".repeat(70_000);
    let pipeline: Vec<Vec<&str>> = vec![
        vec!["SET", "a", "1"],
        vec!["SET", &too_long, "x"],
        vec!["set", "b", "2"],
        vec!["GET", "a"],
        vec!["GET", "b"],
        vec!["GET", "nope"],
        vec!["GET", &too_long],
        vec!["INCR", "n"],
        vec!["incr", "n"],
        vec!["INCRBY", "n", "5"],
        vec!["DECRBY", "n", "x"],
        vec!["MSET", "m1", "x", "m2", "y"],
        vec!["MSET", "odd"],
        vec!["GET", "m1"],
        vec!["GET", "m2"],
        vec!["INCR", "a"],
        vec!["INCR", "m1"],
        vec!["QUIT"],
    ];
    let bytes: Vec<u8> = pipeline.iter().flat_map(|r| request(r)).collect();
    let got = replies(&s.raw(&bytes));
    let expect_ok_or_err = [
        (0, "+OK"),
        (1, "-ERR"),
        (2, "+OK"),
        (3, "1"),
        (4, "2"),
        (5, "nil"),
        (6, "-ERR"),
        (7, ":1"),
        (8, ":2"),
        (9, ":7"),
        (10, "-ERR value is not an integer or out of range"),
        (11, "+OK"),
        (12, "-ERR wrong number of arguments for 'mset' command"),
        (13, "x"),
        (14, "y"),
        (15, ":2"),
        (16, "-ERR value is not an integer or out of range"),
        (17, "+OK"),
    ];
    assert_eq!(got.len(), pipeline.len(), "{got:?}");
    for (i, want) in expect_ok_or_err {
        assert!(
            got[i].starts_with(want),
            "reply {i}: {:?}, want {want:?}",
            got[i]
        );
    }
    let mut c = s.conn();
    assert_eq!(c.get::<_, i64>("n").unwrap(), 7);
    assert_eq!(c.get::<_, String>("b").unwrap(), "2");
}

#[test]
fn clients_holding_too_much_input_are_closed_and_others_served() {
    let s = Server::start_with(|o| o.max_query_buffers = 1 << 20);
    // A SET whose value is `declared` bytes long, and the first `sent` of them.
    let partial_value = |declared: usize, sent: usize| {
        let mut req = format!("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n${declared}\r\n").into_bytes();
        req.extend(std::iter::repeat_n(b'v', sent));
        req
    };
    let mut hostile: Vec<TcpStream> = (0..3)
        .map(|_| TcpStream::connect(s.addr).unwrap())
        .collect();
    for h in &mut hostile {
        // Fails for a client the server has closed already.
        let _ = h.write_all(&partial_value(10 << 20, 600 << 10));
    }
    // A client holding a little stays; it is served while the others wait.
    let mut modest = TcpStream::connect(s.addr).unwrap();
    modest.write_all(&partial_value(1000, 100)).unwrap();
    let mut c = s.conn();
    let _: () = c.set("fine", "yes").unwrap();
    // Past the cap, the clients holding more than their share are closed
    // (their next read sees the end of the stream) once they send more.
    let mut closed = 0;
    for h in &mut hostile {
        h.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
        let _ = h.write_all(b"vv");
        let mut buf = [0u8; 16];
        closed += match h.read(&mut buf) {
            Ok(0) => 1,
            Err(e) if !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => 1,
            _ => 0,
        };
    }
    assert!(closed >= 2, "only {closed} of 3 closed");
    modest.write_all(&[b'v'; 900]).unwrap();
    modest.write_all(b"\r\n").unwrap();
    modest
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut buf = [0u8; 5];
    modest.read_exact(&mut buf).unwrap();
    assert_eq!(&buf, b"+OK\r\n");
    assert_eq!(c.get::<_, String>("fine").unwrap(), "yes");
    let info: String = cmd("INFO").arg("clients").query(&mut c).unwrap();
    assert!(info.contains("slsm_max_query_buffers:1048576"), "{info}");
}

#[test]
fn a_transaction_queued_without_end_is_closed_like_input_sent_without_end() {
    // The queue of a MULTI is input the server holds: charged to the
    // same cap (1 MiB here) as unparsed input.
    let s = Server::start_with(|o| o.max_query_buffers = 1 << 20);
    let mut hostile = TcpStream::connect(s.addr).unwrap();
    hostile
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    hostile.write_all(b"*1\r\n$5\r\nMULTI\r\n").unwrap();
    let value = "v".repeat(16 << 10);
    let set = format!(
        "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n${}\r\n{value}\r\n",
        value.len()
    );
    // 64 MiB of queued SETs, were they all taken: the server closes the
    // client long before (a write fails, or the reply stream ends).
    let mut closed = false;
    let mut replies = Vec::new();
    for _ in 0..4096 {
        if hostile.write_all(set.as_bytes()).is_err() {
            closed = true;
            break;
        }
        let mut buf = [0u8; 4096];
        match hostile.read(&mut buf) {
            Ok(0) | Err(_) => {
                closed = true;
                break;
            }
            Ok(n) => replies.extend_from_slice(&buf[..n]),
        }
    }
    assert!(closed, "a client queueing 64 MiB was not closed");
    let queued = replies.windows(9).filter(|w| w == b"+QUEUED\r\n").count();
    assert!(
        queued < 256,
        "{queued} SETs of 16 KiB queued under a 1 MiB cap"
    );
    // Nothing of it was applied, and the others are served; the charge
    // went with the closed client.
    let mut c = s.conn();
    assert!(!c.exists::<_, bool>("k").unwrap());
    let _: () = c.set("fine", "yes").unwrap();
    let info: String = cmd("INFO").arg("clients").query(&mut c).unwrap();
    assert!(info.contains("slsm_pending_input_bytes:0"), "{info}");
}

#[test]
fn a_client_that_does_not_read_its_replies_holds_up_only_itself() {
    let s = Server::start(None);
    let mut c = s.conn();
    let big = vec![b'x'; 1 << 20];
    let _: () = c.set("big", &big[..]).unwrap();
    let processed = |c: &mut redis::Connection| -> u64 {
        let info: String = cmd("INFO").arg("stats").query(c).unwrap();
        let line = info
            .lines()
            .find_map(|l| l.strip_prefix("total_commands_processed:"))
            .unwrap();
        line.trim().parse().unwrap()
    };
    let before = processed(&mut c);
    // 2,000 GETs of a 1 MiB value (2 GiB of replies), never read: the
    // server writes until the socket is full and then waits, reading no
    // more requests, instead of running them all into memory.
    let mut greedy = TcpStream::connect(s.addr).unwrap();
    greedy
        .write_all(&request(&["GET", "big"]).repeat(2000))
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let ran = processed(&mut c) - before;
    assert!(ran < 200, "{ran} of the unread GETs ran");
    // Others are served meanwhile, and the greedy client gets its replies
    // once it reads them.
    assert_eq!(c.get::<_, Vec<u8>>("big").unwrap().len(), 1 << 20);
    greedy
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let reply_len = "$1048576\r\n".len() + (1 << 20) + 2;
    let mut got = vec![0u8; reply_len * 2000];
    greedy.read_exact(&mut got).unwrap();
    assert!(got.starts_with(b"$1048576\r\nxxx"));
    assert!(got[got.len() - reply_len..].starts_with(b"$1048576\r\n"));
}

#[test]
fn client_list_info_and_kill() {
    let s = Server::start(None);
    let mut me = s.conn();
    let mut other = s.conn();
    let _: () = cmd("CLIENT")
        .arg("SETNAME")
        .arg("worker-1")
        .query(&mut other)
        .unwrap();
    let _: () = other.set("k", "v").unwrap();
    let other_id: i64 = cmd("CLIENT").arg("ID").query(&mut other).unwrap();
    let my_id: i64 = cmd("CLIENT").arg("ID").query(&mut me).unwrap();
    // One line per client, in Redis's key=value fields (client libraries
    // parse them: redis-py needs every integer field it knows).
    let list: String = cmd("CLIENT").arg("LIST").query(&mut me).unwrap();
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 2, "{list}");
    let fields = |line: &str| -> std::collections::HashMap<String, String> {
        line.split(' ')
            .map(|kv| kv.split_once('=').unwrap())
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    };
    let theirs = fields(lines.iter().find(|l| l.contains("name=worker-1")).unwrap());
    assert_eq!(theirs["id"], other_id.to_string());
    // A container's command is named with its subcommand, as in Redis 7.
    assert_eq!(theirs["cmd"], "client|id");
    for int_field in [
        "age", "idle", "db", "multi", "qbuf", "argv-mem", "omem", "tot-mem",
    ] {
        theirs[int_field].parse::<i64>().unwrap();
    }
    assert!(theirs["addr"].starts_with("127.0.0.1:"));
    assert_eq!(theirs["laddr"], s.addr.to_string());
    let info: String = cmd("CLIENT").arg("INFO").query(&mut me).unwrap();
    assert_eq!(fields(info.trim())["id"], my_id.to_string());
    let only: String = cmd("CLIENT")
        .arg("LIST")
        .arg("ID")
        .arg(other_id)
        .query(&mut me)
        .unwrap();
    assert_eq!(only.lines().count(), 1);
    // KILL by id answers how many; the killed connection is closed.
    let killed: i64 = cmd("CLIENT")
        .arg("KILL")
        .arg("ID")
        .arg(other_id)
        .query(&mut me)
        .unwrap();
    assert_eq!(killed, 1);
    assert!(other.get::<_, String>("k").is_err());
    let err = cmd("CLIENT")
        .arg("KILL")
        .arg("127.0.0.1:1")
        .query::<()>(&mut me)
        .unwrap_err();
    assert!(err.to_string().contains("No such client"), "{err}");
    // SKIPME is the default: killing by my own address spares me.
    let mine = fields(info.trim())["addr"].clone();
    let n: i64 = cmd("CLIENT")
        .arg("KILL")
        .arg("ADDR")
        .arg(&mine)
        .query(&mut me)
        .unwrap();
    assert_eq!(n, 0);
    let list: String = cmd("CLIENT").arg("LIST").query(&mut me).unwrap();
    assert_eq!(list.lines().count(), 1, "{list}");
}

#[test]
fn a_client_that_does_not_read_can_be_killed() {
    let s = Server::start(None);
    let mut c = s.conn();
    let _: () = c.set("big", vec![b'x'; 1 << 20]).unwrap();
    let mut greedy = TcpStream::connect(s.addr).unwrap();
    greedy.write_all(&request(&["CLIENT", "ID"])).unwrap();
    let mut id = [0u8; 64];
    let n = greedy.read(&mut id).unwrap();
    let id = std::str::from_utf8(&id[1..n]).unwrap().trim().to_string();
    // The server blocks writing this client's replies...
    greedy
        .write_all(&request(&["GET", "big"]).repeat(300))
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let killed: i64 = cmd("CLIENT")
        .arg("KILL")
        .arg("ID")
        .arg(&id)
        .query(&mut c)
        .unwrap();
    assert_eq!(killed, 1);
    // ...and still closes it at once: what was sent before, then the end.
    greedy
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut got = Vec::new();
    greedy.read_to_end(&mut got).unwrap();
    assert!(
        got.len() < 300 << 20,
        "{} bytes: not closed early",
        got.len()
    );
}

/// A `COUNT` above what one call reads (100,000 keys) still ends the scan
/// only when every key was returned.
#[test]
fn scan_with_a_count_above_one_calls_reads_returns_every_key() {
    let s = Server::start(None);
    let mut c = s.conn();
    for chunk in 0..11 {
        let pairs: Vec<(String, u32)> = (0..10_000).map(|i| (format!("k{chunk}-{i}"), i)).collect();
        let _: () = c.mset(&pairs).unwrap();
    }
    let (mut cursor, mut seen) = (0u64, std::collections::HashSet::new());
    loop {
        let (next, batch): (u64, Vec<String>) = cmd("SCAN")
            .arg(cursor)
            .arg("COUNT")
            .arg(150_000)
            .query(&mut c)
            .unwrap();
        seen.extend(batch);
        if next == 0 {
            break;
        }
        cursor = next;
    }
    assert_eq!(seen.len(), 110_000);
}
