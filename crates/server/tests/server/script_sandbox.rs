//! The shared Lua world cannot be changed by a script: every attempt to
//! replace a global, a library function or a metatable, to write around
//! the metamethods, or to load bytecode fails with Redis's error, and the
//! scripts and functions run after it (on every connection, so on every
//! server thread's interpreter) still see the original.

use crate::common;

use common::{error_of, Server};

/// Scripts that try to change what later scripts see, each with the text
/// its error must contain.
const TAMPERING: &[(&str, &str)] = &[
    (
        "redis.call = function() return 'HACKED' end",
        "Attempt to modify a readonly table",
    ),
    ("redis.pcall = nil", "Attempt to modify a readonly table"),
    (
        "rawset(redis, 'call', function() return 'HACKED' end)",
        "Attempt to modify a readonly table",
    ),
    ("setmetatable(_G, {})", "Attempt to modify a readonly table"),
    (
        "local g = getmetatable(_G); g.__index = {}",
        "Attempt to modify a readonly table",
    ),
    (
        "redis = function() return 1 end",
        "Attempt to modify a readonly table",
    ),
    ("_G = {}", "Attempt to modify a readonly table"),
    (
        "rawset(_G, 'tostring', nil)",
        "Attempt to modify a readonly table",
    ),
    (
        "cjson.encode = function() return 1 end",
        "Attempt to modify a readonly table",
    ),
    (
        "bit.lshift = function() return 1 end",
        "Attempt to modify a readonly table",
    ),
    (
        "string.format = function() return 'HACKED' end",
        "Attempt to modify a readonly table",
    ),
    (
        "table.insert(string, 'x')",
        "Attempt to modify a readonly table",
    ),
    ("table.sort(math)", "Attempt to modify a readonly table"),
    ("math.floor = nil", "Attempt to modify a readonly table"),
    (
        "getmetatable('').__index = function() return 1 end",
        "Attempt to modify a readonly table",
    ),
    (
        "getmetatable('').__index.upper = nil",
        "Attempt to modify a readonly table",
    ),
    (
        "local f, s = pairs(_G); rawset(s, 'redis', 1)",
        "Attempt to modify a readonly table",
    ),
    ("setfenv(1, {})", "nonexistent global variable 'setfenv'"),
    (
        "getfenv(0).redis = 1",
        "nonexistent global variable 'getfenv'",
    ),
    ("newproxy(true)", "nonexistent global variable 'newproxy'"),
    ("loadfile('x')", "nonexistent global variable 'loadfile'"),
    ("dofile('x')", "nonexistent global variable 'dofile'"),
    ("print('x')", "nonexistent global variable 'print'"),
    (
        "return loadstring(string.dump(function() return 1 end))()",
        "attempt to call a nil value",
    ),
    (
        "local s = string.dump(function() return 1 end) \
         return load(function() local p = s; s = nil; return p end)()",
        "attempt to call a nil value",
    ),
    ("KEYS = {}", "Attempt to modify a readonly table"),
];

/// Each script's reply (`EVAL script 0`) is its `want`.
fn expect_evals<T, W>(c: &mut redis::Connection, cases: &[(&str, W)])
where
    T: redis::FromRedisValue + PartialEq<W> + std::fmt::Debug,
    W: std::fmt::Debug,
{
    for (script, want) in cases {
        let got: T = redis::cmd("EVAL").arg(*script).arg(0).query(c).unwrap();
        assert_eq!(got, *want, "{script}");
    }
}

/// What every script sees afterwards, from a fresh connection.
fn assert_untouched(s: &Server) {
    let mut c = s.conn();
    let checks: &[(&str, &str)] = &[
        ("return redis.call('ping')", "PONG"),
        ("return redis.pcall('echo', 'a')", "a"),
        ("return string.format('%d-%s', 5, 'x')", "5-x"),
        ("return ('abc'):upper()", "ABC"),
        ("return cjson.encode({1})", "[1]"),
        ("return tostring(bit.lshift(1, 4))", "16"),
        ("return tostring(math.floor(2.5))", "2"),
        ("return type(getmetatable(_G))", "table"),
        ("return type(rawget(_G, 'redis'))", "table"),
    ];
    expect_evals::<String, _>(&mut c, checks);
}

#[test]
fn scripts_cannot_change_the_globals_or_libraries_later_scripts_see() {
    let s = Server::start(None);
    // Several connections, so the attempts reach more than one thread.
    let mut conns: Vec<_> = (0..4).map(|_| s.conn()).collect();
    for (i, (script, want)) in TAMPERING.iter().enumerate() {
        let n = conns.len();
        let e = error_of(&mut conns[i % n], &["EVAL", script, "0"]);
        assert!(e.contains(want), "{script}: {e}");
    }
    assert_untouched(&s);
    let mut c = s.conn();
    let _: String = redis::cmd("SCRIPT").arg("FLUSH").query(&mut c).unwrap();
    let _: String = redis::cmd("FUNCTION").arg("FLUSH").query(&mut c).unwrap();
    assert_untouched(&s);
}

#[test]
fn functions_cannot_change_what_scripts_or_other_libraries_see() {
    let s = Server::start(None);
    let mut c = s.conn();
    let library = "#!lua name=tamper\n\
        redis.register_function('hack', function() redis.call = nil end)\n\
        redis.register_function('hack_raw', function() rawset(_G, 'redis', 1) end)\n\
        redis.register_function('hack_string', function() string.rep = nil end)";
    let _: String = redis::cmd("FUNCTION")
        .arg("LOAD")
        .arg(library)
        .query(&mut c)
        .unwrap();
    for f in ["hack", "hack_raw", "hack_string"] {
        let e = error_of(&mut c, &["FCALL", f, "0"]);
        assert!(e.contains("Attempt to modify a readonly table"), "{f}: {e}");
    }
    // At load time a library cannot change the load API of later ones.
    let e = error_of(
        &mut c,
        &["FUNCTION", "LOAD", "#!lua name=bad\nredis.log = nil"],
    );
    assert!(e.contains("Attempt to modify a readonly table"), "{e}");
    let _: String = redis::cmd("FUNCTION")
        .arg("LOAD")
        .arg("#!lua name=good\nredis.register_function('ok', function() return redis.call('ping') end)")
        .query(&mut c)
        .unwrap();
    let pong: String = redis::cmd("FCALL").arg("ok").arg(0).query(&mut c).unwrap();
    assert_eq!(pong, "PONG");
    assert_untouched(&s);
}

#[test]
fn reading_around_metamethods_sees_the_locked_contents() {
    let s = Server::start(None);
    let mut c = s.conn();
    let cases: &[(&str, i64)] = &[
        (
            "local n = 0 for k in pairs(redis) do n = n + 1 end return n > 10 and 1 or 0",
            1,
        ),
        (
            "local n = 0 for k in next, string do n = n + 1 end return n > 10 and 1 or 0",
            1,
        ),
        ("return rawget(redis, 'call') == redis.call and 1 or 0", 1),
        ("return select('#', unpack({1, 2, 3}))", 3),
        (
            "local t = {3, 1, 2} table.sort(t) table.insert(t, 4) return t[1] * 10 + #t",
            14,
        ),
        ("return loadstring('return 7')()", 7),
        (
            "local s = 'return 8' return load(function() local p = s s = nil return p end)()",
            8,
        ),
        ("collectgarbage('stop') return 1", 1),
        ("return collectgarbage('count') > 0 and 1 or 0", 1),
    ];
    expect_evals::<i64, _>(&mut c, cases);
}

/// Scripts that crashed the server through defects of stock Lua 5.1
/// (`unpack`'s C int overflow, `pcall` pushing past its frame): each
/// answers, and the server stays up.
#[test]
fn scripts_cannot_crash_the_interpreter() {
    let s = Server::start(None);
    let mut c = s.conn();
    for script in [
        "return {unpack({1,2,3}, -2, 2147483647)}",
        "return {unpack({1,2,3}, 0, 2147483647)}",
        "return {unpack({1,2,3}, -2147483648, -2)}",
        "return {unpack({1,2,3}, 1, 1e12)}",
    ] {
        let e = error_of(&mut c, &["EVAL", script, "0"]);
        assert!(e.contains("too many results to unpack"), "{script}: {e}");
    }
    let cases: &[(&str, i64)] = &[
        ("return #{unpack({1,2,3}, -1, -2)}", 0),
        ("return select('#', unpack({1,2,3}, -1, 5))", 7),
        (
            "local t = {} for i = 1, 100 do t[i] = i end return select('#', pcall(unpack, t))",
            101,
        ),
        ("return select('#', pcall(unpack, {}, 1, 7997))", 7998),
        (
            "return select('#', xpcall(function() return unpack({}, 1, 500) end, error))",
            501,
        ),
        (
            "return select('#', pcall(function() return 1,2,3,4,5,6,7,8,9,10,\
             1,2,3,4,5,6,7,8,9,10,1,2,3,4,5,6,7,8,9,10 end))",
            31,
        ),
    ];
    expect_evals::<i64, _>(&mut c, cases);
    let pong: String = redis::cmd("PING").query(&mut c).unwrap();
    assert_eq!(pong, "PONG");
}

#[test]
fn scripts_cannot_read_streams_with_block() {
    let s = Server::start(None);
    let mut c = s.conn();
    let _: String = redis::cmd("XGROUP")
        .arg(&["CREATE", "s", "g", "$", "MKSTREAM"])
        .query(&mut c)
        .unwrap();
    for (script, name) in [
        (
            "return redis.pcall('xread','BLOCK',0,'STREAMS','s','$')",
            "xread",
        ),
        (
            "return redis.pcall('xreadgroup','group','g','c','BLOCK',0,'STREAMS','s','>')",
            "xreadgroup",
        ),
    ] {
        let e = error_of(&mut c, &["EVAL", script, "1", "s"]);
        assert!(
            e.contains(&format!(
                "{name} command is not allowed with BLOCK option from scripts"
            )),
            "{e}"
        );
    }
    let e = error_of(
        &mut c,
        &[
            "EVAL",
            "return redis.call('xreadgroup','group','block','c','STREAMS','s','>')",
            "1",
            "s",
        ],
    );
    assert!(
        e.contains("NOGROUP"),
        "a group named 'block' is not the BLOCK option: {e}"
    );
}
