//! Deleting a fraction of the key space: one `delete_range` against one
//! `delete` per key, then the cost of reading around the deleted range.
//!
//! `cargo run --release -p slsm --example range_delete -- [NUM] [ROUNDS]`
//!
//! For each fraction (1%, 10%, 50%) and each method, in fresh databases
//! (methods alternate, `ROUNDS` times): the time to delete, to scan the
//! whole database afterwards, and to `get` every key. Medians are printed
//! with the ratio key-by-key / range.

use std::time::Instant;

use slsm::{Db, Options};

fn key(i: u64) -> [u8; 16] {
    let mut k = [b'0'; 16];
    k[..8].copy_from_slice(&i.to_be_bytes());
    k
}

struct Times {
    delete: f64,
    scan: f64,
    get: f64,
}

fn run(n: u64, fraction: f64, by_range: bool) -> slsm::Result<Times> {
    let dir = tempfile::tempdir().map_err(|e| slsm::Error::io("tempdir", e))?;
    let opts = Options {
        run_size: 4 << 20,
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts)?;
    let value = [b'v'; 100];
    for i in 0..n {
        db.put(key(i), value)?;
    }
    db.flush()?;
    let (lo, hi) = (n / 4, n / 4 + (n as f64 * fraction) as u64);
    let t = Instant::now();
    if by_range {
        db.delete_range(key(lo), key(hi))?;
    } else {
        for i in lo..hi {
            db.delete(key(i))?;
        }
    }
    let delete = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let live = db.iter().count() as u64;
    let scan = t.elapsed().as_secs_f64();
    assert_eq!(
        live,
        n - (hi - lo),
        "scan must hide exactly the deleted keys"
    );
    let t = Instant::now();
    for i in 0..n {
        let got = db.get(key(i))?;
        assert_eq!(got.is_some(), !(lo..hi).contains(&i));
    }
    let get = t.elapsed().as_secs_f64();
    Ok(Times { delete, scan, get })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() -> slsm::Result<()> {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(200_000);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(3);
    println!("{n} keys of 16 bytes, 100-byte values; medians of {rounds} rounds (ms)");
    println!(
        "{:>8} {:>12} {:>12} {:>8} | {:>10} {:>10} | {:>10} {:>10}",
        "deleted",
        "range del",
        "key by key",
        "ratio",
        "scan range",
        "scan keys",
        "gets range",
        "gets keys"
    );
    for fraction in [0.01, 0.10, 0.50] {
        let mut by_range = Vec::new();
        let mut by_key = Vec::new();
        for _ in 0..rounds {
            by_range.push(run(n, fraction, true)?);
            by_key.push(run(n, fraction, false)?);
        }
        let m = |v: &[Times], f: fn(&Times) -> f64| median(v.iter().map(f).collect()) * 1e3;
        let (rd, kd) = (m(&by_range, |t| t.delete), m(&by_key, |t| t.delete));
        println!(
            "{:>7.0}% {:>12.3} {:>12.3} {:>7.0}x | {:>10.1} {:>10.1} | {:>10.1} {:>10.1}",
            fraction * 100.0,
            rd,
            kd,
            kd / rd,
            m(&by_range, |t| t.scan),
            m(&by_key, |t| t.scan),
            m(&by_range, |t| t.get),
            m(&by_key, |t| t.get),
        );
    }
    Ok(())
}
