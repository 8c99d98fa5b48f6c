//! Lists, hashes, sets and sorted sets: their commands through a real
//! client, how they meet the key commands (TYPE, DEL, RENAME, EXPIRE,
//! SCAN TYPE, FLUSHDB, WRONGTYPE), atomicity under concurrent clients,
//! WATCH on an element's change, a restart, and redis-benchmark's default
//! run (when installed). Reply-by-reply fidelity against redis-server is
//! `bench/redis/differential.py`'s job (CI runs it).

use redis::{cmd, Commands, Value};

use crate::common;
use common::{error_of, Server};

#[test]
fn lists() {
    let s = Server::start(None);
    let mut c = s.conn();
    assert_eq!(c.rpush::<_, _, i64>("l", &["b", "c"]).unwrap(), 2);
    assert_eq!(c.lpush::<_, _, i64>("l", &["a", "z"]).unwrap(), 4);
    let all: Vec<String> = c.lrange("l", 0, -1).unwrap();
    assert_eq!(all, ["z", "a", "b", "c"]);
    let mid: Vec<String> = c.lrange("l", 1, -2).unwrap();
    assert_eq!(mid, ["a", "b"]);
    assert_eq!(c.lindex::<_, String>("l", -1).unwrap(), "c");
    assert_eq!(c.llen::<_, i64>("l").unwrap(), 4);
    let _: () = c.lset("l", 1, "y").unwrap();
    assert_eq!(c.lpop::<_, String>("l", None).unwrap(), "z");
    assert_eq!(c.rpop::<_, String>("l", None).unwrap(), "c");
    let _: () = c.rpush("l", &["x", "y", "w"]).unwrap();
    assert_eq!(c.lrem::<_, _, i64>("l", 0, "y").unwrap(), 2);
    assert_eq!(
        cmd("LINSERT")
            .arg(&["l", "BEFORE", "x", "v"])
            .query::<i64>(&mut c)
            .unwrap(),
        4
    );
    let all: Vec<String> = c.lrange("l", 0, -1).unwrap();
    assert_eq!(all, ["b", "v", "x", "w"]);
    let _: () = c.ltrim("l", 1, 2).unwrap();
    let all: Vec<String> = c.lrange("l", 0, -1).unwrap();
    assert_eq!(all, ["v", "x"]);
    assert_eq!(c.rpoplpush::<_, _, String>("l", "m").unwrap(), "x");
    let popped: Vec<String> = cmd("LPOP").arg(&["l", "5"]).query(&mut c).unwrap();
    assert_eq!(popped, ["v"]);
    // The last element gone, the key is gone.
    assert!(!c.exists::<_, bool>("l").unwrap());
    assert_eq!(c.lpush_exists::<_, _, i64>("l", "q").unwrap(), 0);
    // Thousands of elements at both ends, then a range in the middle.
    for i in 0..2000 {
        let _: () = c.rpush("big", i).unwrap();
        let _: () = c.lpush("big", -i - 1).unwrap();
    }
    let part: Vec<i64> = c.lrange("big", 1995, 2004).unwrap();
    assert_eq!(part, (-5..5).collect::<Vec<_>>());
}

#[test]
fn hashes_sets_and_sorted_sets() {
    let s = Server::start(None);
    let mut c = s.conn();
    let _: () = c.hset_multiple("h", &[("f", "1"), ("g", "2")]).unwrap();
    assert_eq!(c.hset::<_, _, _, i64>("h", "f", "10").unwrap(), 0);
    assert_eq!(c.hget::<_, _, String>("h", "f").unwrap(), "10");
    assert_eq!(c.hincr::<_, _, _, i64>("h", "g", 5).unwrap(), 7);
    let all: std::collections::HashMap<String, String> = c.hgetall("h").unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all["g"], "7");
    assert_eq!(c.hdel::<_, _, i64>("h", &["f", "nope"]).unwrap(), 1);
    assert_eq!(c.hlen::<_, i64>("h").unwrap(), 1);
    assert!(!c.hexists::<_, _, bool>("h", "f").unwrap());

    assert_eq!(c.sadd::<_, _, i64>("s", &["a", "b", "c", "a"]).unwrap(), 3);
    assert!(c.sismember::<_, _, bool>("s", "b").unwrap());
    assert_eq!(c.srem::<_, _, i64>("s", "b").unwrap(), 1);
    let mut members: Vec<String> = c.smembers("s").unwrap();
    members.sort();
    assert_eq!(members, ["a", "c"]);
    let _: i64 = c.sadd("t", &["c", "d"]).unwrap();
    let inter: Vec<String> = c.sinter(&["s", "t"]).unwrap();
    assert_eq!(inter, ["c"]);
    let popped: Vec<String> = cmd("SPOP").arg(&["s", "10"]).query(&mut c).unwrap();
    assert_eq!(popped.len(), 2);
    assert!(!c.exists::<_, bool>("s").unwrap());

    assert_eq!(
        c.zadd_multiple::<_, _, _, i64>("z", &[(2.5, "b"), (1.0, "a"), (2.5, "aa")])
            .unwrap(),
        3
    );
    let ranked: Vec<(String, f64)> = c.zrange_withscores("z", 0, -1).unwrap();
    assert_eq!(
        ranked,
        [("a".into(), 1.0), ("aa".into(), 2.5), ("b".into(), 2.5)]
    );
    assert_eq!(c.zincr::<_, _, _, f64>("z", "a", 5).unwrap(), 6.0);
    assert_eq!(c.zrank::<_, _, Option<i64>>("z", "a").unwrap(), Some(2));
    let top: Vec<String> = c.zrevrange("z", 0, 0).unwrap();
    assert_eq!(top, ["a"]);
    let by_score: Vec<String> = c.zrangebyscore("z", "(2.5", "+inf").unwrap();
    assert_eq!(by_score, ["a"]);
    assert_eq!(c.zcount::<_, _, _, i64>("z", "-inf", "2.5").unwrap(), 2);
    let low: Vec<(String, f64)> = c.zpopmin("z", 1).unwrap();
    assert_eq!(low, [("aa".into(), 2.5)]);
    assert_eq!(c.zscore::<_, _, Option<f64>>("z", "aa").unwrap(), None);
    assert_eq!(c.zcard::<_, i64>("z").unwrap(), 2);
}

#[test]
fn collections_meet_the_key_commands() {
    let s = Server::start(None);
    let mut c = s.conn();
    let _: () = c.rpush("l", &["a", "b"]).unwrap();
    let _: () = c.hset("h", "f", "v").unwrap();
    let _: () = c.set("str", "v").unwrap();
    let wrong = "WRONGTYPE";
    assert!(error_of(&mut c, &["GET", "l"]).contains(wrong));
    assert!(error_of(&mut c, &["INCR", "h"]).contains(wrong));
    assert!(error_of(&mut c, &["LPUSH", "str", "x"]).contains(wrong));
    assert!(error_of(&mut c, &["HGET", "l", "f"]).contains(wrong));
    // MGET answers nil for other kinds, as Redis does.
    let got: Vec<Option<String>> = c.mget(&["l", "str"]).unwrap();
    assert_eq!(got, [None, Some("v".into())]);
    let kind =
        |c: &mut redis::Connection, k: &str| -> String { cmd("TYPE").arg(k).query(c).unwrap() };
    assert_eq!(kind(&mut c, "l"), "list");
    assert_eq!(kind(&mut c, "h"), "hash");
    let (_, hashes): (String, Vec<String>) = cmd("SCAN")
        .arg(&["0", "TYPE", "hash", "COUNT", "100"])
        .query(&mut c)
        .unwrap();
    assert_eq!(hashes, ["h"]);
    // RENAME moves the elements; the old name is empty after.
    let _: () = c.rename("l", "l2").unwrap();
    let moved: Vec<String> = c.lrange("l2", 0, -1).unwrap();
    assert_eq!(moved, ["a", "b"]);
    assert_eq!(c.llen::<_, i64>("l").unwrap(), 0);
    // DEL takes the elements: a new list under the name starts empty.
    assert_eq!(c.del::<_, i64>("l2").unwrap(), 1);
    let _: () = c.rpush("l2", "fresh").unwrap();
    let fresh: Vec<String> = c.lrange("l2", 0, -1).unwrap();
    assert_eq!(fresh, ["fresh"]);
    // SET over a collection replaces it; a list made there later is new.
    let _: () = c.set("l2", "now a string").unwrap();
    assert_eq!(kind(&mut c, "l2"), "string");
    assert!(error_of(&mut c, &["RPUSH", "l2", "again"]).contains(wrong));
    let _: () = c.del("l2").unwrap();
    let _: () = c.rpush("l2", "again").unwrap();
    let again: Vec<String> = c.lrange("l2", 0, -1).unwrap();
    assert_eq!(again, ["again"]);
    // Expiry applies to the whole collection.
    let _: () = c.pexpire("h", 50).unwrap();
    assert!(c.pttl::<_, i64>("h").unwrap() > 0);
    std::thread::sleep(std::time::Duration::from_millis(80));
    assert_eq!(kind(&mut c, "h"), "none");
    assert_eq!(c.hlen::<_, i64>("h").unwrap(), 0);
    let _: () = c.hset("h", "g", "w").unwrap();
    let all: std::collections::HashMap<String, String> = c.hgetall("h").unwrap();
    assert_eq!(all.len(), 1, "{all:?}");
    let _: () = cmd("FLUSHDB").query(&mut c).unwrap();
    assert_eq!(c.hlen::<_, i64>("h").unwrap(), 0);
    assert_eq!(cmd("DBSIZE").query::<i64>(&mut c).unwrap(), 0);
}

#[test]
fn concurrent_clients_lose_no_element() {
    let s = Server::start(None);
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let mut c = s.conn();
            std::thread::spawn(move || {
                for i in 0..300 {
                    let _: () = c.lpush("q", format!("{t}-{i}")).unwrap();
                    let _: () = c.hincr("counts", "n", 1).unwrap();
                    let _: () = c.sadd("seen", format!("{t}-{i}")).unwrap();
                    let _: () = c.zincr("scores", "total", 1).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let mut c = s.conn();
    assert_eq!(c.llen::<_, i64>("q").unwrap(), 1200);
    assert_eq!(c.hget::<_, _, i64>("counts", "n").unwrap(), 1200);
    assert_eq!(c.scard::<_, i64>("seen").unwrap(), 1200);
    assert_eq!(c.zscore::<_, _, f64>("scores", "total").unwrap(), 1200.0);
    let mut all: Vec<String> = c.lrange("q", 0, -1).unwrap();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), 1200);
}

/// Reads of several entries (`LRANGE`, `ZRANGE`, `HGETALL`) see one
/// moment of a collection while other clients change it: a list rotated
/// by `LMOVE` always reads as a rotation of what it held, and a sorted set
/// whose members trade scores always reads with the same scores.
#[test]
fn range_reads_see_one_moment_under_concurrent_writes() {
    let s = Server::start(None);
    let mut c = s.conn();
    const N: i64 = 50;
    for i in 0..N {
        let _: () = c.rpush("ring", i).unwrap();
        let _: () = c.zadd("z", format!("m{i}"), i).unwrap();
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let mut c = s.conn();
            let stop = std::sync::Arc::clone(&stop);
            std::thread::spawn(move || {
                let mut i = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let _: String = cmd("LMOVE")
                        .arg(&["ring", "ring", "LEFT", "RIGHT"])
                        .query(&mut c)
                        .unwrap();
                    // Two members swap scores in one MULTI/EXEC (one
                    // writer: the swap reads the scores before it).
                    let (a, b) = (
                        format!("m{}", (i * 7) % 50),
                        format!("m{}", (i * 13 + 1) % 50),
                    );
                    if w == 0 && a != b {
                        let (sa, sb): (f64, f64) =
                            (c.zscore("z", &a).unwrap(), c.zscore("z", &b).unwrap());
                        let _: Value = redis::pipe()
                            .atomic()
                            .zadd("z", &a, sb)
                            .zadd("z", &b, sa)
                            .query(&mut c)
                            .unwrap();
                    }
                    i += 1;
                }
            })
        })
        .collect();
    for _ in 0..300 {
        let ring: Vec<i64> = c.lrange("ring", 0, -1).unwrap();
        assert_eq!(ring.len(), N as usize);
        let first = ring[0];
        let rotation: Vec<i64> = (0..N).map(|i| (first + i) % N).collect();
        assert_eq!(ring, rotation, "LRANGE saw a list between two moments");
        let z: Vec<(String, f64)> = c.zrange_withscores("z", 0, -1).unwrap();
        let mut scores: Vec<i64> = z.iter().map(|(_, s)| *s as i64).collect();
        scores.sort();
        assert_eq!(
            scores,
            (0..N).collect::<Vec<_>>(),
            "ZRANGE saw a set between two moments"
        );
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for w in writers {
        w.join().unwrap();
    }
}

#[test]
fn watch_sees_a_change_to_one_element() {
    let s = Server::start(None);
    let (mut c, mut other) = (s.conn(), s.conn());
    let _: () = c.hset("h", "f", "1").unwrap();
    let _: () = cmd("WATCH").arg("h").query(&mut c).unwrap();
    // Same field count: only the element changes.
    let _: () = other.hset("h", "f", "2").unwrap();
    let _: () = cmd("MULTI").query(&mut c).unwrap();
    let _: () = cmd("HSET").arg(&["h", "f", "3"]).query(&mut c).unwrap();
    let out: Value = cmd("EXEC").query(&mut c).unwrap();
    assert_eq!(out, Value::Nil);
    assert_eq!(c.hget::<_, _, String>("h", "f").unwrap(), "2");
}

#[test]
fn collections_survive_a_restart_and_versions_are_never_reused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let start = || Server::start_at(tempfile::tempdir().unwrap(), db.clone(), |_| {});
    {
        let s = start();
        let mut c = s.conn();
        // The first collection made; a blind SET leaves its elements
        // behind, unreachable.
        let _: () = c.sadd("gone", &["old1", "old2"]).unwrap();
        let _: () = c.set("gone", "string").unwrap();
        let _: () = c.rpush("l", &["a", "b", "c"]).unwrap();
        let _: () = c.zadd("z", "m", 1.5).unwrap();
    }
    let s = start();
    let mut c = s.conn();
    let all: Vec<String> = c.lrange("l", 0, -1).unwrap();
    assert_eq!(all, ["a", "b", "c"]);
    assert_eq!(c.zscore::<_, _, f64>("z", "m").unwrap(), 1.5);
    // A list made after the restart must not meet the old elements, even
    // when it is the first collection the new server makes.
    let _: () = c.del("gone").unwrap();
    let _: () = c.sadd("gone", "new").unwrap();
    let fresh: Vec<String> = c.smembers("gone").unwrap();
    assert_eq!(fresh, ["new"]);
}

/// redis-benchmark's default run (every test it has, lists, sets, hashes
/// and sorted sets among them) completes without an error reply.
#[test]
fn redis_benchmark_runs_its_default_tests() {
    let s = Server::start(None);
    let out = match std::process::Command::new("redis-benchmark")
        .args([
            "-p",
            &s.addr.port().to_string(),
            "-q",
            "-n",
            "2000",
            "-c",
            "8",
        ])
        .output()
    {
        Ok(out) => out,
        Err(_) => {
            eprintln!("redis-benchmark not installed: skipped");
            return;
        }
    };
    let text = String::from_utf8_lossy(&out.stdout).replace('\r', "\n");
    let errors = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}\n{errors}");
    assert!(
        !text.contains("Error") && !errors.contains("Error"),
        "{text}\n{errors}"
    );
    for test in ["LPUSH", "HSET", "SPOP", "ZPOPMIN", "LRANGE_600", "MSET"] {
        assert!(text.contains(test), "no {test} in\n{text}");
    }
}

/// A small deterministic generator for the model tests.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// A sorted set under adds, increments, pops from both ends, removals one
/// by one and by score or rank range, against a model after every step: its whole order, ranks, counts and
/// score ranges (these walk from the low mark pops leave, and from a
/// score's place in the order).
#[test]
fn a_sorted_set_matches_a_model() {
    use std::collections::BTreeMap;
    let s = Server::start(None);
    let mut c = s.conn();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut model: BTreeMap<String, i64> = BTreeMap::new();
    let ordered = |m: &BTreeMap<String, i64>| {
        let mut v: Vec<(String, f64)> = m.iter().map(|(k, s)| (k.clone(), *s as f64)).collect();
        v.sort_by(|a, b| a.1.total_cmp(&b.1).then_with(|| a.0.cmp(&b.0)));
        v
    };
    for step in 0..1500 {
        let member = format!("m{}", rng.below(40));
        let score = rng.below(11) as i64 - 5;
        match rng.below(8) {
            0 | 1 => {
                let _: i64 = c.zadd("z", &member, score).unwrap();
                model.insert(member, score);
            }
            2 => {
                let _: f64 = c.zincr("z", &member, score).unwrap();
                *model.entry(member).or_insert(0) += score;
            }
            3 => {
                let n = 1 + rng.below(3) as usize;
                let got: Vec<(String, f64)> = c.zpopmin("z", n as isize).unwrap();
                let want: Vec<(String, f64)> = ordered(&model).into_iter().take(n).collect();
                assert_eq!(got, want, "ZPOPMIN at step {step}");
                want.iter().for_each(|(m, _)| {
                    model.remove(m);
                });
            }
            4 => {
                let n = 1 + rng.below(3) as usize;
                let got: Vec<(String, f64)> = c.zpopmax("z", n as isize).unwrap();
                let want: Vec<(String, f64)> = ordered(&model).into_iter().rev().take(n).collect();
                assert_eq!(got, want, "ZPOPMAX at step {step}");
                want.iter().for_each(|(m, _)| {
                    model.remove(m);
                });
            }
            5 => {
                // Mostly from the bottom: the sliding-window pattern.
                let lo = match rng.below(2) {
                    0 => f64::NEG_INFINITY,
                    _ => rng.below(11) as f64 - 5.0,
                };
                let hi = rng.below(11) as f64 - 6.0;
                let removed: usize = c.zrembyscore("z", lo, hi).unwrap();
                let doomed: Vec<String> = ordered(&model)
                    .into_iter()
                    .filter(|(_, s)| (lo..=hi).contains(s))
                    .map(|(m, _)| m)
                    .collect();
                assert_eq!(removed, doomed.len(), "ZREMRANGEBYSCORE at step {step}");
                doomed.iter().for_each(|m| {
                    model.remove(m);
                });
            }
            6 => {
                let (start, stop) = (rng.below(8) as isize - 4, rng.below(8) as isize - 4);
                let removed: usize = c.zremrangebyrank("z", start, stop).unwrap();
                let all = ordered(&model);
                let doomed = match redis_positions(start, stop, all.len()) {
                    Some((a, b)) => all[a..=b].to_vec(),
                    None => Vec::new(),
                };
                assert_eq!(
                    removed,
                    doomed.len(),
                    "ZREMRANGEBYRANK {start} {stop} at step {step}"
                );
                doomed.iter().for_each(|(m, _)| {
                    model.remove(m);
                });
            }
            _ => {
                let _: i64 = c.zrem("z", &member).unwrap();
                model.remove(&member);
            }
        }
        let want = ordered(&model);
        let got: Vec<(String, f64)> = c.zrange_withscores("z", 0, -1).unwrap();
        assert_eq!(got, want, "order at step {step}");
        let probe = format!("m{}", rng.below(40));
        let rank: Option<usize> = c.zrank("z", &probe).unwrap();
        assert_eq!(
            rank,
            want.iter().position(|(m, _)| *m == probe),
            "rank at step {step}"
        );
        let (lo, hi) = (rng.below(11) as f64 - 5.0, rng.below(11) as f64 - 5.0);
        let in_range: Vec<String> = c.zrangebyscore("z", lo, hi).unwrap();
        let want_range: Vec<String> = want
            .iter()
            .filter(|(_, s)| (lo..=hi).contains(s))
            .map(|(m, _)| m.clone())
            .collect();
        assert_eq!(
            in_range, want_range,
            "ZRANGEBYSCORE {lo} {hi} at step {step}"
        );
        let count: usize = c.zcount("z", lo, hi).unwrap();
        assert_eq!(count, want_range.len(), "ZCOUNT at step {step}");
        // From the top: ranks, rank ranges, score ranges with LIMIT.
        let rev_rank: Option<usize> = c.zrevrank("z", &probe).unwrap();
        assert_eq!(
            rev_rank,
            want.iter().rev().position(|(m, _)| *m == probe),
            "ZREVRANK at step {step}"
        );
        let (start, stop) = (rng.below(8) as isize - 2, rng.below(8) as isize - 2);
        let got: Vec<String> = c.zrevrange("z", start, stop).unwrap();
        let all_rev: Vec<String> = want.iter().rev().map(|(m, _)| m.clone()).collect();
        let expect: Vec<String> = match redis_positions(start, stop, all_rev.len()) {
            Some((a, b)) => all_rev[a..=b].to_vec(),
            None => Vec::new(),
        };
        assert_eq!(got, expect, "ZREVRANGE {start} {stop} at step {step}");
        let (offset, limit) = (rng.below(4) as isize, rng.below(5) as isize - 1);
        let got: Vec<String> = c
            .zrevrangebyscore_limit("z", hi, lo, offset, limit)
            .unwrap();
        let take = if limit < 0 {
            usize::MAX
        } else {
            limit as usize
        };
        let expect: Vec<String> = want_range
            .iter()
            .rev()
            .skip(offset as usize)
            .take(take)
            .cloned()
            .collect();
        assert_eq!(
            got, expect,
            "ZREVRANGEBYSCORE {hi} {lo} LIMIT {offset} {limit} at step {step}"
        );
        let got: Vec<String> = c.zrangebyscore_limit("z", lo, hi, offset, limit).unwrap();
        let expect: Vec<String> = want_range
            .iter()
            .skip(offset as usize)
            .take(take)
            .cloned()
            .collect();
        assert_eq!(
            got, expect,
            "ZRANGEBYSCORE {lo} {hi} LIMIT {offset} {limit} at step {step}"
        );
    }
}

/// Redis's `start stop` positions among `len` (negative from the end).
fn redis_positions(start: isize, stop: isize, len: usize) -> Option<(usize, usize)> {
    let len = len as isize;
    let start = if start < 0 {
        (len + start).max(0)
    } else {
        start
    };
    let stop = if stop < 0 { len + stop } else { stop };
    if start > stop || start >= len {
        return None;
    }
    Some((start as usize, stop.min(len - 1) as usize))
}

/// Ranks and rank ranges of a sorted set large enough that its rank index
/// has many buckets (debug builds split them at 16 members), after pops
/// from both ends moved its marks and members moved and went.
#[test]
fn ranks_are_right_from_either_end_of_a_large_sorted_set() {
    let s = Server::start(None);
    let mut c = s.conn();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut members: Vec<(i64, String)> = (0..700)
        .map(|i| (rng.below(50) as i64, format!("m{i:03}")))
        .collect();
    for (score, m) in &members {
        let _: i64 = c.zadd("big", m, *score).unwrap();
    }
    let _: Vec<(String, f64)> = c.zpopmin("big", 20).unwrap();
    let _: Vec<(String, f64)> = c.zpopmax("big", 30).unwrap();
    members.sort();
    let mut members: Vec<(i64, String)> = members[20..members.len() - 30].to_vec();
    // Members move (new scores, increments) and go, across the buckets of
    // the rank index.
    for step in 0..400 {
        let i = rng.below(members.len() as u64) as usize;
        match step % 4 {
            0 => {
                let _: i64 = c.zrem("big", &members[i].1).unwrap();
                members.remove(i);
            }
            1 => {
                let by = rng.below(20) as i64 - 10;
                let _: f64 = c.zincr("big", &members[i].1, by).unwrap();
                members[i].0 += by;
            }
            _ => {
                let score = rng.below(50) as i64;
                let _: i64 = c.zadd("big", &members[i].1, score).unwrap();
                members[i].0 = score;
            }
        }
    }
    members.sort();
    let members = &members[..];
    for (rank, (_, m)) in members.iter().enumerate() {
        let got: Option<usize> = c.zrank("big", m).unwrap();
        assert_eq!(got, Some(rank), "ZRANK {m}");
        let got: Option<usize> = c.zrevrank("big", m).unwrap();
        assert_eq!(got, Some(members.len() - 1 - rank), "ZREVRANK {m}");
    }
    // Rank ranges near either end, walked from the nearer one.
    let names: Vec<String> = members.iter().map(|(_, m)| m.clone()).collect();
    let n = names.len();
    for (start, stop) in [
        (0, 9),
        (n - 10, n - 1),
        (n / 2 - 5, n / 2 + 5),
        (300, n - 1),
    ] {
        let got: Vec<String> = c.zrange("big", start as isize, stop as isize).unwrap();
        assert_eq!(got, names[start..=stop], "ZRANGE {start} {stop}");
        let got: Vec<String> = c.zrevrange("big", start as isize, stop as isize).unwrap();
        let want: Vec<String> = names
            .iter()
            .rev()
            .skip(start)
            .take(stop - start + 1)
            .cloned()
            .collect();
        assert_eq!(got, want, "ZREVRANGE {start} {stop}");
    }
}

/// A set under adds, removals and pops against a model: every popped
/// member was in the set, and pops of a large set reach all of it.
#[test]
fn a_set_matches_a_model_and_pops_pick_from_all_of_it() {
    use std::collections::BTreeSet;
    let s = Server::start(None);
    let mut c = s.conn();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut model: BTreeSet<String> = BTreeSet::new();
    for step in 0..1500 {
        let member = format!("element:{:06}", rng.below(60));
        match rng.below(4) {
            0 | 1 => {
                let _: i64 = c.sadd("s", &member).unwrap();
                model.insert(member);
            }
            2 => {
                let _: i64 = c.srem("s", &member).unwrap();
                model.remove(&member);
            }
            _ => {
                let popped: Vec<String> = cmd("SPOP").arg(&["s", "2"]).query(&mut c).unwrap();
                assert_eq!(popped.len(), model.len().min(2), "step {step}");
                for m in popped {
                    assert!(model.remove(&m), "popped {m}, not a member, at step {step}");
                }
            }
        }
        let mut got: Vec<String> = c.smembers("s").unwrap();
        got.sort();
        assert_eq!(
            got,
            model.iter().cloned().collect::<Vec<_>>(),
            "step {step}"
        );
    }
    // 2,000 members sharing a prefix: single pops of half of them reach
    // both ends of the members' order (they are not taken from one end).
    let members: Vec<String> = (0..2000).map(|i| format!("element:{i:012}")).collect();
    let _: i64 = c.sadd("big", &members).unwrap();
    let mut popped: Vec<String> = (0..1000)
        .map(|_| c.spop::<_, String>("big").unwrap())
        .collect();
    popped.sort();
    assert!(
        popped[0] < members[100] && popped[999] > members[1900],
        "{:?}",
        &popped[..3]
    );
    assert_eq!(c.scard::<_, i64>("big").unwrap(), 1000);
}

/// The server's sweep deletes the elements of a collection a plain SET
/// replaced, in the background, and keeps those of live collections.
#[test]
fn the_sweep_reclaims_a_replaced_collections_elements() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    {
        let s = Server::start_at(tempfile::tempdir().unwrap(), db.clone(), |o| {
            o.sweep_interval = std::time::Duration::from_millis(10);
        });
        let mut c = s.conn();
        let _: () = c.rpush("kept", &["a", "b"]).unwrap();
        let many: Vec<String> = (0..500).map(|i| format!("f{i}")).collect();
        let _: () = c.sadd("replaced", &many).unwrap();
        let _: () = c.set("replaced", "a string").unwrap();
        let swept = |c: &mut redis::Connection| -> u64 {
            let info: String = cmd("INFO").arg("stats").query(c).unwrap();
            info.lines()
                .find_map(|l| l.strip_prefix("slsm_swept_collections:"))
                .and_then(|n| n.trim().parse().ok())
                .unwrap()
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while swept(&mut c) == 0 {
            assert!(std::time::Instant::now() < deadline, "nothing swept");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let kept: Vec<String> = c.lrange("kept", 0, -1).unwrap();
        assert_eq!(kept, ["a", "b"]);
    }
    let db = slsm::Db::open(&db, slsm::Options::default()).unwrap();
    let items = db.keyspace(slsm_server::store::ITEMS_KEYSPACE).unwrap();
    // The list's two elements and the version counter.
    assert_eq!(items.iter().count(), 3);
}

/// `DEL`, `EXPIRE` into the past, `SET ... XX` over a collection and a
/// `RENAME` (its source, and the collection it replaces) delete the old
/// elements with one range deletion once the command commits (in
/// `MULTI`/`EXEC` too): at once, without the sweep, and without a write
/// set the size of the collection.
#[test]
fn deleting_a_collection_drops_its_elements_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    {
        let s = Server::start_at(tempfile::tempdir().unwrap(), db.clone(), |o| {
            o.sweep_interval = std::time::Duration::from_secs(3600);
        });
        let mut c = s.conn();
        let many: Vec<String> = (0..20_000).map(|i| format!("e{i}")).collect();
        let _: () = c.rpush("list", &many).unwrap();
        let _: () = c.sadd("set", &many[..300]).unwrap();
        let _: () = c.hset_multiple("hash", &[("f", "1"), ("g", "2")]).unwrap();
        let _: () = c.zadd("dest", "m", 1).unwrap();
        let _: () = c.rpush("kept", &["a", "b"]).unwrap();
        let _: () = c.rpush("src", &["x", "y"]).unwrap();
        let _: () = c.sadd("overwritten", &many[..50]).unwrap();
        assert_eq!(c.del::<_, i64>("list").unwrap(), 1);
        let _: () = cmd("SET")
            .arg(&["overwritten", "now a string", "XX"])
            .query(&mut c)
            .unwrap();
        let _: () = c.expire("set", -1).unwrap();
        let _: Value = redis::pipe().atomic().del("hash").query(&mut c).unwrap();
        let _: () = c.rename("src", "dest").unwrap();
        let moved: Vec<String> = c.lrange("dest", 0, -1).unwrap();
        assert_eq!(moved, ["x", "y"]);
        let kept: Vec<String> = c.lrange("kept", 0, -1).unwrap();
        assert_eq!(kept, ["a", "b"]);
    }
    let db = slsm::Db::open(&db, slsm::Options::default()).unwrap();
    let items = db.keyspace(slsm_server::store::ITEMS_KEYSPACE).unwrap();
    // "kept" and "dest" (two elements each) and the version counter.
    assert_eq!(items.iter().count(), 5);
}

/// A sorted set saved before the rank index existed (its metadata says it
/// has none, and it has no buckets) still answers ranks and rank ranges,
/// by walking its order from the ends, and takes writes.
#[test]
fn a_sorted_set_without_a_rank_index_still_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let names: Vec<String> = (0..300).map(|i| format!("m{i:03}")).collect();
    {
        let s = Server::start_at(tempfile::tempdir().unwrap(), db.clone(), |_| {});
        let mut c = s.conn();
        for (i, m) in names.iter().enumerate() {
            let _: i64 = c.zadd("z", m, i as i64).unwrap();
        }
    }
    {
        // As an older build left it: `tail` 0 and no `c` elements.
        let engine = slsm::Db::open(&db, slsm::Options::default()).unwrap();
        let keys = engine.keyspace(slsm_server::store::KEYSPACE).unwrap();
        let mut stored = keys.get("z").unwrap().unwrap().to_vec();
        let version: [u8; 8] = stored[9..17].try_into().unwrap();
        stored[33..41].copy_from_slice(&0u64.to_be_bytes());
        keys.put("z", &stored).unwrap();
        let prefix = [&1u32.to_be_bytes()[..], b"z", &version].concat();
        let items = engine.keyspace(slsm_server::store::ITEMS_KEYSPACE).unwrap();
        let buckets = [&prefix[..], b"c"].concat();
        assert!(items.prefix(&buckets).count() > 1, "the set had buckets");
        items
            .delete_range(&buckets, [&prefix[..], b"d"].concat())
            .unwrap();
        drop((keys, items, engine));
    }
    let s = Server::start_at(tempfile::tempdir().unwrap(), db, |_| {});
    let mut c = s.conn();
    for i in [0usize, 17, 150, 299] {
        let got: Option<usize> = c.zrank("z", &names[i]).unwrap();
        assert_eq!(got, Some(i));
        let got: Option<usize> = c.zrevrank("z", &names[i]).unwrap();
        assert_eq!(got, Some(299 - i));
    }
    let got: Vec<String> = c.zrange("z", 140, 144).unwrap();
    assert_eq!(got, names[140..=144]);
    let _: i64 = c.zadd("z", "new", 149.5).unwrap();
    let got: Option<usize> = c.zrank("z", "new").unwrap();
    assert_eq!(got, Some(150));
}

/// Clients moving members of one sorted set at once (each move a
/// transaction, retried on conflict) leave its rank index agreeing with
/// its members: every member's rank is its place in the final order.
#[test]
fn concurrent_moves_keep_ranks_right() {
    let s = Server::start(None);
    let mut c = s.conn();
    let names: Vec<String> = (0..300).map(|i| format!("m{i:03}")).collect();
    for (i, m) in names.iter().enumerate() {
        let _: i64 = c.zadd("board", m, (i % 40) as i64).unwrap();
    }
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let mut c = s.conn();
            let names = names.clone();
            std::thread::spawn(move || {
                let mut rng = Rng(0x9e37_79b9 ^ (t + 1));
                for _ in 0..250 {
                    let m = &names[rng.below(names.len() as u64) as usize];
                    let by = rng.below(61) as i64 - 30;
                    let _: f64 = c.zincr("board", m, by).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let order: Vec<(String, f64)> = c.zrange_withscores("board", 0, -1).unwrap();
    assert_eq!(order.len(), names.len());
    for (rank, (m, _)) in order.iter().enumerate() {
        let got: Option<usize> = c.zrank("board", m).unwrap();
        assert_eq!(got, Some(rank), "ZRANK {m}");
    }
    let middle: Vec<(String, f64)> = c.zrange_withscores("board", 140, 149).unwrap();
    assert_eq!(middle, order[140..150]);
}

/// One whole HSCAN / SSCAN / ZSCAN of `key` with `COUNT count`, calling
/// `between` after each call: every field or member it returned, with its
/// value or score (empty for a set).
fn scan_elements(
    c: &mut redis::Connection,
    command: &str,
    key: &str,
    count: usize,
    mut between: impl FnMut(&mut redis::Connection),
) -> Vec<(String, String)> {
    let (mut cursor, mut found) = (0u64, Vec::new());
    for _ in 0..100_000 {
        let (next, batch): (u64, Vec<String>) = cmd(command)
            .arg(key)
            .arg(cursor)
            .arg("COUNT")
            .arg(count)
            .query(c)
            .unwrap();
        match command {
            "SSCAN" => found.extend(batch.into_iter().map(|m| (m, String::new()))),
            _ => found.extend(batch.chunks(2).map(|p| (p[0].clone(), p[1].clone()))),
        }
        if next == 0 {
            return found;
        }
        cursor = next;
        between(c);
    }
    panic!("{command} {key} never ended");
}

/// HSCAN, SSCAN and ZSCAN return every element exactly once when nothing
/// changes, each element that stays throughout at least once while others
/// come and go, and `MATCH` filters; a cursor of another collection starts
/// over instead of skipping.
#[test]
fn element_scans_return_every_element_that_stays() {
    let s = Server::start(None);
    let mut c = s.conn();
    for i in 0..700 {
        let _: () = c.hset("h", format!("f{i:03}"), i).unwrap();
        let _: () = c.sadd("s", format!("m{i:03}")).unwrap();
        let _: () = c.zadd("z", format!("m{i:03}"), i as f64 / 2.0).unwrap();
    }
    let sorted = |mut v: Vec<(String, String)>| {
        v.sort();
        v
    };
    // A field right after another in byte order (the scan resumes just
    // past the last one returned; COUNT 6 ends the first call at f005).
    let _: () = c.hset("h", "f005\0", "nul").unwrap();
    let mut hash: Vec<(String, String)> = (0..700)
        .map(|i| (format!("f{i:03}"), i.to_string()))
        .collect();
    hash.push(("f005\0".into(), "nul".into()));
    let hash = sorted(hash);
    assert_eq!(sorted(scan_elements(&mut c, "HSCAN", "h", 6, |_| {})), hash);
    let _: () = c.hdel("h", "f005\0").unwrap();
    let set: Vec<(String, String)> = (0..700)
        .map(|i| (format!("m{i:03}"), String::new()))
        .collect();
    assert_eq!(sorted(scan_elements(&mut c, "SSCAN", "s", 9, |_| {})), set);
    let zset: Vec<(String, String)> = (0..700)
        .map(|i| (format!("m{i:03}"), (i as f64 / 2.0).to_string()))
        .collect();
    assert_eq!(sorted(scan_elements(&mut c, "ZSCAN", "z", 9, |_| {})), zset);

    // Elements added and removed between calls; the even ones stay.
    let mut step = 0;
    let found = scan_elements(&mut c, "SSCAN", "s", 5, |c| {
        step += 1;
        let _: () = c
            .srem("s", format!("m{:03}", (2 * step + 1) % 700))
            .unwrap();
        let _: () = c.sadd("s", format!("new{step}")).unwrap();
    });
    let found: std::collections::HashSet<String> = found.into_iter().map(|(m, _)| m).collect();
    for i in (0..700).step_by(2) {
        assert!(found.contains(&format!("m{i:03}")), "m{i:03} was missed");
    }

    let matched: Vec<String> = cmd("HSCAN")
        .arg("h")
        .arg(0)
        .arg("MATCH")
        .arg("f00*")
        .arg("COUNT")
        .arg(1000)
        .query::<(u64, Vec<String>)>(&mut c)
        .unwrap()
        .1;
    assert_eq!(
        matched,
        [
            "f000", "0", "f001", "1", "f002", "2", "f003", "3", "f004", "4", "f005", "5", "f006",
            "6", "f007", "7", "f008", "8", "f009", "9"
        ]
    );

    // A cursor of `h` given to another hash (and one of a deleted key's
    // version to its successor) starts over from the first element.
    let (h_cursor, _): (u64, Vec<String>) = cmd("HSCAN")
        .arg("h")
        .arg(0)
        .arg("COUNT")
        .arg(600)
        .query(&mut c)
        .unwrap();
    let _: () = c.hset_multiple("h2", &[("a", "1"), ("zz", "2")]).unwrap();
    let (_, first) = cmd("HSCAN")
        .arg("h2")
        .arg(h_cursor)
        .query::<(u64, Vec<String>)>(&mut c)
        .unwrap();
    assert_eq!(first, ["a", "1", "zz", "2"]);
    let (z_cursor, _): (u64, Vec<String>) = cmd("ZSCAN")
        .arg("z")
        .arg(0)
        .arg("COUNT")
        .arg(600)
        .query(&mut c)
        .unwrap();
    let _: () = c.del("z").unwrap();
    let _: () = c.zadd("z", "m100", 1).unwrap();
    let _: () = c.zadd("z", "m651", 2).unwrap();
    let (next, again): (u64, Vec<String>) =
        cmd("ZSCAN").arg("z").arg(z_cursor).query(&mut c).unwrap();
    assert_eq!(
        (next, again),
        (
            0,
            vec!["m100".into(), "1".into(), "m651".into(), "2".into()]
        )
    );

    // A missing key scans empty; another type is WRONGTYPE.
    let (next, none): (u64, Vec<String>) =
        cmd("HSCAN").arg("nothing").arg(0).query(&mut c).unwrap();
    assert_eq!((next, none.len()), (0, 0));
    let err = error_of(&mut c, &["SSCAN", "h", "0"]);
    assert!(err.starts_with("WRONGTYPE"), "{err}");
}

/// A sorted set as the first build with the rank index saved it (`tail`
/// 1: every bucket's count stored, their number not) takes writes that
/// split and empty buckets, and ranks stay right.
#[test]
fn a_sorted_set_with_uncounted_buckets_still_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let mut model: Vec<(i64, String)> = (0..300).map(|i| (i, format!("m{i:03}"))).collect();
    {
        let s = Server::start_at(tempfile::tempdir().unwrap(), db.clone(), |_| {});
        let mut c = s.conn();
        for (score, m) in &model {
            let _: i64 = c.zadd("z", m, *score).unwrap();
        }
    }
    {
        let engine = slsm::Db::open(&db, slsm::Options::default()).unwrap();
        let keys = engine.keyspace(slsm_server::store::KEYSPACE).unwrap();
        let mut stored = keys.get("z").unwrap().unwrap().to_vec();
        let tail = u64::from_be_bytes(stored[33..41].try_into().unwrap());
        assert!(
            tail > 2,
            "the set had buckets below the top one (tail {tail})"
        );
        stored[33..41].copy_from_slice(&1u64.to_be_bytes());
        keys.put("z", &stored).unwrap();
    }
    let s = Server::start_at(tempfile::tempdir().unwrap(), db.clone(), |_| {});
    let mut c = s.conn();
    let mut rng = Rng(0x51ed_270b);
    for step in 0..600 {
        let i = rng.below(model.len() as u64) as usize;
        if step % 3 == 0 {
            let (_, m) = model.remove(i);
            let _: i64 = c.zrem("z", &m).unwrap();
        } else {
            let score = rng.below(400) as i64;
            let m = format!("n{step}");
            let _: i64 = c.zadd("z", &m, score).unwrap();
            model.push((score, m));
        }
        if step % 50 == 0 {
            // Empty the bottom buckets too.
            let n = model.len().min(40);
            model.sort();
            let _: Vec<(String, f64)> = c.zpopmin("z", n as isize).unwrap();
            model.drain(..n);
        }
        model.sort();
        let probe = &model[rng.below(model.len() as u64) as usize].1;
        let rank: Option<usize> = c.zrank("z", probe).unwrap();
        assert_eq!(
            rank,
            model.iter().position(|(_, m)| m == probe),
            "step {step}"
        );
        let at = rng.below(model.len() as u64) as isize;
        let got: Vec<String> = c.zrange("z", at, at + 2).unwrap();
        let want: Vec<String> = model
            .iter()
            .skip(at as usize)
            .take(3)
            .map(|(_, m)| m.clone())
            .collect();
        assert_eq!(got, want, "ZRANGE {at} at step {step}");
    }
    drop(s);
    // The metadata counts the buckets below the top one again.
    let engine = slsm::Db::open(&db, slsm::Options::default()).unwrap();
    let keys = engine.keyspace(slsm_server::store::KEYSPACE).unwrap();
    let stored = keys.get("z").unwrap().unwrap().to_vec();
    let tail = u64::from_be_bytes(stored[33..41].try_into().unwrap());
    let version: [u8; 8] = stored[9..17].try_into().unwrap();
    let buckets = [&1u32.to_be_bytes()[..], b"z", &version, b"c"].concat();
    let items = engine.keyspace(slsm_server::store::ITEMS_KEYSPACE).unwrap();
    let below_top = items
        .prefix(&buckets)
        .filter(|r| !r.as_ref().unwrap().0.ends_with(&[0xFF; 8]))
        .count();
    assert_eq!(tail, 2 + below_top as u64);
}
