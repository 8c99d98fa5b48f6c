//! The manifest: which run files make up each disk level, the database's
//! identity and counters, and the keyspaces.
//!
//! It is a log (LevelDB's `MANIFEST-*` files are the model): a whole
//! snapshot of the state first, then the edits since, each a record of its
//! own. A change appends one edit and syncs the file's data (one device
//! flush); when the edits outgrow the snapshot ([`log::ManifestLog`] says
//! by how much), the next change writes a new file holding one snapshot and
//! replaces the old atomically (write `MANIFEST.tmp`, sync, rename over
//! `MANIFEST`, sync the directory: [`durable::write_file_atomic`]). Every
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
//! +------------+---------+------------+-----------------+--------+-----+
//! | "SLSMMANI" | version | header CRC | snapshot record | edit   | ... |
//! | 8 B        | u32 = 4 | u32 masked | (one)           | record |     |
//! +------------+---------+------------+-----------------+--------+-----+
//!
//! header CRC: masked CRC32C of the 12 bytes before it (a damaged version
//! number reads as damage, not as a newer format).
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
mod state;

pub(crate) use log::ManifestLog;
pub use state::{Manifest, MANIFEST_FORMAT_VERSION, MANIFEST_MAGIC};

use std::io;
use std::path::Path;

use crate::error::{Error, Result};
use crate::fs::durable;
use state::{LEGACY_FORMAT_VERSION, PREFIX_V3};

pub use crate::db_id::{new_db_id, DbId};
pub use crate::files::{
    parse_file_name, run_file_name, wal_file_name, FileKind, LOCK_FILE, MANIFEST_FILE,
};

impl Manifest {
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
    /// [`durable::write_file_atomic`]). A database's own changes go through
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
        durable::write_file_atomic_with(fs, dir, MANIFEST_FILE, &self.encode())
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

#[cfg(test)]
mod tests;
