//! The directory lock of [`StdFs`](super::StdFs): a POSIX record lock
//! (`fcntl(F_SETLK)`) on the `LOCK` file, plus a table of the files this
//! process has locked. This is the lock LevelDB and RocksDB take.
//!
//! Why not `flock(2)` (what `File::try_lock` takes): a `flock` lock belongs
//! to the open file, and every process forked while it is held shares that
//! file until it execs or exits. A child of `fork` without `exec` (Python's
//! `multiprocessing`, a server's worker) kept the database locked after its
//! parent closed it, and even `posix_spawn` from another thread held it for
//! the instant between fork and exec: a close and reopen in the parent
//! failed with "locked by another process". A record lock belongs to the
//! process and is never inherited.
//!
//! Its catch, which the table answers: the process holds one record lock
//! per file, so a second open of the same directory in this process would
//! be granted it, and closing any descriptor of the file releases it. The
//! table is consulted before the file is opened, and a descriptor of a
//! locked file is never opened and closed beside the holder's.
//!
//! Record locks and `flock` locks do not see each other on Linux: a
//! process running an slsm from before this lock does not exclude one
//! running it, and the other way round.

use std::fs::File;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::sync::Mutex;

/// A file by device and inode.
type FileId = (u64, u64);

/// The files this process holds locked.
static LOCKED: Mutex<Vec<FileId>> = Mutex::new(Vec::new());

/// Descriptors opened on a file this process had locked under a name that
/// changed between the check and the open (another process renamed a
/// file over it): closing them would release the lock, so they stay open.
static KEPT_OPEN: Mutex<Vec<File>> = Mutex::new(Vec::new());

/// A held lock: released when dropped.
#[derive(Debug)]
pub(super) struct ProcessLock {
    file: Option<File>,
    id: FileId,
}

impl Drop for ProcessLock {
    fn drop(&mut self) {
        let mut locked = lock_table();
        // Closed before the entry goes: once it is gone another open in
        // this process may lock the file, and this close would release
        // that lock if it came after.
        drop(self.file.take());
        locked.retain(|id| *id != self.id);
    }
}

fn lock_table() -> std::sync::MutexGuard<'static, Vec<FileId>> {
    // A panic while the table was held cannot leave it half-changed.
    LOCKED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Locks `path` (created if missing) for this process; `Ok(None)` if this
/// process or another holds it.
pub(super) fn lock_file(path: &Path) -> io::Result<Option<ProcessLock>> {
    let mut locked = lock_table();
    match std::fs::metadata(path) {
        Ok(m) if locked.contains(&(m.dev(), m.ino())) => return Ok(None),
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let file = File::options()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)?;
    let m = file.metadata()?;
    let id = (m.dev(), m.ino());
    if locked.contains(&id) {
        KEPT_OPEN
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(file);
        return Ok(None);
    }
    if !set_write_lock(&file)? {
        return Ok(None);
    }
    locked.push(id);
    Ok(Some(ProcessLock {
        file: Some(file),
        id,
    }))
}

/// Takes a write lock on the whole of `file` without waiting; false if
/// another process holds a lock on it.
fn set_write_lock(file: &File) -> io::Result<bool> {
    // SAFETY: `flock` is a plain C struct; all zeroes is a valid value
    // (start 0 and length 0: the whole file, whatever its size).
    let mut request: libc::flock = unsafe { std::mem::zeroed() };
    request.l_type = libc::F_WRLCK as libc::c_short;
    request.l_whence = libc::SEEK_SET as libc::c_short;
    loop {
        // SAFETY: the descriptor is open for the call (borrowed from
        // `file`), and `request` is a valid `flock` it only reads.
        let r = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLK, &request) };
        if r == 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EACCES | libc::EAGAIN) => return Ok(false),
            _ => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether a forked child process can take the lock (and drops it).
    fn another_process_can_lock(path: &Path) -> bool {
        use std::os::unix::io::FromRawFd;
        let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: the child calls only async-signal-safe functions (open,
        // fcntl, _exit; `set_write_lock` allocates nothing) on a path made
        // before the fork, and answers through its exit status.
        let child = unsafe { libc::fork() };
        assert!(child >= 0, "fork failed");
        if child == 0 {
            // SAFETY: as above; the descriptor is the child's own, and
            // `_exit` leaves it to the kernel to close.
            unsafe {
                let fd = libc::open(c_path.as_ptr(), libc::O_RDWR);
                let file = std::mem::ManuallyDrop::new(File::from_raw_fd(fd));
                let locked = fd >= 0 && matches!(set_write_lock(&file), Ok(true));
                libc::_exit(if locked { 0 } else { 1 });
            }
        }
        let mut status = 0;
        // SAFETY: waits for the child forked above.
        unsafe { libc::waitpid(child, &mut status, 0) };
        assert!(libc::WIFEXITED(status));
        libc::WEXITSTATUS(status) == 0
    }

    #[test]
    fn one_holder_at_a_time_in_and_across_processes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("LOCK");
        let held = lock_file(&path).unwrap().expect("free");
        assert!(!another_process_can_lock(&path));
        assert!(
            lock_file(&path).unwrap().is_none(),
            "a second open in this process"
        );
        // Refusing the second open must not have released the lock.
        assert!(!another_process_can_lock(&path));
        drop(held);
        assert!(another_process_can_lock(&path), "released on drop");
        assert!(lock_file(&path).unwrap().is_some());
    }

    #[test]
    fn a_forked_child_does_not_hold_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("LOCK");
        let held = lock_file(&path).unwrap().expect("free");
        // SAFETY: the child only sleeps and exits (`_exit`: no destructors,
        // no atexit handlers), which is safe after fork in a threaded
        // process.
        let child = unsafe { libc::fork() };
        assert!(child >= 0, "fork failed");
        if child == 0 {
            // SAFETY: async-signal-safe calls only, in the forked child.
            unsafe {
                libc::usleep(500_000);
                libc::_exit(0);
            }
        }
        drop(held);
        // The child is alive and has every descriptor the parent had: with
        // `flock` it would still hold the lock.
        let again = lock_file(&path).unwrap();
        let mut status = 0;
        // SAFETY: waits for the child forked above.
        unsafe { libc::waitpid(child, &mut status, 0) };
        assert!(again.is_some(), "the forked child held the lock");
    }
}
