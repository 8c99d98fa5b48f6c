//! Crash test with real process kills.
//!
//! The test binary re-executes itself as a child (`SLSM_CRASH_CHILD=dir`)
//! that runs a random workload on the database in `dir` (puts, deletes,
//! range deletes, batches; synced and unsynced; tiny runs so flushes, merges
//! and WAL rotation happen constantly) and reports on stdout `@@b <op>` before
//! each write and `@@a <id>` once it returned. The parent SIGKILLs it after a
//! random 5-200 ms, reopens the database and checks that it equals the model
//! after every acknowledged operation (plus, possibly, the one in flight):
//! by default a write is handed to the OS before it is acknowledged, so a
//! process crash loses nothing acknowledged. Batches are all-or-nothing and
//! nothing unwritten appears (every value is unique), and forward/backward
//! iteration, point reads and `check` agree. The next child continues on the
//! recovered database.
//!
//! `SLSM_CRASH_CYCLES` (default 15) sets the number of kill cycles;
//! `SLSM_CRASH_SEED` the seed. Long run:
//! `SLSM_CRASH_CYCLES=500 cargo test -p slsm --release --test crash -- --nocapture`

mod crash_support;

mod common;
use common::env_u64;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crash_support::*;
use slsm::Db;

const CHILD_ENV: &str = "SLSM_CRASH_CHILD";
const CHILD_SEED_ENV: &str = "SLSM_CRASH_CHILD_SEED";

/// The child role: runs the workload until killed. A no-op in a normal test
/// run (the env var is unset).
#[test]
fn crash_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let seed = env_u64(CHILD_SEED_ENV, 1);
    let db = match Db::open(&dir, crash_options()) {
        Ok(db) => db,
        Err(e) => {
            println!("@@open-error {e}");
            std::process::exit(3);
        }
    };
    let mut out = std::io::stdout().lock();
    out.write_all(b"@@ready\n").expect("stdout");
    out.flush().expect("stdout");
    let mut w = Workload::new(seed, seed);
    loop {
        let op = w.next_op();
        let line = format!("@@b {}\n", encode_op(&op));
        out.write_all(line.as_bytes()).expect("stdout");
        out.flush().expect("stdout");
        if let Err(e) = apply_db(&db, &op) {
            let _ = writeln!(out, "@@error {} {e}", op.id);
            let _ = out.flush();
            std::process::exit(3);
        }
        out.write_all(format!("@@a {}\n", op.id).as_bytes())
            .expect("stdout");
        out.flush().expect("stdout");
        // Now and then force the maintenance paths from the foreground too.
        match w.rng.below(400) {
            0 => db.flush().expect("flush"),
            1 => db.compact().expect("compact"),
            _ => {}
        }
    }
}

/// What one child reported before it died.
struct ChildLog {
    /// Operations whose write returned Ok, in order.
    acked: Vec<Op>,
    /// The operation begun but not acknowledged, if any.
    in_flight: Option<Op>,
    /// The child had opened the database when it was killed.
    opened: bool,
}

/// Runs one child and SIGKILLs it `delay` after it spawned or, with
/// `after_open`, after it reported that the database is open.
fn run_child(dir: &Path, seed: u64, delay: Duration, after_open: bool) -> ChildLog {
    let exe = std::env::current_exe().expect("current_exe");
    let mut child = Command::new(exe)
        .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, dir)
        .env(CHILD_SEED_ENV, seed.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn child");
    let stdout = child.stdout.take().expect("piped stdout");
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        // Only complete lines count: a line cut short by the kill was never
        // fully reported.
        let mut lines = Vec::new();
        let mut r = BufReader::new(stdout);
        let mut buf = String::new();
        while r.read_line(&mut buf).unwrap_or(0) > 0 {
            if buf.ends_with('\n') {
                if buf.contains("@@ready") {
                    let _ = ready_tx.send(());
                }
                lines.push(buf.trim_end().to_string());
            }
            buf.clear();
        }
        lines
    });
    if after_open {
        let _ = ready_rx.recv_timeout(Duration::from_secs(30));
    }
    std::thread::sleep(delay);
    let _ = child.kill(); // SIGKILL
    let status = child.wait().expect("wait");
    let lines = reader.join().expect("reader thread");
    let mut log = ChildLog {
        acked: Vec::new(),
        in_flight: None,
        opened: false,
    };
    for line in &lines {
        // libtest may print its own text before ours on the first line.
        let Some(at) = line.find("@@") else { continue };
        let line = &line[at + 2..];
        if let Some(rest) = line.strip_prefix("b ") {
            assert!(log.in_flight.is_none(), "two operations in flight");
            log.in_flight = Some(decode_op(rest).expect("bad op line"));
        } else if let Some(rest) = line.strip_prefix("a ") {
            let op = log.in_flight.take().expect("ack without begin");
            assert_eq!(rest.parse::<u64>().ok(), Some(op.id), "ack id mismatch");
            log.acked.push(op);
        } else if line == "ready" {
            log.opened = true;
        } else if line.starts_with("error ") || line.starts_with("open-error ") {
            panic!("child failed (seed {seed}): {line}");
        }
    }
    assert!(
        status.code().is_none() || log.acked.is_empty(),
        "child exited by itself ({status}) seed {seed}"
    );
    log
}

#[test]
fn crash_kill_recover_loop() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    let cycles = env_u64("SLSM_CRASH_CYCLES", 15);
    let seed = env_u64("SLSM_CRASH_SEED", 0x5157_0001);
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("db");
    let mut rng = Rng(seed);
    let mut model = Model::new();
    let (mut acked_total, mut verified_total, mut in_flight_applied) = (0u64, 0u64, 0u64);
    let mut killed_in_open = 0u64;
    let start = Instant::now();
    for cycle in 0..cycles {
        let child_seed = rng.next_u64() | 1;
        let delay = Duration::from_millis(5 + rng.below(196));
        let after_open = rng.chance(75);
        let log = run_child(&dir, child_seed, delay, after_open);
        killed_in_open += u64::from(!log.opened);
        let db = Db::open(&dir, crash_options()).unwrap_or_else(|e| {
            panic!("cycle {cycle} (seed {seed:#x}, child seed {child_seed}): reopen failed: {e}")
        });
        let got = read_all(&db).unwrap_or_else(|e| panic!("cycle {cycle} seed {seed:#x}: {e}"));
        let mut ops = log.acked.clone();
        ops.extend(log.in_flight.iter().cloned());
        let len = match_prefix(&model, &ops, log.acked.len(), &got).unwrap_or_else(|e| {
            panic!("cycle {cycle} (seed {seed:#x}, child seed {child_seed}, delay {delay:?}): {e}")
        });
        if len > log.acked.len() {
            in_flight_applied += 1;
        }
        for op in &ops[..len] {
            apply_model(&mut model, op);
        }
        acked_total += log.acked.len() as u64;
        verified_total += len as u64;
        drop(db);
    }
    println!(
        "crash summary: {cycles} kill cycles passed, {acked_total} operations acknowledged, \
         {verified_total} verified after recovery ({in_flight_applied} in-flight operations \
         recovered), {killed_in_open} kills before open finished, {} keys at the end, {:.1} s, seed {seed:#x}",
        model.len(),
        start.elapsed().as_secs_f64()
    );
}
