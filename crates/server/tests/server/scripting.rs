//! Lua scripts: replies byte for byte as redis-server 7.0 gave them to
//! the same requests, atomicity under concurrent clients, `SCRIPT KILL`,
//! what a script does beyond its writes (publishes, wakes), scripts inside
//! `MULTI`, and the redis crate's `Script` (EVALSHA, then EVAL on
//! NOSCRIPT).

use crate::common;
use std::time::{Duration, Instant};

use common::{expect_replies, Raw, Server};

/// What redis-server 7.0.15 answered, request by request on one
/// connection, from an empty database (its own version string, a table's
/// address, `SCRIPT HELP`'s DEBUG lines and cjson's parse error text left
/// out: those differ).
const REDIS_REPLIES: &[(&[&str], &str)] = &[
    (&["eval", "return 1", "0"], ":1\r\n"),
    (&["eval", "redis.call('set','n',9007199254740991) return redis.call('get','n')", "0"], "$16\r\n9007199254740991\r\n"),
    (&["eval", "redis.call('set','n',0.1) return redis.call('get','n')", "0"], "$19\r\n0.10000000000000001\r\n"),
    (&["eval", "return {1,2,{3,\"x\"},nil,5}", "0"], "*3\r\n:1\r\n:2\r\n*2\r\n:3\r\n$1\r\nx\r\n"),
    (&["eval", "return redis.call(\"set\",KEYS[1],ARGV[1])", "1", "k", "v"], "+OK\r\n"),
    (&["eval", "return redis.call(\"get\",KEYS[1])", "1", "k"], "$1\r\nv\r\n"),
    (&["eval", "return redis.call(\"get\",\"nokey\")", "0"], "$-1\r\n"),
    (&["eval", "return redis.call(\"incr\",\"k\")", "0"], "-ERR value is not an integer or out of range script: 08e20c5157304136876c4207401befe01cd3548d, on @user_script:1.\r\n"),
    (&["eval", "return redis.pcall(\"incr\",\"k\")", "0"], "-ERR value is not an integer or out of range\r\n"),
    (&["eval", "return redis.call(\"nosuch\")", "0"], "-ERR Unknown Redis command called from script script: 2218effcac8108416909801acfb39c080a85adfa, on @user_script:1.\r\n"),
    (&["eval", "return x", "0"], "-ERR user_script:1: Script attempted to access nonexistent global variable 'x' script: 03c387736bb5cc009ff35151572cee04677aa374, on @user_script:1.\r\n"),
    (&["eval", "x = 5", "0"], "-ERR user_script:1: Attempt to modify a readonly table script: 818a330663e3c3e78469660421595218e5ab5c48, on @user_script:1.\r\n"),
    (&["eval", "return (", "0"], "-ERR Error compiling script (new function): user_script:1: unexpected symbol near '<eof>'\r\n"),
    (&["eval", "return 1", "-1"], "-ERR Number of keys can't be negative\r\n"),
    (&["eval", "return 1", "2", "a"], "-ERR Number of keys can't be greater than number of args\r\n"),
    (&["eval", "return 1", "x"], "-ERR value is not an integer or out of range\r\n"),
    (&["evalsha", "abc", "0"], "-NOSCRIPT No matching script. Please use EVAL.\r\n"),
    (&["script", "load", "return 7"], "$40\r\n59b6ab2fbe0ee4b25733de0f62e6cda4899ef8e9\r\n"),
    (&["evalsha", "9b5e8d4b5e3a0bc6e6b4d0bd0ae5bc40c1c0f4d7", "0"], "-NOSCRIPT No matching script. Please use EVAL.\r\n"),
    (&["script", "exists", "a", "b"], "*2\r\n:0\r\n:0\r\n"),
    (&["eval", "return 3.99", "0"], ":3\r\n"),
    (&["eval", "return true", "0"], ":1\r\n"),
    (&["eval", "return false", "0"], "$-1\r\n"),
    (&["eval", "return {ok=\"fine\"}", "0"], "+fine\r\n"),
    (&["eval", "return {err=\"bad thing\"}", "0"], "-bad thing\r\n"),
    (&["eval", "return redis.error_reply(\"MY err\")", "0"], "-MY err\r\n"),
    (&["eval", "return redis.status_reply(\"st\")", "0"], "+st\r\n"),
    (&["eval", "return redis.call(\"multi\")", "0"], "-ERR This Redis command is not allowed from script script: 211a39902cf76b98677003ff6f4c16cf0d1d5d6b, on @user_script:1.\r\n"),
    (&["eval", "return redis.call(\"hset\",\"h\",\"a\",\"1\",\"b\",\"2\") and redis.call(\"hgetall\",\"h\")", "0"], "*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n"),
    (&["eval", "return redis.call(\"set\",\"k\")", "0"], "-ERR Wrong number of args calling Redis command from script script: 934f2e275c1fd1c040835c846438e0e4c909cbfc, on @user_script:1.\r\n"),
    (&["eval", "error(\"boom\")", "0"], "-ERR user_script:1: boom script: 872b3fcb081448525c6141cdfa3df8374d30d162, on @user_script:1.\r\n"),
    (&["eval", "error({err=\"X custom\"})", "0"], "-X custom script: f3b0b4c004b43f5fcc61817935b9a19d7fc3203b, on @user_script:1.\r\n"),
    (&["eval", "return redis.sha1hex(\"x\")", "0"], "$40\r\n11f6ad8ec52a2984abaafd7c3b516503785c2072\r\n"),
    (&["script", "kill"], "-NOTBUSY No scripts in execution right now.\r\n"),
    (&["script", "flush"], "+OK\r\n"),
    (&["eval", "return redis.call(\"get\", {})", "0"], "-ERR Lua redis lib command arguments must be strings or integers script: 7a5fe891c214c0fa43feaefd41f433083050825e, on @user_script:1.\r\n"),
    (&["eval", "return redis.call()", "0"], "-ERR Please specify at least one argument for this redis lib call script: 0a907e1429221a4d85516cab7fd219a82a9439d8, on @user_script:1.\r\n"),
    (&["eval", "return redis.call(\"ping\")", "0"], "+PONG\r\n"),
    (&["eval", "return type(redis.call(\"ping\"))", "0"], "$5\r\ntable\r\n"),
    (&["eval", "return redis.pcall(\"nosuch\")", "0"], "-ERR Unknown Redis command called from script\r\n"),
    (&["eval", "local r = redis.pcall(\"incr\",\"k\"); return type(r) .. \":\" .. tostring(r.err)", "0"], "$49\r\ntable:ERR value is not an integer or out of range\r\n"),
    (&["eval", "return redis.call(\"get\",KEYS[1])", "0"], "-ERR Lua redis lib command arguments must be strings or integers script: f2180f334e61b6cd9beecd7eb4721473daaa9f4e, on @user_script:1.\r\n"),
    (&["eval", "return #KEYS + #ARGV", "2", "a", "b", "c"], ":3\r\n"),
    (&["eval", "return -3.7", "0"], ":-3\r\n"),
    (&["eval", "return \"str\"", "0"], "$3\r\nstr\r\n"),
    (&["eval", "return redis.call(\"exists\",\"k\",\"k\",\"zz\")", "0"], ":2\r\n"),
    (&["eval", "return redis.call(\"zadd\",\"z\",\"1.5\",\"m\") and redis.call(\"zscore\",\"z\",\"m\")", "0"], "$3\r\n1.5\r\n"),
    (&["eval", "return redis.call(\"zrange\",\"z\",\"0\",\"-1\",\"withscores\")", "0"], "*2\r\n$1\r\nm\r\n$3\r\n1.5\r\n"),
    (&["eval", "return redis.call(\"lpush\",\"l\",1,2.5)", "0"], ":2\r\n"),
    (&["eval", "return redis.call(\"lrange\",\"l\",0,-1)", "0"], "*2\r\n$3\r\n2.5\r\n$1\r\n1\r\n"),
    (&["eval", "return redis.call(\"subscribe\",\"x\")", "0"], "-ERR This Redis command is not allowed from script script: e7d45421cfe07574789e1c13ccf1015b1d648fe6, on @user_script:1.\r\n"),
    (&["eval", "return redis.call(\"eval\",\"return 1\",\"0\")", "0"], "-ERR This Redis command is not allowed from script script: 6e5056688d554bd41f2476fb72f36efaeccbfd64, on @user_script:1.\r\n"),
    (&["eval", "return redis.call(\"blpop\",\"nol\",\"0\")", "0"], "-ERR This Redis command is not allowed from script script: e84be9be0927147cc18bf65357e3277f03166208, on @user_script:1.\r\n"),
    (&["eval", "return redis.call(\"time\")[1] ~= nil", "0"], ":1\r\n"),
    (&["eval", "return {1, {2, {3}}, \"a\"}", "0"], "*3\r\n:1\r\n*2\r\n:2\r\n*1\r\n:3\r\n$1\r\na\r\n"),
    (&["eval", "return redis.call(\"publish\",\"ch\",\"m\")", "0"], ":0\r\n"),
    (&["eval", "return string.format(\"%d-%s\", 5, \"x\")", "0"], "$3\r\n5-x\r\n"),
    (&["eval", "return math.floor(7.9)", "0"], ":7\r\n"),
    (&["eval", "return table.concat({\"a\",\"b\"}, \",\")", "0"], "$3\r\na,b\r\n"),
    (&["eval", "return tonumber(\"12\")", "0"], ":12\r\n"),
    (&["eval", "return loadstring", "0"], "$-1\r\n"),
    (&["eval", "return dofile", "0"], "-ERR user_script:1: Script attempted to access nonexistent global variable 'dofile' script: 0c5f629ecf4a281cada464398cd571c2f6828b27, on @user_script:1.\r\n"),
    (&["eval", "return redis.call(\"type\",\"h\")", "0"], "+hash\r\n"),
    (&["eval", "return redis.call(\"type\",\"h\")[\"ok\"]", "0"], "$4\r\nhash\r\n"),
    (&["eval_ro", "return redis.call(\"get\",\"k\")", "0"], "$1\r\nv\r\n"),
    (&["eval_ro", "return redis.call(\"set\",\"k\",\"1\")", "0"], "-ERR Write commands are not allowed from read-only scripts. script: 69b2d5a0c9307cefa5624758c860c5ef81b037c1, on @user_script:1.\r\n"),
    (&["eval", "return redis.setresp(3)", "0"], "$-1\r\n"),
    (&["eval", "redis.log(redis.LOG_WARNING, \"x\") return 1", "0"], ":1\r\n"),
    (&["eval", "return cjson", "0"], "*0\r\n"),
    (&["eval", "return bit", "0"], "*0\r\n"),
    (&["eval", "return os.time", "0"], "-ERR user_script:1: Script attempted to access nonexistent global variable 'os' script: 59e43334a3c18b80ef037a837da60d74271c5b02, on @user_script:1.\r\n"),
    (&["eval", "return os.clock() >= 0", "0"], "-ERR user_script:1: Script attempted to access nonexistent global variable 'os' script: 8ba14f38885ec0e759539e3865f10d46aff1a962, on @user_script:1.\r\n"),
    (&["script", "exists"], "-ERR wrong number of arguments for 'script|exists' command\r\n"),
    (&["script", "flush", "async"], "+OK\r\n"),
    (&["script", "flush", "x"], "-ERR SCRIPT FLUSH only support SYNC|ASYNC option\r\n"),
    (&["script", "load"], "-ERR wrong number of arguments for 'script|load' command\r\n"),
    (&["evalsha", "9b5e8d4b5e3a0bc6e6b4d0bd0ae5bc40c1c0f4d7", "0"], "-NOSCRIPT No matching script. Please use EVAL.\r\n"),
    (&["eval", "return _G", "0"], "*0\r\n"),
    (&["eval", "local t = {} t[1]=\"a\" t[3]=\"c\" return t", "0"], "*1\r\n$1\r\na\r\n"),
    (&["eval", "return {1, false, 3}", "0"], "*3\r\n:1\r\n$-1\r\n:3\r\n"),
    (&["eval", "return redis.call(\"incrbyfloat\",\"f\",\"1.5\")", "0"], "$3\r\n1.5\r\n"),
    (&["eval", "return cjson.encode({1,2,\"a/b\",{x=1}})", "0"], "$20\r\n[1,2,\"a\\/b\",{\"x\":1}]\r\n"),
    (&["eval", "return cjson.encode({})", "0"], "$2\r\n{}\r\n"),
    (&["eval", "return cjson.encode({a=1.5})", "0"], "$9\r\n{\"a\":1.5}\r\n"),
    (&["eval", "local t = cjson.decode(ARGV[1]) return {t.a, t.b[2], tostring(t.c == cjson.null)}", "0", "{\"a\":\"x\",\"b\":[1,2],\"c\":null}"], "*3\r\n$1\r\nx\r\n:2\r\n$4\r\ntrue\r\n"),
    (&["eval", "return bit.band(0xff, 0x0f)", "0"], ":15\r\n"),
    (&["eval", "return bit.tohex(255)", "0"], "$8\r\n000000ff\r\n"),
    (&["eval", "return bit.tohex(-1, -4)", "0"], "$4\r\nFFFF\r\n"),
    (&["eval", "return bit.bxor(5, 3, 1)", "0"], ":7\r\n"),
    (&["eval", "return bit.lshift(1, 31)", "0"], ":-2147483648\r\n"),
    (&["eval", "return bit.rshift(-1, 28)", "0"], ":15\r\n"),
    (&["eval", "return bit.arshift(-256, 4)", "0"], ":-16\r\n"),
    (&["eval", "return bit.tobit(4294967297)", "0"], ":1\r\n"),
    (&["eval", "return bit.rol(1, 33)", "0"], ":2\r\n"),
    (&["eval", "return bit.bswap(0x12345678)", "0"], ":2018915346\r\n"),
    (&["eval", "return bit.bnot(0)", "0"], ":-1\r\n"),
    (&["eval", "return cjson.encode({[1]=1,[2]=2,[4]=4})", "0"], "$12\r\n[1,2,null,4]\r\n"),
    (&["eval", "return cjson.encode(\"\u{e9}\\n\")", "0"], "$6\r\n\"\u{e9}\\n\"\r\n"),
    (&["eval", "return redis.call(\"set\", \"k\", \"v\") and redis.call(\"incr\", \"k\")", "0"], "-ERR value is not an integer or out of range script: 2f42dd270d0ee0b337d6ed71b0af3d2924a11ead, on @user_script:1.\r\n"),
    (&["eval", "local ok, e = pcall(redis.call, \"nosuch\") return tostring(ok)", "0"], "$5\r\nfalse\r\n"),
    (&["eval", "local x = redis.call(\"get\",\"nokey\") return x == false", "0"], ":1\r\n"),
];

#[test]
fn scripts_answer_as_redis_server_does() {
    expect_replies(&Server::start(None), REDIS_REPLIES);
}

#[test]
fn a_script_is_atomic_under_concurrent_clients() {
    // A read-modify-write without INCR: lost updates unless each script
    // runs alone (here: a transaction, run again on a conflict).
    const THREADS: usize = 4;
    const EACH: usize = 300;
    let s = Server::start(None);
    let script = redis::Script::new(
        "local v = tonumber(redis.call('get', KEYS[1]) or '0') \
         redis.call('set', KEYS[1], v + 1) \
         redis.call('rpush', KEYS[2], v) \
         return v + 1",
    );
    let workers: Vec<_> = (0..THREADS)
        .map(|_| {
            let mut c = s.conn();
            let script = script.clone();
            std::thread::spawn(move || {
                for _ in 0..EACH {
                    let _: i64 = script.key("n").key("seen").invoke(&mut c).unwrap();
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let mut c = s.conn();
    let n: i64 = redis::cmd("GET").arg("n").query(&mut c).unwrap();
    assert_eq!(n, (THREADS * EACH) as i64);
    // Every script saw a different value: none ran on a stale read.
    let mut seen: Vec<i64> = redis::cmd("LRANGE")
        .arg("seen")
        .arg(0)
        .arg(-1)
        .query(&mut c)
        .unwrap();
    seen.sort();
    assert_eq!(seen, (0..(THREADS * EACH) as i64).collect::<Vec<_>>());
}

#[test]
fn a_lock_released_by_a_script_is_released_only_by_its_holder() {
    // The pattern of redis-py's Lock: SET NX PX to take it, a script that
    // deletes the key only if it still holds the taker's token.
    let s = Server::start(None);
    let mut c = s.conn();
    let release = redis::Script::new(
        "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end",
    );
    let took: Option<String> = redis::cmd("SET")
        .arg("lock")
        .arg("me")
        .arg("NX")
        .arg("PX")
        .arg(10000)
        .query(&mut c)
        .unwrap();
    assert_eq!(took.as_deref(), Some("OK"));
    let again: Option<String> = redis::cmd("SET")
        .arg("lock")
        .arg("you")
        .arg("NX")
        .arg("PX")
        .arg(10000)
        .query(&mut c)
        .unwrap();
    assert_eq!(again, None);
    let n: i64 = release.key("lock").arg("you").invoke(&mut c).unwrap();
    assert_eq!(n, 0, "another token does not release it");
    let n: i64 = release.key("lock").arg("me").invoke(&mut c).unwrap();
    assert_eq!(n, 1);
    let exists: i64 = redis::cmd("EXISTS").arg("lock").query(&mut c).unwrap();
    assert_eq!(exists, 0);
    // After SCRIPT FLUSH the crate's EVALSHA meets NOSCRIPT and it sends
    // EVAL, as clients do.
    let _: () = redis::cmd("SCRIPT").arg("FLUSH").query(&mut c).unwrap();
    let n: i64 = release.key("lock").arg("me").invoke(&mut c).unwrap();
    assert_eq!(n, 0);
}

#[test]
fn script_kill_stops_a_running_script_and_discards_its_writes() {
    let s = Server::start(None);
    let mut runner = Raw::new(&s);
    runner.send(&[&["EVAL", "redis.call('set', 'x', '1') while true do end", "0"]]);
    let mut c = s.conn();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match redis::cmd("SCRIPT").arg("KILL").query::<String>(&mut c) {
            Ok(ok) => {
                assert_eq!(ok, "OK");
                break;
            }
            Err(e) => assert!(e.to_string().contains("No scripts in execution"), "{e}"),
        }
        assert!(Instant::now() < deadline, "the script never ran");
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut reply = String::new();
    let mut r = std::io::BufReader::new(&runner.0);
    std::io::BufRead::read_line(&mut r, &mut reply).unwrap();
    assert!(
        reply.starts_with("-ERR") && reply.contains("SCRIPT KILL"),
        "{reply}"
    );
    let x: Option<String> = redis::cmd("GET").arg("x").query(&mut c).unwrap();
    assert_eq!(x, None, "a killed script's writes are not committed");
    let e = redis::cmd("SCRIPT")
        .arg("KILL")
        .query::<String>(&mut c)
        .unwrap_err();
    assert!(e.to_string().contains("No scripts in execution"), "{e}");
}

#[test]
fn a_script_publishes_and_wakes_once_it_commits() {
    let s = Server::start(None);
    let mut sub = Raw::new(&s);
    sub.send(&[&["SUBSCRIBE", "done"]]);
    sub.expect("*3\r\n$9\r\nsubscribe\r\n$4\r\ndone\r\n:1\r\n");
    let mut waiter = Raw::new(&s);
    waiter.send(&[&["BLPOP", "jobs", "10"]]);
    std::thread::sleep(Duration::from_millis(100));
    let mut c = s.conn();
    let n: i64 = redis::cmd("EVAL")
        .arg("redis.call('rpush', KEYS[1], ARGV[1]) return redis.call('publish', 'done', ARGV[1])")
        .arg(1)
        .arg("jobs")
        .arg("j1")
        .query(&mut c)
        .unwrap();
    assert_eq!(n, 1, "PUBLISH in a script counts the subscribers");
    sub.expect("*3\r\n$7\r\nmessage\r\n$4\r\ndone\r\n$2\r\nj1\r\n");
    waiter.expect("*2\r\n$4\r\njobs\r\n$2\r\nj1\r\n");
    // A script that fails part way keeps what it did before, as in Redis.
    let e = redis::cmd("EVAL")
        .arg("redis.call('set', 'partial', '1') redis.call('publish', 'done', 'before') error('late')")
        .arg(0)
        .query::<i64>(&mut c)
        .unwrap_err();
    assert!(e.to_string().contains("late"), "{e}");
    sub.expect("*3\r\n$7\r\nmessage\r\n$4\r\ndone\r\n$6\r\nbefore\r\n");
    let partial: Option<String> = redis::cmd("GET").arg("partial").query(&mut c).unwrap();
    assert_eq!(partial.as_deref(), Some("1"));
}

#[test]
fn a_script_in_multi_runs_in_execs_transaction() {
    let s = Server::start(None);
    let mut c = Raw::new(&s);
    c.send(&[
        &["MULTI"],
        &["SET", "a", "1"],
        &["EVAL", "return redis.call('incr', KEYS[1])", "1", "a"],
        &["EVALSHA", "0000000000000000000000000000000000000000", "0"],
        &["EXEC"],
    ]);
    c.expect("+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n+OK\r\n:2\r\n-NOSCRIPT No matching script. Please use EVAL.\r\n");
    // A WATCH conflict discards the script with the rest.
    let mut other = s.conn();
    c.send(&[&["WATCH", "a"]]);
    c.expect("+OK\r\n");
    let _: () = redis::cmd("SET")
        .arg("a")
        .arg("10")
        .query(&mut other)
        .unwrap();
    c.send(&[
        &["MULTI"],
        &["EVAL", "return redis.call('set', 'b', 'x')", "0"],
        &["EXEC"],
    ]);
    c.expect("+OK\r\n+QUEUED\r\n*-1\r\n");
    let b: Option<String> = redis::cmd("GET").arg("b").query(&mut other).unwrap();
    assert_eq!(b, None);
}

#[test]
fn scripts_loaded_on_one_connection_run_on_every_other() {
    let s = Server::start(None);
    let mut c = s.conn();
    let sha: String = redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg("return ARGV[1] .. '!'")
        .query(&mut c)
        .unwrap();
    let handles: Vec<_> = (0..4)
        .map(|i| {
            let mut c = s.conn();
            let sha = sha.clone();
            std::thread::spawn(move || {
                for j in 0..50 {
                    let v: String = redis::cmd("EVALSHA")
                        .arg(&sha)
                        .arg(0)
                        .arg(format!("{i}-{j}"))
                        .query(&mut c)
                        .unwrap();
                    assert_eq!(v, format!("{i}-{j}!"));
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let exists: Vec<i64> = redis::cmd("SCRIPT")
        .arg("EXISTS")
        .arg(&sha)
        .arg("nope")
        .query(&mut c)
        .unwrap();
    assert_eq!(exists, [1, 0]);
}

#[test]
fn shutdown_stops_a_script_that_loops_for_ever() {
    let s = Server::start(None);
    let mut runner = Raw::new(&s);
    runner.send(&[&["EVAL", "while true do end", "0"]]);
    std::thread::sleep(Duration::from_millis(200));
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        drop(s);
        let _ = done.send(());
    });
    finished
        .recv_timeout(Duration::from_secs(30))
        .expect("the server stopped");
}

/// What once exhausted the interpreter's reference slots (and dropped the
/// connection): thousands of distinct scripts on one thread, a
/// `redis.call` with thousands of arguments, a script returning thousands
/// of values. Each now answers, at the limit or with an error.
#[test]
fn scripts_at_the_interpreters_limits_answer() {
    let s = Server::start(None);
    let mut c = s.conn();
    let mut pipe = redis::pipe();
    for i in 0..9_000 {
        pipe.cmd("EVAL").arg(format!("return {i}")).arg(0);
    }
    let all: Vec<i64> = pipe.query(&mut c).unwrap();
    assert_eq!(all.len(), 9_000);
    assert_eq!(all[8_999], 8_999);
    let info: String = redis::cmd("INFO").arg("memory").query(&mut c).unwrap();
    assert!(info.contains("number_of_cached_scripts:9000\r\n"), "{info}");
    // As many values as `unpack(ARGV)` gives (7,999, as in Redis) go to
    // one call, which then takes 8,001 arguments.
    let push = "return redis.call('rpush', KEYS[1], unpack(ARGV))";
    let args: Vec<String> = (0..7_999).map(|i| i.to_string()).collect();
    let n: i64 = redis::cmd("EVAL")
        .arg(push)
        .arg(1)
        .arg("l")
        .arg(&args)
        .query(&mut c)
        .unwrap();
    assert_eq!(n, 7_999, "the most values unpack gives");
    let caught: i64 = redis::cmd("EVAL")
        .arg("local r = redis.pcall('rpush', KEYS[1], unpack(ARGV)) return r")
        .arg(1)
        .arg("l")
        .arg(&args)
        .query(&mut c)
        .unwrap();
    assert_eq!(caught, 2 * 7_999);
    let more: Vec<String> = (0..8_000).map(|i| i.to_string()).collect();
    let e = redis::cmd("EVAL")
        .arg(push)
        .arg(1)
        .arg("l")
        .arg(&more)
        .query::<i64>(&mut c)
        .unwrap_err();
    assert!(e.to_string().contains("too many results to unpack"), "{e}");
    let first: String = redis::cmd("EVAL")
        .arg("return unpack(ARGV)")
        .arg(0)
        .arg(&args)
        .query(&mut c)
        .unwrap();
    assert_eq!(first, "0", "the first of the script's results, as in Redis");
    let len: i64 = redis::cmd("LLEN").arg("l").query(&mut c).unwrap();
    assert_eq!(len, 2 * 7_999);
}
