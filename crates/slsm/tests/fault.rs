//! Simulated machine crashes and I/O fault injection through `FaultFs`, the
//! in-memory file system that keeps only what was fsynced (file bytes up to
//! the last `sync_data`, directory entries as of the last directory sync).
//!
//! * `machine_crash_loop`: a random workload with synced and unsynced
//!   writes; the power goes off after a random number of file operations
//!   (so also during flushes, merges, WAL rotation and recovery itself),
//!   unsynced bytes vanish (the last write torn at a random point half of
//!   the time), the database is reopened and must equal the model after
//!   some prefix of the attempted operations that covers every operation
//!   acknowledged with `sync` (and so everything before it); batches are
//!   all-or-nothing, nothing unwritten appears, iteration and `check` pass.
//! * `fault_injection_loop`: I/O errors on writes (possibly short), syncs,
//!   reads, renames, creates and removes at random points; every failure is
//!   an `Err` (never a panic, never `Corruption`); after the faults are
//!   cleared a reopen recovers every acknowledged write (no power loss) or
//!   every synced one (power loss), under the same invariants.
//!
//! `SLSM_FAULT_CYCLES` scales both (default 60); `SLSM_FAULT_SEED` sets the
//! seed.

mod crash_support;

mod common;
use common::env_u64;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use crash_support::*;
use slsm::fs::{FaultFs, FaultOp};
use slsm::{Db, Error, Options};

static PANICS: AtomicUsize = AtomicUsize::new(0);

/// Counts panics on the engine's background threads (they would otherwise
/// go unnoticed; a panic on a test thread fails its test anyway).
fn install_panic_counter() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current()
                .name()
                .is_some_and(|n| n.starts_with("slsm-"))
            {
                PANICS.fetch_add(1, Ordering::SeqCst);
            }
            prev(info);
        }));
    });
}

fn options(fs: &FaultFs, background: bool) -> Options {
    Options {
        fs: fs.as_dyn(),
        background_merges: background,
        ..crash_options()
    }
}

fn db_dir() -> PathBuf {
    PathBuf::from("/faultfs/db")
}

/// Outcome of running operations until one fails (or `max` are done).
struct Attempt {
    /// Every operation attempted, in order (the last may have failed).
    ops: Vec<Op>,
    status: Vec<Status>,
    /// Index + 1 of the last operation acknowledged at all / with sync.
    acked: usize,
    synced: usize,
    errors: Vec<Error>,
}

/// Runs up to `max` operations; stops after `max_errors` consecutive errors.
fn run_ops(db: &Db, w: &mut Workload, max: usize, max_errors: usize) -> Attempt {
    let mut a = Attempt {
        ops: Vec::new(),
        status: Vec::new(),
        acked: 0,
        synced: 0,
        errors: Vec::new(),
    };
    let mut consecutive = 0;
    for _ in 0..max {
        let op = w.next_op();
        let r = apply_db(db, &op);
        let sync = op.sync;
        a.ops.push(op);
        match r {
            Ok(()) => {
                consecutive = 0;
                a.status.push(Status::Acked);
                a.acked = a.ops.len();
                if sync {
                    a.synced = a.ops.len();
                }
            }
            Err(e) => {
                // A failed write may still be recovered after a crash, but
                // only until the next write succeeds: that one first cuts
                // the failed record off the log (see `mark_superseded`).
                a.status.push(Status::Failed);
                a.errors.push(e);
                consecutive += 1;
                if consecutive >= max_errors {
                    break;
                }
                // Try to get going again, as an application might.
                if w.rng.chance(50) {
                    let _ = db.flush();
                }
            }
        }
        // Reads go through the file system too (runs opened by merges).
        if w.rng.chance(3) {
            let _ = db.get(key(w.rng.below(KEY_SPACE)));
        }
    }
    mark_superseded(&mut a.status);
    a
}

/// The engine's promise about failed writes: one that returned an error is
/// never applied once a later write succeeded (the log it may have reached
/// was cut before the later write was logged).
fn mark_superseded(status: &mut [Status]) {
    if let Some(last_ack) = status.iter().rposition(|s| *s == Status::Acked) {
        for s in &mut status[..last_ack] {
            if *s == Status::Failed {
                *s = Status::Rejected;
            }
        }
    }
}

/// Opens the database, retrying after failures caused by a power cut or
/// injected faults (each retry after `crash` or `clear_faults`).
fn reopen(fs: &FaultFs, dir: &Path, background: bool, ctx: &str) -> Db {
    match Db::open(dir, options(fs, background)) {
        Ok(db) => db,
        Err(e) => panic!("{ctx}: reopen failed: {e}\nfiles: {:?}", fs.list()),
    }
}

/// Checks the database against the allowed histories; returns its
/// contents (the new model) and the matched prefix length.
fn verify(db: &Db, model: &Model, a: &Attempt, min_len: usize, ctx: &str) -> (Model, usize) {
    let got = read_all(db).unwrap_or_else(|e| panic!("{ctx}: {e}"));
    let len = match_history(model, &a.ops, &a.status, min_len, &got)
        .unwrap_or_else(|e| panic!("{ctx}: {e}"));
    (got, len)
}

#[test]
fn machine_crash_loop() {
    install_panic_counter();
    let cycles = env_u64("SLSM_FAULT_CYCLES", 150);
    let seed = env_u64("SLSM_FAULT_SEED", 0xfa17_0001);
    let mut rng = Rng(seed);
    let fs = FaultFs::new(seed);
    let dir = db_dir();
    let mut model = Model::new();
    let mut db = reopen(&fs, &dir, true, "initial open");
    let (mut attempted, mut synced_total, mut recovered, mut crashed_in_recovery) = (0, 0, 0, 0);
    for cycle in 0..cycles {
        let ctx = format!("cycle {cycle} (seed {seed:#x})");
        let mut w = Workload::new(rng.next_u64(), 1000 + cycle);
        w.sync_percent = 25;
        fs.power_off_after(1 + rng.below(400));
        let a = run_ops(&db, &mut w, 600, 1);
        fs.power_off(); // whatever was not synced yet is at risk
        drop(db);
        fs.crash();
        // Sometimes the power fails again while recovering.
        if rng.chance(20) {
            fs.power_off_after(rng.below(20));
            if let Ok(d) = Db::open(&dir, options(&fs, true)) {
                drop(d);
            }
            fs.power_off();
            fs.crash();
            crashed_in_recovery += 1;
        }
        let background = rng.chance(70);
        db = reopen(&fs, &dir, background, &ctx);
        let (m, len) = verify(&db, &model, &a, a.synced, &ctx);
        model = m;
        attempted += a.ops.len();
        synced_total += a.synced;
        recovered += len;
    }
    drop(db);
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "a thread panicked");
    println!(
        "machine crash summary: {cycles} power losses passed ({crashed_in_recovery} more during \
         recovery), {attempted} operations attempted, {synced_total} covered by a sync (all \
         recovered), {recovered} recovered in total, seed {seed:#x}"
    );
}

const KINDS: [FaultOp; 6] = [
    FaultOp::Write,
    FaultOp::Sync,
    FaultOp::Read,
    FaultOp::Rename,
    FaultOp::Create,
    FaultOp::Remove,
];

#[test]
fn fault_injection_loop() {
    let seed = env_u64("SLSM_FAULT_SEED", 0xfa17_0002);
    let cycles = env_u64("SLSM_FAULT_CYCLES", 150);
    inject_faults(&FaultFs::new(seed), &db_dir(), cycles, seed, true);
}

/// The same faults over the operating system's file system, where the
/// write-ahead log is written through a shared mapping (what users get by
/// default). Nothing is lost there without a real power cut, so the loop
/// checks that every acknowledged write survives the faults and a reopen.
#[test]
fn fault_injection_loop_on_the_os_file_system() {
    let seed = env_u64("SLSM_FAULT_SEED", 0xfa17_0003);
    let cycles = env_u64("SLSM_FAULT_CYCLES", 150) / 3;
    let dir = tempfile::tempdir().unwrap();
    let fs = FaultFs::wrap(slsm::fs::std_fs(), seed);
    inject_faults(&fs, &dir.path().join("db"), cycles, seed, false);
}

/// Injects a fault into each of `cycles` rounds of random operations, then
/// reopens (after a power loss, in some rounds, if `power_loss` is allowed)
/// and checks every acknowledged write (or every synced one) is there.
fn inject_faults(fs: &FaultFs, dir: &Path, cycles: u64, seed: u64, power_loss: bool) {
    install_panic_counter();
    let fs = fs.clone();
    let dir = dir.to_path_buf();
    let mut rng = Rng(seed);
    let mut model = Model::new();
    let mut db = reopen(&fs, &dir, true, "initial open");
    let (mut errors, mut open_errors, mut power_losses) = (0usize, 0usize, 0usize);
    for cycle in 0..cycles {
        let ctx = format!("cycle {cycle} (seed {seed:#x})");
        let mut w = Workload::new(rng.next_u64(), 5000 + cycle);
        w.sync_percent = 20;
        let kind = KINDS[rng.below(KINDS.len() as u64) as usize];
        if rng.chance(70) {
            let scale = match kind {
                FaultOp::Write => 300,
                FaultOp::Sync => 60,
                _ => 8,
            };
            fs.fail_nth(kind, 1 + rng.below(scale));
        } else {
            fs.fail_with_probability(kind, 5_000);
        }
        let a = run_ops(&db, &mut w, 300, 3);
        let ctx = format!(
            "{ctx}, fault {kind:?}, {} errors (first: {:?}), acked {}, synced {}",
            a.errors.len(),
            a.errors.first().map(|e| e.to_string()),
            a.acked,
            a.synced
        );
        for e in &a.errors {
            assert!(
                !e.is_corruption(),
                "{ctx}: injected {kind:?} fault surfaced as corruption: {e}"
            );
        }
        errors += a.errors.len();
        fs.clear_faults();
        let lose_power = power_loss && rng.chance(30);
        let ctx = format!("{ctx}, power loss {lose_power}");
        let min_len = if lose_power {
            fs.power_off();
            drop(db);
            fs.crash();
            power_losses += 1;
            a.synced
        } else {
            drop(db);
            a.acked
        };
        // Sometimes inject a fault into the reopen itself.
        if rng.chance(25) {
            let kind = KINDS[rng.below(KINDS.len() as u64) as usize];
            fs.fail_nth(kind, 1 + rng.below(4));
            match Db::open(&dir, options(&fs, true)) {
                Ok(d) => drop(d),
                Err(e) => {
                    assert!(
                        !e.is_corruption(),
                        "{ctx}: faulty open said corruption: {e}"
                    );
                    open_errors += 1;
                }
            }
            fs.clear_faults();
        }
        db = reopen(&fs, &dir, rng.chance(70), &ctx);
        let (m, _) = verify(&db, &model, &a, min_len, &ctx);
        model = m;
    }
    drop(db);
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "a thread panicked");
    println!(
        "fault injection summary: {cycles} cycles passed, {} faults injected, {errors} \
         operations failed cleanly, {open_errors} opens failed cleanly, {power_losses} power \
         losses after faults, seed {seed:#x}",
        fs.injected()
    );
}

/// A WAL write that fails half-way leaves a torn record. The next write
/// retires that log (the torn record cut off, the rest synced) and goes on
/// in a new one: writes resume by themselves, the failed write is never
/// applied, and recovery sees one clean history (before, a torn record in
/// the middle made Strict recovery refuse to open, and a flush right after
/// the failure must not start a log behind it).
#[test]
fn wal_write_error_then_writes_resume_in_a_new_log() {
    let fs = FaultFs::new(3);
    let dir = db_dir();
    let db = Db::open(&dir, options(&fs, false)).unwrap();
    for i in 0..20 {
        db.put(key(i), b"before").unwrap();
    }
    fs.fail_nth(FaultOp::Write, 1);
    let e = db
        .put(key(100), b"failed")
        .expect_err("injected write error");
    assert!(!e.is_corruption(), "{e}");
    db.flush().expect("a flush after a failed WAL write");
    db.put(key(101), b"after")
        .expect("writes resume after a WAL failure");
    assert_eq!(
        db.get(key(100)).unwrap(),
        None,
        "the failed write is not applied"
    );
    drop(db);
    fs.clear_faults();
    let db = Db::open(&dir, options(&fs, true)).expect("reopen after a WAL write error");
    for i in 0..20 {
        assert_eq!(db.get(key(i)).unwrap().as_deref(), Some(&b"before"[..]));
    }
    assert_eq!(db.get(key(100)).unwrap(), None);
    assert_eq!(db.get(key(101)).unwrap().as_deref(), Some(&b"after"[..]));
    read_all(&db).unwrap();
}

/// A transaction whose log write fails: its commit returns the error and
/// applies nothing, even after later writes succeed and across a reopen,
/// and it leaves no trace in conflict detection (it commits outside the
/// gate that orders validations, its keys marked pending meanwhile): a
/// transaction that reads the same keys afterwards commits.
#[test]
fn a_transaction_whose_log_write_fails_applies_nothing_and_blocks_nothing() {
    let fs = FaultFs::new(13);
    let dir = db_dir();
    let db = Db::open(&dir, options(&fs, false)).unwrap();
    db.put(key(1), b"before").unwrap();
    let mut tx = db.transaction();
    assert_eq!(tx.get(key(1)).unwrap().as_deref(), Some(&b"before"[..]));
    tx.put(key(1), b"failed").unwrap();
    tx.put(key(2), b"failed").unwrap();
    fs.fail_nth(FaultOp::Write, 1);
    let e = tx.commit().expect_err("injected write error");
    assert!(!e.is_corruption() && !matches!(e, Error::Conflict), "{e}");
    db.put(key(3), b"after")
        .expect("writes resume after a WAL failure");
    assert_eq!(db.get(key(1)).unwrap().as_deref(), Some(&b"before"[..]));
    assert_eq!(db.get(key(2)).unwrap(), None);
    let mut tx = db.transaction();
    assert_eq!(tx.get(key(1)).unwrap().as_deref(), Some(&b"before"[..]));
    assert_eq!(tx.get(key(2)).unwrap(), None);
    tx.put(key(1), b"retried").unwrap();
    tx.commit().expect("no pending mark left behind");
    drop(db);
    fs.clear_faults();
    let db = Db::open(&dir, options(&fs, true)).unwrap();
    assert_eq!(db.get(key(1)).unwrap().as_deref(), Some(&b"retried"[..]));
    assert_eq!(db.get(key(2)).unwrap(), None);
    assert_eq!(db.get(key(3)).unwrap().as_deref(), Some(&b"after"[..]));
}

/// A database without a log, closed while every memory run is full and
/// the flush thread is failing (the disk was full, and has room again):
/// its drop flushes the runs on the closing thread, so every acknowledged
/// write is there after a reopen. (The drop used to give up on the stale
/// failure and lose them, or, with no failure recorded, wait for ever for
/// a flush thread it had already stopped.)
#[test]
fn closing_without_a_log_flushes_full_memory_runs_after_a_failed_flush() {
    let fs = FaultFs::new(11);
    let dir = db_dir();
    let opts = Options {
        disable_wal: true,
        memory_runs: 2,
        ..options(&fs, true)
    };
    let db = Db::open(&dir, opts.clone()).unwrap();
    fs.set_full(true);
    let mut acknowledged = 0;
    while db.put(key(acknowledged), vec![b'v'; 100]).is_ok() {
        acknowledged += 1;
        assert!(
            acknowledged < 100_000,
            "writes must stall on the failing flush"
        );
    }
    // The failure is recorded, its retry some time away.
    std::thread::sleep(std::time::Duration::from_millis(20));
    fs.set_full(false);
    let (done, closed) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        drop(db);
        done.send(()).unwrap();
    });
    closed
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("closing the database returns");
    let db = Db::open(&dir, opts).unwrap();
    for i in 0..acknowledged {
        assert!(
            db.get(key(i)).unwrap().is_some(),
            "acknowledged write {i} lost"
        );
    }
}

/// `drop_keyspace` failing at each sync of its manifest install: the
/// keyspace lives on (its handle keeps working), and what is written to it
/// afterwards is there after a reopen. (A failed drop used to kill the
/// handles at once, and a manifest renamed before its directory's sync
/// failed dropped the keyspace, and every later write to it, at the next
/// open.)
#[test]
fn a_failed_keyspace_drop_keeps_the_keyspace_and_later_writes() {
    let mut failures = 0;
    for point in 1..=4 {
        for power_loss in [false, true] {
            let fs = FaultFs::new(point);
            let dir = db_dir();
            let db = Db::open(&dir, options(&fs, false)).unwrap();
            let space = db.keyspace("doomed").unwrap();
            space.put("before", "1").unwrap();
            db.flush().unwrap();
            fs.fail_nth(FaultOp::Sync, point);
            if db.drop_keyspace("doomed").is_ok() {
                continue; // the failure hit no sync of the install
            }
            failures += 1;
            fs.clear_faults();
            let ctx = format!("sync {point} of the drop failed, power loss {power_loss}");
            space
                .put("after", "2")
                .unwrap_or_else(|e| panic!("{ctx}: {e}"));
            db.sync().unwrap();
            drop(space);
            if power_loss {
                fs.power_off();
                drop(db);
                fs.crash();
            } else {
                drop(db);
            }
            let db = reopen(&fs, &dir, false, &ctx);
            assert!(db.keyspace_names().contains(&"doomed".to_string()), "{ctx}");
            let space = db.keyspace("doomed").unwrap();
            assert_eq!(
                space.get("before").unwrap().as_deref(),
                Some(&b"1"[..]),
                "{ctx}"
            );
            assert_eq!(
                space.get("after").unwrap().as_deref(),
                Some(&b"2"[..]),
                "{ctx}"
            );
        }
    }
    assert!(failures >= 2, "the drop's install syncs were never hit");
}

/// The same after a power loss right after the failure: the torn record is
/// dropped as a torn tail and everything acknowledged before is there.
#[test]
fn wal_write_error_then_power_loss_recovers_the_acknowledged() {
    let fs = FaultFs::new(5);
    let dir = db_dir();
    let db = Db::open(&dir, options(&fs, false)).unwrap();
    for i in 0..20 {
        let wo = slsm::WriteOptions {
            sync: true,
            ..Default::default()
        };
        db.put_opt(key(i), b"before", &wo).unwrap();
    }
    fs.fail_nth(FaultOp::Write, 1);
    db.put(key(100), b"failed")
        .expect_err("injected write error");
    drop(db);
    fs.crash();
    fs.clear_faults();
    let db = Db::open(&dir, options(&fs, true)).expect("reopen after a WAL write error");
    for i in 0..20 {
        assert_eq!(db.get(key(i)).unwrap().as_deref(), Some(&b"before"[..]));
    }
    read_all(&db).unwrap();
}

/// Regression: after a power loss tore the tail of a log, a crash right
/// after recovery created the next (empty) log left "torn log followed by a
/// newer log", which Strict recovery refused to open.
#[test]
fn torn_log_followed_by_empty_log_recovers() {
    let fs = FaultFs::new(4);
    let dir = db_dir();
    let db = Db::open(&dir, options(&fs, false)).unwrap();
    for i in 0..10 {
        db.put_opt(
            key(i),
            b"synced",
            &slsm::WriteOptions {
                sync: true,
                ..Default::default()
            },
        )
        .unwrap();
    }
    db.put(key(50), b"unsynced, torn").unwrap();
    fs.power_off();
    drop(db);
    fs.crash();
    let wals: Vec<PathBuf> = fs
        .list()
        .into_iter()
        .map(|(p, _, _)| p)
        .filter(|p| p.extension().is_some_and(|e| e == "wal"))
        .collect();
    let last = wals.last().expect("a log").clone();
    // Tear the last record for sure, then add the newer, empty log that a
    // crash during recovery leaves behind.
    fs.edit(&last, |d| {
        let n = d.len();
        d.truncate(n.max(27) - 3)
    })
    .unwrap();
    let n: u64 = last.file_stem().unwrap().to_str().unwrap().parse().unwrap();
    let next = dir.join(format!("{:06}.wal", n + 1));
    slsm::wal::WalWriter::create_with(&fs, &next, n + 1)
        .unwrap()
        .close()
        .unwrap();
    let db = Db::open(&dir, options(&fs, true)).expect("torn log + empty newer log must open");
    for i in 0..10 {
        assert_eq!(db.get(key(i)).unwrap().as_deref(), Some(&b"synced"[..]));
    }
    read_all(&db).unwrap();
}

/// A fixed workload that goes through every kind of file operation the
/// engine has: WAL appends and rotations, flushes, merges, manifest
/// replacements, a compaction. Returns the operations and their statuses.
fn failure_point_workload(db: &Db) -> Attempt {
    let mut w = Workload::new(0x000f_a11e, 9000);
    w.sync_percent = 25;
    let mut a = run_ops(db, &mut w, 120, usize::MAX);
    if db.compact().is_ok() {
        let mut more = run_ops(db, &mut w, 30, usize::MAX);
        a.ops.append(&mut more.ops);
        a.status.append(&mut more.status);
        a.errors.append(&mut more.errors);
    }
    mark_superseded(&mut a.status);
    a
}

/// ENOSPC and EIO at every single write, sync, create and rename point of
/// a workload that flushes, merges, rotates logs and replaces the manifest
/// (one run per point and error kind): every failure is a clean error, and
/// a reopen (without, then after, a power loss) recovers every
/// acknowledged (synced) write.
#[test]
fn every_failure_point_of_every_kind() {
    install_panic_counter();
    let dry = FaultFs::new(1);
    let db = Db::open(db_dir(), options(&dry, false)).unwrap();
    let before: Vec<u64> = POINT_KINDS.iter().map(|&k| dry.calls(k)).collect();
    failure_point_workload(&db);
    let points: Vec<u64> = POINT_KINDS
        .iter()
        .zip(&before)
        .map(|(&k, b)| dry.calls(k) - b)
        .collect();
    drop(db);
    let mut runs = 0;
    for (&kind, &n) in POINT_KINDS.iter().zip(&points) {
        assert!(n > 0, "the workload never does {kind:?}");
        for point in 1..=n {
            for no_space in [true, false] {
                for power_loss in [false, true] {
                    one_failure_point(kind, point, no_space, power_loss);
                    runs += 1;
                }
            }
        }
    }
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "a thread panicked");
    println!(
        "failure points: {points:?} calls of {POINT_KINDS:?} in the workload, {runs} runs (ENOSPC and EIO at each, with and without a power loss), all recovered"
    );
}

const POINT_KINDS: [FaultOp; 4] = [
    FaultOp::Write,
    FaultOp::Sync,
    FaultOp::Create,
    FaultOp::Rename,
];

fn one_failure_point(kind: FaultOp, point: u64, no_space: bool, power_loss: bool) {
    let fs = FaultFs::new(point);
    let dir = db_dir();
    let db = Db::open(&dir, options(&fs, false)).unwrap();
    fs.inject_no_space(Some(no_space));
    fs.fail_nth(kind, point);
    let a = failure_point_workload(&db);
    let ctx = format!(
        "{kind:?} call {point} fails with {}{}, {} errors",
        if no_space { "ENOSPC" } else { "EIO" },
        if power_loss {
            ", then a power loss"
        } else {
            ""
        },
        a.errors.len()
    );
    for e in &a.errors {
        assert!(!e.is_corruption(), "{ctx}: {e}");
    }
    fs.clear_faults();
    let min_len = if power_loss {
        fs.power_off();
        drop(db);
        fs.crash();
        a.synced
    } else {
        drop(db);
        a.acked
    };
    let db = reopen(&fs, &dir, false, &ctx);
    verify(&db, &Model::new(), &a, min_len, &ctx);
    db.check().unwrap_or_else(|e| panic!("{ctx}: check: {e}"));
}
