//! The SIGKILL loop: a child process writes with several threads (values
//! from 0 bytes to 10 MiB, single writes and batches, flushes and
//! compactions from the foreground while the background flushes and
//! merges), and is killed at a random moment: while it opens (and
//! recovers), while it writes, or in the middle of a compaction. The parent
//! reopens the database in strict recovery every time and checks that
//! every acknowledged write is there (each thread's in-flight write may or
//! may not be), that nothing else is, and that `check` passes. The next
//! child continues on what was recovered.
//!
//! `SLSM_KILL_CYCLES` (default 1000) and `SLSM_KILL_SEED` set the run; a
//! long run for release checks:
//! `SLSM_KILL_CYCLES=20000 cargo test -p slsm --release --test kill -- --nocapture`

mod common;
use common::env_u64;

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use slsm::{Db, Options, WriteBatch};

const CHILD_ENV: &str = "SLSM_KILL_CHILD";
const KEYS_PER_THREAD: u64 = 150;

/// splitmix64.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The bytes of value `(seed, len)`: incompressible, so big values really
/// are big in the log and in run files.
fn value_bytes(seed: u64, len: u64) -> Vec<u8> {
    let mut x = seed | 1;
    let mut out = Vec::with_capacity(len as usize);
    while (out.len() as u64) < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let take = (len as usize - out.len()).min(8);
        out.extend_from_slice(&x.to_le_bytes()[..take]);
    }
    out
}

/// 0 bytes to 10 MiB, mostly small.
fn value_len(rng: &mut Rng) -> u64 {
    match rng.below(1000) {
        0..=99 => 0,
        100..=699 => 1 + rng.below(200),
        700..=949 => 200 + rng.below(64 << 10),
        950..=994 => (64 << 10) + rng.below(1 << 20),
        _ => (1 << 20) + rng.below(9 << 20),
    }
}

fn key(thread: u64, i: u64) -> Vec<u8> {
    format!("t{thread}-{i:04}").into_bytes()
}

/// One mutation: a put of value `(seed, len)`, or a delete.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Mut {
    Put(Vec<u8>, u64, u64),
    Del(Vec<u8>),
}

fn encode(muts: &[Mut]) -> String {
    let parts: Vec<String> = muts
        .iter()
        .map(|m| match m {
            Mut::Put(k, seed, len) => format!("P,{},{seed},{len}", String::from_utf8_lossy(k)),
            Mut::Del(k) => format!("D,{}", String::from_utf8_lossy(k)),
        })
        .collect();
    parts.join(";")
}

fn decode(s: &str) -> Vec<Mut> {
    s.split(';')
        .map(|m| {
            let f: Vec<&str> = m.split(',').collect();
            match f[0] {
                "P" => Mut::Put(
                    f[1].as_bytes().to_vec(),
                    f[2].parse().unwrap(),
                    f[3].parse().unwrap(),
                ),
                _ => Mut::Del(f[1].as_bytes().to_vec()),
            }
        })
        .collect()
}

fn options() -> Options {
    Options {
        run_size: 256 << 10,
        run_entries: 200,
        memory_runs: 3,
        level_runs: 2,
        ..Options::default()
    }
}

/// The child: writes until killed. A no-op in a normal test run.
#[test]
fn kill_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let seed = env_u64("SLSM_KILL_CHILD_SEED", 1);
    let threads = env_u64("SLSM_KILL_CHILD_THREADS", 1);
    let compacting = env_u64("SLSM_KILL_CHILD_COMPACT", 0) == 1;
    let db = match Db::open(&dir, options()) {
        Ok(db) => db,
        Err(e) => {
            println!("@@error open {e}");
            std::process::exit(3);
        }
    };
    println!("@@ready");
    std::thread::scope(|s| {
        for t in 0..threads {
            let db = &db;
            s.spawn(move || write_forever(db, t, seed.wrapping_add(t * 7919), compacting));
        }
    });
}

fn write_forever(db: &Db, thread: u64, seed: u64, compacting: bool) {
    let mut rng = Rng(seed);
    for id in 0.. {
        let n = if rng.below(5) == 0 {
            1 + rng.below(4)
        } else {
            1
        };
        let muts: Vec<Mut> = (0..n)
            .map(|_| {
                let k = key(thread, rng.below(KEYS_PER_THREAD));
                match rng.below(10) {
                    0 | 1 => Mut::Del(k),
                    _ => Mut::Put(k, rng.next(), value_len(&mut rng)),
                }
            })
            .collect();
        println!("@@b {thread} {id} {}", encode(&muts));
        let mut batch = WriteBatch::new();
        for m in &muts {
            match m {
                Mut::Put(k, seed, len) => batch.put(k, value_bytes(*seed, *len)),
                Mut::Del(k) => batch.delete(k),
            };
        }
        if let Err(e) = db.write(batch) {
            println!("@@error write {e}");
            std::process::exit(3);
        }
        println!("@@a {thread} {id}");
        if thread == 0 {
            let every = if compacting { 20 } else { 300 };
            match rng.below(every) {
                0 => {
                    println!("@@m compact");
                    db.compact().expect("compact");
                }
                1 => db.flush().expect("flush"),
                _ => {}
            }
        }
    }
}

/// What one writer thread of a child was told.
#[derive(Default)]
struct ThreadLog {
    acked: Vec<Vec<Mut>>,
    in_flight: Option<Vec<Mut>>,
}

/// When the parent kills the child.
#[derive(Clone, Copy, Debug)]
enum KillAt {
    /// This long after it started (often while it opens and recovers).
    Start(Duration),
    /// This long after it reported the database open.
    Running(Duration),
    /// This long after it began a compaction.
    Compacting(Duration),
}

fn run_child(dir: &Path, seed: u64, threads: u64, at: KillAt) -> (Vec<ThreadLog>, bool) {
    let compacting = matches!(at, KillAt::Compacting(_));
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "kill_child", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, dir)
        .env("SLSM_KILL_CHILD_SEED", seed.to_string())
        .env("SLSM_KILL_CHILD_THREADS", threads.to_string())
        .env("SLSM_KILL_CHILD_COMPACT", u64::from(compacting).to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (events, seen) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut lines = Vec::new();
        let mut r = BufReader::new(stdout);
        let mut buf = String::new();
        while r.read_line(&mut buf).unwrap_or(0) > 0 {
            if buf.ends_with('\n') {
                if buf.contains("@@ready") || buf.contains("@@m compact") {
                    let _ = events.send(buf.contains("compact"));
                }
                lines.push(buf.trim_end().to_string());
            }
            buf.clear();
        }
        lines
    });
    let wait_for = |compaction: bool, limit: Duration| {
        let end = Instant::now() + limit;
        while let Some(left) = end.checked_duration_since(Instant::now()) {
            match seen.recv_timeout(left) {
                Ok(c) if c == compaction => return,
                Ok(_) => continue,
                Err(_) => return,
            }
        }
    };
    match at {
        KillAt::Start(d) => std::thread::sleep(d),
        KillAt::Running(d) => {
            wait_for(false, Duration::from_secs(30));
            std::thread::sleep(d);
        }
        KillAt::Compacting(d) => {
            wait_for(true, Duration::from_secs(5));
            std::thread::sleep(d);
        }
    }
    let _ = child.kill();
    let status = child.wait().unwrap();
    let lines = reader.join().unwrap();
    let mut logs: Vec<ThreadLog> = (0..threads).map(|_| ThreadLog::default()).collect();
    let mut opened = false;
    for line in &lines {
        let Some(at) = line.find("@@") else { continue };
        let line = &line[at + 2..];
        let mut f = line.splitn(4, ' ');
        match f.next() {
            Some("b") => {
                let t: usize = f.next().unwrap().parse().unwrap();
                let _id = f.next();
                assert!(
                    logs[t].in_flight.is_none(),
                    "two writes in flight on thread {t}"
                );
                logs[t].in_flight = Some(decode(f.next().unwrap()));
            }
            Some("a") => {
                let t: usize = f.next().unwrap().parse().unwrap();
                let op = logs[t].in_flight.take().expect("ack without begin");
                logs[t].acked.push(op);
            }
            Some("ready") => opened = true,
            Some("error") => panic!("child failed (seed {seed}): {line}"),
            _ => {}
        }
    }
    assert!(
        status.code().is_none(),
        "the child exited by itself: {status}"
    );
    (logs, opened)
}

/// Key -> value `(seed, len)` of one thread's keys.
type Model = BTreeMap<Vec<u8>, (u64, u64)>;

fn apply(model: &mut Model, muts: &[Mut]) {
    for m in muts {
        match m {
            Mut::Put(k, seed, len) => model.insert(k.clone(), (*seed, *len)),
            Mut::Del(k) => model.remove(k),
        };
    }
}

/// Hashes of expected values, computed once each.
#[derive(Default)]
struct Expected(HashMap<(u64, u64), u64>);

impl Expected {
    fn hash(&mut self, seed: u64, len: u64) -> u64 {
        *self
            .0
            .entry((seed, len))
            .or_insert_with(|| xxhash(&value_bytes(seed, len)))
    }
}

fn xxhash(b: &[u8]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    b.hash(&mut h);
    h.finish()
}

/// True if the database's keys of `thread` hold exactly `model`.
fn thread_matches(db: &Db, thread: u64, model: &Model, expected: &mut Expected) -> bool {
    let prefix = format!("t{thread}-");
    let mut want = model.iter();
    for item in db.prefix(prefix.as_bytes()) {
        let (k, v) = item.unwrap();
        let Some((wk, &(seed, len))) = want.next() else {
            return false;
        };
        if &k[..] != wk.as_slice()
            || v.len() as u64 != len
            || xxhash(&v) != expected.hash(seed, len)
        {
            return false;
        }
    }
    want.next().is_none()
}

#[test]
fn kill_loop() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    let cycles = env_u64("SLSM_KILL_CYCLES", 1000);
    let seed = env_u64("SLSM_KILL_SEED", 0x5157_0b1f);
    // Independent loops, each on a database of its own, at once: a cycle
    // spends most of its time in one process (the child writing, or the
    // parent recovering and checking), so two loops keep two cores busy
    // and the cycles take half the time. Loop `l` runs seed
    // `SLSM_KILL_SEED + l`; `SLSM_KILL_LOOPS=1` replays one alone.
    let loops = env_u64("SLSM_KILL_LOOPS", 2).clamp(1, cycles.max(1));
    let tmp = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let totals = std::thread::scope(|s| {
        let handles: Vec<_> = (0..loops)
            .map(|l| {
                let dir = tmp.path().join(format!("db{l}"));
                let n = cycles / loops + u64::from(l < cycles % loops);
                s.spawn(move || kill_loop_on(&dir, seed.wrapping_add(l), n))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .fold(Totals::default(), Totals::add)
    });
    let Totals {
        cycles,
        acked,
        in_flight_applied,
        killed_in_open,
        big,
        compaction_kills,
    } = totals;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "kill summary: {cycles} SIGKILL cycles passed in {loops} loops ({killed_in_open} before \
         the open finished, {compaction_kills} aimed at a compaction), {acked} writes \
         acknowledged and all recovered ({big} values of 1 MiB or more), {in_flight_applied} \
         in-flight writes recovered, {:.0} s, seed {seed:#x}",
        started.elapsed().as_secs_f64()
    )
    .unwrap();
}

/// What kill loops counted.
#[derive(Default)]
struct Totals {
    cycles: u64,
    acked: u64,
    in_flight_applied: u64,
    killed_in_open: u64,
    big: u64,
    compaction_kills: u64,
}

impl Totals {
    fn add(self, o: Totals) -> Totals {
        Totals {
            cycles: self.cycles + o.cycles,
            acked: self.acked + o.acked,
            in_flight_applied: self.in_flight_applied + o.in_flight_applied,
            killed_in_open: self.killed_in_open + o.killed_in_open,
            big: self.big + o.big,
            compaction_kills: self.compaction_kills + o.compaction_kills,
        }
    }
}

/// `cycles` kills of children writing to the database in `dir`, each
/// followed by a strict reopen that must hold every acknowledged write.
fn kill_loop_on(dir: &Path, seed: u64, cycles: u64) -> Totals {
    let mut rng = Rng(seed);
    let mut models: Vec<Model> = (0..4).map(|_| Model::new()).collect();
    let mut expected = Expected::default();
    let mut tally = Totals {
        cycles,
        ..Totals::default()
    };
    for cycle in 0..cycles {
        let threads = 1 + rng.below(4);
        let child_seed = rng.next();
        let at = match rng.below(100) {
            0..=14 => KillAt::Start(Duration::from_micros(rng.below(12_000))),
            15..=29 => KillAt::Compacting(Duration::from_millis(rng.below(15))),
            _ => KillAt::Running(Duration::from_millis(2 + rng.below(60))),
        };
        tally.compaction_kills += u64::from(matches!(at, KillAt::Compacting(_)));
        let (logs, opened) = run_child(dir, child_seed, threads, at);
        tally.killed_in_open += u64::from(!opened);
        let db = Db::open(dir, options()).unwrap_or_else(|e| {
            panic!("cycle {cycle} (seed {seed:#x}, child {child_seed}, {at:?}): reopen failed: {e}")
        });
        for (t, log) in logs.iter().enumerate() {
            let model = &mut models[t];
            for op in &log.acked {
                apply(model, op);
                tally.acked += 1;
                tally.big += op
                    .iter()
                    .filter(|m| matches!(m, Mut::Put(_, _, len) if *len >= 1 << 20))
                    .count() as u64;
            }
            if thread_matches(&db, t as u64, model, &mut expected) {
                continue;
            }
            let mut with_in_flight = model.clone();
            if let Some(op) = &log.in_flight {
                apply(&mut with_in_flight, op);
            }
            assert!(
                thread_matches(&db, t as u64, &with_in_flight, &mut expected),
                "cycle {cycle} (seed {seed:#x}, child {child_seed}, {at:?}): thread {t} lost \
                 acknowledged writes or has writes nobody made ({} acked this cycle)",
                log.acked.len()
            );
            tally.in_flight_applied += 1;
            *model = with_in_flight;
        }
        // Threads this child did not run must be untouched too.
        for (t, model) in models.iter().enumerate().skip(logs.len()) {
            assert!(thread_matches(&db, t as u64, model, &mut expected));
        }
        db.check()
            .unwrap_or_else(|e| panic!("cycle {cycle} (seed {seed:#x}): check failed: {e}"));
    }
    tally
}
