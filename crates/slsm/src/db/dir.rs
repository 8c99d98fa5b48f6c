//! The database directory at open: a foreign directory refused before
//! anything is created in it, the lock, the manifest loaded or created,
//! the numbered files listed.

use std::path::Path;

use crate::error::{Error, Result};
use crate::files::LOCK_FILE;
use crate::fs::durable;
use crate::fs::{FileSystem, FsLock};
use crate::manifest::{self, FileKind, Manifest};
use crate::options::Options;

/// The manifest of an existing database (read-only opens create nothing).
pub(super) fn load_existing_manifest(dir: &Path, opts: &Options) -> Result<Manifest> {
    match Manifest::load_with(&*opts.fs, dir)? {
        Some(m) => Ok(m),
        None => Err(Error::NotADatabase {
            path: dir.to_path_buf(),
            reason: format!(
                "it has no {} (nothing to open read-only)",
                manifest::MANIFEST_FILE
            ),
        }),
    }
}

/// A read-only open needs the directory to exist.
pub(super) fn require_dir(dir: &Path, opts: &Options) -> Result<()> {
    match opts.fs.is_dir(dir) {
        Ok(true) => Ok(()),
        Ok(false) => Err(Error::NotADatabase {
            path: dir.to_path_buf(),
            reason: "it is a file, not a directory".into(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Error::InvalidArgument(format!(
            "database {} does not exist",
            dir.display()
        ))),
        Err(e) => Err(Error::io(dir, e)),
    }
}

pub(super) fn prepare_dir(dir: &Path, opts: &Options) -> Result<()> {
    let fs = &*opts.fs;
    match fs.is_dir(dir) {
        Ok(true) => Ok(()),
        Ok(_) => Err(Error::NotADatabase {
            path: dir.to_path_buf(),
            reason: "it is a file, not a directory".into(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if !opts.create_if_missing {
                return Err(Error::InvalidArgument(format!(
                    "database {} does not exist (set create_if_missing to create it)",
                    dir.display()
                )));
            }
            fs.create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
            if let Some(parent) = dir.parent() {
                if !parent.as_os_str().is_empty() {
                    durable::sync_dir_with(fs, parent)?;
                }
            }
            Ok(())
        }
        Err(e) => Err(Error::io(dir, e)),
    }
}

/// Refuses a directory that holds files but no slsm manifest, or a
/// manifest that is not ours.
pub(super) fn refuse_foreign(fs: &dyn FileSystem, dir: &Path) -> Result<()> {
    let names = fs.read_dir(dir).map_err(|e| Error::io(dir, e))?;
    let refuse = |reason: String| {
        Err(Error::NotADatabase {
            path: dir.to_path_buf(),
            reason,
        })
    };
    if names.iter().any(|n| n == manifest::MANIFEST_FILE) {
        let path = dir.join(manifest::MANIFEST_FILE);
        let head = fs.read(&path).map_err(|e| Error::io(&path, e))?;
        if !head.is_empty() && !head.starts_with(&manifest::MANIFEST_MAGIC) {
            return refuse("its MANIFEST is not an slsm manifest".into());
        }
        return Ok(());
    }
    match names
        .iter()
        .find(|name| *name != LOCK_FILE && !name.ends_with(durable::TMP_SUFFIX))
    {
        Some(name) => refuse(format!(
            "it holds {name:?} but no {}",
            manifest::MANIFEST_FILE
        )),
        None => Ok(()),
    }
}

pub(super) fn lock_dir(fs: &dyn FileSystem, dir: &Path) -> Result<FsLock> {
    let path = dir.join(LOCK_FILE);
    match fs.lock(&path) {
        Ok(Some(lock)) => Ok(lock),
        Ok(None) => Err(Error::Locked(dir.to_path_buf())),
        Err(e) => Err(Error::io(&path, e)),
    }
}

pub(super) fn load_or_create_manifest(dir: &Path, opts: &Options) -> Result<Manifest> {
    let fs = &*opts.fs;
    match Manifest::load_with(fs, dir) {
        Ok(Some(m)) if opts.error_if_exists => {
            let _ = m;
            Err(Error::InvalidArgument(format!(
                "database {} already exists (error_if_exists is set)",
                dir.display()
            )))
        }
        Ok(Some(m)) => Ok(m),
        Ok(None) => {
            let foreign = fs
                .read_dir(dir)
                .map_err(|e| Error::io(dir, e))?
                .into_iter()
                .find(|name| name != LOCK_FILE && !name.ends_with(durable::TMP_SUFFIX));
            if let Some(name) = foreign {
                return Err(Error::NotADatabase {
                    path: dir.to_path_buf(),
                    reason: format!("it holds {name:?} but no {}", manifest::MANIFEST_FILE),
                });
            }
            let m = Manifest {
                db_id: manifest::new_db_id(),
                ..Manifest::new()
            };
            m.store_with(fs, dir)?;
            Ok(m)
        }
        Err(e @ Error::Corruption { .. }) => {
            // A file named MANIFEST that does not even carry our magic
            // belongs to somebody else.
            let path = dir.join(manifest::MANIFEST_FILE);
            let head = fs.read(&path).map_err(|e| Error::io(&path, e))?;
            if !head.starts_with(&manifest::MANIFEST_MAGIC) {
                return Err(Error::NotADatabase {
                    path: dir.to_path_buf(),
                    reason: "its MANIFEST is not an slsm manifest".into(),
                });
            }
            Err(e)
        }
        Err(e) => Err(e),
    }
}

/// The database's numbered files, ascending by number.
pub(super) fn scan_dir(fs: &dyn FileSystem, dir: &Path) -> Result<Vec<(u64, FileKind)>> {
    let mut files = Vec::new();
    for name in fs.read_dir(dir).map_err(|e| Error::io(dir, e))? {
        if let Some((n, kind)) = manifest::parse_file_name(&name) {
            files.push((n, kind));
        }
    }
    files.sort_by_key(|(n, _)| *n);
    Ok(files)
}
