//! The manifest: which run files make up each disk level, the database's
//! identity and counters, and the keyspaces.
//!
//! It is a log (LevelDB's `MANIFEST-*` files are the model): a whole
//! snapshot of the state first, then the edits since, each a record of its
//! own. A change appends one edit and syncs the file's data (one device
//! flush); when the edits outgrow the snapshot ([`log::ManifestLog`] says
//! by how much), the next change writes a new file holding one snapshot and
//! replaces the old atomically (write `MANIFEST.tmp`, sync, rename over
//! `MANIFEST`, sync the directory: [`fsutil::write_file_atomic`]). Every
//! read-write open starts a new file, so a torn edit left by a crash is
//! gone once the database has been opened. The version set
//! (`version::VersionSet::apply`) is the only writer.
//!
//! # File format (version 4)
//!
//! All integers are little-endian; `bytes` is a varint length followed by
//! that many bytes.
//!
//! ```text
//! +------------+---------+-------------------+--------+-----+--------+
//! | "SLSMMANI" | version | snapshot record   | edit   | ... | edit   |
//! | 8 B        | u32 = 4 |                   | record |     | record |
//! +------------+---------+-------------------+--------+-----+--------+
//!
//! record:
//!   length u32 (of kind and payload) | masked CRC32C u32 (of kind and
//!   payload) | kind u8 (1 snapshot, 2 edit) | payload
//! snapshot payload:
//!   db_id [16 bytes] | next_file_number u64 | last_sequence u64
//!   min_wal_number u64 | level_count u32
//!   level_count x ( run_count u32, run_count x run )
//!   catalog
//! edit payload (edit.rs):
//!   next_file_number u64 | last_sequence u64 | min_wal_number u64
//!   level_count u32
//!   changed u32 x ( level u32 | run_count u32 | run_count x file_number u64 )
//!   added u32 x run
//!   has_catalog u8 | catalog (when has_catalog is 1)
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
//! An edit names, for each level it changes, the level's runs in order by
//! file number, and carries the record of every run that is new; applying
//! it to the state before gives the state after, which must pass
//! [`Manifest::validate`].
//!
//! # Reading, and what counts as damage
//!
//! [`Manifest::decode`] checks the magic, the version, every record's
//! length and CRC, every field, and the invariants of
//! [`Manifest::validate`] after the snapshot and after each edit; any
//! failure is [`Error::Corruption`] with the offset of the offending record
//! or field (an unknown version is [`Error::NotADatabase`]). One exception,
//! the same the write-ahead log makes: a bad **last** record — cut short,
//! or whole but failing its CRC, with nothing after it — is an append a
//! crash interrupted (or, for a read-only open, one still being written),
//! which was never acknowledged; it is left out. The snapshot record must
//! always be whole. Decoding never panics and never allocates more than the
//! input's size, whatever the input.
//!
//! Version 3 (this layout's predecessor: the snapshot's payload alone
//! between the header and one CRC of the whole file, rewritten at every
//! change) is still read; the first read-write open writes version 4.
//! Version 3 added the catalog; since then every stored key starts with its
//! keyspace's tag, so a version-2 database (untagged keys) is refused with
//! [`Error::NotADatabase`] rather than misread.

mod edit;
pub(crate) mod log;
mod snapshot;

pub(crate) use log::ManifestLog;

use std::collections::HashSet;
use std::io;
use std::path::Path;

use crate::codec::{put_u32, Reader};
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
pub const MANIFEST_FORMAT_VERSION: u32 = 4;
/// The previous version (one snapshot under one CRC), still read.
const LEGACY_FORMAT_VERSION: u32 = 3;

/// Bytes before the first record: magic, version and the CRC of the two
/// (so a damaged version number reads as damage, not as a newer format).
const PREFIX_LEN: usize = 16;
/// Bytes before a version-3 file's payload: magic and version.
const PREFIX_V3: usize = 12;

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

    /// Encodes the manifest as a log holding its snapshot alone (see the
    /// module docs for the layout).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = log::file_header();
        log::put_record(&mut out, log::RecordKind::Snapshot, &snapshot::encode(self));
        out
    }

    /// Decodes and validates a manifest read from `file` (the path is only
    /// used in error messages): the snapshot with every whole edit after
    /// it applied.
    ///
    /// Errors: [`Error::Corruption`] with the offset of the problem for any
    /// damage or inconsistency; [`Error::NotADatabase`] for a manifest of
    /// an unknown format version.
    pub fn decode(bytes: &[u8], file: &Path) -> Result<Self> {
        Ok(Manifest::decode_log(bytes, file)?.manifest)
    }

    /// [`decode`](Self::decode), with what the log holds besides.
    pub(crate) fn decode_log(bytes: &[u8], file: &Path) -> Result<log::Decoded> {
        if bytes.len() < PREFIX_V3 {
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
        let version = crate::codec::u32_at(bytes, 8);
        if version == LEGACY_FORMAT_VERSION {
            return snapshot::decode_legacy(bytes, file).map(log::Decoded::alone);
        }
        if !log::header_intact(bytes) {
            let reason = "manifest header damaged (its version or their checksum)";
            return Err(Error::corruption(file, 8, reason));
        }
        if version != MANIFEST_FORMAT_VERSION {
            return Err(unsupported_version(file, version));
        }
        log::decode(bytes, file)
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

    /// Atomically replaces `dir/MANIFEST` with this manifest (a file
    /// holding its snapshot alone) and makes the change durable (see
    /// [`fsutil::write_file_atomic`]). A database's own changes go through
    /// [`ManifestLog`] instead, which appends edits.
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
            "manifest format version {version} is not supported (this build reads versions \
             {LEGACY_FORMAT_VERSION} and {MANIFEST_FORMAT_VERSION}); open it with the slsm \
             version that wrote it"
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
mod tests;
