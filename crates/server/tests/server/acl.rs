//! ACL users: logging in, what their rules refuse (commands, keys,
//! channels, on every path a command takes: one at a time, pipelined,
//! queued in MULTI, called from a script), the log of refusals, deleting
//! a user, and the ACL file across a restart.

use crate::common;
use redis::Value;

use common::{error_of, Server};

fn run(c: &mut redis::Connection, args: &[&str]) -> Value {
    redis::cmd(args[0]).arg(&args[1..]).query(c).unwrap()
}

fn ok(c: &mut redis::Connection, args: &[&str]) {
    assert_eq!(run(c, args), Value::Okay, "{args:?}");
}

/// A connection logged in as `user`.
fn as_user(s: &Server, user: &str, password: &str) -> redis::Connection {
    let mut c = s.conn();
    ok(&mut c, &["AUTH", user, password]);
    c
}

#[test]
fn a_user_is_refused_what_its_rules_refuse() {
    let s = Server::start(None);
    let mut admin = s.conn();
    ok(
        &mut admin,
        &[
            "ACL",
            "SETUSER",
            "alice",
            "on",
            ">pw",
            "+get",
            "+set",
            "+acl|whoami",
            "~a:*",
        ],
    );
    let e = error_of(&mut s.conn(), &["AUTH", "alice", "wrong"]);
    assert!(e.contains("WRONGPASS"), "{e}");
    let mut alice = as_user(&s, "alice", "pw");
    assert_eq!(
        run(&mut alice, &["ACL", "WHOAMI"]),
        Value::BulkString(b"alice".to_vec())
    );
    ok(&mut alice, &["SET", "a:1", "v"]);
    let e = error_of(&mut alice, &["SET", "b:1", "v"]);
    assert!(e.contains("NOPERM") && e.contains("keys"), "{e}");
    let e = error_of(&mut alice, &["HSET", "a:2", "f", "v"]);
    assert!(e.contains("NOPERM") && e.contains("'hset'"), "{e}");
    // A pipeline of plain writes is checked too (it has a path of its own).
    let mut pipe = redis::pipe();
    for i in 0..50 {
        pipe.cmd("SET").arg(format!("b:{i}")).arg("v");
    }
    let replies: Vec<redis::RedisResult<Value>> = pipe
        .query::<Vec<Value>>(&mut alice)
        .map(|v| v.into_iter().map(Ok).collect())
        .unwrap_or_else(|e| vec![Err(e)]);
    assert!(replies.iter().all(|r| r.is_err()), "{replies:?}");
    assert_eq!(run(&mut admin, &["EXISTS", "b:0", "b:49"]), Value::Int(0));
    // The refusals are logged, the latest first.
    let log = run(&mut admin, &["ACL", "LOG", "1"]);
    let text = format!("{log:?}");
    assert!(text.contains("alice") && text.contains("key"), "{text}");
}

#[test]
fn rules_changed_after_queueing_refuse_the_command_at_exec() {
    let s = Server::start(None);
    let mut admin = s.conn();
    ok(
        &mut admin,
        &["ACL", "SETUSER", "bob", "on", "nopass", "+@all", "~*"],
    );
    let mut raw = common::Raw::new(&s);
    raw.send(&[
        &["AUTH", "bob", "x"],
        &["MULTI"],
        &["INCR", "n"],
        &["SET", "m", "1"],
    ])
    .expect("+OK\r\n+OK\r\n+QUEUED\r\n+QUEUED\r\n");
    ok(&mut admin, &["ACL", "SETUSER", "bob", "-incr"]);
    raw.send(&[&["EXEC"]]).expect(
        "*2\r\n-NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: no permission to execute the command or subcommand\r\n+OK\r\n",
    );
    assert_eq!(run(&mut admin, &["EXISTS", "n"]), Value::Int(0));
    // Queueing a refused command fails the transaction.
    let mut bob = as_user(&s, "bob", "x");
    ok(&mut bob, &["MULTI"]);
    assert!(error_of(&mut bob, &["INCR", "n"]).contains("NOPERM"));
    let e = error_of(&mut bob, &["EXEC"]);
    assert!(e.contains("Transaction discarded"), "{e}");
}

#[test]
fn a_scripts_calls_are_checked_against_its_caller() {
    let s = Server::start(None);
    let mut admin = s.conn();
    ok(
        &mut admin,
        &[
            "ACL", "SETUSER", "carol", "on", "nopass", "+eval", "+get", "~k*",
        ],
    );
    let mut carol = as_user(&s, "carol", "x");
    let e = error_of(
        &mut carol,
        &["EVAL", "return redis.call('set', 'k1', 'v')", "0"],
    );
    assert!(
        e.contains("The user executing the script can't run this command"),
        "{e}"
    );
    let allowed = run(
        &mut carol,
        &["EVAL", "return redis.acl_check_cmd('get', 'k1')", "0"],
    );
    assert_eq!(allowed, Value::Int(1));
    let refused = run(
        &mut carol,
        &["EVAL", "return redis.acl_check_cmd('get', 'x')", "0"],
    );
    assert_eq!(refused, Value::Nil);
    // The default user's scripts are not restricted.
    assert_eq!(
        run(
            &mut admin,
            &["EVAL", "return redis.call('set', 'x', 'v')", "0"]
        ),
        Value::Okay
    );
}

#[test]
fn deleting_a_user_closes_its_connections() {
    let s = Server::start(None);
    let mut admin = s.conn();
    ok(
        &mut admin,
        &["ACL", "SETUSER", "dave", "on", ">pw", "+@all"],
    );
    let mut dave = as_user(&s, "dave", "pw");
    assert_eq!(
        run(&mut admin, &["ACL", "DELUSER", "dave", "nobody"]),
        Value::Int(1)
    );
    assert!(redis::cmd("PING").query::<String>(&mut dave).is_err());
    let e = error_of(&mut admin, &["ACL", "DELUSER", "default"]);
    assert!(e.contains("cannot be removed"), "{e}");
}

#[test]
fn a_bad_rule_changes_nothing() {
    let s = Server::start(None);
    let mut c = s.conn();
    ok(&mut c, &["ACL", "SETUSER", "erin", "on", "+get"]);
    let e = error_of(
        &mut c,
        &["ACL", "SETUSER", "erin", "+set", "+nosuchcommand"],
    );
    assert!(e.contains("Unknown command or category name in ACL"), "{e}");
    let Value::Array(list) = run(&mut c, &["ACL", "LIST"]) else {
        panic!("ACL LIST answers an array");
    };
    let erin = format!("{:?}", list[1]);
    assert!(
        erin.contains("-@all +get") && !erin.contains("+set"),
        "{erin}"
    );
    let e = error_of(&mut c, &["ACL", "SETUSER", "has space"]);
    assert!(e.contains("Usernames can't contain spaces"), "{e}");
}

#[test]
fn requirepass_set_at_run_time_is_the_default_users_password() {
    let s = Server::start(None);
    let mut c = s.conn();
    ok(&mut c, &["CONFIG", "SET", "requirepass", "hunter2"]);
    let mut fresh = redis::Client::open(format!("redis://{}/", s.addr))
        .unwrap()
        .get_connection()
        .unwrap();
    assert!(error_of(&mut fresh, &["GET", "k"]).contains("NOAUTH"));
    ok(&mut fresh, &["AUTH", "hunter2"]);
    ok(&mut fresh, &["CONFIG", "SET", "requirepass", ""]);
}

#[test]
fn the_acl_file_is_read_at_start_and_written_by_acl_save() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("users.acl");
    std::fs::write(
        &file,
        "user default on nopass ~* &* +@all\nuser frank on >pw ~f* +@read\n",
    )
    .unwrap();
    let db = dir.path().join("db");
    let start = |db: &std::path::Path| {
        let f = file.clone();
        Server::start_at(tempfile::tempdir().unwrap(), db.to_path_buf(), move |o| {
            o.aclfile = Some(f)
        })
    };
    {
        let s = start(&db);
        let mut frank = as_user(&s, "frank", "pw");
        assert!(error_of(&mut frank, &["SET", "f1", "v"]).contains("NOPERM"));
        let mut admin = s.conn();
        ok(
            &mut admin,
            &["ACL", "SETUSER", "gina", "on", ">g", "+@all", "~*"],
        );
        ok(&mut admin, &["ACL", "SAVE"]);
    }
    let saved = std::fs::read_to_string(&file).unwrap();
    assert!(saved.contains("user gina on #"), "{saved}");
    assert!(
        !saved.contains(">g"),
        "passwords are saved as hashes: {saved}"
    );
    let s = start(&db);
    let mut gina = as_user(&s, "gina", "g");
    ok(&mut gina, &["SET", "g", "1"]);
    // A file with an error loads nothing, and says where.
    std::fs::write(&file, "user hank on +nosuch\n").unwrap();
    let e = error_of(&mut gina, &["ACL", "LOAD"]);
    assert!(e.contains("users.acl:1") && e.contains("no change"), "{e}");
    assert_eq!(
        run(&mut gina, &["PING"]),
        Value::SimpleString("PONG".into())
    );
}

#[test]
fn a_server_does_not_start_on_a_broken_acl_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("users.acl");
    std::fs::write(&file, "user ivy on +@all ~*\nnot a user line\n").unwrap();
    let mut opts = slsm_server::ServerOptions::new(dir.path().join("db"));
    opts.bind = "127.0.0.1:0".parse().unwrap();
    opts.aclfile = Some(file);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let e = rt.block_on(slsm_server::start(opts)).err().unwrap();
    assert!(e.contains("should start with user keyword"), "{e}");
}

#[test]
fn a_client_that_has_not_logged_in_may_send_only_small_requests() {
    let s = Server::start(Some("pw"));
    let reply = s.raw(b"*100\r\n");
    assert_eq!(
        String::from_utf8_lossy(&reply),
        "-ERR Protocol error: unauthenticated multibulk length\r\n"
    );
    let reply = s.raw(b"*1\r\n$100000000\r\n");
    assert_eq!(
        String::from_utf8_lossy(&reply),
        "-ERR Protocol error: unauthenticated bulk length\r\n"
    );
    // Once logged in, the same connection may send what Redis allows: the
    // AUTH runs before the request after it is parsed.
    let value = "v".repeat(100_000);
    let mut raw = common::Raw::new(&s);
    raw.send(&[&["AUTH", "pw"], &["SET", "k", &value], &["STRLEN", "k"]])
        .expect("+OK\r\n+OK\r\n:100000\r\n");
}

#[test]
fn acl_pubsub_default_decides_the_channels_of_users_the_file_leaves_without() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("users.acl");
    std::fs::write(&file, "user carl on nopass ~* +@all\n").unwrap();
    for all in [false, true] {
        let f = file.clone();
        let s = Server::start_with(move |o| {
            o.aclfile = Some(f);
            o.acl_pubsub_default_all = all;
        });
        let mut carl = as_user(&s, "carl", "x");
        let published = redis::cmd("PUBLISH")
            .arg("news")
            .arg("m")
            .query::<i64>(&mut carl);
        assert_eq!(published.is_ok(), all, "allchannels: {all}: {published:?}");
    }
}
