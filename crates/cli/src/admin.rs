//! The admin commands: get, put, delete, scan, stats, check, compact.

use crate::exit::{self, Usage};
use anyhow::{Context, Result};
use std::io::Write;
use std::ops::Bound;
use std::path::Path;

/// The keyspace a command reads or writes.
#[derive(clap::Args, Debug, Clone)]
pub struct Space {
    /// The keyspace (column family).
    #[arg(long, default_value = slsm::DEFAULT_KEYSPACE)]
    pub keyspace: String,
}

/// The keyspace `name` of `db`; reading commands refuse one that does not
/// exist instead of creating it.
fn keyspace(db: &slsm::Db, space: &Space, create: bool) -> Result<slsm::Keyspace> {
    if !create && !db.keyspace_names().contains(&space.keyspace) {
        anyhow::bail!(
            "no keyspace {:?} (the database has {:?})",
            space.keyspace,
            db.keyspace_names()
        );
    }
    Ok(db.keyspace(&space.keyspace)?)
}

/// Options shared by the commands that take keys or values.
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct Encoding {
    /// Keys and values are hexadecimal, on input and on output.
    #[arg(long)]
    pub hex: bool,
}

/// Opens `db` for reading only: the commands that only read (`get`, `scan`,
/// `stats`, `check`) change nothing in the directory (the log is replayed
/// in memory), take no lock (they work beside a process writing to it, and
/// on a read-only file system).
fn open_read_only(db: &Path) -> Result<slsm::Db> {
    if !db.exists() {
        anyhow::bail!(
            "no database at {} (the directory does not exist)",
            db.display()
        );
    }
    slsm::Db::open_read_only(db, slsm::Options::default())
        .with_context(|| format!("opening {} read-only", db.display()))
}

fn open(db: &Path, create: bool) -> Result<slsm::Db> {
    if !create && !db.exists() {
        anyhow::bail!(
            "no database at {} (the directory does not exist)",
            db.display()
        );
    }
    let opts = slsm::Options {
        create_if_missing: create,
        ..Default::default()
    };
    slsm::Db::open(db, opts).with_context(|| format!("opening {}", db.display()))
}

/// Decodes a key or value given on the command line.
pub fn decode(what: &str, s: &str, enc: Encoding) -> Result<Vec<u8>> {
    if !enc.hex {
        return Ok(s.as_bytes().to_vec());
    }
    hex_decode(s).map_err(|e| anyhow::Error::new(Usage(format!("{what} '{s}': {e}"))))
}

fn hex_decode(s: &str) -> std::result::Result<Vec<u8>, String> {
    let s = s.strip_prefix("0x").unwrap_or(s);
    if !s.len().is_multiple_of(2) {
        return Err("hex needs an even number of digits".into());
    }
    (0..s.len())
        .step_by(2)
        .map(|i| {
            u8::from_str_radix(s.get(i..i + 2).ok_or("not ASCII hex")?, 16)
                .map_err(|_| format!("invalid hex digits at position {i}"))
        })
        .collect()
}

fn hex_encode(b: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(b.len() * 2);
    for &x in b {
        s.push(DIGITS[(x >> 4) as usize] as char);
        s.push(DIGITS[(x & 15) as usize] as char);
    }
    s
}

fn write_bytes(out: &mut impl Write, b: &[u8], enc: Encoding) -> std::io::Result<()> {
    if enc.hex {
        out.write_all(hex_encode(b).as_bytes())
    } else {
        out.write_all(b)
    }
}

/// `slsm get`: prints the value and a newline; exit 1 if absent.
pub fn get(db: &Path, key: &str, enc: Encoding, space: &Space) -> Result<i32> {
    let key = decode("key", key, enc)?;
    let db = open_read_only(db)?;
    match keyspace(&db, space, false)?.get(&key)? {
        Some(v) => {
            let mut out = std::io::stdout().lock();
            write_bytes(&mut out, &v, enc)?;
            out.write_all(b"\n")?;
            out.flush()?;
            Ok(exit::OK)
        }
        None => {
            eprintln!("slsm: not found");
            Ok(exit::NOT_FOUND)
        }
    }
}

/// `slsm put`.
pub fn put(
    db: &Path,
    key: &str,
    value: &str,
    enc: Encoding,
    sync: bool,
    space: &Space,
) -> Result<()> {
    let key = decode("key", key, enc)?;
    let value = decode("value", value, enc)?;
    let db = open(db, true)?;
    let w = slsm::WriteOptions {
        sync,
        ..Default::default()
    };
    keyspace(&db, space, true)?.put_opt(&key, &value, &w)?;
    db.sync()?;
    Ok(())
}

/// `slsm delete`.
pub fn delete(db: &Path, key: &str, enc: Encoding, space: &Space) -> Result<()> {
    let key = decode("key", key, enc)?;
    let db = open(db, false)?;
    keyspace(&db, space, false)?.delete(&key)?;
    db.sync()?;
    Ok(())
}

/// Arguments of `slsm scan`.
pub struct ScanArgs {
    pub start: Option<String>,
    pub end: Option<String>,
    pub limit: Option<u64>,
    pub reverse: bool,
    pub keys_only: bool,
}

/// `slsm scan`: `KEY<TAB>VALUE` lines in key order.
pub fn scan(db: &Path, a: ScanArgs, enc: Encoding, space: &Space) -> Result<()> {
    let start = match &a.start {
        Some(s) => Bound::Included(decode("--start", s, enc)?),
        None => Bound::Unbounded,
    };
    let end = match &a.end {
        Some(s) => Bound::Excluded(decode("--end", s, enc)?),
        None => Bound::Unbounded,
    };
    if let (Bound::Included(s), Bound::Excluded(e)) = (&start, &end) {
        if s > e {
            return Err(anyhow::Error::new(Usage(
                "--start must not be after --end".into(),
            )));
        }
    }
    let db = open_read_only(db)?;
    let iter = keyspace(&db, space, false)?.range::<Vec<u8>, _>((start, end));
    let iter: Box<dyn Iterator<Item = slsm::Result<(slsm::Slice, slsm::Slice)>>> = if a.reverse {
        Box::new(iter.rev())
    } else {
        Box::new(iter)
    };
    let limit = a.limit.unwrap_or(u64::MAX);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for item in iter.take(usize::try_from(limit).unwrap_or(usize::MAX)) {
        let (k, v) = item?;
        write_bytes(&mut out, &k, enc)?;
        if !a.keys_only {
            out.write_all(b"\t")?;
            write_bytes(&mut out, &v, enc)?;
        }
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}

/// `slsm stats`.
pub fn stats(db: &Path, json: bool) -> Result<()> {
    let db = open_read_only(db)?;
    let s = db.stats();
    if json {
        let levels: Vec<_> = s
            .levels
            .iter()
            .enumerate()
            .map(|(i, l)| {
                serde_json::json!({
                    "level": i,
                    "runs": l.runs,
                    "entries": l.entries,
                    "bytes": l.bytes,
                    "filter_bytes": l.filter_bytes,
                    "filter_bits_per_entry": l.filter_bits_per_entry(),
                    "filter_false_positive_rate": l.filter_false_positive_rate(),
                })
            })
            .collect();
        let v = serde_json::json!({
            "levels": levels,
            "memory_runs": s.memory_runs,
            "memory_bytes": s.memory_bytes,
            "bloom_checks": s.bloom_checks,
            "bloom_false_positives": s.bloom_false_positives,
            "bloom_false_positive_rate": s.bloom_false_positive_rate(),
            "merges": s.merges,
            "merge_bytes_written": s.merge_bytes_written,
            "user_bytes_written": s.user_bytes_written,
            "write_amplification": s.write_amplification(),
            "manifest_bytes_written": s.manifest_bytes_written,
            "manifest_edits": s.manifest_edits,
            "manifest_files_written": s.manifest_files_written,
            "stall_count": s.stall_count,
            "stall_micros": s.stall_micros,
            "memory": {
                "budget": s.memory.budget,
                "total": s.memory.total(),
                "memory_runs": s.memory.memory_runs,
                "memory_runs_limit": s.memory.memory_runs_limit,
                "pinned_indexes_and_filters": s.memory.pinned,
                "buffers": s.memory.buffers,
                "building": s.memory.building,
                "block_cache": {
                    "capacity": s.memory.cache.capacity,
                    "usage": s.memory.cache.usage,
                    "entries": s.memory.cache.entries,
                    "hits": s.memory.cache.hits,
                    "misses": s.memory.cache.misses,
                    "hit_rate": s.memory.cache.hits as f64
                        / (s.memory.cache.hits + s.memory.cache.misses).max(1) as f64,
                    "bytes_read": s.memory.cache.bytes_read,
                },
            },
            "background_error": s.background_error,
        });
        writeln!(std::io::stdout(), "{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        writeln!(std::io::stdout(), "{s}")?;
    }
    Ok(())
}

/// `slsm check`: exit 3 on corruption (the error names file and offset).
pub fn check(db: &Path) -> Result<i32> {
    let db = open_read_only(db)?;
    let report = db.check()?;
    writeln!(std::io::stdout(), "{report}")?;
    Ok(exit::OK)
}

/// `slsm checkpoint DB DEST`.
pub fn checkpoint(db: &Path, dest: &Path) -> Result<()> {
    let db = open(db, false)?;
    db.checkpoint(dest)
        .with_context(|| format!("writing a checkpoint to {}", dest.display()))?;
    writeln!(
        std::io::stdout(),
        "checkpoint written to {}",
        dest.display()
    )?;
    Ok(())
}

/// `slsm dump DB FILE`: reads a snapshot, changes nothing.
pub fn dump(db: &Path, file: &Path) -> Result<()> {
    let db = open_read_only(db)?;
    let n = crate::dump::dump(&db, file)?;
    writeln!(
        std::io::stdout(),
        "{n} entries written to {}",
        file.display()
    )?;
    Ok(())
}

/// `slsm load DB FILE` (creates the database if missing).
pub fn load(db: &Path, file: &Path) -> Result<()> {
    let db = open(db, true)?;
    let n = crate::dump::load(&db, file)?;
    db.sync()?;
    writeln!(
        std::io::stdout(),
        "{n} entries loaded from {}",
        file.display()
    )?;
    Ok(())
}

/// `slsm compact`.
pub fn compact(db: &Path) -> Result<()> {
    let db = open(db, false)?;
    db.compact()?;
    db.sync()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip() {
        let b = vec![0u8, 1, 0xab, 0xff];
        assert_eq!(hex_decode(&hex_encode(&b)).unwrap(), b);
        assert_eq!(hex_decode("0xABcd").unwrap(), vec![0xab, 0xcd]);
        assert!(hex_decode("abc").is_err());
        assert!(hex_decode("zz").is_err());
        assert!(hex_decode("é1").is_err());
    }
}
