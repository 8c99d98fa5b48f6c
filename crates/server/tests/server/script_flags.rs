//! Scripts by Redis 7.0's rules for their flags and limits: `#!lua
//! flags=...` shebangs, `min-replicas-to-write` (`NOREPLICAS`), what a
//! script's `SORT` and `redis.error_reply` give, and the interpreter's
//! limits (7,999 values from `unpack`, a table that holds itself).

use crate::common;

use common::{error_of, expect_replies, Raw, Server};

fn eval(c: &mut redis::Connection, body: &str, args: &[&str]) -> redis::RedisResult<redis::Value> {
    redis::cmd("EVAL").arg(body).arg(args).query(c)
}

#[test]
fn shebangs_are_read_as_redis_reads_them() {
    let s = Server::start(None);
    let mut c = s.conn();
    for (body, error) in [
        ("#!lua", "Invalid script shebang"),
        (
            "#!python\nreturn 1",
            "Unexpected engine in script shebang: #!python",
        ),
        (
            "#!lua name=x\nreturn 1",
            "Unknown lua shebang option: name=x",
        ),
        (
            "#!lua flags=no-writes,bad\nreturn 1",
            "Unexpected flag in script shebang: bad",
        ),
    ] {
        let e = error_of(&mut c, &["EVAL", body, "0"]);
        assert!(e.contains(error), "{body}: {e}");
        let e = error_of(&mut c, &["SCRIPT", "LOAD", body]);
        assert!(e.contains(error), "SCRIPT LOAD {body}: {e}");
    }
    // no-writes: a read-only script, which EVAL_RO may run.
    let ro = "#!lua flags=no-writes\nreturn redis.call('set', KEYS[1], '1')";
    let e = error_of(&mut c, &["EVAL", ro, "1", "k"]);
    assert!(
        e.contains("Write commands are not allowed from read-only scripts"),
        "{e}"
    );
    let got: Option<String> = redis::cmd("EVAL_RO")
        .arg("#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])")
        .arg(1)
        .arg("k")
        .query(&mut c)
        .unwrap();
    assert_eq!(got, None);
    // A shebang without no-writes may write, so EVAL_RO refuses it.
    let e = error_of(&mut c, &["EVAL_RO", "#!lua\nreturn 1", "0"]);
    assert!(
        e.contains("Can not execute a script with write flag using *_ro command"),
        "{e}"
    );
    // The shebang line counts: errors name the user's own line numbers.
    let e = error_of(&mut c, &["EVAL", "#!lua\n\nerror('here')", "0"]);
    assert!(e.contains("user_script:3:"), "{e}");
    let n: i64 = redis::cmd("EVAL")
        .arg("#!lua flags=\nreturn redis.call('incr', KEYS[1])")
        .arg(1)
        .arg("n")
        .query(&mut c)
        .unwrap();
    assert_eq!(n, 1);
}

#[test]
fn without_enough_replicas_writes_are_refused() {
    let s = Server::start(None);
    let mut c = s.conn();
    let _: () = redis::cmd("SET").arg("x").arg("v").query(&mut c).unwrap();
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("min-replicas-to-write")
        .arg(1)
        .query(&mut c)
        .unwrap();
    let e = error_of(&mut c, &["SET", "x", "w"]);
    assert!(e.starts_with("NOREPLICAS"), "{e}");
    let v: String = redis::cmd("GET").arg("x").query(&mut c).unwrap();
    assert_eq!(v, "v");
    // Pipelined writes, a transaction, scripts.
    let mut raw = Raw::new(&s);
    raw.send(&[
        &["SET", "a", "1"],
        &["INCR", "n"],
        &["MSET", "a", "1", "b", "2"],
    ]);
    raw.expect(
        "-NOREPLICAS Not enough good replicas to write.\r\n-NOREPLICAS Not enough good replicas to write.\r\n-NOREPLICAS Not enough good replicas to write.\r\n",
    );
    raw.send(&[&["MULTI"], &["SET", "a", "1"], &["EXEC"]]);
    raw.expect("+OK\r\n-NOREPLICAS Not enough good replicas to write.\r\n-EXECABORT Transaction discarded because of previous errors.\r\n");
    let read = "return redis.call('get', KEYS[1])";
    assert_eq!(
        eval(&mut c, read, &["1", "x"]).unwrap(),
        redis::Value::BulkString(b"v".to_vec())
    );
    let ro = format!("#!lua flags=no-writes\n{read}");
    assert_eq!(
        eval(&mut c, &ro, &["1", "x"]).unwrap(),
        redis::Value::BulkString(b"v".to_vec())
    );
    for body in [
        format!("#!lua\n{read}"),
        "return redis.call('set', KEYS[1], '1')".into(),
    ] {
        let e = eval(&mut c, &body, &["1", "x"]).unwrap_err().to_string();
        assert!(e.starts_with("NOREPLICAS"), "{body}: {e}");
    }
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("min-slaves-to-write")
        .arg(0)
        .query(&mut c)
        .unwrap();
    let _: () = redis::cmd("SET").arg("x").arg("w").query(&mut c).unwrap();
}

#[test]
fn a_scripts_sort_of_a_set_by_a_constant_is_ordered() {
    let s = Server::start(None);
    let mut c = s.conn();
    let _: () = redis::cmd("SADD")
        .arg("s")
        .arg(&["u", "i", "f", "aa", "d", "z", "b", "h"])
        .query(&mut c)
        .unwrap();
    let got: Vec<String> = redis::cmd("EVAL")
        .arg("return redis.call('sort', KEYS[1], 'by', '_')")
        .arg(1)
        .arg("s")
        .query(&mut c)
        .unwrap();
    assert_eq!(got, ["aa", "b", "d", "f", "h", "i", "u", "z"]);
    let got: Vec<Option<String>> = redis::cmd("EVAL")
        .arg("return redis.call('sort', KEYS[1], 'by', '_', 'get', '#', 'get', '_:*')")
        .arg(1)
        .arg("s")
        .query(&mut c)
        .unwrap();
    assert_eq!(got[..4], [Some("aa".into()), None, Some("b".into()), None]);
}

#[test]
fn error_replies_and_helpers_as_redis_makes_them() {
    let s = Server::start(None);
    expect_replies(
        &s,
        &[
            (
                &["EVAL", "return redis.error_reply('x')", "0"],
                "-ERR x\r\n",
            ),
            (
                &["EVAL", "return redis.error_reply('MY err')", "0"],
                "-MY err\r\n",
            ),
            (
                &["EVAL", "return redis.error_reply('-CODE the text')", "0"],
                "-CODE the text\r\n",
            ),
            (&["EVAL", "return redis.error_reply('')", "0"], "-ERR \r\n"),
            (
                &["EVAL", "return redis.error_reply('-CODE msg\\r\\n')", "0"],
                "-CODE msg\r\n",
            ),
            (
                &["EVAL", "return redis.error_reply(5)", "0"],
                "-ERR wrong number or type of arguments\r\n",
            ),
            (
                &["EVAL", "return redis.sha1hex(5)", "0"],
                "$40\r\nac3478d69a3c81fa62e60f5c3696165a4e5e6ac4\r\n",
            ),
        ],
    );
    let mut c = s.conn();
    let e = error_of(&mut c, &["EVAL", "return redis.sha1hex()", "0"]);
    assert!(e.contains("wrong number of arguments"), "{e}");
    let mut raw = Raw::new(&s);
    let reply = raw.reply_to(&["EVAL", "error(redis.error_reply('X\\r\\n+INJECTED'))", "0"]);
    let text = String::from_utf8(reply).unwrap();
    assert!(text.starts_with("-ERR X  +INJECTED script: "), "{text}");
}

#[test]
fn the_interpreters_limits_are_redis_s() {
    let s = Server::start(None);
    let mut c = s.conn();
    let push = "local a = {} for i = 1, 7999 do a[i] = i end return redis.call('lpush', KEYS[1], unpack(a))";
    let n: i64 = redis::cmd("EVAL")
        .arg(push)
        .arg(1)
        .arg("l")
        .query(&mut c)
        .unwrap();
    assert_eq!(n, 7999);
    let e = error_of(
        &mut c,
        &[
            "EVAL",
            "local a = {} for i = 1, 8000 do a[i] = i end return unpack(a)",
            "0",
        ],
    );
    assert!(e.contains("too many results to unpack"), "{e}");
    // A table holding itself: nested replies down to the stack's limit,
    // then the error in its place; the connection stays in step.
    let mut raw = Raw::new(&s);
    let reply = raw.reply_to(&["EVAL", "local a = {} local b = {a} a[1] = b return a", "0"]);
    let text = String::from_utf8(reply).unwrap();
    assert!(text.starts_with("*1\r\n*1\r\n"), "{}", &text[..20]);
    assert!(
        text.ends_with("-ERR reached lua stack limit\r\n"),
        "{}",
        &text[text.len() - 40..]
    );
    // Functions may compile code at run time, as in Redis 7.0.
    let _: String = redis::cmd("FUNCTION")
        .arg("LOAD")
        .arg("#!lua name=l\nredis.register_function('f', function() return loadstring('return 7')() end)")
        .query(&mut c)
        .unwrap();
    let n: i64 = redis::cmd("FCALL").arg("f").arg(0).query(&mut c).unwrap();
    assert_eq!(n, 7);
}
