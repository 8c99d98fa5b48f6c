//! [`StdFs`]: the operating system's file system, and its log file, which
//! writes small records through a shared memory mapping.
//!
//! Copying a record into a `MAP_SHARED` mapping puts it in the kernel's
//! page cache at once: it survives a crash of the process exactly like a
//! `write(2)` would, without a system call per commit (measured: the
//! single-put write path spends about half its time in that system call
//! otherwise). Records of a page or more go through `pwrite(2)` instead,
//! which is cheaper than taking a fault on every fresh page of the map.
//! Space is reserved with `fallocate`, so a full disk is an error at
//! reservation, never a `SIGBUS` at a write into the map; where the file
//! system cannot reserve (no `fallocate`), every write is a `pwrite(2)`.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;

use memmap2::{MmapMut, MmapOptions};

use super::file_system::{Advice, FileSystem, FsFile, FsLock, LogFile, LogSync, RandomAccessFile};
use super::sigbus::Guard;

/// The operating system's file system (the default).
#[derive(Clone, Copy, Debug, Default)]
pub struct StdFs;

/// The shared default [`StdFs`] instance.
pub fn std_fs() -> Arc<dyn FileSystem> {
    Arc::new(StdFs)
}

impl FsFile for File {
    fn sync_data(&mut self) -> io::Result<()> {
        File::sync_data(self)
    }
    fn sync_all(&mut self) -> io::Result<()> {
        File::sync_all(self)
    }
}

/// Bytes a new file may hold dirty in the page cache before their
/// writeback is started (RocksDB's `bytes_per_sync`): a big flush or merge
/// then writes steadily instead of leaving hundreds of megabytes for the
/// final `fsync` (and for a memory cgroup to account as dirty).
const WRITEBACK_STEP: u64 = 1 << 20;

/// A new file written start to end (a run file): appends, with the
/// writeback of what was written started every [`WRITEBACK_STEP`].
#[derive(Debug)]
struct StreamingFile {
    file: File,
    written: u64,
    writeback_started: u64,
}

impl StreamingFile {
    fn new(file: File) -> StreamingFile {
        StreamingFile {
            file,
            written: 0,
            writeback_started: 0,
        }
    }
}

impl io::Write for StreamingFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.written += n as u64;
        if self.written - self.writeback_started >= WRITEBACK_STEP {
            use std::os::fd::AsRawFd;
            let (from, len) = (
                self.writeback_started,
                self.written - self.writeback_started,
            );
            // SAFETY: `sync_file_range` only reads its integer arguments; the
            // descriptor is owned by `self.file` and open. A hint: errors
            // surface at the `fsync` that ends every file.
            unsafe {
                libc::sync_file_range(
                    self.file.as_raw_fd(),
                    from as i64,
                    len as i64,
                    libc::SYNC_FILE_RANGE_WRITE,
                )
            };
            self.writeback_started = self.written;
        }
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl FsFile for StreamingFile {
    fn sync_data(&mut self) -> io::Result<()> {
        self.file.sync_data()
    }
    fn sync_all(&mut self) -> io::Result<()> {
        self.file.sync_all()
    }
}

impl FileSystem for StdFs {
    fn create_new(&self, path: &Path) -> io::Result<Box<dyn FsFile>> {
        let f = OpenOptions::new().write(true).create_new(true).open(path)?;
        Ok(Box::new(StreamingFile::new(f)))
    }
    fn create_truncate(&self, path: &Path) -> io::Result<Box<dyn FsFile>> {
        let f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        Ok(Box::new(f))
    }
    fn create_log(&self, path: &Path) -> io::Result<Box<dyn LogFile>> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)?;
        Ok(Box::new(MappedLog::new(file)))
    }
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        std::fs::read(path)
    }
    fn open_random(&self, path: &Path) -> io::Result<Box<dyn RandomAccessFile>> {
        let file = open_noatime(path)?;
        let len = file.metadata()?.len();
        Ok(Box::new(StdRandomFile {
            file,
            len,
            cachestat: std::sync::atomic::AtomicBool::new(true),
            direct: std::sync::OnceLock::new(),
            direct_refused: std::sync::atomic::AtomicBool::new(false),
        }))
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }
    fn hard_link(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::hard_link(from, to)
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
        match File::open(dir)?.sync_all() {
            Ok(()) => Ok(()),
            // File systems that cannot sync directories say so with these;
            // there metadata durability is their own business.
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
    /// A POSIX record lock, which a forked child never inherits (see
    /// `fs::lock`).
    fn lock(&self, path: &Path) -> io::Result<Option<FsLock>> {
        Ok(super::lock::lock_file(path)?.map(FsLock::new))
    }
}

/// Opens `path` to read without updating its access time where the
/// process may (`O_NOATIME`: it owns the file or has `CAP_FOWNER`), else
/// plainly. Run files are read at random, a block per lookup: checking
/// whether the access time is due costs every `pread` about 0.09 us of
/// ~0.9 (measured on 2 KiB reads from the page cache), and nothing of
/// slsm's reads the access time.
fn open_noatime(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOATIME)
        .open(path)
    {
        Err(e) if e.raw_os_error() == Some(libc::EPERM) => File::open(path),
        other => other,
    }
}

/// The log file of [`StdFs`] over an open file.
#[cfg(test)]
pub(super) fn log_file(file: File) -> Box<dyn LogFile> {
    Box::new(MappedLog::new(file))
}

/// A file of [`StdFs`] open for positional reads (`pread(2)`; never mapped,
/// so a file truncated by another process is a failed read, not a signal).
#[derive(Debug)]
struct StdRandomFile {
    file: File,
    len: u64,
    /// The kernel answers `cachestat(2)`; cleared the first time it does
    /// not.
    cachestat: std::sync::atomic::AtomicBool,
    /// The file opened a second time with `O_DIRECT`, for the reads that
    /// bypass the page cache (`super::direct`): opened at the first such
    /// read; `None` if the file system refuses direct reads.
    direct: std::sync::OnceLock<Option<File>>,
    /// A direct read of this file failed with `EINVAL`: read it plainly.
    direct_refused: std::sync::atomic::AtomicBool,
}

impl StdRandomFile {
    /// The `O_DIRECT` descriptor, if direct reads work on this file.
    fn direct(&self) -> Option<&File> {
        if self
            .direct_refused
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            return None;
        }
        self.direct
            .get_or_init(|| super::direct::reopen_direct(&self.file))
            .as_ref()
    }
}

impl RandomAccessFile for StdRandomFile {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.file.read_exact_at(buf, offset)
    }

    fn read_at_uncached(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        if let Some(direct) = self.direct() {
            match super::direct::read_into(direct, offset, buf) {
                // The file system opened the file directly but will not
                // read it so (an alignment it wants larger than ours, say):
                // read it plainly from now on.
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                    (self.direct_refused).store(true, std::sync::atomic::Ordering::Relaxed)
                }
                done => return done,
            }
        }
        super::pread::read_into(&self.file, offset, buf, false)
    }

    fn read_vec_at(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        super::pread::read_vec(&self.file, offset, len, true)
    }

    fn read_vec_at_uncached(&self, offset: u64, len: usize) -> io::Result<Vec<u8>> {
        super::pread::read_vec(&self.file, offset, len, false)
    }

    fn direct_fd(&self) -> Option<std::os::fd::RawFd> {
        use std::os::fd::AsRawFd;
        self.direct().map(|f| f.as_raw_fd())
    }

    fn read_vec_at_if_cached(&self, offset: u64, len: usize) -> io::Result<Option<Vec<u8>>> {
        use std::sync::atomic::Ordering;
        if !self.cachestat.load(Ordering::Relaxed) || len == 0 {
            return self.read_vec_at(offset, len).map(Some);
        }
        match page_cache_holds(&self.file, offset, len as u64) {
            // Evicted between the two calls: the read waits, which is only
            // slower, never wrong.
            Ok(true) => self.read_vec_at(offset, len).map(Some),
            Ok(false) => Ok(None),
            Err(_) => {
                // No cachestat(2) (kernel before 6.5, or a seccomp filter):
                // every read is "ready" and is read in place, as before the
                // fetch existed.
                self.cachestat.store(false, Ordering::Relaxed);
                self.read_vec_at(offset, len).map(Some)
            }
        }
    }

    fn advise(&self, advice: Advice) {
        use std::os::fd::AsRawFd;
        let (offset, len, how) = match advice {
            Advice::Random => (0, 0, libc::POSIX_FADV_RANDOM),
            Advice::Sequential => (0, 0, libc::POSIX_FADV_SEQUENTIAL),
            Advice::DontNeed(offset, len) => (offset as i64, len as i64, libc::POSIX_FADV_DONTNEED),
        };
        // SAFETY: `posix_fadvise` only reads its integer arguments; the
        // descriptor is owned by `self.file` and open. It is a hint: the
        // result is ignored.
        let _ = unsafe { libc::posix_fadvise(self.file.as_raw_fd(), offset, len, how) };
    }
}

/// Whether every page of `[offset, offset + len)` of `file` is in the page
/// cache, asked with `cachestat(2)` (Linux 6.5), which, unlike a `preadv2`
/// with `RWF_NOWAIT`, starts no read: measured here, that flag submitted
/// the missing pages' read on the calling thread (~37 us each, the
/// virtualized disk's doorbell), which serialized the very reads `fetch`
/// hands to its pool.
fn page_cache_holds(file: &File, offset: u64, len: u64) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    #[repr(C)]
    struct Range {
        off: u64,
        len: u64,
    }
    #[repr(C)]
    #[derive(Default)]
    struct CacheStat {
        nr_cache: u64,
        nr_dirty: u64,
        nr_writeback: u64,
        nr_evicted: u64,
        nr_recently_evicted: u64,
    }
    /// The same number on every architecture (the unified syscall table).
    const SYS_CACHESTAT: libc::c_long = 451;
    let range = Range { off: offset, len };
    let mut stat = CacheStat::default();
    // SAFETY: `range` and `stat` are live, properly laid out (`repr(C)`,
    // the kernel's `struct cachestat_range` and `struct cachestat`) for the
    // duration of the call; the kernel reads the first and writes the
    // second. The descriptor is owned by `file` and open.
    let r = unsafe {
        libc::syscall(
            SYS_CACHESTAT,
            file.as_raw_fd(),
            &range as *const Range,
            &mut stat as *mut CacheStat,
            0u32,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    let page = page_size();
    let first = offset / page;
    let last = (offset + len - 1) / page;
    Ok(stat.nr_cache > last - first)
}

fn page_size() -> u64 {
    static SIZE: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    // SAFETY: `sysconf` only reads its integer argument.
    *SIZE.get_or_init(|| match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        n if n > 0 => n as u64,
        _ => PAGE,
    })
}

/// Writes smaller than this are copied into the map; larger ones use
/// `pwrite(2)` (measured: a 64-entry batch of 116-byte entries appends ~9%
/// faster that way; single small records are faster mapped).
const WRITE_CALL_MIN: usize = 4096;
/// Smallest mapping (address space only; file space is reserved as asked).
const MIN_MAP_LEN: u64 = 64 << 20;
/// Page size assumed for writeback ranges.
const PAGE: u64 = 4096;

/// The log file of [`StdFs`]: a file with reserved space, written through
/// a shared mapping (see the module docs).
#[derive(Debug)]
struct MappedLog {
    file: File,
    /// `None` until space is reserved, and for good where `fallocate` is
    /// not supported or no [`Guard`] is to be had (then every write is a
    /// `pwrite`).
    map: Option<MmapMut>,
    /// Keeps a truncation of the file by another process from killing us
    /// with `SIGBUS` while we write through `map`.
    guard: Option<Guard>,
    map_len: u64,
    reserved: u64,
    /// `fallocate` failed as unsupported: never map.
    plain: bool,
    /// Writeback was started (and the pages unmapped) below this offset.
    writeback_started: u64,
    /// The same file, for syncs from another thread (Linux only: elsewhere
    /// pages written through the map need `msync` of the writer's map).
    detached: Option<Arc<FileSync>>,
}

/// Syncs a log through its own descriptor (a `dup` of the writer's): on
/// Linux `fdatasync` of any descriptor of the file writes back every dirty
/// page of it, those written through the map included.
///
/// Every sync of the log, the writer's own too, goes through here one at a
/// time, and a failure is remembered: the kernel reports a writeback error
/// to one `fdatasync` of a file description only, so a second sync running
/// beside a failed one, or after it, could report success for pages that
/// were dropped.
#[derive(Debug)]
struct FileSync {
    file: File,
    failed: parking_lot::Mutex<Option<String>>,
}

impl LogSync for FileSync {
    fn sync(&self, _upto: u64) -> io::Result<()> {
        let mut failed = self.failed.lock();
        if let Some(why) = failed.as_ref() {
            return Err(io::Error::other(format!(
                "an earlier sync of this log failed: {why}"
            )));
        }
        let outcome = self.file.sync_data();
        if let Err(e) = &outcome {
            *failed = Some(e.to_string());
        }
        outcome
    }
}

impl MappedLog {
    fn new(file: File) -> MappedLog {
        let detached = if cfg!(target_os = "linux") {
            file.try_clone().ok().map(|file| {
                Arc::new(FileSync {
                    file,
                    failed: parking_lot::Mutex::new(None),
                })
            })
        } else {
            None
        };
        MappedLog {
            file,
            detached,
            map: None,
            guard: None,
            map_len: 0,
            reserved: 0,
            plain: false,
            writeback_started: 0,
        }
    }

    fn remap(&mut self, len: u64) -> io::Result<()> {
        self.guard = None;
        self.map = None;
        // SAFETY: the file is created and owned by this log; nothing in the
        // engine truncates it while the log lives (logs are truncated only
        // when retired, after the last write). The mapping may extend past
        // the end of the file, but writes only touch bytes below `reserved`,
        // which `fallocate` has allocated, so no access faults past the end;
        // if another process truncates the file, the guard turns the fault
        // into a failed write.
        let map = unsafe { MmapOptions::new().len(len as usize).map_mut(&self.file)? };
        match Guard::new(map.as_ptr(), map.len()) {
            Some(guard) => {
                self.guard = Some(guard);
                self.map = Some(map);
                self.map_len = len;
            }
            None => self.plain = true,
        }
        Ok(())
    }

    /// Stops writing through the map for good (it may hold pages that
    /// are no longer the file's).
    fn unmap(&mut self) {
        self.map = None;
        self.guard = None;
        self.map_len = 0;
    }

    /// Drops `[from, to)` (whole pages behind the writer) from this
    /// process' page tables before their writeback starts. Writeback has to
    /// write-protect every mapped dirty page, one TLB shootdown per page (an
    /// interrupt to each core running the process: measured ~10% of the
    /// writer's time on 8-byte entries); unmapping the range first costs one
    /// batched shootdown and leaves writeback nothing to protect. It also
    /// keeps the log's pages out of the resident set.
    fn unmap_written(&mut self, from: u64, to: u64) {
        #[cfg(target_os = "linux")]
        if let Some(map) = &self.map {
            let to = to.min(self.map_len);
            if from < to {
                // SAFETY: the range lies inside the map and behind every
                // write (the log only writes at or after `to`), and nothing
                // reads the map. On a shared file mapping MADV_DONTNEED only
                // removes the page-table entries: the pages, and their dirty
                // state, stay in the page cache, and a later access would
                // fault the same bytes back in.
                let _ = unsafe {
                    map.unchecked_advise_range(
                        memmap2::UncheckedAdvice::DontNeed,
                        from as usize,
                        (to - from) as usize,
                    )
                };
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (from, to);
    }
}

impl LogFile for MappedLog {
    fn reserve(&mut self, len: u64) -> io::Result<()> {
        if len <= self.reserved || self.plain {
            return Ok(());
        }
        use std::os::fd::AsRawFd;
        let (offset, more) = (self.reserved as i64, (len - self.reserved) as i64);
        // SAFETY: `fallocate` only reads its integer arguments; the
        // descriptor is owned by `self.file` and open during the call.
        let rc = unsafe { libc::fallocate(self.file.as_raw_fd(), 0, offset, more) };
        if rc != 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EOPNOTSUPP) && self.reserved == 0 {
                self.plain = true; // no reservations here: write with pwrite
                return Ok(());
            }
            return Err(e);
        }
        self.reserved = len;
        if len > self.map_len {
            self.remap(len.saturating_mul(2).max(MIN_MAP_LEN))?;
        }
        Ok(())
    }

    fn write_at(&mut self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        let end = offset + bytes.len() as u64;
        match &mut self.map {
            Some(map) if bytes.len() < WRITE_CALL_MIN && end <= self.reserved => {
                map[offset as usize..end as usize].copy_from_slice(bytes);
                if self.guard.as_ref().is_some_and(Guard::take_damage) {
                    self.unmap();
                    self.plain = true;
                    return Err(io::Error::other(
                        "the log file was truncated by another process while it was written",
                    ));
                }
                Ok(())
            }
            _ => self.file.write_all_at(bytes, offset),
        }
    }

    fn start_writeback(&mut self, upto: u64) {
        let from = self.writeback_started;
        let to = upto / PAGE * PAGE;
        if to <= from {
            return;
        }
        self.unmap_written(from, to);
        use std::os::fd::AsRawFd;
        // SAFETY: `sync_file_range` only reads its integer arguments; the
        // descriptor is owned by `self.file` and open during the call. It is
        // a hint: an error is ignored and the next `sync` reports it (the
        // kernel keeps writeback errors for `fsync`).
        unsafe {
            libc::sync_file_range(
                self.file.as_raw_fd(),
                from as i64,
                (to - from) as i64,
                libc::SYNC_FILE_RANGE_WRITE,
            )
        };
        self.writeback_started = to;
    }

    fn sync(&mut self, upto: u64) -> io::Result<()> {
        // On Linux, `msync(MS_SYNC)` of a shared file mapping *is*
        // `fdatasync` of the range (`vfs_fsync_range`), and `fdatasync`
        // writes back the pages dirtied through the map as well (the file
        // systems track them through write faults): one call is enough, and
        // each costs a flush of the device's cache. Elsewhere POSIX asks for
        // `msync` before the file's sync.
        #[cfg(not(target_os = "linux"))]
        if let Some(map) = &self.map {
            let from = self.writeback_started.min(upto) as usize;
            let end = (upto.min(self.map_len)) as usize;
            if from < end {
                map.flush_range(from, end - from)?;
            }
        }
        if let Some(detached) = &self.detached {
            return LogSync::sync(&**detached, upto);
        }
        #[cfg(target_os = "linux")]
        let _ = upto;
        self.file.sync_data()
    }

    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.unmap();
        self.file.set_len(len)?;
        self.reserved = self.reserved.min(len);
        self.file.sync_all()
    }
    fn detached_sync(&self) -> Option<Arc<dyn LogSync>> {
        self.detached
            .as_ref()
            .map(|s| Arc::clone(s) as Arc<dyn LogSync>)
    }
}
