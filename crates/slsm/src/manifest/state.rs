//! The manifest's value: what it records and the invariants every
//! manifest read or written must keep, with the pieces its codecs share (a
//! leaf of `manifest/`: the snapshot and edit codecs and the log build on
//! it; `mod.rs` reads and writes whole files).

use std::collections::HashSet;

use crate::codec::{put_u32, Reader};
use crate::db_id::DbId;
use crate::error::{Error, Result};
use crate::key::MAX_STORED_KEY_SIZE;
use crate::keyspace::catalog::Catalog;
use crate::sst::RunProperties;
use std::path::Path;

/// Magic bytes at the start of the manifest.
pub const MANIFEST_MAGIC: [u8; 8] = *b"SLSMMANI";
/// Current manifest format version.
pub const MANIFEST_FORMAT_VERSION: u32 = 4;
/// The previous version (one snapshot under one CRC), still read.
pub(super) const LEGACY_FORMAT_VERSION: u32 = 3;

/// Bytes before the first record: magic, version and the CRC of the two
/// (so a damaged version number reads as damage, not as a newer format).
pub(super) const PREFIX_LEN: usize = 16;
/// Bytes before a version-3 file's payload: magic and version.
pub(super) const PREFIX_V3: usize = 12;

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
}

pub(super) fn check_counters(next_file_number: u64, min_wal_number: u64) -> Result<(), String> {
    if min_wal_number > next_file_number {
        return Err(format!(
            "min_wal_number {min_wal_number} is above next_file_number {next_file_number}"
        ));
    }
    Ok(())
}

pub(super) fn check_run(
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
pub(super) fn put_len(out: &mut Vec<u8>, len: usize) {
    put_u32(out, u32::try_from(len).unwrap_or(u32::MAX));
}

/// A [`Reader`] over the manifest body whose failures name what was being
/// read and where.
pub(super) struct Cursor<'a> {
    pub r: Reader<'a>,
    pub file: &'a Path,
}

impl<'a> Cursor<'a> {
    pub fn error_at(&self, offset: usize, reason: impl Into<String>) -> Error {
        Error::corruption(self.file, offset as u64, reason)
    }

    /// Reads one field with `read`; a failure is "truncated" at its start.
    pub fn field<T>(
        &mut self,
        what: &str,
        read: impl FnOnce(&mut Reader<'a>) -> Option<T>,
    ) -> Result<T> {
        let at = self.r.pos();
        read(&mut self.r)
            .ok_or_else(|| self.error_at(at, format!("manifest truncated or malformed: {what}")))
    }
}
