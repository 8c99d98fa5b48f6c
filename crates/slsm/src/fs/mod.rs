//! The file-system layer: every file operation of the engine goes through a
//! [`FileSystem`], so the same engine runs on
//! * [`StdFs`], the operating system's (the default);
//! * [`MemFs`], in memory (behind [`Options::in_memory`](crate::options::Options::in_memory)),
//!   which also tracks what was made durable, so tests can cut the power
//!   ([`MemFs::crash`]) and see what a machine crash would leave;
//! * [`FaultFs`], a wrapper over any of them that injects I/O errors and
//!   cuts the power after a number of operations.
//!
//! The trait covers exactly what the engine does: create a file and append
//! to it (run files, the manifest), create a write-ahead log
//! ([`LogFile`]: reserved space, positional writes, syncs), read a whole
//! file, open a file for positional reads (run files: never mapped, so a
//! file another process truncates is a failed read, not a signal), rename,
//! remove, list a directory, create and sync a directory, and lock the
//! database directory.

mod direct;
pub mod durable;
mod fault;
mod file_system;
mod lock;
mod mem;
mod pread;
mod sigbus;
mod std_fs;
#[cfg(target_os = "linux")]
mod uring;

pub(crate) use direct::DirectRead;
pub use fault::{FaultFs, FaultOp};
pub use file_system::{Advice, FileSystem, FsFile, FsLock, LogFile, LogSync, RandomAccessFile};
pub use mem::MemFs;
pub use std_fs::{std_fs, StdFs};

/// A log file writing to `file` as [`StdFs`] does (tests hand it a
/// read-only or full file to provoke errors).
#[cfg(test)]
pub(crate) fn log_file_for_test(file: std::fs::File) -> Box<dyn LogFile> {
    std_fs::log_file(file)
}

/// Reads every one of `reads` directly, submitted together (`io_uring`),
/// calling `done(k, bytes)` for each read `k` that returned all its bytes;
/// failed reads are left out. `false`, with nothing read, where the system
/// has no `io_uring` for us: read them another way.
pub(crate) fn read_direct_batch(reads: &[DirectRead], done: impl FnMut(usize, &[u8])) -> bool {
    #[cfg(target_os = "linux")]
    return uring::read_batch(reads, done);
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (reads, done);
        false
    }
}
