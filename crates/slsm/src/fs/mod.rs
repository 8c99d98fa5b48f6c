//! The file-system layer: every file operation of the engine goes through a
//! [`FileSystem`]: the operating system's ([`StdFs`], the default), an
//! in-memory one ([`MemFs`], behind [`Options::in_memory`](crate::Options::in_memory)),
//! or, in tests, [`FaultFs`], an in-memory file system that simulates power
//! loss (it drops every byte and directory entry that was not fsynced) and
//! injects I/O errors.
//!
//! The trait covers exactly what the engine does: create a new file and
//! append to it, sync it, read a whole file, map a run file (the real file
//! system memory-maps it; others may read it into memory), rename, remove,
//! list a directory, create a directory, sync a directory, and lock the
//! database directory.

use std::any::Any;
use std::fmt::Debug;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::ops::Deref;
use std::path::Path;
use std::sync::Arc;

use memmap2::Mmap;

/// A file open for appending.
pub trait FsFile: Write + Send + Sync + Debug {
    /// Makes the file's data durable (`fdatasync`).
    fn sync_data(&mut self) -> io::Result<()>;
    /// Makes the file's data and metadata durable (`fsync`).
    fn sync_all(&mut self) -> io::Result<()>;
}

impl FsFile for File {
    fn sync_data(&mut self) -> io::Result<()> {
        File::sync_data(self)
    }
    fn sync_all(&mut self) -> io::Result<()> {
        File::sync_all(self)
    }
}

/// The bytes of a whole (immutable) file: a memory map or a private copy.
#[derive(Debug)]
pub enum FileBytes {
    /// A read-only memory map.
    Mapped(Mmap),
    /// A copy in memory.
    Owned(Vec<u8>),
    /// The bytes of a [`MemFs`] file, shared with the file system.
    Shared(Arc<Vec<u8>>),
}

impl FileBytes {
    /// Tells the OS this process no longer needs `range` resident (a merge
    /// that has read past it), so a merge does not make its whole input
    /// resident. Only affects memory maps; a no-op elsewhere.
    pub fn release(&self, range: std::ops::Range<usize>) {
        #[cfg(target_os = "linux")]
        if let FileBytes::Mapped(m) = self {
            if range.start < range.end && range.end <= m.len() {
                // SAFETY: the map is a read-only, shared mapping of an
                // immutable file: MADV_DONTNEED only unmaps the pages from
                // this process (they stay in the page cache, nothing is
                // discarded), and any later read through a live slice faults
                // the same bytes back in.
                let _ = unsafe {
                    m.unchecked_advise_range(
                        memmap2::UncheckedAdvice::DontNeed,
                        range.start,
                        range.len(),
                    )
                };
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = range;
    }
}

impl Deref for FileBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            FileBytes::Mapped(m) => m,
            FileBytes::Owned(v) => v,
            FileBytes::Shared(v) => v,
        }
    }
}

/// A held directory lock; dropping it releases the lock.
pub struct FsLock(#[allow(dead_code)] Box<dyn Any + Send + Sync>);

impl Debug for FsLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FsLock")
    }
}

/// The file operations the engine performs. See the [module docs](self).
pub trait FileSystem: Send + Sync + Debug {
    /// Creates `path`, which must not exist, for writing.
    fn create_new(&self, path: &Path) -> io::Result<Box<dyn FsFile>>;
    /// Creates or truncates `path` for writing.
    fn create_truncate(&self, path: &Path) -> io::Result<Box<dyn FsFile>>;
    /// Reads the whole file.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// The whole contents of an immutable file (memory-mapped where the
    /// file system can).
    fn map(&self, path: &Path) -> io::Result<FileBytes>;
    /// Atomically renames `from` to `to`, replacing `to`.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Removes a file.
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// Names of the entries of `dir`.
    fn read_dir(&self, dir: &Path) -> io::Result<Vec<String>>;
    /// Creates `dir` and its missing parents.
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    /// `Ok(true)` for a directory, `Ok(false)` for a file, an error of kind
    /// `NotFound` if nothing exists at `path`.
    fn is_dir(&self, path: &Path) -> io::Result<bool>;
    /// True if a file or directory exists at `path`.
    fn exists(&self, path: &Path) -> bool;
    /// Makes the entries of `dir` (creations, renames, removals) durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// Takes an exclusive lock on `path` (created if missing); `Ok(None)` if
    /// somebody else holds it.
    fn lock(&self, path: &Path) -> io::Result<Option<FsLock>>;
    /// True for the operating system's file system, where the engine may
    /// also use memory-mapped writers directly on the files.
    fn is_native(&self) -> bool {
        false
    }
}

/// The operating system's file system (the default).
#[derive(Clone, Copy, Debug, Default)]
pub struct StdFs;

/// The shared default [`StdFs`] instance.
pub fn std_fs() -> Arc<dyn FileSystem> {
    Arc::new(StdFs)
}

impl FileSystem for StdFs {
    fn create_new(&self, path: &Path) -> io::Result<Box<dyn FsFile>> {
        let f = OpenOptions::new().write(true).create_new(true).open(path)?;
        Ok(Box::new(f))
    }
    fn create_truncate(&self, path: &Path) -> io::Result<Box<dyn FsFile>> {
        let f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        Ok(Box::new(f))
    }
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        std::fs::read(path)
    }
    fn map(&self, path: &Path) -> io::Result<FileBytes> {
        let file = File::open(path)?;
        if file.metadata()?.len() == 0 {
            return Ok(FileBytes::Owned(Vec::new()));
        }
        // SAFETY: run files are immutable once written: the engine never
        // writes to or truncates them again, it only deletes them
        // (unlinking keeps the mapping valid). The mapping is therefore
        // sound unless an outside process truncates or rewrites a file
        // inside the database directory, which is unsupported.
        Ok(FileBytes::Mapped(unsafe { Mmap::map(&file)? }))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }
    fn read_dir(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            names.push(entry?.file_name().to_string_lossy().into_owned());
        }
        Ok(names)
    }
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(dir)
    }
    fn is_dir(&self, path: &Path) -> io::Result<bool> {
        std::fs::metadata(path).map(|m| m.is_dir())
    }
    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        #[cfg(unix)]
        {
            match File::open(dir)?.sync_all() {
                Ok(()) => Ok(()),
                // File systems that cannot sync directories say so with
                // these; there metadata durability is their own business.
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::Unsupported | io::ErrorKind::InvalidInput
                    ) =>
                {
                    Ok(())
                }
                Err(e) => Err(e),
            }
        }
        #[cfg(not(unix))]
        {
            let _ = dir;
            Ok(())
        }
    }
    fn lock(&self, path: &Path) -> io::Result<Option<FsLock>> {
        let file = File::options()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(path)?;
        match file.try_lock() {
            Ok(()) => Ok(Some(FsLock(Box::new(file)))),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => Err(e),
        }
    }
    fn is_native(&self) -> bool {
        true
    }
}

mod fault;
mod mem;

pub use fault::{FaultFs, FaultOp};
pub use mem::MemFs;
