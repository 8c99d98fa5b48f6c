//! `slsm serve` killed (SIGKILL) while several clients write, cycle after
//! cycle (`--appendfsync always` and `everysec` in turn): after each
//! restart every acknowledged write is there, and every write that was in
//! flight at the kill is all there or not there at all (`MSET`,
//! `MULTI`/`EXEC`) or, for a pipeline, a prefix of it is (Redis runs a
//! connection's commands in order). Each client owns its keys and keeps a
//! model of them; the values after a restart become the model of the next
//! cycle.
//!
//! `SLSM_SERVE_KILL_CYCLES` (default 6) and `SLSM_SERVE_KILL_SEED` set the
//! length and the seed of the run, for soaks.

use std::collections::HashMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use slsm_cli::bench::keygen::Rng;

const CLIENTS: usize = 4;
const KEYS: usize = 12;
const COUNTERS: usize = 3;
/// The server's `--appendfsync`, cycle by cycle. A kill of the process
/// (not of the machine) loses nothing acknowledged in either mode: the log
/// is written (`write(2)`) before a write is acknowledged, and only its
/// sync waits for the next second under `everysec`.
const FSYNC_MODES: [&str; 2] = ["always", "everysec"];

/// `n` distinct indexes below `of`.
fn distinct(rng: &mut Rng, n: usize, of: usize) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    while out.len() < n {
        let i = below(rng, of);
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// A uniform index below `n`.
fn below(rng: &mut Rng, n: usize) -> usize {
    rng.uniform(n as u64) as usize
}

/// Client `client`'s plain key `i`.
fn plain_key(client: usize, i: usize) -> String {
    format!("c{client}:k{i}")
}

/// Client `client`'s counter `i`.
fn counter_key(client: usize, i: usize) -> String {
    format!("c{client}:n{i}")
}

/// One key's change: its value before and the value the write sets (`None`:
/// absent).
#[derive(Clone, Debug)]
struct Change {
    key: String,
    old: Option<String>,
    new: Option<String>,
}

/// A write whose reply never came.
#[derive(Clone, Debug)]
enum InFlight {
    /// All of its changes or none (one command, `MSET`, `MULTI`/`EXEC`).
    Atomic(Vec<Change>),
    /// A prefix of its changes, in order (a pipeline of `SET`s).
    Prefix(Vec<Change>),
}

/// What one client knows of its keys.
struct Model {
    client: usize,
    values: HashMap<String, Option<String>>,
    in_flight: Option<InFlight>,
    writes: u64,
}

impl Model {
    fn new(client: usize) -> Model {
        let mut values = HashMap::new();
        for k in Model::all_keys(client) {
            values.insert(k, None);
        }
        Model {
            client,
            values,
            in_flight: None,
            writes: 0,
        }
    }

    fn all_keys(client: usize) -> Vec<String> {
        let plain = (0..KEYS).map(|i| plain_key(client, i));
        let counters = (0..COUNTERS).map(|i| counter_key(client, i));
        plain.chain(counters).collect()
    }

    fn key(&self, i: usize) -> String {
        plain_key(self.client, i)
    }

    fn counter(&self, i: usize) -> String {
        counter_key(self.client, i)
    }

    fn change(&self, key: String, new: Option<String>) -> Change {
        let old = self.values[&key].clone();
        Change { key, old, new }
    }

    /// The change `INCR key` makes.
    fn incr(&self, key: String) -> Change {
        let old: i64 = self.values[&key]
            .as_deref()
            .map_or(0, |v| v.parse().unwrap());
        self.change(key, Some((old + 1).to_string()))
    }

    fn apply(&mut self, changes: &[Change]) {
        for c in changes {
            self.values.insert(c.key.clone(), c.new.clone());
        }
    }
}

/// Runs random writes against the server at `url` until a request fails
/// (the server was killed) or `stop` is set; each acknowledged write is
/// applied to `model`, and the one that failed is left as in flight.
fn write_until_killed(url: &str, model: &mut Model, rng: &mut Rng, stop: &AtomicBool) {
    let Ok(mut c) = redis::Client::open(url).and_then(|cl| cl.get_connection()) else {
        return;
    };
    let mut n = 0u64;
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let value = |i: usize| format!("v{}-{n}-{i}", model.writes);
        let (cmd, flight) = match below(rng, 10) {
            0..=2 => {
                let ch = model.change(model.key(below(rng, KEYS)), Some(value(0)));
                let mut p = redis::pipe();
                p.cmd("SET").arg(&ch.key).arg(ch.new.as_deref().unwrap());
                (p, InFlight::Atomic(vec![ch]))
            }
            3 => {
                let ch = model.change(model.key(below(rng, KEYS)), None);
                let mut p = redis::pipe();
                p.cmd("DEL").arg(&ch.key);
                (p, InFlight::Atomic(vec![ch]))
            }
            4 => {
                let ch = model.incr(model.counter(below(rng, COUNTERS)));
                let mut p = redis::pipe();
                p.cmd("INCR").arg(&ch.key);
                (p, InFlight::Atomic(vec![ch]))
            }
            5 | 6 => {
                let chs: Vec<Change> = distinct(rng, 3, KEYS)
                    .into_iter()
                    .enumerate()
                    .map(|(j, k)| model.change(model.key(k), Some(value(j))))
                    .collect();
                let mut p = redis::pipe();
                let mset = p.cmd("MSET");
                for ch in &chs {
                    mset.arg(&ch.key).arg(ch.new.as_deref().unwrap());
                }
                (p, InFlight::Atomic(chs))
            }
            7 => {
                let set = model.change(model.key(below(rng, KEYS)), Some(value(0)));
                let incr = model.incr(model.counter(below(rng, COUNTERS)));
                let mut p = redis::pipe();
                p.atomic()
                    .cmd("SET")
                    .arg(&set.key)
                    .arg(set.new.as_deref().unwrap())
                    .cmd("INCR")
                    .arg(&incr.key);
                (p, InFlight::Atomic(vec![set, incr]))
            }
            _ => {
                let len = 2 + below(rng, 5);
                let chs: Vec<Change> = distinct(rng, len, KEYS)
                    .into_iter()
                    .enumerate()
                    .map(|(j, k)| model.change(model.key(k), Some(value(j))))
                    .collect();
                let mut p = redis::pipe();
                for ch in &chs {
                    p.cmd("SET").arg(&ch.key).arg(ch.new.as_deref().unwrap());
                }
                (p, InFlight::Prefix(chs))
            }
        };
        model.writes += 1;
        match cmd.query::<redis::Value>(&mut c) {
            Ok(_) => {
                let (InFlight::Atomic(chs) | InFlight::Prefix(chs)) = &flight;
                model.apply(chs);
            }
            Err(e) => {
                assert!(
                    e.is_io_error() || e.is_connection_dropped() || e.is_unrecoverable_error(),
                    "a write failed other than by the kill: {e}"
                );
                model.in_flight = Some(flight);
                return;
            }
        }
    }
}

/// Checks the values read back after a restart against `model` (and its
/// write in flight), then makes them the model.
fn check_and_adopt(
    model: &mut Model,
    found: &HashMap<String, Option<String>>,
    cycle: usize,
    fsync: &str,
) {
    let flight = model.in_flight.take();
    let changes: Vec<Change> = match &flight {
        Some(InFlight::Atomic(chs) | InFlight::Prefix(chs)) => chs.clone(),
        None => Vec::new(),
    };
    for (key, want) in &model.values {
        let got = &found[key];
        let in_flight = changes.iter().find(|c| &c.key == key);
        let ok = got == want || in_flight.is_some_and(|c| &c.new == got);
        assert!(
            ok,
            "cycle {cycle} ({fsync}): {key} is {got:?}, acknowledged {want:?}, in flight {in_flight:?}"
        );
    }
    // Which of the changes in flight took effect (only those that change
    // something say).
    let applied: Vec<bool> = changes
        .iter()
        .filter(|c| c.old != c.new)
        .map(|c| found[&c.key] == c.new)
        .collect();
    match &flight {
        Some(InFlight::Atomic(_)) => assert!(
            applied.iter().all(|&a| a) || applied.iter().all(|&a| !a),
            "cycle {cycle} ({fsync}): an atomic write half applied: {changes:?} {applied:?}"
        ),
        Some(InFlight::Prefix(_)) => {
            let first_missing = applied.iter().position(|&a| !a).unwrap_or(applied.len());
            assert!(
                applied[first_missing..].iter().all(|&a| !a),
                "cycle {cycle} ({fsync}): a pipeline applied out of order: {changes:?} {applied:?}"
            );
        }
        None => {}
    }
    model.values = found.clone();
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// A running `slsm serve`, killed on drop (so that a failed check does not
/// leave it running).
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_server(db: &Path, port: u16, fsync: &str) -> Server {
    let mut server = Server(
        Command::new(env!("CARGO_BIN_EXE_slsm"))
            .arg("serve")
            .arg("--db")
            .arg(db)
            .args(["--bind", &format!("127.0.0.1:{port}")])
            .args(["--appendfsync", fsync])
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let url = format!("redis://127.0.0.1:{port}/");
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        let client = redis::Client::open(url.as_str()).unwrap();
        if let Ok(mut c) = client.get_connection() {
            if redis::cmd("PING").query::<String>(&mut c).is_ok() {
                return server;
            }
        }
        if let Ok(Some(status)) = server.0.try_wait() {
            panic!("slsm serve exited: {status:?}");
        }
        thread::sleep(Duration::from_millis(20));
    }
    panic!("slsm serve did not start");
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn acknowledged_writes_survive_sigkill_under_concurrent_clients() {
    let cycles = env_u64("SLSM_SERVE_KILL_CYCLES", 6) as usize;
    let seed = env_u64("SLSM_SERVE_KILL_SEED", 0x51a5_0001);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let mut models: Vec<Model> = (0..CLIENTS).map(Model::new).collect();
    let mut master = Rng::new(seed);
    let mut in_flight_seen = 0;
    for cycle in 0..cycles {
        let port = free_port();
        let fsync = FSYNC_MODES[cycle % FSYNC_MODES.len()];
        let mut server = start_server(&db, port, fsync);
        let url = format!("redis://127.0.0.1:{port}/");
        let stop = Arc::new(AtomicBool::new(false));
        let handles: Vec<_> = models
            .drain(..)
            .enumerate()
            .map(|(i, mut model)| {
                let (url, stop) = (url.clone(), Arc::clone(&stop));
                let mut rng = Rng::new(master.next_u64() ^ i as u64);
                thread::spawn(move || {
                    write_until_killed(&url, &mut model, &mut rng, &stop);
                    model
                })
            })
            .collect();
        thread::sleep(Duration::from_millis(40 + below(&mut master, 300) as u64));
        server.0.kill().unwrap(); // SIGKILL
        server.0.wait().unwrap();
        stop.store(true, Ordering::Relaxed);
        models = handles.into_iter().map(|h| h.join().unwrap()).collect();
        in_flight_seen += models.iter().filter(|m| m.in_flight.is_some()).count();
        let mut server = start_server(&db, port, fsync);
        let client = redis::Client::open(url.as_str()).unwrap();
        let mut c = client.get_connection().unwrap();
        for model in &mut models {
            let keys = Model::all_keys(model.client);
            let values: Vec<Option<String>> = redis::cmd("MGET").arg(&keys).query(&mut c).unwrap();
            let found = keys.into_iter().zip(values).collect();
            check_and_adopt(model, &found, cycle, fsync);
        }
        let _ = redis::cmd("SHUTDOWN").query::<()>(&mut c);
        let status = server.0.wait().unwrap();
        assert!(
            status.success(),
            "cycle {cycle} ({fsync}): SHUTDOWN ended with {status:?}"
        );
    }
    let writes: u64 = models.iter().map(|m| m.writes).sum();
    assert!(writes > 0, "no write was made");
    eprintln!("{cycles} kills, {writes} writes, {in_flight_seen} in flight at a kill");
}
