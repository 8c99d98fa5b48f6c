//! The manifest: which run files make up each disk level, the database's
//! identity and counters. It is small and rewritten whole on every change,
//! atomically (write `MANIFEST.tmp`, sync, rename over `MANIFEST`, sync the
//! directory; see [`fsutil::write_file_atomic`]), so after a crash the
//! database is in exactly the old or exactly the new state. The version set
//! (`version::VersionSet::apply`) is the only writer.
//!
//! # File format (version 3)
//!
//! All integers are little-endian; `bytes` is a varint length followed by
//! that many bytes.
//!
//! ```text
//! +------------+---------+---------------------------------+-----------+
//! | "SLSMMANI" | version | body                            | CRC       |
//! | 8 B        | u32 = 3 | (below)                         | u32 masked|
//! +------------+---------+---------------------------------+-----------+
//!
//! body:
//!   db_id [16 bytes] | next_file_number u64 | last_sequence u64
//!   min_wal_number u64 | level_count u32
//!   level_count x ( run_count u32, run_count x run )
//!   catalog
//! run:
//!   file_number u64 | file_size u64 | entries u64 | tombstones u64
//!   range_tombstones u64 | min_seq u64 | max_seq u64 | data_bytes u64
//!   raw_data_bytes u64 | checksum u64 (the file's CRC32C)
//!   min_user_key bytes | max_user_key bytes
//! catalog (the keyspaces, `keyspace::Catalog`):
//!   next_keyspace_id u32 | count u32
//!   count x ( id u32 | ttl_millis u64 | name bytes )
//! ```
//!
//! Version 3 added the catalog; since then every stored key starts with its
//! keyspace's tag, so a version-2 database (untagged keys) is refused with
//! [`Error::NotADatabase`] rather than misread.
//!
//! The CRC is CRC32C over everything before it, masked like the WAL's.
//! [`Manifest::decode`] checks the magic, the CRC, the version, every length,
//! that nothing trails the body, and the invariants listed on
//! [`Manifest::validate`]; any failure is [`Error::Corruption`] with the
//! offset of the offending field (an unknown version with a valid CRC is
//! [`Error::NotADatabase`]). Decoding never panics and never allocates more
//! than the input's size, whatever the input.

use std::collections::HashSet;
use std::io;
use std::path::Path;

use crate::codec::{masked_crc, put_u32, put_u64, Reader};
use crate::error::{Error, Result};
use crate::fsutil;
use crate::key::MAX_STORED_KEY_SIZE;
use crate::keyspace::Catalog;
use crate::run::RunProperties;

pub use crate::files::{
    parse_file_name, run_file_name, wal_file_name, FileKind, LOCK_FILE, MANIFEST_FILE,
};

/// Magic bytes at the start of the manifest.
pub const MANIFEST_MAGIC: [u8; 8] = *b"SLSMMANI";
/// Current manifest format version.
pub const MANIFEST_FORMAT_VERSION: u32 = 3;

/// Bytes before the body: magic and version.
const PREFIX_LEN: usize = 12;
/// Bytes of the trailing CRC.
const CRC_LEN: usize = 4;

/// A database's unique identity, chosen when it is created.
pub type DbId = [u8; 16];

/// The persistent state of the disk levels and the engine's counters.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Manifest {
    /// Format version; [`MANIFEST_FORMAT_VERSION`] for manifests this build
    /// writes.
    pub format_version: u32,
    /// The database's identity: run files carry it, so a file of another
    /// database copied in is recognised.
    pub db_id: DbId,
    /// Next file number to hand out; numbers are shared by WAL and run files.
    pub next_file_number: u64,
    /// Every write with a sequence number `<=` this is in the run files; WAL
    /// replay skips them.
    pub last_sequence: u64,
    /// WAL files with a smaller number are obsolete.
    pub min_wal_number: u64,
    /// Level 0 first; within a level, oldest run first.
    pub levels: Vec<Vec<RunProperties>>,
    /// The keyspaces.
    pub catalog: Catalog,
}

impl Default for Manifest {
    fn default() -> Self {
        Manifest::new()
    }
}

/// A fresh database identity: random bytes from the operating system,
/// mixed with the time and the process id where those are not available.
pub fn new_db_id() -> DbId {
    let mut id = [0u8; 16];
    if std::fs::File::open("/dev/urandom")
        .and_then(|mut f| io::Read::read_exact(&mut f, &mut id))
        .is_err()
    {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        id[..8].copy_from_slice(&(nanos as u64).to_le_bytes());
        id[8..12].copy_from_slice(&std::process::id().to_le_bytes());
        let addr = &id as *const _ as u64;
        id[12..].copy_from_slice(&(addr as u32).to_le_bytes());
    }
    id
}

impl Manifest {
    /// The manifest of an empty database: no runs, file numbers start at 1,
    /// identity all zeros (a new database sets [`new_db_id`]).
    pub fn new() -> Self {
        Manifest {
            format_version: MANIFEST_FORMAT_VERSION,
            db_id: [0; 16],
            next_file_number: 1,
            last_sequence: 0,
            min_wal_number: 0,
            levels: Vec::new(),
            catalog: Catalog::default(),
        }
    }

    /// All run records, level 0 first.
    pub fn runs(&self) -> impl Iterator<Item = &RunProperties> {
        self.levels.iter().flatten()
    }

    /// Checks the invariants [`decode`](Self::decode) enforces:
    /// * `format_version` is [`MANIFEST_FORMAT_VERSION`];
    /// * `min_wal_number <= next_file_number`;
    /// * every run's `file_number` is non-zero, below `next_file_number` and
    ///   unique across all levels;
    /// * every run has `min_seq <= max_seq <= last_sequence` and
    ///   `min_user_key <= max_user_key`, keys no longer than the engine's
    ///   key limit.
    ///
    /// Counts (`entries`, `tombstones`, ...), sizes and checksums are not
    /// interpreted. Returns a description of the first violation.
    pub fn validate(&self) -> Result<(), String> {
        if self.format_version != MANIFEST_FORMAT_VERSION {
            return Err(format!(
                "format version {} is not {MANIFEST_FORMAT_VERSION}",
                self.format_version
            ));
        }
        check_counters(self.next_file_number, self.min_wal_number)?;
        let mut seen = HashSet::new();
        for run in self.runs() {
            check_run(run, self.next_file_number, self.last_sequence, &mut seen)?;
        }
        Ok(())
    }

    /// Encodes the manifest (see the module docs for the layout).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.encoded_len_hint());
        out.extend_from_slice(&MANIFEST_MAGIC);
        put_u32(&mut out, self.format_version);
        out.extend_from_slice(&self.db_id);
        put_u64(&mut out, self.next_file_number);
        put_u64(&mut out, self.last_sequence);
        put_u64(&mut out, self.min_wal_number);
        put_len(&mut out, self.levels.len());
        for level in &self.levels {
            put_len(&mut out, level.len());
            for run in level {
                run.encode_into(&mut out);
            }
        }
        self.catalog.encode_into(&mut out);
        let crc = masked_crc(&out);
        put_u32(&mut out, crc);
        out
    }

    fn encoded_len_hint(&self) -> usize {
        let runs: usize = self
            .runs()
            .map(|r| 90 + r.min_user_key.len() + r.max_user_key.len())
            .sum();
        let catalog: usize = self
            .catalog
            .keyspaces
            .iter()
            .map(|k| 14 + k.name.len())
            .sum();
        PREFIX_LEN + 52 + 4 * self.levels.len() + runs + catalog + CRC_LEN
    }

    /// Decodes and validates a manifest read from `file` (the path is only
    /// used in error messages).
    ///
    /// Errors: [`Error::Corruption`] with the offset of the problem for any
    /// damage or inconsistency; [`Error::NotADatabase`] for an intact
    /// manifest of an unknown format version.
    pub fn decode(bytes: &[u8], file: &Path) -> Result<Self> {
        if bytes.len() < PREFIX_LEN + CRC_LEN {
            let reason = format!("manifest of {} bytes is too short", bytes.len());
            return Err(Error::corruption(file, 0, reason));
        }
        if bytes[..8] != MANIFEST_MAGIC {
            return Err(Error::corruption(
                file,
                0,
                "not an slsm manifest (bad magic)",
            ));
        }
        let crc_at = bytes.len() - CRC_LEN;
        if crate::codec::u32_at(bytes, crc_at) != masked_crc(&bytes[..crc_at]) {
            return Err(Error::corruption(
                file,
                crc_at as u64,
                "manifest checksum mismatch",
            ));
        }
        let mut cur = Cursor {
            r: Reader::at(&bytes[..crc_at], 8),
            file,
        };
        let version = cur.field("format version", Reader::u32)?;
        if version != MANIFEST_FORMAT_VERSION {
            return Err(unsupported_version(file, version));
        }
        let manifest = decode_body(&mut cur)?;
        if !cur.r.is_empty() {
            let at = cur.r.pos();
            let reason = format!(
                "{} unexpected bytes after the keyspace catalog",
                crc_at - at
            );
            return Err(cur.error_at(at, reason));
        }
        Ok(manifest)
    }

    /// Reads `dir/MANIFEST`; `Ok(None)` if it does not exist. A leftover
    /// `MANIFEST.tmp` from an interrupted [`store`](Self::store) is ignored.
    pub fn load(dir: &Path) -> Result<Option<Manifest>> {
        Manifest::load_with(&crate::fs::StdFs, dir)
    }

    /// [`load`](Self::load) through the file system `fs`.
    pub fn load_with(fs: &dyn crate::fs::FileSystem, dir: &Path) -> Result<Option<Manifest>> {
        let path = dir.join(MANIFEST_FILE);
        match fs.read(&path) {
            Ok(bytes) => Manifest::decode(&bytes, &path).map(Some),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(path, e)),
        }
    }

    /// Atomically replaces `dir/MANIFEST` with this manifest and makes the
    /// change durable (see [`fsutil::write_file_atomic`]).
    ///
    /// Fails with [`Error::InvalidArgument`], writing nothing, if the
    /// manifest breaks an invariant of [`validate`](Self::validate): storing
    /// it would make the database impossible to reopen.
    pub fn store(&self, dir: &Path) -> Result<()> {
        self.store_with(&crate::fs::StdFs, dir)
    }

    /// [`store`](Self::store) through the file system `fs`.
    pub fn store_with(&self, fs: &dyn crate::fs::FileSystem, dir: &Path) -> Result<()> {
        self.validate().map_err(|reason| {
            Error::InvalidArgument(format!(
                "refusing to store an inconsistent manifest: {reason}"
            ))
        })?;
        fsutil::write_file_atomic_with(fs, dir, MANIFEST_FILE, &self.encode())
    }
}

fn unsupported_version(file: &Path, version: u32) -> Error {
    Error::NotADatabase {
        path: match file.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => file.to_path_buf(),
        },
        reason: format!(
            "manifest format version {version} is not supported (this build reads version \
             {MANIFEST_FORMAT_VERSION}); open it with the slsm version that wrote it"
        ),
    }
}

fn check_counters(next_file_number: u64, min_wal_number: u64) -> Result<(), String> {
    if min_wal_number > next_file_number {
        return Err(format!(
            "min_wal_number {min_wal_number} is above next_file_number {next_file_number}"
        ));
    }
    Ok(())
}

fn check_run(
    run: &RunProperties,
    next_file_number: u64,
    last_sequence: u64,
    seen: &mut HashSet<u64>,
) -> Result<(), String> {
    let n = run.file_number;
    if n == 0 || n >= next_file_number {
        return Err(format!(
            "run file number {n} is not in 1..next_file_number ({next_file_number})"
        ));
    }
    if !seen.insert(n) {
        return Err(format!("run file number {n} appears twice"));
    }
    if run.min_seq > run.max_seq || run.max_seq > last_sequence {
        return Err(format!(
            "run {n} has sequence range {}..={} outside 0..={last_sequence}",
            run.min_seq, run.max_seq
        ));
    }
    if run.min_user_key.len() > MAX_STORED_KEY_SIZE || run.max_user_key.len() > MAX_STORED_KEY_SIZE
    {
        return Err(format!(
            "run {n} has a key longer than {MAX_STORED_KEY_SIZE} bytes"
        ));
    }
    if run.min_user_key > run.max_user_key {
        return Err(format!("run {n} has min_user_key > max_user_key"));
    }
    Ok(())
}

fn decode_body(cur: &mut Cursor<'_>) -> Result<Manifest> {
    let db_id: DbId = cur
        .field("database id", |r| r.bytes(16))?
        .try_into()
        .expect("16 bytes");
    let next_file_number = cur.field("next_file_number", Reader::u64)?;
    let last_sequence = cur.field("last_sequence", Reader::u64)?;
    let counters_at = cur.r.pos();
    let min_wal_number = cur.field("min_wal_number", Reader::u64)?;
    check_counters(next_file_number, min_wal_number).map_err(|r| cur.error_at(counters_at, r))?;
    let level_count = cur.field("level count", Reader::u32)?;
    let mut levels = Vec::new();
    let mut seen = HashSet::new();
    for _ in 0..level_count {
        let run_count = cur.field("run count", Reader::u32)?;
        let mut level = Vec::new();
        for _ in 0..run_count {
            let at = cur.r.pos();
            let run = cur.field("run record", RunProperties::decode_from)?;
            check_run(&run, next_file_number, last_sequence, &mut seen)
                .map_err(|r| cur.error_at(at, r))?;
            level.push(run);
        }
        levels.push(level);
    }
    let at = cur.r.pos();
    let catalog = Catalog::decode_from(&mut cur.r).map_err(|r| cur.error_at(at, r))?;
    Ok(Manifest {
        format_version: MANIFEST_FORMAT_VERSION,
        db_id,
        next_file_number,
        last_sequence,
        min_wal_number,
        levels,
        catalog,
    })
}

/// Writes a count as u32. Counts are far below `u32::MAX`; saturating keeps a
/// hypothetical overflow detectable (decode would fail) instead of wrapping.
fn put_len(out: &mut Vec<u8>, len: usize) {
    put_u32(out, u32::try_from(len).unwrap_or(u32::MAX));
}

/// A [`Reader`] over the manifest body whose failures name what was being
/// read and where.
struct Cursor<'a> {
    r: Reader<'a>,
    file: &'a Path,
}

impl<'a> Cursor<'a> {
    fn error_at(&self, offset: usize, reason: impl Into<String>) -> Error {
        Error::corruption(self.file, offset as u64, reason)
    }

    /// Reads one field with `read`; a failure is "truncated" at its start.
    fn field<T>(
        &mut self,
        what: &str,
        read: impl FnOnce(&mut Reader<'a>) -> Option<T>,
    ) -> Result<T> {
        let at = self.r.pos();
        read(&mut self.r)
            .ok_or_else(|| self.error_at(at, format!("manifest truncated or malformed: {what}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::fs;

    fn run(n: u64, min: &[u8], max: &[u8], seqs: (u64, u64)) -> RunProperties {
        RunProperties {
            file_number: n,
            file_size: 1000 + n,
            entries: 10 * n,
            tombstones: n,
            range_tombstones: n % 3,
            min_user_key: min.to_vec(),
            max_user_key: max.to_vec(),
            min_seq: seqs.0,
            max_seq: seqs.1,
            data_bytes: 900 + n,
            raw_data_bytes: 1900 + n,
            checksum: n as u32 * 7,
        }
    }

    fn sample() -> Manifest {
        Manifest {
            format_version: MANIFEST_FORMAT_VERSION,
            db_id: *b"0123456789abcdef",
            next_file_number: 20,
            last_sequence: 500,
            min_wal_number: 17,
            levels: vec![
                vec![
                    run(12, b"a", b"m", (300, 500)),
                    run(15, b"", b"\xff\xff", (1, 400)),
                ],
                vec![],
                vec![run(3, b"b", b"b", (0, 0))],
            ],
            catalog: Catalog::default()
                .with_new("users", 0)
                .and_then(|c| c.with_new("sessions", 3_600_000))
                .unwrap(),
        }
    }

    fn p() -> &'static Path {
        Path::new("/db/MANIFEST")
    }

    #[test]
    fn new_round_trips() {
        let m = Manifest::new();
        assert_eq!(Manifest::default(), m);
        assert_eq!(Manifest::decode(&m.encode(), p()).expect("decode"), m);
        assert!(m.validate().is_ok());
    }

    #[test]
    fn sample_round_trips() {
        let m = sample();
        assert_eq!(Manifest::decode(&m.encode(), p()).expect("decode"), m);
        assert_eq!(m.runs().count(), 3);
    }

    #[test]
    fn every_byte_flip_is_corruption() {
        let good = sample().encode();
        for i in 0..good.len() {
            for mask in [0x01u8, 0x80, 0xff] {
                let mut bad = good.clone();
                bad[i] ^= mask;
                match Manifest::decode(&bad, p()) {
                    Err(e) => assert!(e.is_corruption(), "byte {i}: {e}"),
                    Ok(m) => assert_eq!(m, sample(), "byte {i} decoded differently"),
                }
            }
        }
    }

    #[test]
    fn every_truncation_is_corruption() {
        let good = sample().encode();
        for cut in 0..good.len() {
            let err = Manifest::decode(&good[..cut], p()).expect_err("truncated");
            assert!(err.is_corruption(), "cut {cut}: {err}");
        }
    }

    /// Re-seals `bytes` (everything but the CRC) with a correct CRC.
    fn seal(mut body: Vec<u8>) -> Vec<u8> {
        let crc = masked_crc(&body);
        body.extend_from_slice(&crc.to_le_bytes());
        body
    }

    fn unsealed(m: &Manifest) -> Vec<u8> {
        let mut b = m.encode();
        b.truncate(b.len() - CRC_LEN);
        b
    }

    #[test]
    fn trailing_bytes_are_corruption() {
        let mut b = unsealed(&sample());
        let at = b.len();
        b.extend_from_slice(b"xx");
        let err = Manifest::decode(&seal(b), p()).expect_err("trailing");
        assert!(
            matches!(err, Error::Corruption { offset, .. } if offset == at as u64),
            "{err}"
        );
    }

    #[test]
    fn unknown_version_is_not_a_database() {
        let mut b = unsealed(&sample());
        b[8..12].copy_from_slice(&7u32.to_le_bytes());
        let err = Manifest::decode(&seal(b), p()).expect_err("version");
        assert!(matches!(err, Error::NotADatabase { .. }), "{err}");
    }

    #[test]
    fn inconsistent_manifests_are_rejected_by_decode_and_store() {
        let mut cases = Vec::new();
        let mut m = sample();
        m.levels[2][0].file_number = 12; // duplicate
        cases.push(m);
        let mut m = sample();
        m.levels[0][0].file_number = 20; // not below next_file_number
        cases.push(m);
        let mut m = sample();
        m.levels[0][1].file_number = 0;
        cases.push(m);
        let mut m = sample();
        m.levels[0][0].max_seq = 501; // above last_sequence
        cases.push(m);
        let mut m = sample();
        m.levels[0][0].min_seq = 501; // min > max
        cases.push(m);
        let mut m = sample();
        m.levels[0][0].min_user_key = b"z".to_vec();
        cases.push(m);
        let mut m = sample();
        m.min_wal_number = 21;
        cases.push(m);
        let dir = tempfile::tempdir().expect("tempdir");
        for m in cases {
            let reason = m.validate().expect_err("invalid");
            let err = Manifest::decode(&m.encode(), p()).expect_err("decode must reject");
            assert!(err.is_corruption(), "{reason}: {err}");
            let err = m.store(dir.path()).expect_err("store must reject");
            assert!(matches!(err, Error::InvalidArgument(_)), "{reason}: {err}");
        }
        assert!(
            Manifest::load(dir.path()).expect("load").is_none(),
            "nothing was written"
        );
        let mut m = sample();
        m.format_version = MANIFEST_FORMAT_VERSION + 1;
        assert!(matches!(
            m.store(dir.path()),
            Err(Error::InvalidArgument(_))
        ));
    }

    #[test]
    fn corruption_offset_points_at_the_bad_run() {
        let mut m = sample();
        m.levels[2][0].max_seq = 9999;
        let b = m.encode();
        let err = Manifest::decode(&b, p()).expect_err("bad run");
        // prefix 12 + id 16 + counters 24 + level count 4 + level 0 (4 + two
        // runs) + level 1 (4) + level 2's run count (4); a run is 10 u64s and
        // 2 varint-prefixed keys.
        let run0 = 80 + (1 + 1) + (1 + 1);
        let run1 = 80 + 1 + (1 + 2);
        let expected = 12 + 16 + 24 + 4 + 4 + run0 + run1 + 4 + 4;
        assert!(
            matches!(err, Error::Corruption { offset, .. } if offset == expected as u64),
            "{err}"
        );
    }

    #[test]
    fn huge_counts_do_not_allocate_or_panic() {
        let mut b = unsealed(&Manifest::new());
        let n = b.len();
        b[n - 4..].copy_from_slice(&u32::MAX.to_le_bytes()); // level count
        let err = Manifest::decode(&seal(b.clone()), p()).expect_err("huge level count");
        assert!(err.is_corruption());
        b[n - 4..].copy_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&u32::MAX.to_le_bytes()); // run count
        let err = Manifest::decode(&seal(b), p()).expect_err("huge run count");
        assert!(err.is_corruption());
    }

    #[test]
    fn store_and_load() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(Manifest::load(dir.path()).expect("load").is_none());
        Manifest::new().store(dir.path()).expect("store");
        assert_eq!(
            Manifest::load(dir.path()).expect("load"),
            Some(Manifest::new())
        );
        sample().store(dir.path()).expect("store again");
        assert_eq!(Manifest::load(dir.path()).expect("load"), Some(sample()));
        assert!(!dir.path().join("MANIFEST.tmp").exists());
    }

    #[test]
    fn leftover_tmp_is_ignored() {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::write(dir.path().join("MANIFEST.tmp"), b"half-written garbage").expect("seed");
        assert!(Manifest::load(dir.path()).expect("load").is_none());
        sample().store(dir.path()).expect("store");
        fs::write(
            dir.path().join("MANIFEST.tmp"),
            &Manifest::new().encode()[..10],
        )
        .expect("seed");
        assert_eq!(Manifest::load(dir.path()).expect("load"), Some(sample()));
    }

    #[test]
    fn load_reports_corruption_with_the_manifest_path() {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::write(dir.path().join(MANIFEST_FILE), b"SLSMMANI garbage").expect("seed");
        match Manifest::load(dir.path()) {
            Err(Error::Corruption { file, .. }) => assert_eq!(file, dir.path().join(MANIFEST_FILE)),
            other => panic!("expected corruption, got {other:?}"),
        }
    }

    fn arb_manifest() -> impl Strategy<Value = Manifest> {
        let key = || prop::collection::vec(any::<u8>(), 0..20);
        let run = (
            any::<u64>(),
            any::<u64>(),
            any::<u64>(),
            any::<u64>(),
            key(),
            key(),
            any::<u64>(),
            any::<u64>(),
        );
        let levels = prop::collection::vec(prop::collection::vec(run, 0..5), 0..6);
        (levels, any::<u64>(), 0u64..1000).prop_map(|(levels, last_sequence, extra)| {
            let mut next = 1u64;
            let levels: Vec<Vec<RunProperties>> = levels
                .into_iter()
                .map(|level| {
                    level
                        .into_iter()
                        .map(|(size, entries, tomb, range, k1, k2, s1, s2)| {
                            let (min_seq, max_seq) = if s1 <= s2 { (s1, s2) } else { (s2, s1) };
                            let (lo, hi) = if k1 <= k2 { (k1, k2) } else { (k2, k1) };
                            next += 1;
                            RunProperties {
                                file_number: next - 1,
                                data_bytes: size / 2,
                                raw_data_bytes: size,
                                checksum: tomb as u32,
                                file_size: size,
                                entries,
                                tombstones: tomb,
                                range_tombstones: range,
                                min_user_key: lo,
                                max_user_key: hi,
                                min_seq: min_seq % (last_sequence.saturating_add(1)).max(1),
                                max_seq: max_seq.min(last_sequence),
                            }
                        })
                        .map(|mut r| {
                            r.min_seq = r.min_seq.min(r.max_seq);
                            r
                        })
                        .collect()
                })
                .collect();
            Manifest {
                format_version: MANIFEST_FORMAT_VERSION,
                db_id: [last_sequence as u8; 16],
                next_file_number: next + extra,
                last_sequence,
                min_wal_number: next,
                levels,
                catalog: Catalog::default(),
            }
        })
    }

    proptest! {
        #[test]
        fn prop_round_trip(m in arb_manifest()) {
            prop_assert!(m.validate().is_ok());
            prop_assert_eq!(Manifest::decode(&m.encode(), p()).expect("decode"), m);
        }

        #[test]
        fn prop_byte_flips_never_panic(m in arb_manifest(), i in any::<prop::sample::Index>(), mask in 1u8..=255) {
            let mut b = m.encode();
            let at = i.index(b.len());
            b[at] ^= mask;
            match Manifest::decode(&b, p()) {
                Err(e) => prop_assert!(e.is_corruption(), "{}", e),
                Ok(d) => prop_assert_eq!(d, m),
            }
        }

        #[test]
        fn prop_random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400), magic in any::<bool>()) {
            let mut bytes = bytes;
            if magic && bytes.len() >= 8 {
                bytes[..8].copy_from_slice(&MANIFEST_MAGIC);
            }
            let _ = Manifest::decode(&bytes, p());
            // With a valid CRC, the body parser itself sees random bytes.
            if bytes.len() >= 12 {
                let _ = Manifest::decode(&seal(bytes), p());
            }
        }
    }
}
