//! Replies compared with redis-server's, byte for byte: each case below is
//! what Debian's redis-server 7.0 answered to the same requests on one
//! connection (errors, option order, AUTH without a password, INFO's
//! layout, INCRBYFLOAT's digits, the commands beyond the list
//! that clients use: GETSET, RENAMENX, TOUCH, EXPIRETIME, TIME).

use crate::common;
use common::{replies, request, Server};

/// Sends `requests` on one connection, then QUIT, and returns the replies
/// (QUIT's `+OK` dropped).
fn session(s: &Server, requests: &[&[&str]]) -> Vec<String> {
    let mut bytes = Vec::new();
    for r in requests {
        bytes.extend(request(r));
    }
    bytes.extend(request(&["QUIT"]));
    let mut out = replies(&s.raw(&bytes));
    assert_eq!(out.pop().as_deref(), Some("+OK"));
    out
}

#[test]
fn auth_without_a_password_is_the_default_users_nopass() {
    let s = Server::start(None);
    let got = session(
        &s,
        &[
            &["AUTH", "x"],
            &["AUTH", "default", "x"],
            &["AUTH", "nouser", "x"],
            &["HELLO", "3", "AUTH", "nouser", "x"],
            &["HELLO", "2", "AUTH", "default"],
            &["HELLO", "2", "FOO"],
            &["AUTH", "a", "b", "c"],
        ],
    );
    assert_eq!(
        got,
        [
            "-ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?",
            "+OK",
            "-WRONGPASS invalid username-password pair or user is disabled.",
            "-WRONGPASS invalid username-password pair or user is disabled.",
            "-ERR Syntax error in HELLO option 'AUTH'",
            "-ERR Syntax error in HELLO option 'FOO'",
            "-ERR syntax error",
        ]
    );
}

#[test]
fn auth_with_a_password_takes_only_the_default_user() {
    let s = Server::start(Some("pw"));
    let got = session(
        &s,
        &[
            &["AUTH", "other", "pw"],
            &["GET", "k"],
            &["AUTH", "default", "pw"],
            &["GET", "k"],
        ],
    );
    assert_eq!(
        got,
        [
            "-WRONGPASS invalid username-password pair or user is disabled.",
            "-NOAUTH Authentication required.",
            "+OK",
            "nil",
        ]
    );
}

#[test]
fn errors_name_what_redis_names() {
    let s = Server::start(None);
    let got = session(
        &s,
        &[
            &["SELECT", "x"],
            &["SELECT", "0"],
            &["SELECT", "1"],
            &["CLIENT", "SETNAME", "my", "name"],
            &["CLIENT", "GETNAME", "x"],
            &["CLIENT", "FOO"],
            &["CONFIG", "GET"],
            &["CONFIG", "SET", "maxmemory"],
            &["CONFIG", "foo"],
            &["DBSIZE", "x"],
            &["MULTI", "x"],
            &["EXEC", "x"],
            &["FLUSHDB", "foo"],
            &["FLUSHDB", "async"],
            &["FLUSHALL", "SYNC"],
            &["SET", "e", "v"],
            &["EXPIRE", "e", "abc", "gt", "lt"],
            &["EXPIRE", "e", "abc", "nx", "xx"],
            &["EXPIRE", "e", "abc", "foo"],
            &["EXPIRE", "e", "abc"],
            &["SET", "b", "10", "ex", "abc", "nx", "xx"],
            &["SET", "b", "10", "ex", "abc"],
            &["GETEX", "nosuch", "ex", "-1"],
            &["GETEX", "e", "ex", "-1"],
            &["GETEX", "e", "foo", "1"],
        ],
    );
    assert_eq!(
        got,
        [
            "-ERR value is not an integer or out of range",
            "+OK",
            "-ERR DB index is out of range",
            "-ERR wrong number of arguments for 'client|setname' command",
            "-ERR wrong number of arguments for 'client|getname' command",
            "-ERR unknown subcommand 'FOO'. Try CLIENT HELP.",
            "-ERR wrong number of arguments for 'config|get' command",
            "-ERR wrong number of arguments for 'config|set' command",
            "-ERR unknown subcommand 'foo'. Try CONFIG HELP.",
            "-ERR wrong number of arguments for 'dbsize' command",
            "-ERR wrong number of arguments for 'multi' command",
            "-EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command",
            "-ERR syntax error",
            "+OK",
            "+OK",
            "+OK",
            "-ERR GT and LT options at the same time are not compatible",
            "-ERR NX and XX, GT or LT options at the same time are not compatible",
            "-ERR Unsupported option foo",
            "-ERR value is not an integer or out of range",
            "-ERR syntax error",
            "-ERR value is not an integer or out of range",
            "nil",
            "-ERR invalid expire time in 'getex' command",
            "-ERR syntax error",
        ]
    );
}

#[test]
fn incrbyfloat_answers_redis_digits_and_limits() {
    let s = Server::start(None);
    let mut requests: Vec<&[&str]> = vec![
        &["SET", "f", "10.50"],
        &["INCRBYFLOAT", "f", "0.1"],
        &["INCRBYFLOAT", "f", "-5"],
        &["SET", "f", "5.0e3"],
        &["INCRBYFLOAT", "f", "2.0e2"],
        &["INCRBYFLOAT", "f", " 1"],
        &["INCRBYFLOAT", "f", "inf"],
        &["INCRBYFLOAT", "f", "nan"],
        &["INCRBYFLOAT", "h", "0x10"],
        &["SET", "s", "abc"],
        &["INCRBYFLOAT", "s", "1"],
    ];
    let mut expected = vec![
        "+OK",
        "10.6",
        "5.6",
        "+OK",
        "5200",
        "-ERR value is not a valid float",
        "-ERR increment would produce NaN or Infinity",
        "-ERR value is not a valid float",
        "16",
        "+OK",
        "-ERR value is not a valid float",
    ];
    // x86-64's 80-bit long double, as redis-server computes there.
    if cfg!(target_arch = "x86_64") {
        requests.extend([&["SET", "g", "1e10"][..], &["INCRBYFLOAT", "g", "3.1"]]);
        expected.extend(["+OK", "10000000003.09999999962747097"]);
    }
    assert_eq!(session(&s, &requests), expected);
}

#[test]
fn info_sections_are_separated_not_terminated_by_a_blank_line() {
    let s = Server::start(None);
    let mut c = s.conn();
    let one: String = redis::cmd("INFO").arg("keyspace").query(&mut c).unwrap();
    assert_eq!(one, "# Keyspace\r\n");
    let two: String = redis::cmd("INFO")
        .arg("persistence")
        .arg("keyspace")
        .query(&mut c)
        .unwrap();
    assert!(two.starts_with("# Persistence\r\n"), "{two:?}");
    assert!(two.ends_with("\r\n\r\n# Keyspace\r\n"), "{two:?}");
    let all: String = redis::cmd("INFO").query(&mut c).unwrap();
    assert!(
        !all.ends_with("\r\n\r\n") && all.contains("\r\n\r\n# Clients\r\n"),
        "{all:?}"
    );
}

#[test]
fn info_keyspace_counts_keys_with_an_expiry_and_their_mean_ttl() {
    let s = Server::start(None);
    let mut c = s.conn();
    let _: () = redis::cmd("SET").arg("a").arg("1").query(&mut c).unwrap();
    let _: () = redis::cmd("SET")
        .arg("b")
        .arg("2")
        .arg("EX")
        .arg(100)
        .query(&mut c)
        .unwrap();
    let _: () = redis::cmd("SET")
        .arg("c")
        .arg("3")
        .arg("PX")
        .arg(50_000)
        .query(&mut c)
        .unwrap();
    let info: String = redis::cmd("INFO").arg("keyspace").query(&mut c).unwrap();
    let line = info.lines().nth(1).unwrap();
    let (head, avg) = line.split_once(",avg_ttl=").unwrap();
    assert_eq!(head, "db0:keys=3,expires=2", "{info:?}");
    let avg: u64 = avg.parse().unwrap();
    assert!((70_000..=75_000).contains(&avg), "{avg}");
}

#[test]
fn getset_renamenx_touch_and_expiretime_answer_as_redis() {
    let s = Server::start(None);
    let got = session(
        &s,
        &[
            &["SET", "a", "1", "EX", "100"],
            &["GETSET", "a", "2"],
            &["TTL", "a"],
            &["GETSET", "nosuch", "1"],
            &["RENAMENX", "a", "b"],
            &["RENAMENX", "a", "b"],
            &["RENAMENX", "b", "b"],
            &["SET", "c", "1"],
            &["RENAMENX", "b", "c"],
            &["TOUCH", "a", "b", "c", "zz"],
            &["EXPIRETIME", "b"],
            &["PEXPIRETIME", "zz"],
            &["PEXPIREAT", "c", "99999999999999"],
            &["PEXPIRETIME", "c"],
            &["EXPIRETIME", "c"],
            &["TIME", "x"],
        ],
    );
    assert_eq!(
        got,
        [
            "+OK",
            "1",
            ":-1",
            "nil",
            ":1",
            "-ERR no such key",
            ":0",
            "+OK",
            ":0",
            ":2",
            ":-1",
            ":-2",
            ":1",
            ":99999999999999",
            ":100000000000",
            "-ERR wrong number of arguments for 'time' command",
        ]
    );
    let mut c = s.conn();
    let (secs, micros): (u64, u64) = redis::cmd("TIME").query(&mut c).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(
        secs.abs_diff(now) <= 2 && micros < 1_000_000,
        "{secs} {micros}"
    );
}

#[test]
fn integers_floats_and_expiry_times_are_refused_where_redis_refuses_them() {
    let s = Server::start(None);
    let got = session(
        &s,
        &[
            // "-0" is not an integer to Redis, as an argument or a value.
            &["SET", "z", "-0"],
            &["INCR", "z"],
            &["INCRBY", "n", "-0"],
            &["GETRANGE", "z", "-0", "1"],
            &["EXPIRE", "z", "-0"],
            // A float ends at its last byte, not at a NUL inside it.
            &["SET", "f", "123\0x"],
            &["INCRBYFLOAT", "f", "1"],
            &["INCRBYFLOAT", "g", "1\u{0}2"],
            // A deadline past the largest time is an invalid time.
            &["PSETEX", "p", "9223372036854775807", "v"],
            &["SETEX", "p", "9223372036854775", "v"],
            &["EXISTS", "p"],
            // The latest deadline there is, in seconds, rounded.
            &["SET", "t", "v"],
            &["PEXPIREAT", "t", "9223372036854775807"],
            &["EXPIRETIME", "t"],
            &["PEXPIRETIME", "t"],
        ],
    );
    let not_integer = "-ERR value is not an integer or out of range";
    let not_float = "-ERR value is not a valid float";
    assert_eq!(
        got,
        [
            "+OK",
            not_integer,
            not_integer,
            not_integer,
            not_integer,
            "+OK",
            not_float,
            not_float,
            "-ERR invalid expire time in 'psetex' command",
            "-ERR invalid expire time in 'setex' command",
            ":0",
            "+OK",
            ":1",
            ":9223372036854776",
            ":9223372036854775807",
        ]
    );
}

#[test]
fn a_transaction_queues_server_commands_and_watches_only_the_watched_keys() {
    let s = Server::start(None);
    let got = session(
        &s,
        &[
            &["SET", "a", "1"],
            &["WATCH", "w"],
            // A write after WATCH to a key not watched does not abort EXEC,
            // even when the transaction reads that key.
            &["SET", "b", "2"],
            &["MULTI"],
            &["GET", "b"],
            &["SET", "c", "3"],
            &["SELECT", "0"],
            &["DBSIZE"], // sees the transaction's own write
            &["UNWATCH"],
            &["PING"],
            &["ECHO", "e"],
            &["INCR", "a"],
            &["CLIENT", "SETNAME", "tx"],
            &["EXEC"],
            &["CLIENT", "GETNAME"],
            // SHUTDOWN cannot be queued, and the transaction is discarded.
            &["MULTI"],
            &["SET", "d", "4"],
            &["SHUTDOWN"],
            &["EXEC"],
            &["EXISTS", "d"],
            // A watched key written since WATCH, by this client too: null.
            &["WATCH", "a"],
            &["SET", "a", "5"],
            &["MULTI"],
            &["GET", "a"],
            &["EXEC"],
            &["GET", "a"],
        ],
    );
    let mut expected = vec!["+OK"; 4];
    expected.extend(["+QUEUED"; 9]);
    expected.extend([
        "*9", "2", "+OK", "+OK", ":3", "+OK", "+PONG", "e", ":2", "+OK", "tx",
    ]);
    expected.extend([
        "+OK",
        "+QUEUED",
        "-ERR Command not allowed inside a transaction",
        "-EXECABORT Transaction discarded because of previous errors.",
        ":0",
    ]);
    expected.extend(["+OK", "+OK", "+OK", "+QUEUED", "*-1", "5"]);
    assert_eq!(got, expected);
}

#[test]
fn a_key_is_watched_from_its_own_watch_and_only_writes_touch_it() {
    let s = Server::start(None);
    let got = session(
        &s,
        &[
            &["SET", "a", "1"],
            &["SET", "b", "1"],
            // b's write comes before b is watched (a was watched earlier).
            &["WATCH", "a"],
            &["SET", "b", "2"],
            &["WATCH", "b"],
            &["MULTI"],
            &["GET", "b"],
            &["EXEC"],
            // PERSIST on a key without a TTL writes nothing.
            &["WATCH", "b"],
            &["GETEX", "b", "PERSIST"],
            &["MULTI"],
            &["GET", "b"],
            &["EXEC"],
            // Removing a TTL is a write.
            &["SET", "b", "3", "EX", "100"],
            &["WATCH", "b"],
            &["GETEX", "b", "PERSIST"],
            &["MULTI"],
            &["GET", "b"],
            &["EXEC"],
        ],
    );
    assert_eq!(
        got,
        [
            "+OK", "+OK", "+OK", "+OK", "+OK", "+OK", "+QUEUED", "*1", "2", "+OK", "2", "+OK",
            "+QUEUED", "*1", "2", "+OK", "+OK", "3", "+OK", "+QUEUED", "*-1",
        ]
    );
}

#[test]
fn shutdown_checks_its_modifiers_before_stopping() {
    let s = Server::start(None);
    let got = session(
        &s,
        &[
            &["SHUTDOWN", "FOO"],
            &["SHUTDOWN", "SAVE", "NOSAVE"],
            &["SHUTDOWN", "FORCE", "ABORT"],
            &["SHUTDOWN", "ABORT"],
            &["PING"],
        ],
    );
    assert_eq!(
        got,
        [
            "-ERR syntax error",
            "-ERR syntax error",
            "-ERR syntax error",
            "-ERR No shutdown in progress.",
            "+PONG",
        ]
    );
    // A valid SHUTDOWN closes the connection without a reply, as Redis
    // does (redis-py's `shutdown()` counts on it).
    assert_eq!(s.raw(b"SHUTDOWN NOSAVE NOW\r\nPING\r\n"), b"");
}

#[test]
fn container_commands_need_a_subcommand_they_know() {
    let s = Server::start(None);
    let got = session(
        &s,
        &[
            &["CONFIG"],
            &["CLIENT"],
            &["COMMAND", "FOO"],
            &["COMMAND", "COUNT", "x"],
        ],
    );
    assert_eq!(
        got,
        [
            "-ERR wrong number of arguments for 'config' command",
            "-ERR wrong number of arguments for 'client' command",
            "-ERR unknown subcommand 'FOO'. Try COMMAND HELP.",
            "-ERR wrong number of arguments for 'command|count' command",
        ]
    );
}

#[test]
fn reset_save_bgsave_and_lastsave_answer_as_redis() {
    let s = Server::start(None);
    let got = session(
        &s,
        &[
            &["MULTI"],
            &["SET", "a", "1"],
            &["RESET"], // discards the transaction
            &["EXEC"],
            &["CLIENT", "SETNAME", "x"],
            &["RESET"],
            &["CLIENT", "GETNAME"],
            &["SAVE"],
            &["MULTI"],
            &["SAVE"],
            &["DISCARD"],
            &["BGSAVE", "SCHEDULE", "x"],
            &["BGSAVE", "FOO"],
            &["GET", "a"],
        ],
    );
    assert_eq!(
        got,
        [
            "+OK",
            "+QUEUED",
            "+RESET",
            "-ERR EXEC without MULTI",
            "+OK",
            "+RESET",
            "nil",
            "+OK",
            "+OK",
            "-ERR Command not allowed inside a transaction",
            "+OK",
            "-ERR syntax error",
            "-ERR syntax error",
            "nil",
        ]
    );
    // LASTSAVE moves when a background save is done.
    let mut c = s.conn();
    let _: () = redis::cmd("SET").arg("k").arg("v").query(&mut c).unwrap();
    let before: i64 = redis::cmd("LASTSAVE").query(&mut c).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100)); // a new second
    let started: String = redis::cmd("BGSAVE").query(&mut c).unwrap();
    assert_eq!(started, "Background saving started");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        std::thread::sleep(std::time::Duration::from_millis(100));
        let now: i64 = redis::cmd("LASTSAVE").query(&mut c).unwrap();
        if now > before {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "LASTSAVE {now}");
    }
}
