//! The interface of the file-system layer: what the engine asks of a file
//! system and of its files (the module docs of `fs/` say what it covers).
//! A leaf of `fs/`: the operating system's, the in-memory and the
//! fault-injecting file systems implement it.

use std::any::Any;
use std::fmt::Debug;
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;

/// A file open for appending (run files and the manifest are written this
/// way, start to end).
pub trait FsFile: Write + Send + Sync + Debug {
    /// Makes the file's data durable (`fdatasync`).
    fn sync_data(&mut self) -> io::Result<()>;
    /// Makes the file's data and metadata durable (`fsync`).
    fn sync_all(&mut self) -> io::Result<()>;
}

/// A write-ahead log file: space is reserved ahead of the writes (so a full
/// disk is an error at reservation, not at a write), records are written at
/// increasing offsets inside it, and [`sync`](LogFile::sync) makes a prefix
/// durable. The reserved tail reads as zeros until written.
///
/// Durability contract, for every implementation: after `write_at` returns
/// `Ok`, the bytes survive a crash of the process (they are in the
/// operating system, or in a [`MemFs`] that outlives the database); after
/// `sync(n)` returns `Ok`, bytes `[0, n)` survive a machine crash.
pub trait LogFile: Send + Sync + Debug {
    /// Grows the file to `len` bytes of allocated, zero-filled space. Never
    /// shrinks it.
    fn reserve(&mut self, len: u64) -> io::Result<()>;
    /// Writes `bytes` at `offset` (inside the reserved space).
    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> io::Result<()>;
    /// A hint: the bytes before `upto` are complete; the file system may
    /// start writing them back now, so a later `sync` finds little to do.
    fn start_writeback(&mut self, upto: u64);
    /// Makes bytes `[0, upto)` durable (`fdatasync`).
    fn sync(&mut self, upto: u64) -> io::Result<()>;
    /// Cuts the file to `len` bytes (dropping unused reserved space) and
    /// makes its data and size durable (`fsync`): the log is retired.
    fn truncate(&mut self, len: u64) -> io::Result<()>;
    /// A handle that syncs this file from another thread while the writer
    /// is not writing, if the file can be synced that way (the default:
    /// it cannot, and every sync goes through [`sync`](Self::sync)).
    fn detached_sync(&self) -> Option<Arc<dyn LogSync>> {
        None
    }
}

/// Makes a log file's bytes durable without the file's writer: the commit
/// pipeline syncs a group's records with its queue unlocked, so writers
/// arriving meanwhile line up for the next group (and `Db::sync` lets
/// writes go on) instead of waiting on the lock for a device flush.
pub trait LogSync: Send + Sync + Debug {
    /// Makes bytes `[0, upto)` of the log durable (`fdatasync`).
    fn sync(&self, upto: u64) -> io::Result<()>;
}

/// A file open for positional reads (run files). Every read is checked: a
/// file that is shorter than asked (another process truncated it, say) is an
/// error for that read, never a signal.
pub trait RandomAccessFile: Send + Sync + Debug {
    /// The file's size when it was opened.
    fn len(&self) -> u64;
    /// True if the file was empty when opened.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Fills `buf` from `offset`; an error (kind `UnexpectedEof`) if the
    /// file ends first.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()>;
    /// `len` bytes from `offset`, in a new buffer (implementations may
    /// skip zeroing it first).
    fn read_vec_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        let mut buf = vec![0u8; len];
        self.read_at(offset, &mut buf)?;
        Ok(buf)
    }
    /// Like [`read_at`](Self::read_at), but the pages read are not kept in
    /// the operating system's page cache: a point read of one block, which
    /// [`StdFs`] reads with `O_DIRECT` where the file system allows it (see
    /// [`read_vec_at_uncached`](Self::read_vec_at_uncached) otherwise).
    fn read_at_uncached(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.read_at(offset, buf)
    }
    /// Like [`read_vec_at`](Self::read_vec_at), but the pages read are not
    /// kept in the operating system's page cache (Linux's `RWF_DONTCACHE`;
    /// a plain read where that is unsupported): for a reader whose own
    /// cache keeps what it wants and whose data the page cache cannot hold.
    fn read_vec_at_uncached(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        self.read_vec_at(offset, len)
    }
    /// Like [`read_vec_at`](Self::read_vec_at), but only if every byte is
    /// already in memory (the operating system's page cache): `Ok(None)` if
    /// the read would wait for the device. Reads that would wait can then be
    /// issued together (see `cache::fetch`).
    fn read_vec_at_if_cached(&self, offset: u64, len: usize) -> io::Result<Option<Vec<u8>>> {
        self.read_vec_at(offset, len).map(Some)
    }
    /// The whole file, if it already lives in memory (a [`MemFs`] file):
    /// readers then use it in place instead of copying blocks into a cache.
    fn in_memory(&self) -> Option<Arc<Vec<u8>>> {
        None
    }
    /// A hint of how the file will be read.
    fn advise(&self, _advice: Advice) {}
    /// The descriptor [`read_at_uncached`](Self::read_at_uncached) reads
    /// through if its reads are direct (`O_DIRECT`): such reads of several
    /// files can be submitted together (`io_uring`).
    fn direct_fd(&self) -> Option<std::os::fd::RawFd> {
        None
    }
}

/// How a [`RandomAccessFile`] will be read (`posix_fadvise`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Advice {
    /// Point reads: no read-ahead (it would only evict other pages).
    Random,
    /// One pass from start to end: read ahead aggressively.
    Sequential,
    /// `[offset, offset + len)` will not be read again soon: drop it from
    /// the page cache (a compaction behind its read position).
    DontNeed(u64, u64),
}

/// A held directory lock; dropping it releases the lock.
pub struct FsLock(#[allow(dead_code)] Box<dyn Any + Send + Sync>);

impl FsLock {
    /// Wraps whatever keeps the lock held until it is dropped.
    pub fn new(guard: impl Any + Send + Sync) -> FsLock {
        FsLock(Box::new(guard))
    }
}

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
    /// Creates the log file `path`, which must not exist.
    fn create_log(&self, path: &Path) -> io::Result<Box<dyn LogFile>>;
    /// Reads the whole file.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// Opens `path` for positional reads.
    fn open_random(&self, path: &Path) -> io::Result<Box<dyn RandomAccessFile>>;
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
    /// Makes `to` a second name of the file `from` (a hard link). File
    /// systems without links return an error of kind `Unsupported`, and
    /// callers copy instead.
    fn hard_link(&self, _from: &Path, _to: &Path) -> io::Result<()> {
        Err(io::Error::new(io::ErrorKind::Unsupported, "no hard links"))
    }
}
