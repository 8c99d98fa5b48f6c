//! Checkpoints: a consistent copy of an open database in another
//! directory, which opens as a normal database (RocksDB's `Checkpoint`).
//!
//! * **Owns**: nothing; it reads a version the version set hands it.
//! * **Steps**: the caller flushes the memory runs, so the run files hold
//!   every write up to the flushed sequence number; the version set gives
//!   the version and the manifest describing it under its lock (one point
//!   in time); the run files are hard-linked into the new directory where
//!   the file system allows (run files are immutable), copied otherwise;
//!   the directory is synced and the manifest written last, atomically. A
//!   checkpoint cut short by an error or a crash has no `MANIFEST`: it is
//!   not a database, and the error says so. Writes continue meanwhile;
//!   the version held keeps its files from being deleted until the copy
//!   is done.

use std::io::{self, Write};
use std::path::Path;

use crate::error::{Error, Result};
use crate::files::run_file_name;
use crate::fs::durable;
use crate::fs::FileSystem;
use crate::manifest::Manifest;
use crate::version::Version;

/// Bytes copied at a time where links are not possible.
const COPY_CHUNK: usize = 1 << 20;

/// Writes the checkpoint of `version` / `manifest` (from `src`) to `dest`,
/// which must not exist or be empty.
pub(crate) fn write(
    fs: &dyn FileSystem,
    src: &Path,
    dest: &Path,
    version: &Version,
    manifest: &Manifest,
) -> Result<()> {
    refuse_non_empty(fs, dest)?;
    let copy_all = || -> Result<()> {
        fs.create_dir_all(dest).map_err(|e| Error::io(dest, e))?;
        for run in version.disk_runs_newest_first() {
            let name = run_file_name(run.number);
            let (from, to) = (src.join(&name), dest.join(&name));
            link_or_copy(fs, &from, &to).map_err(|e| Error::io(&to, e))?;
        }
        fs.sync_dir(dest).map_err(|e| Error::io(dest, e))?;
        manifest.store_with(fs, dest)
    };
    let result = copy_all();
    if result.is_err() {
        clean_up(fs, dest);
    }
    result
}

fn refuse_non_empty(fs: &dyn FileSystem, dest: &Path) -> Result<()> {
    match fs.read_dir(dest) {
        Ok(entries) if !entries.is_empty() => Err(Error::InvalidArgument(format!(
            "checkpoint directory {} exists and is not empty",
            dest.display()
        ))),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(dest, e)),
    }
}

fn link_or_copy(fs: &dyn FileSystem, from: &Path, to: &Path) -> io::Result<()> {
    match fs.hard_link(from, to) {
        Ok(()) => Ok(()),
        // Another device, a file system without links, or no permission:
        // copy.
        Err(_) => copy(fs, from, to),
    }
}

fn copy(fs: &dyn FileSystem, from: &Path, to: &Path) -> io::Result<()> {
    let src = fs.open_random(from)?;
    let mut out = fs.create_new(to)?;
    let len = src.len();
    let mut at = 0u64;
    while at < len {
        let n = COPY_CHUNK.min((len - at) as usize);
        out.write_all(&src.read_vec_at(at, n)?)?;
        at += n as u64;
    }
    out.flush()?;
    out.sync_all()
}

/// Removes what a failed checkpoint left in `dest` (best effort; `dest`
/// was empty before, so everything in it is the checkpoint's).
fn clean_up(fs: &dyn FileSystem, dest: &Path) {
    if let Ok(entries) = fs.read_dir(dest) {
        for name in entries {
            let _ = fs.remove_file(&dest.join(name));
        }
    }
    let _ = durable::sync_dir_with(fs, dest);
}
