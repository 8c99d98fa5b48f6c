//! `CONFIG SET` as Redis 7.0 runs it (several parameters at once, all or
//! nothing; duplicates, immutables and bad values refused with its
//! messages; the encoding parameters accepted and reported back), `INFO`'s
//! sections as `default` and `all` pick them, and the command and error
//! counts of `INFO commandstats` and `errorstats`.

use redis::cmd;

use crate::common;
use common::{error_of, Server};

fn get(c: &mut redis::Connection, name: &str) -> String {
    let pairs: Vec<String> = cmd("CONFIG").arg("GET").arg(name).query(c).unwrap();
    pairs.get(1).cloned().unwrap_or_default()
}

#[test]
fn config_set_is_all_or_nothing_with_redis_errors() {
    let s = Server::start(None);
    let mut c = s.conn();
    let ok: String = cmd("CONFIG")
        .arg(&[
            "SET",
            "hash-max-ziplist-entries",
            "16",
            "zset-max-listpack-value",
            "1kb",
            "save",
            "3000 5",
        ])
        .query(&mut c)
        .unwrap();
    assert_eq!(ok, "OK");
    // Aliases report the same value; memory values in bytes.
    assert_eq!(get(&mut c, "hash-max-listpack-entries"), "16");
    assert_eq!(get(&mut c, "zset-max-ziplist-value"), "1024");
    assert_eq!(get(&mut c, "save"), "3000 5");
    let cases: &[(&[&str], &str)] = &[
        (&["maxmemory", "1", "maxmemory", "2"], "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - duplicate parameter"),
        (&["daemonize", "yes"], "ERR CONFIG SET failed (possibly related to argument 'daemonize') - can't set immutable config"),
        (&["nosuch", "1"], "ERR Unknown option or number of arguments for CONFIG SET - 'nosuch'"),
        (&["hz", "abc"], "ERR CONFIG SET failed (possibly related to argument 'hz') - argument couldn't be parsed into an integer"),
        (&["activerehashing", "maybe"], "ERR CONFIG SET failed (possibly related to argument 'activerehashing') - argument must be 'yes' or 'no'"),
        (&["stream-node-max-bytes", "1x"], "ERR CONFIG SET failed (possibly related to argument 'stream-node-max-bytes') - argument must be a memory value"),
        (&["list-compress-depth", "-1"], "ERR CONFIG SET failed (possibly related to argument 'list-compress-depth') - argument must be between 0 and 2147483647 inclusive"),
        // A good value first, a bad one after: neither is applied.
        (&["slowlog-max-len", "7", "hash-max-ziplist-entries", "99", "hz", "x"], "ERR CONFIG SET failed (possibly related to argument 'hz') - argument couldn't be parsed into an integer"),
    ];
    for (args, want) in cases {
        let mut all = vec!["CONFIG", "SET"];
        all.extend_from_slice(args);
        let e = error_of(&mut c, &all);
        assert!(e.contains(want.trim_start_matches("ERR ")), "{args:?}: {e}");
    }
    assert_eq!(get(&mut c, "slowlog-max-len"), "128");
    assert_eq!(get(&mut c, "hash-max-ziplist-entries"), "16");
    // `CONFIG GET` with patterns: every name and alias matching, once.
    let pairs: Vec<String> = cmd("CONFIG")
        .arg(&["GET", "*ziplist*", "hash-max-*"])
        .query(&mut c)
        .unwrap();
    let names: Vec<&String> = pairs.iter().step_by(2).collect();
    let unique: std::collections::HashSet<&&String> = names.iter().collect();
    assert_eq!(unique.len(), names.len(), "{names:?}");
    assert!(names.iter().any(|n| *n == "hash-max-listpack-entries"));
    assert!(names.iter().any(|n| *n == "hash-max-ziplist-entries"));
}

fn info(c: &mut redis::Connection, args: &[&str]) -> String {
    cmd("INFO").arg(args).query(c).unwrap()
}

#[test]
fn info_sections_as_default_and_all_pick_them() {
    let s = Server::start(None);
    let mut c = s.conn();
    for args in [&[][..], &["default"], &["all"], &["everything"]] {
        let text = info(&mut c, args);
        assert!(text.contains("redis_version"), "{args:?}");
        assert!(text.contains("used_cpu_user:"), "{args:?}");
        assert!(text.contains("used_memory"), "{args:?}");
        let all = !args.is_empty() && args[0] != "default";
        assert_eq!(text.contains("rejected_calls"), all, "{args:?}");
    }
    let cpu = info(&mut c, &["CPU"]);
    assert!(cpu.contains("used_cpu_sys:") && !cpu.contains("used_memory"));
    let both = info(&mut c, &["cpu", "all"]);
    assert_eq!(both.matches("used_cpu_user_children").count(), 1);
}

fn cmdstat(c: &mut redis::Connection, name: &str) -> String {
    let text = info(c, &["commandstats"]);
    let prefix = format!("cmdstat_{name}:");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix).map(str::to_string))
        .unwrap_or_default()
}

#[test]
fn command_and_error_stats_count_every_call() {
    let s = Server::start(None);
    let mut c = s.conn();
    let _: String = cmd("SET").arg("foo").arg("1").query(&mut c).unwrap();
    let _: String = cmd("CONFIG").arg("RESETSTAT").query(&mut c).unwrap();
    let e = error_of(&mut c, &["GEOADD", "foo", "0", "0", "bar"]);
    assert!(e.starts_with("WRONGTYPE"));
    assert!(cmdstat(&mut c, "geoadd").contains("calls=1,"));
    assert!(cmdstat(&mut c, "geoadd").ends_with("rejected_calls=0,failed_calls=1"));
    assert_eq!(cmdstat(&mut c, "zadd"), "");
    let _ = error_of(&mut c, &["GET"]);
    assert!(cmdstat(&mut c, "get").contains("rejected_calls=1"));
    // A transaction's and a script's commands each count.
    let _: () = redis::pipe()
        .atomic()
        .cmd("SET")
        .arg("a")
        .arg("1")
        .ignore()
        .cmd("EXPIRE")
        .arg("a")
        .arg("100")
        .ignore()
        .query(&mut c)
        .unwrap();
    let _: redis::Value = cmd("EVAL")
        .arg("redis.call('set', KEYS[1], 0) redis.call('set', KEYS[1], 1)")
        .arg(1)
        .arg("k")
        .query(&mut c)
        .unwrap();
    assert!(cmdstat(&mut c, "multi").contains("calls=1,"));
    assert!(cmdstat(&mut c, "exec").contains("calls=1,"));
    assert!(cmdstat(&mut c, "expire").contains("calls=1,"));
    assert!(
        cmdstat(&mut c, "set").contains("calls=3,"),
        "{}",
        cmdstat(&mut c, "set")
    );
    assert!(cmdstat(&mut c, "eval").contains("calls=1,"));
    let errors = info(&mut c, &["errorstats"]);
    assert!(errors.contains("errorstat_WRONGTYPE:count=1"), "{errors}");
    assert!(errors.contains("errorstat_ERR:count=1"), "{errors}");
    let _: String = cmd("CONFIG").arg("RESETSTAT").query(&mut c).unwrap();
    assert!(!info(&mut c, &["errorstats"]).contains("errorstat_"));
}
