//! End-to-end tests of the `slsm` binary.

use regex::Regex;
use std::path::Path;
use std::process::{Command, Output};

fn slsm(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_slsm"))
        .args(args)
        .output()
        .expect("run slsm")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

/// Creates a database holding `pairs` through the library (faster than one
/// `slsm put` process per key).
fn populate(db: &Path, pairs: &[(&[u8], &[u8])]) {
    let d = slsm::Db::open(db, slsm::Options::default()).unwrap();
    for (k, v) in pairs {
        d.put(k, v).unwrap();
    }
}

#[test]
fn put_get_delete_scan_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let dbp = dir.path().join("db");
    populate(&dbp, &[(b"a", b"1"), (b"b", b"2")]);
    let db = path_str(&dbp);
    let o = slsm(&["put", db, "c", "3"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = slsm(&["get", db, "c"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "3\n");

    let o = slsm(&["scan", db]);
    assert_eq!(stdout(&o), "a\t1\nb\t2\nc\t3\n");
    let o = slsm(&["scan", db, "--start", "b", "--end", "c", "--reverse"]);
    assert_eq!(stdout(&o), "b\t2\n");
    let o = slsm(&["scan", db, "--limit", "2", "--keys-only", "--reverse"]);
    assert_eq!(stdout(&o), "c\nb\n");

    let o = slsm(&["delete", db, "b"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = slsm(&["get", db, "b"]);
    assert_eq!(o.status.code(), Some(1), "not found is exit 1");
    assert_eq!(stdout(&o), "");

    let o = slsm(&["stats", db, "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["levels"].is_array());
    assert!(v["bloom_false_positive_rate"].is_number());
    // `slsm stats` opens the database read-only: it writes no MANIFEST.
    assert_eq!(v["manifest_files_written"].as_u64(), Some(0), "{v}");
    assert_eq!(v["manifest_edits"].as_u64(), Some(0), "{v}");
    for level in v["levels"].as_array().unwrap() {
        assert!(level["filter_false_positive_rate"].is_number(), "{level}");
        assert!(level["filter_bits_per_entry"].is_number(), "{level}");
    }
}

#[test]
fn hex_keys_and_values() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let db = path_str(&db);
    let o = slsm(&["put", "--hex", db, "00ff10", "deadbeef"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = slsm(&["get", "--hex", db, "00FF10"]);
    assert_eq!(stdout(&o), "deadbeef\n");
    let o = slsm(&["scan", "--hex", db]);
    assert_eq!(stdout(&o), "00ff10\tdeadbeef\n");
    let o = slsm(&["get", "--hex", db, "xyz"]);
    assert_eq!(o.status.code(), Some(2), "bad hex is a usage error");
    assert!(stderr(&o).contains("hex"), "{}", stderr(&o));
}

#[test]
fn exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nothing-here");
    let o = slsm(&["get", path_str(&missing), "k"]);
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
    assert!(stderr(&o).contains("nothing-here"));
    let o = slsm(&["get"]);
    assert_eq!(o.status.code(), Some(2));
    let o = slsm(&["frobnicate"]);
    assert_eq!(o.status.code(), Some(2));
    let o = slsm(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("Exit status"));
    for cmd in [
        "get", "put", "delete", "scan", "stats", "check", "compact", "bench", "plot",
    ] {
        let o = slsm(&[cmd, "--help"]);
        assert_eq!(o.status.code(), Some(0), "{cmd} --help");
        assert!(!stdout(&o).is_empty(), "{cmd} --help prints help");
    }
    // A file where the database directory should be.
    let file = dir.path().join("file");
    std::fs::write(&file, b"x").unwrap();
    let o = slsm(&["put", path_str(&file), "k", "v"]);
    assert_eq!(o.status.code(), Some(5), "{}", stderr(&o));
}

#[test]
fn compact_then_check_reports_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let dbs = path_str(&db);
    let keys: Vec<String> = (0..200).map(|i| format!("key{i:04}")).collect();
    let value = [b'v'; 100];
    let pairs: Vec<(&[u8], &[u8])> = keys.iter().map(|k| (k.as_bytes(), &value[..])).collect();
    populate(&db, &pairs);
    let o = slsm(&["compact", dbs]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Flip bytes in the middle of the largest run file.
    let mut runs: Vec<_> = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "run"))
        .collect();
    assert!(!runs.is_empty(), "compact left no run file");
    runs.sort_by_key(|p| std::cmp::Reverse(std::fs::metadata(p).unwrap().len()));
    let victim = &runs[0];
    let mut bytes = std::fs::read(victim).unwrap();
    let mid = bytes.len() / 3;
    for b in &mut bytes[mid..mid + 8] {
        *b ^= 0x5a;
    }
    std::fs::write(victim, &bytes).unwrap();
    let o = slsm(&["check", dbs]);
    assert_eq!(
        o.status.code(),
        Some(3),
        "stdout {} stderr {}",
        stdout(&o),
        stderr(&o)
    );
    let name = victim.file_name().unwrap().to_str().unwrap();
    assert!(stderr(&o).contains(name), "{}", stderr(&o));
    assert!(stderr(&o).contains("offset"), "{}", stderr(&o));
}

const ALL: &str = "fillseq,fillrandom,overwrite,readrandom,readseq,multireadrandom,\
                   seekrandom,readwhilewriting,deleterandom,fillrandom_mem,readrandom_mem";

#[test]
fn bench_prints_db_bench_lines_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("--db={}", dir.path().join("db").display());
    let json = dir.path().join("r.json");
    let o = slsm(&[
        "bench",
        &format!("--benchmarks={ALL}"),
        "--num=3000",
        "--reads",
        "1000",
        "--batch_size=8",
        "--seek_nexts=2",
        "--threads=2",
        "--histogram",
        "--sync=0",
        "--disable_wal=false",
        "--max_background_jobs=4",
        &db,
        &format!("--json={}", json.display()),
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{}", stderr(&o));
    assert!(
        stderr(&o).contains("warning: flag --max_background_jobs=4"),
        "{}",
        stderr(&o)
    );
    let line = Regex::new(
        r"^(\S+)\s* : \s*\d+\.\d{3} micros/op \d+ ops/sec \d+\.\d{3} seconds \d+ operations;( +\d+\.\d MB/s)?( \(\d+ of \d+ found\))?",
    )
    .unwrap();
    let names: Vec<String> = out
        .lines()
        .filter_map(|l| line.captures(l).map(|c| c[1].to_string()))
        .collect();
    let want: Vec<&str> = ALL.split(',').collect();
    assert_eq!(names, want, "{out}");
    assert!(
        Regex::new(r"readrandom   : .* \(\d+ of 2000 found\)")
            .unwrap()
            .is_match(&out),
        "{out}"
    );
    assert!(out.contains("Percentiles: P50: "), "{out}");
    assert!(out.contains("Peak RSS:"), "{out}");

    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["engine"], "slsm");
    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), want.len());
    for r in results {
        assert!(r["ops_per_sec"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["p99_us"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["engine_stats"]["write_amplification"].is_number(), "{r}");
    }
    assert_eq!(report["flags"]["num"], 3000);
    assert_eq!(report["flags"]["given"]["max_background_jobs"], "4");

    // Plot it, twice over (two "engines").
    let svg = dir.path().join("chart.svg");
    let o = slsm(&[
        "plot",
        json.to_str().unwrap(),
        json.to_str().unwrap(),
        "-o",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg"), "{}", &text[..100.min(text.len())]);
    assert!(text.contains("readrandom"));
}

#[test]
fn bench_fillbatch_readmissing_and_readhot_read_what_db_bench_reads() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("--db={}", dir.path().join("db").display());
    let o = slsm(&[
        "bench",
        "--benchmarks=fillbatch,readmissing,readhot,readseq",
        "--num=2500",
        "--reads=700",
        &db,
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}\n{}", stderr(&o));
    // fillbatch writes every key once, in batches of 1,000.
    assert!(
        Regex::new(r"fillbatch +: .* 2500 operations;")
            .unwrap()
            .is_match(&out),
        "{out}"
    );
    // Every key less its last byte is absent; every hot key is present.
    assert!(out.contains("(0 of 700 found)"), "{out}");
    assert!(out.contains("(700 of 700 found)"), "{out}");
    assert!(
        Regex::new(r"readseq +: .* 700 operations;")
            .unwrap()
            .is_match(&out),
        "{out}"
    );
}

#[test]
fn bench_usage_errors() {
    let o = slsm(&["bench", "--benchmarks=nosuchthing"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("unknown benchmark"), "{}", stderr(&o));
    let o = slsm(&["bench", "--num=lots"]);
    assert_eq!(o.status.code(), Some(2));
    let o = slsm(&["bench", "--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("readwhilewriting"));
    assert!(stdout(&o).contains("--memory_runs"));
    let o = slsm(&["plot", "/nonexistent.json", "-o", "/tmp/x.svg"]);
    assert_eq!(o.status.code(), Some(5));
}

#[test]
fn bench_use_existing_db_skips_fills() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("--db={}", dir.path().join("db").display());
    let o = slsm(&["bench", "--benchmarks=fillrandom", "--num=500", &db]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = slsm(&[
        "bench",
        "--benchmarks=fillseq,readrandom",
        "--num=500",
        "--use_existing_db=1",
        &db,
    ]);
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(out.contains("fillseq      : skipped"), "{out}");
    // 500 random keys over [0,500) leave about 63% present.
    let found: u64 = Regex::new(r"\((\d+) of 500 found\)")
        .unwrap()
        .captures(&out)
        .unwrap()[1]
        .parse()
        .unwrap();
    assert!((250..=400).contains(&found), "{out}");
}

#[test]
fn locked_database_is_exit_4_for_writes_and_readable_beside_the_writer() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let open = slsm::Db::open(&db, slsm::Options::default()).unwrap();
    open.put(b"k", b"v").unwrap();
    let o = slsm(&["put", path_str(&db), "k", "w"]);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(stderr(&o).contains("locked"), "{}", stderr(&o));
    // Reading commands open read-only: no lock, the writer's state so far.
    let o = slsm(&["get", path_str(&db), "k"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "v\n");
    drop(open);
    let o = slsm(&["get", path_str(&db), "k"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "v\n");
}

/// Name and contents of every file in `dir`.
fn dir_state(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let p = e.unwrap().path();
            let bytes = std::fs::read(&p).unwrap_or_default();
            (p, bytes)
        })
        .collect();
    v.sort();
    v
}

#[test]
fn reading_commands_change_nothing_even_with_a_log_to_replay() {
    let dir = tempfile::tempdir().unwrap();
    let dbp = dir.path().join("db");
    {
        let d = slsm::Db::open(&dbp, slsm::Options::default()).unwrap();
        for i in 0..500u32 {
            d.put(format!("key{i:04}"), format!("value{i}")).unwrap();
        }
        // Not flushed: the writes are in the log only.
    }
    let before = dir_state(&dbp);
    let db = path_str(&dbp);
    let o = slsm(&["get", db, "key0042"]);
    assert_eq!(stdout(&o), "value42\n", "{}", stderr(&o));
    let o = slsm(&["scan", db, "--limit", "3", "--keys-only"]);
    assert_eq!(stdout(&o), "key0000\nkey0001\nkey0002\n", "{}", stderr(&o));
    for cmd in [&["stats", db][..], &["stats", db, "--json"], &["check", db]] {
        let o = slsm(cmd);
        assert_eq!(o.status.code(), Some(0), "{cmd:?}: {}", stderr(&o));
    }
    assert_eq!(
        dir_state(&dbp),
        before,
        "a reading command changed the directory"
    );
}

#[test]
fn bench_refuses_a_directory_that_is_not_a_database() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), b"my notes").unwrap();
    let before = dir_state(dir.path());
    let db = format!("--db={}", dir.path().display());
    let o = slsm(&["bench", "--benchmarks=fillrandom", "--num=100", &db]);
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("refusing to delete"), "{}", stderr(&o));
    assert_eq!(
        dir_state(dir.path()),
        before,
        "bench touched a user's files"
    );
}

#[test]
fn bench_use_existing_db_on_a_missing_path_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nothing");
    let db = format!("--db={}", missing.display());
    let o = slsm(&[
        "bench",
        "--benchmarks=readrandom",
        "--num=100",
        "--use_existing_db=1",
        &db,
    ]);
    assert_ne!(o.status.code(), Some(0));
    assert!(!missing.exists(), "a database was created");
}

#[test]
fn dump_then_load_reproduces_every_keyspace_and_checkpoint_copies() {
    let dir = tempfile::tempdir().unwrap();
    let (src, dst, cp) = (
        dir.path().join("src"),
        dir.path().join("dst"),
        dir.path().join("cp"),
    );
    {
        let d = slsm::Db::open(&src, slsm::Options::default()).unwrap();
        let ks = d.keyspace("users").unwrap();
        for i in 0..5000u32 {
            d.put(i.to_be_bytes(), vec![i as u8; (i % 50) as usize])
                .unwrap();
            if i % 3 == 0 {
                ks.put(format!("u{i}"), [0u8, 255, 10]).unwrap();
            }
        }
        d.delete(7u32.to_be_bytes()).unwrap();
        d.flush().unwrap();
        d.put(b"\x00\xffbinary\n", b"\t").unwrap(); // left in the log
    }
    let file = dir.path().join("all.dump");
    let o = slsm(&["dump", path_str(&src), path_str(&file)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("6667 entries"), "{}", stdout(&o));
    let o = slsm(&["load", path_str(&dst), path_str(&file)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = slsm(&["checkpoint", path_str(&src), path_str(&cp)]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for space in ["default", "users"] {
        let scan = |db: &Path| stdout(&slsm(&["scan", path_str(db), "--hex", "--keyspace", space]));
        let want = scan(&src);
        assert!(want.lines().count() > 1000, "{space}");
        assert_eq!(scan(&dst), want, "dump then load, keyspace {space}");
        assert_eq!(scan(&cp), want, "checkpoint, keyspace {space}");
    }
    let o = slsm(&[
        "get",
        path_str(&dst),
        "7533",
        "--keyspace",
        "users",
        "--hex",
    ]);
    assert_eq!(stdout(&o), "00ff0a\n");
    let o = slsm(&["get", path_str(&dst), "x", "--keyspace", "nope"]);
    assert_ne!(o.status.code(), Some(0), "a missing keyspace is an error");
    // A damaged or truncated dump is refused before anything is written.
    let mut bytes = std::fs::read(&file).unwrap();
    let cut = dir.path().join("cut.dump");
    std::fs::write(&cut, &bytes[..bytes.len() - 3]).unwrap();
    let fresh = dir.path().join("fresh");
    let o = slsm(&["load", path_str(&fresh), path_str(&cut)]);
    assert_ne!(o.status.code(), Some(0));
    assert!(stderr(&o).contains("truncated"), "{}", stderr(&o));
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x40;
    std::fs::write(&cut, &bytes).unwrap();
    let o = slsm(&["load", path_str(&fresh), path_str(&cut)]);
    assert!(stderr(&o).contains("corrupt dump"), "{}", stderr(&o));
    assert_eq!(
        stdout(&slsm(&["scan", path_str(&fresh)])),
        "",
        "nothing loaded"
    );
}

/// `slsm serve --appendfsync always`: every acknowledged write survives a
/// SIGKILL of the server.
#[test]
fn serve_survives_sigkill_with_appendfsync_always() {
    use redis::Commands;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let bind = format!("127.0.0.1:{port}");
    let start = || {
        let mut child = Command::new(env!("CARGO_BIN_EXE_slsm"))
            .args([
                "serve",
                "--db",
                path_str(&db),
                "--bind",
                &bind,
                "--appendfsync",
                "always",
            ])
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let url = format!("redis://{bind}/");
        for _ in 0..200 {
            if let Ok(c) = redis::Client::open(url.as_str()).unwrap().get_connection() {
                return (child, c);
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!("slsm serve exited: {status:?}");
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        let _ = child.kill();
        panic!("slsm serve did not start");
    };
    let (mut child, mut c) = start();
    let mut acked = 0u32;
    for i in 0..500u32 {
        let _: () = c.set(format!("k{i}"), i).unwrap();
        acked = i + 1;
    }
    let _: i64 = c.incr("counter", 7).unwrap();
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let (mut child, mut c) = start();
    for i in 0..acked {
        assert_eq!(c.get::<_, u32>(format!("k{i}")).unwrap(), i, "k{i} lost");
    }
    assert_eq!(c.get::<_, i64>("counter").unwrap(), 7);
    // A non-loopback bind without a password is refused.
    let o = slsm(&["serve", "--db", path_str(&db), "--bind", "0.0.0.0:0"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("requirepass"), "{}", stderr(&o));
    let _ = redis::cmd("SHUTDOWN").query::<()>(&mut c);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
}
