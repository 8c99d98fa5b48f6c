//! `HRANDFIELD` and `ZRANDMEMBER` answer as redis-server 7.0 answered the
//! requests whose replies do not depend on chance (a count covering the
//! whole collection, missing keys, zero, the errors and their order),
//! byte for byte. Then the picks themselves, on collections large enough
//! that they go through the rank index (a sorted set) or a walk (a hash):
//! every pick is an element, distinct where the count is positive, with
//! its value or score, and single picks spread evenly.

use std::collections::{HashMap, HashSet};

use redis::cmd;

use crate::common;
use common::{expect_replies, Server};

const REDIS_REPLIES: &[(&[&str], &str)] = &[
    (&["zadd", "z", "1", "a", "2", "b", "3", "c"], ":3\r\n"),
    (&["hset", "h", "f1", "v1"], ":1\r\n"),
    (&["zrandmember", "z", "3"], "*3\r\n$1\r\nc\r\n$1\r\nb\r\n$1\r\na\r\n"),
    (&["zrandmember", "z", "10", "withscores"], "*6\r\n$1\r\nc\r\n$1\r\n3\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\na\r\n$1\r\n1\r\n"),
    (&["zrandmember", "z", "0"], "*0\r\n"),
    (&["zrandmember", "z", "0", "withscores"], "*0\r\n"),
    (&["zrandmember", "nokey"], "$-1\r\n"),
    (&["zrandmember", "nokey", "5"], "*0\r\n"),
    (&["zrandmember", "nokey", "5", "withscores"], "*0\r\n"),
    (&["zrandmember", "z", "x"], "-ERR value is not an integer or out of range\r\n"),
    (&["zrandmember", "z", "1", "foo"], "-ERR syntax error\r\n"),
    (&["zrandmember", "z", "1", "withscores", "x"], "-ERR syntax error\r\n"),
    (&["zrandmember", "z", "-9223372036854775808"], "-ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807\r\n"),
    (&["zrandmember", "z", "9223372036854775807", "withscores"], "-ERR value is out of range\r\n"),
    (&["zrandmember", "z", "-4611686018427387904", "withscores"], "-ERR value is out of range\r\n"),
    (&["zrandmember", "z", "4611686018427387903", "withscores"], "*6\r\n$1\r\nc\r\n$1\r\n3\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\na\r\n$1\r\n1\r\n"),
    (&["zrandmember", "h"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["zrandmember", "h", "1"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["hrandfield", "h"], "$2\r\nf1\r\n"),
    (&["hrandfield", "h", "1"], "*1\r\n$2\r\nf1\r\n"),
    (&["hrandfield", "h", "5", "withvalues"], "*2\r\n$2\r\nf1\r\n$2\r\nv1\r\n"),
    (&["hrandfield", "h", "-3", "withvalues"], "*6\r\n$2\r\nf1\r\n$2\r\nv1\r\n$2\r\nf1\r\n$2\r\nv1\r\n$2\r\nf1\r\n$2\r\nv1\r\n"),
    (&["hrandfield", "h", "-3"], "*3\r\n$2\r\nf1\r\n$2\r\nf1\r\n$2\r\nf1\r\n"),
    (&["hrandfield", "z"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["hrandfield", "z", "0"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["hrandfield", "nokey"], "$-1\r\n"),
    (&["hrandfield", "nokey", "-2"], "*0\r\n"),
    (&["hrandfield", "h", "1", "withscores"], "-ERR syntax error\r\n"),
    (&["hrandfield", "h"], "$2\r\nf1\r\n"),
    (&["zrandmember"], "-ERR wrong number of arguments for 'zrandmember' command\r\n"),
    (&["hrandfield"], "-ERR wrong number of arguments for 'hrandfield' command\r\n"),
];

#[test]
fn random_picks_answer_as_redis_does_where_chance_has_no_say() {
    let s = Server::start(None);
    expect_replies(&s, REDIS_REPLIES);
}

const N: usize = 5000;

fn fill(c: &mut redis::Connection) {
    let mut zadd = cmd("ZADD");
    zadd.arg("z");
    let mut hset = cmd("HSET");
    hset.arg("h");
    for i in 0..N {
        zadd.arg(i).arg(format!("m{i}"));
        hset.arg(format!("f{i}")).arg(format!("v{i}"));
    }
    let _: i64 = zadd.query(c).unwrap();
    let _: i64 = hset.query(c).unwrap();
}

#[test]
fn single_picks_spread_evenly_over_a_large_sorted_set() {
    let s = Server::start(None);
    let mut c = s.conn();
    fill(&mut c);
    let mut p = redis::pipe();
    for _ in 0..10_000 {
        p.cmd("ZRANDMEMBER").arg("z");
    }
    let picks: Vec<String> = p.query(&mut c).unwrap();
    let mut tenths = [0usize; 10];
    for m in &picks {
        let i: usize = m[1..].parse().unwrap();
        assert!(i < N, "{m}");
        tenths[i * 10 / N] += 1;
    }
    // 1,000 expected in each tenth; 800..1200 is over six standard
    // deviations either way.
    assert!(tenths.iter().all(|t| (800..1200).contains(t)), "{tenths:?}");
}

#[test]
fn counted_picks_are_elements_distinct_when_asked() {
    let s = Server::start(None);
    let mut c = s.conn();
    fill(&mut c);
    let scored: Vec<(String, f64)> = cmd("ZRANDMEMBER")
        .arg(&["z", "100", "WITHSCORES"])
        .query(&mut c)
        .unwrap();
    assert_eq!(scored.len(), 100);
    let distinct: HashSet<&String> = scored.iter().map(|(m, _)| m).collect();
    assert_eq!(distinct.len(), 100);
    for (m, score) in &scored {
        assert_eq!(format!("m{score}"), *m);
    }
    let fields: HashMap<String, String> = cmd("HRANDFIELD")
        .arg(&["h", "100", "WITHVALUES"])
        .query(&mut c)
        .unwrap();
    assert_eq!(fields.len(), 100);
    for (f, v) in &fields {
        assert_eq!(f[1..], v[1..]);
    }
    for key_and_cmd in [("z", "ZRANDMEMBER"), ("h", "HRANDFIELD")] {
        let repeated: Vec<String> = cmd(key_and_cmd.1)
            .arg(&[key_and_cmd.0, "-300"])
            .query(&mut c)
            .unwrap();
        assert_eq!(repeated.len(), 300);
        let distinct: HashSet<&String> = repeated.iter().collect();
        assert!(distinct.len() > 250, "{}", distinct.len());
    }
    let one: String = cmd("HRANDFIELD").arg("h").query(&mut c).unwrap();
    assert!(one.starts_with('f'));
}

/// Pearson's chi-square of `counts` against an even spread.
fn chi_square(counts: &HashMap<String, u64>, cells: usize, draws: u64) -> f64 {
    let expected = draws as f64 / cells as f64;
    let seen: f64 = counts
        .values()
        .map(|&n| (n as f64 - expected).powi(2) / expected)
        .sum();
    // Cells never drawn count too.
    seen + (cells - counts.len()) as f64 * expected
}

/// `SRANDMEMBER` and `SPOP` pick set members evenly (Redis's suite bounds
/// the chi-square of 1,000 draws from 10 members at 40; a pick by random
/// seek into the members' order scored 460-790).
#[test]
fn set_picks_spread_evenly() {
    let s = Server::start(None);
    let mut c = s.conn();
    let members: Vec<String> = (0..10).map(|i| format!("{}", i * 7919 % 1000)).collect();
    let _: i64 = cmd("SADD").arg("s").arg(&members).query(&mut c).unwrap();
    let mut counts: HashMap<String, u64> = HashMap::new();
    let picks: Vec<String> = cmd("SRANDMEMBER")
        .arg("s")
        .arg(-1000)
        .query(&mut c)
        .unwrap();
    for p in picks {
        *counts.entry(p).or_default() += 1;
    }
    assert!(chi_square(&counts, 10, 1000) < 40.0, "{counts:?}");
    counts.clear();
    for _ in 0..1000 {
        let p: String = cmd("SRANDMEMBER").arg("s").query(&mut c).unwrap();
        *counts.entry(p).or_default() += 1;
    }
    assert!(chi_square(&counts, 10, 1000) < 40.0, "{counts:?}");
    counts.clear();
    for _ in 0..500 {
        let _: i64 = cmd("SADD").arg("p").arg(&members).query(&mut c).unwrap();
        let p: String = cmd("SPOP").arg("p").query(&mut c).unwrap();
        *counts.entry(p).or_default() += 1;
        let _: i64 = cmd("DEL").arg("p").query(&mut c).unwrap();
    }
    assert!(chi_square(&counts, 10, 500) < 40.0, "{counts:?}");
}

#[test]
fn randomkey_answers_a_live_key() {
    let s = Server::start(None);
    let mut c = s.conn();
    let none: Option<String> = cmd("RANDOMKEY").query(&mut c).unwrap();
    assert_eq!(none, None);
    let _: () = cmd("MSET")
        .arg(&["foo", "x", "bar", "y"])
        .query(&mut c)
        .unwrap();
    let seen: HashSet<String> = (0..100)
        .map(|_| cmd("RANDOMKEY").query::<String>(&mut c).unwrap())
        .collect();
    assert_eq!(seen, HashSet::from(["foo".to_string(), "bar".to_string()]));
    // A database too large to read whole: still a key of it.
    let _: redis::Value = cmd("EVAL")
        .arg("for i = 1, 3000 do redis.call('set', 'user:' .. i, i) end")
        .arg(0)
        .query(&mut c)
        .unwrap();
    let mut seen = HashSet::new();
    for _ in 0..50 {
        let k: String = cmd("RANDOMKEY").query(&mut c).unwrap();
        assert!(k.starts_with("user:") || k == "foo" || k == "bar", "{k}");
        seen.insert(k);
    }
    assert!(seen.len() > 10, "{seen:?}");
    let _: String = cmd("SET")
        .arg("gone")
        .arg("1")
        .arg("PX")
        .arg("1")
        .query(&mut c)
        .unwrap();
    let _: String = cmd("FLUSHALL").query(&mut c).unwrap();
    let _: String = cmd("SET")
        .arg("short")
        .arg("1")
        .arg("PX")
        .arg("1")
        .query(&mut c)
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let none: Option<String> = cmd("RANDOMKEY").query(&mut c).unwrap();
    assert_eq!(none, None, "an expired key is not answered");
}
