//! Small file-system helpers for crash-safe updates.
//!
//! POSIX file systems make a *file's data* durable with `fsync` on the file,
//! but a newly created, renamed or deleted *directory entry* is only durable
//! after an `fsync` of the directory that holds it. Forgetting the second
//! step is a classic way to lose a freshly created log or an atomically
//! replaced manifest in a machine crash, so every place in the engine that
//! creates or renames a file that must survive goes through these helpers.
//!
//! [`write_file_atomic`] replaces a file so that after a crash a reader sees
//! either the complete old contents or the complete new contents, never a
//! mixture:
//!
//! ```text
//! write  dir/NAME.tmp   (create or truncate)
//! fsync  dir/NAME.tmp   (the new bytes are on disk)
//! rename dir/NAME.tmp -> dir/NAME   (atomic replacement)
//! fsync  dir            (the rename itself is on disk)
//! ```
//!
//! A `NAME.tmp` left behind by a crash is harmless: readers only look at
//! `NAME`, and the next [`write_file_atomic`] truncates the leftover.

use std::io::Write;
use std::path::Path;

use super::file_system::{FileSystem, FsFile};
use super::std_fs::StdFs;
use crate::error::{Error, Result};

/// Suffix of the temporary file [`write_file_atomic`] writes before renaming.
pub const TMP_SUFFIX: &str = ".tmp";

/// Makes the directory entries of `dir` (files created, renamed or removed in
/// it) durable by opening the directory and syncing it.
///
/// On platforms or file systems where a directory cannot be synced (Windows,
/// some network file systems that answer `EINVAL`), this returns `Ok(())`:
/// there, metadata durability is the file system's own business.
pub fn sync_dir(dir: &Path) -> Result<()> {
    sync_dir_with(&StdFs, dir)
}

/// [`sync_dir`] through the file system `fs`.
pub fn sync_dir_with(fs: &dyn FileSystem, dir: &Path) -> Result<()> {
    fs.sync_dir(dir).map_err(|e| Error::io(dir, e))
}

/// Syncs the directory that contains `path` (see [`sync_dir`]). A bare file
/// name is taken to be in the current directory.
pub fn sync_parent_dir(path: &Path) -> Result<()> {
    sync_parent_dir_with(&StdFs, path)
}

/// [`sync_parent_dir`] through the file system `fs`.
pub fn sync_parent_dir_with(fs: &dyn FileSystem, path: &Path) -> Result<()> {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => sync_dir_with(fs, parent),
        _ => sync_dir_with(fs, Path::new(".")),
    }
}

/// Atomically replaces `dir/name` with `bytes`: writes `dir/name.tmp`,
/// syncs it, renames it over `dir/name` and syncs `dir`.
///
/// When this returns `Ok`, the new contents survive a machine crash. When it
/// returns an error, `dir/name` holds either its old or its new contents (the
/// rename is the only step that touches it) and a best effort is made to
/// remove the temporary file.
pub fn write_file_atomic(dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    write_file_atomic_with(&StdFs, dir, name, bytes)
}

/// [`write_file_atomic`] through the file system `fs`.
pub fn write_file_atomic_with(
    fs: &dyn FileSystem,
    dir: &Path,
    name: &str,
    bytes: &[u8],
) -> Result<()> {
    replace_file_with(fs, dir, name, bytes).map(drop)
}

/// [`write_file_atomic_with`], returning the new file open for appending
/// (the manifest appends its edits to it).
pub fn replace_file_with(
    fs: &dyn FileSystem,
    dir: &Path,
    name: &str,
    bytes: &[u8],
) -> Result<Box<dyn FsFile>> {
    if name.is_empty() || name.contains(['/', '\\']) {
        return Err(Error::InvalidArgument(format!(
            "write_file_atomic: {name:?} is not a plain file name"
        )));
    }
    let tmp = dir.join(format!("{name}{TMP_SUFFIX}"));
    let target = dir.join(name);
    let file = match write_and_sync(fs, &tmp, bytes) {
        Ok(file) => file,
        Err(e) => {
            let _ = fs.remove_file(&tmp);
            return Err(e);
        }
    };
    if let Err(e) = fs.rename(&tmp, &target) {
        let _ = fs.remove_file(&tmp);
        return Err(Error::io(&target, e));
    }
    sync_dir_with(fs, dir)?;
    Ok(file)
}

/// Creates or truncates `path`, writes `bytes` and syncs data and metadata.
fn write_and_sync(fs: &dyn FileSystem, path: &Path, bytes: &[u8]) -> Result<Box<dyn FsFile>> {
    let mut file = fs.create_truncate(path).map_err(|e| Error::io(path, e))?;
    file.write_all(bytes).map_err(|e| Error::io(path, e))?;
    file.sync_all().map_err(|e| Error::io(path, e))?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn write_file_atomic_creates_and_replaces() {
        let dir = tempfile::tempdir().expect("tempdir");
        write_file_atomic(dir.path(), "F", b"one").expect("first write");
        assert_eq!(fs::read(dir.path().join("F")).expect("read"), b"one");
        write_file_atomic(dir.path(), "F", b"two, longer").expect("second write");
        assert_eq!(
            fs::read(dir.path().join("F")).expect("read"),
            b"two, longer"
        );
        assert!(
            !dir.path().join("F.tmp").exists(),
            "tmp file must be renamed away"
        );
    }

    #[test]
    fn write_file_atomic_overwrites_leftover_tmp() {
        let dir = tempfile::tempdir().expect("tempdir");
        fs::write(
            dir.path().join("F.tmp"),
            b"garbage from a crash, quite long",
        )
        .expect("seed");
        write_file_atomic(dir.path(), "F", b"new").expect("write");
        assert_eq!(fs::read(dir.path().join("F")).expect("read"), b"new");
    }

    #[test]
    fn write_file_atomic_rejects_paths_as_names() {
        let dir = tempfile::tempdir().expect("tempdir");
        for bad in ["", "a/b", "a\\b"] {
            let err = write_file_atomic(dir.path(), bad, b"x").expect_err("must reject");
            assert!(matches!(err, Error::InvalidArgument(_)), "{bad:?}: {err}");
        }
    }

    #[test]
    fn write_file_atomic_in_missing_dir_is_io_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let missing = dir.path().join("nope");
        let err = write_file_atomic(&missing, "F", b"x").expect_err("must fail");
        assert!(matches!(err, Error::Io { .. }), "{err}");
    }

    #[test]
    fn sync_dir_works_and_reports_missing_dir() {
        let dir = tempfile::tempdir().expect("tempdir");
        sync_dir(dir.path()).expect("sync existing dir");
        sync_parent_dir(&dir.path().join("file")).expect("sync parent");
        sync_parent_dir(Path::new("relative-name")).expect("sync cwd");
        #[cfg(unix)]
        {
            let err = sync_dir(&dir.path().join("missing")).expect_err("missing dir");
            assert!(matches!(err, Error::Io { .. }), "{err}");
        }
    }
}
