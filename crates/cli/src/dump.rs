//! `slsm dump` and `slsm load`: every keyspace of a database as one
//! streaming, checksummed file, and back (through `Keyspace::ingest`).
//!
//! # Format (version 1)
//!
//! ```text
//! "SLSMDUMP" (8 bytes) | version: u32 LE = 1 | record* | end record
//! record: kind u8 | length u32 LE | body (length bytes) | crc u32 LE
//!   crc: CRC32C of kind, length and body
//!   kind 1, keyspace: body = TTL in milliseconds u64 LE (0: none) | its
//!                     name (UTF-8); the entries that follow belong to it
//!   kind 2, entry:    body = key length u32 LE | key | value
//!   kind 3, end:      body = number of entries u64 LE; nothing follows
//! ```
//!
//! Entries come in ascending key order within a keyspace, each keyspace
//! once. Values are those live at the dump; in a keyspace with a TTL they
//! expire a TTL after they are loaded. A file that is truncated, damaged, or breaks these rules is
//! refused by `load` before anything is written.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

use anyhow::{bail, Context, Result};

const MAGIC: &[u8; 8] = b"SLSMDUMP";
const VERSION: u32 = 1;
const KEYSPACE: u8 = 1;
const ENTRY: u8 = 2;
const END: u8 = 3;
/// Largest record body: a largest key and value, with room to spare.
const MAX_BODY: usize = 300 << 20;

fn write_record(out: &mut impl Write, kind: u8, parts: &[&[u8]]) -> Result<()> {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    let head = [&[kind][..], &(len as u32).to_le_bytes()].concat();
    let mut crc = crc32c::crc32c(&head);
    out.write_all(&head)?;
    for p in parts {
        crc = crc32c::crc32c_append(crc, p);
        out.write_all(p)?;
    }
    out.write_all(&crc.to_le_bytes())?;
    Ok(())
}

/// `slsm dump DB FILE`: returns the number of entries written.
pub fn dump(db: &slsm::Db, file: &Path) -> Result<u64> {
    let f = File::create(file).with_context(|| format!("creating {}", file.display()))?;
    let mut out = BufWriter::with_capacity(1 << 20, f);
    out.write_all(MAGIC)?;
    out.write_all(&VERSION.to_le_bytes())?;
    let snapshot = db.snapshot();
    let mut total = 0u64;
    let catalog = db.keyspace_names();
    for name in catalog {
        let ks = db.keyspace(&name)?;
        let ttl = ks.ttl().map_or(0, |t| t.as_millis() as u64);
        write_record(&mut out, KEYSPACE, &[&ttl.to_le_bytes(), name.as_bytes()])?;
        for item in snapshot.range_in::<&[u8], _>(&ks, ..) {
            let (k, v) = item?;
            write_record(&mut out, ENTRY, &[&(k.len() as u32).to_le_bytes(), &k, &v])?;
            total += 1;
        }
    }
    write_record(&mut out, END, &[&total.to_le_bytes()])?;
    let f = out.into_inner().map_err(|e| e.into_error())?;
    f.sync_all()?;
    Ok(total)
}

/// One record of a dump.
enum Record {
    Keyspace(String, u64),
    Entry(Vec<u8>, Vec<u8>),
    End(u64),
}

/// Reads and checks a dump, record by record.
struct Reader {
    input: BufReader<File>,
    offset: u64,
    done: bool,
}

impl Reader {
    fn open(file: &Path) -> Result<Reader> {
        let f = File::open(file).with_context(|| format!("opening {}", file.display()))?;
        let mut input = BufReader::with_capacity(1 << 20, f);
        let mut head = [0u8; 12];
        input
            .read_exact(&mut head)
            .context("not an slsm dump (too short)")?;
        if &head[..8] != MAGIC {
            bail!("not an slsm dump (bad magic)");
        }
        let version = u32::from_le_bytes(head[8..12].try_into()?);
        if version != VERSION {
            bail!("dump format version {version} is not supported (this build reads {VERSION})");
        }
        Ok(Reader {
            input,
            offset: 12,
            done: false,
        })
    }

    fn next(&mut self) -> Result<Record> {
        if self.done {
            bail!("records after the end record at offset {}", self.offset);
        }
        let at = self.offset;
        let mut head = [0u8; 5];
        self.input
            .read_exact(&mut head)
            .with_context(|| format!("dump truncated at offset {at} (no end record)"))?;
        let len = u32::from_le_bytes(head[1..].try_into()?) as usize;
        if len > MAX_BODY {
            bail!("corrupt dump: record of {len} bytes at offset {at}");
        }
        let mut body = vec![0u8; len + 4];
        self.input
            .read_exact(&mut body)
            .with_context(|| format!("dump truncated in the record at offset {at}"))?;
        let crc = u32::from_le_bytes(body[len..].try_into()?);
        body.truncate(len);
        if crc32c::crc32c_append(crc32c::crc32c(&head), &body) != crc {
            bail!("corrupt dump: checksum mismatch in the record at offset {at}");
        }
        self.offset += 9 + len as u64;
        let bad = |what: &str| anyhow::anyhow!("corrupt dump: {what} at offset {at}");
        match head[0] {
            KEYSPACE => {
                let ttl = u64::from_le_bytes(
                    body.get(..8)
                        .ok_or_else(|| bad("short keyspace record"))?
                        .try_into()?,
                );
                let name = String::from_utf8(body.split_off(8))
                    .map_err(|_| bad("keyspace name not UTF-8"))?;
                Ok(Record::Keyspace(name, ttl))
            }
            ENTRY => {
                let klen = u32::from_le_bytes(
                    body.get(..4)
                        .ok_or_else(|| bad("short entry"))?
                        .try_into()?,
                ) as usize;
                if 4 + klen > body.len() {
                    return Err(bad("key longer than its record"));
                }
                let value = body.split_off(4 + klen);
                body.drain(..4);
                Ok(Record::Entry(body, value))
            }
            END => {
                self.done = true;
                Ok(Record::End(u64::from_le_bytes(
                    body.as_slice()
                        .try_into()
                        .map_err(|_| bad("bad end record"))?,
                )))
            }
            k => Err(bad(&format!("unknown record kind {k}"))),
        }
    }
}

/// Checks the whole dump: checksums, the end record and its count, each
/// keyspace once, keys ascending. Returns the keyspaces with their counts.
fn verify(file: &Path) -> Result<Vec<(String, u64, u64)>> {
    let mut r = Reader::open(file)?;
    let mut spaces: Vec<(String, u64, u64)> = Vec::new();
    let mut last: Option<Vec<u8>> = None;
    loop {
        match r.next()? {
            Record::Keyspace(name, ttl) => {
                if spaces.iter().any(|(n, _, _)| *n == name) {
                    bail!("corrupt dump: keyspace {name:?} appears twice");
                }
                spaces.push((name, ttl, 0));
                last = None;
            }
            Record::Entry(k, _) => {
                let Some(space) = spaces.last_mut() else {
                    bail!("corrupt dump: an entry before any keyspace");
                };
                if last.as_ref().is_some_and(|l| *l >= k) {
                    bail!("corrupt dump: keys out of order in keyspace {:?}", space.0);
                }
                space.2 += 1;
                last = Some(k);
            }
            Record::End(n) => {
                let total: u64 = spaces.iter().map(|s| s.2).sum();
                if n != total {
                    bail!(
                        "corrupt dump: the end record counts {n} entries, the file holds {total}"
                    );
                }
                return Ok(spaces);
            }
        }
    }
}

/// `slsm load DB FILE`: verifies the dump, then ingests each keyspace.
/// Returns the number of entries loaded.
pub fn load(db: &slsm::Db, file: &Path) -> Result<u64> {
    let spaces = verify(file)?;
    let mut r = Reader::open(file)?;
    let mut total = 0;
    let mut pending: Option<Record> = None;
    for (name, ttl, count) in spaces {
        let ks = match ttl {
            0 => db.keyspace(&name)?,
            ms => db.keyspace_with(
                &name,
                slsm::KeyspaceOptions::default().ttl(std::time::Duration::from_millis(ms)),
            )?,
        };
        match pending.take().map_or_else(|| r.next(), Ok)? {
            Record::Keyspace(n, _) if n == name => {}
            _ => bail!("{} changed while it was loaded", file.display()),
        }
        let mut failed = None;
        let entries = std::iter::from_fn(|| match r.next() {
            Ok(Record::Entry(k, v)) => Some((k, v)),
            Ok(other) => {
                pending = Some(other);
                None
            }
            Err(e) => {
                failed = Some(e);
                None
            }
        });
        let loaded = ks.ingest(entries)?;
        if let Some(e) = failed {
            return Err(e.context(format!("{} changed while it was loaded", file.display())));
        }
        if loaded != count {
            bail!("{} changed while it was loaded", file.display());
        }
        total += loaded;
    }
    Ok(total)
}
