//! A quick engine smoke benchmark: random puts then random gets, multi_get
//! and a scan, with db_bench-style keys (16 bytes) and 100-byte values.
//! For the full db_bench-compatible tool use `slsm bench`.
//!
//! `cargo run --release -p slsm --example quick -- [NUM]`

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

fn main() -> slsm::Result<()> {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let dir = tempfile::tempdir().map_err(|e| slsm::Error::io("tempdir", e))?;
    let disable_wal = std::env::var("NO_WAL").is_ok();
    let db = Db::open(
        dir.path(),
        Options {
            disable_wal,
            ..Options::default()
        },
    )?;
    let value = [b'v'; 100];
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let t = Instant::now();
    for _ in 0..n {
        db.put(&key(next(&mut rng) % n), &value)?;
    }
    let put_us = t.elapsed().as_secs_f64() * 1e6 / n as f64;
    let t = Instant::now();
    let mut found = 0;
    for _ in 0..n {
        found += db.get(&key(next(&mut rng) % n))?.is_some() as u64;
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
    Ok(())
}
