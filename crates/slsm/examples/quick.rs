//! A quick engine smoke benchmark: random puts then random gets, multi_get
//! and a scan, with db_bench-style keys (16 bytes) and 100-byte values.
//! For the full db_bench-compatible tool use `slsm bench`.
//!
//! `cargo run --release -p slsm --example quick -- [NUM]`
//!
//! Options can be overridden for parameter sweeps with environment variables
//! named after the paper's knobs: `SLSM_R` (memory_runs), `SLSM_RUN_MB`
//! (run_size), `SLSM_D` (level_runs), `SLSM_M` (merge_fraction), `SLSM_MU`
//! (fence_entries), `SLSM_EPS` (bloom_fp_rate); `NO_WAL=1` disables the WAL.

use std::time::Instant;

use slsm::{Db, Options};

fn key(i: u64) -> [u8; 16] {
    let mut k = [b'0'; 16];
    k[..8].copy_from_slice(&i.to_be_bytes());
    k
}

fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

fn env<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok()?.parse().ok()
}

fn options_from_env() -> Options {
    let d = Options::default();
    Options {
        memory_runs: env("SLSM_R").unwrap_or(d.memory_runs),
        run_size: env::<usize>("SLSM_RUN_MB").map_or(d.run_size, |mb| mb << 20),
        level_runs: env("SLSM_D").unwrap_or(d.level_runs),
        merge_fraction: env("SLSM_M").unwrap_or(d.merge_fraction),
        fence_entries: env("SLSM_MU").unwrap_or(d.fence_entries),
        bloom_fp_rate: env("SLSM_EPS").unwrap_or(d.bloom_fp_rate),
        disable_wal: std::env::var("NO_WAL").is_ok(),
        ..d
    }
}

/// `VmHWM` from /proc/self/status (Linux only).
fn peak_rss() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    Some(line["VmHWM:".len()..].trim().to_string())
}

fn main() -> slsm::Result<()> {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let dir = tempfile::tempdir().map_err(|e| slsm::Error::io("tempdir", e))?;
    let db = Db::open(dir.path(), options_from_env())?;
    let value = [b'v'; 100];
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let t = Instant::now();
    for _ in 0..n {
        db.put(key(next(&mut rng) % n), value)?;
    }
    let put_us = t.elapsed().as_secs_f64() * 1e6 / n as f64;
    let t = Instant::now();
    let mut found = 0;
    for _ in 0..n {
        found += db.get(key(next(&mut rng) % n))?.is_some() as u64;
    }
    let get_us = t.elapsed().as_secs_f64() * 1e6 / n as f64;
    let t = Instant::now();
    let keys: Vec<[u8; 16]> = (0..n).map(|_| key(next(&mut rng) % n)).collect();
    for chunk in keys.chunks(64) {
        let refs: Vec<&[u8]> = chunk.iter().map(|k| &k[..]).collect();
        db.multi_get(&refs)?;
    }
    let mget_us = t.elapsed().as_secs_f64() * 1e6 / n as f64;
    let t = Instant::now();
    let scanned = db.iter().count();
    let scan_us = t.elapsed().as_secs_f64() * 1e6 / scanned.max(1) as f64;
    println!("fillrandom  {put_us:8.3} micros/op");
    println!("readrandom  {get_us:8.3} micros/op ({found} of {n} found)");
    println!("multiget64  {mget_us:8.3} micros/op");
    println!("readseq     {scan_us:8.3} micros/op ({scanned} entries)");
    println!("{}", db.stats());
    if let Some(hwm) = peak_rss() {
        println!("peak resident memory: {hwm}");
    }
    Ok(())
}
