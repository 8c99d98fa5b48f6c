//! [`WalWriter`]: appends records to a new log file.

use std::io;
use std::path::{Path, PathBuf};

use super::{encode_file_header, encode_record_into, MAX_RECORD_LEN, RECORD_HEADER_LEN};
use crate::error::{Error, Result};
use crate::fs::{FileSystem, FsFile, StdFs};
use crate::fsutil;

/// Initial capacity of the append buffer.
const INITIAL_BUF_CAPACITY: usize = 64 * 1024;
/// After a flush, a buffer that grew beyond this is released so that one
/// huge record does not pin its memory for the life of the log.
const MAX_RETAINED_BUF_CAPACITY: usize = 4 * 1024 * 1024;

/// Appends records to one write-ahead log file.
///
/// # Durability contract
///
/// * [`append`](Self::append) only encodes the record into an in-memory
///   buffer. Nothing has reached the operating system: a process crash loses
///   it. Do not acknowledge a write on `append` alone.
/// * [`flush`](Self::flush) hands every buffered byte to the operating system
///   with a single `write_all`. After it returns `Ok`, the records survive a
///   crash of the *process*, but not of the machine (power loss, kernel
///   panic).
/// * [`sync`](Self::sync) is `flush` followed by `fdatasync`. After it returns
///   `Ok`, the records survive a machine crash.
/// * [`create`](Self::create) makes the new, empty log itself durable (file
///   header synced and the directory entry synced), so a synced record is
///   never lost because its file vanished.
/// * A crash in the middle of `flush`/`sync` may leave a partial last record;
///   [`WalReader`](super::WalReader) drops it as a torn tail. Records are
///   therefore atomic: each is recovered whole or not at all, and a record is
///   only recovered if every earlier record is.
///
/// # Poisoning
///
/// If any write or sync fails, the writer is *poisoned*: that call and every
/// later call (`append`, `flush`, `sync`, ...) return the same error. The
/// file may hold a partial record, and after a failed `fsync` the kernel may
/// have dropped the dirty pages while reporting later syncs as successful,
/// so retrying could acknowledge a write that is not on disk. The engine must
/// stop accepting writes and start a new log (or reopen) instead.
///
/// Dropping a writer does not flush it: records appended since the last
/// successful `flush` were never acknowledged and are discarded. Use
/// [`close`](Self::close) to sync before dropping.
#[derive(Debug)]
pub struct WalWriter {
    file: Box<dyn FsFile>,
    path: PathBuf,
    log_number: u64,
    /// Encoded bytes not yet handed to the OS.
    buf: Vec<u8>,
    /// Bytes handed to the OS so far (file header included).
    flushed: u64,
    /// Bytes known to be durable (synced) so far.
    synced: u64,
    /// The error that poisoned the writer, if any.
    poisoned: Option<Error>,
}

impl WalWriter {
    /// Creates the log file `path` (which must not exist), writes and syncs
    /// its file header for log `log_number`, and syncs the parent directory.
    ///
    /// Fails with [`Error::Io`] if the file already exists or cannot be
    /// written; in the latter case a best effort is made to remove it.
    pub fn create(path: &Path, log_number: u64) -> Result<Self> {
        Self::create_with(&StdFs, path, log_number)
    }

    /// [`create`](Self::create) through the file system `fs`.
    pub fn create_with(fs: &dyn FileSystem, path: &Path, log_number: u64) -> Result<Self> {
        let file = fs.create_new(path).map_err(|e| Error::io(path, e))?;
        let mut writer = WalWriter {
            file,
            path: path.to_path_buf(),
            log_number,
            buf: Vec::with_capacity(INITIAL_BUF_CAPACITY),
            flushed: 0,
            synced: 0,
            poisoned: None,
        };
        writer
            .buf
            .extend_from_slice(&encode_file_header(log_number));
        let made_durable = writer
            .sync()
            .and_then(|()| fsutil::sync_parent_dir_with(fs, path));
        if let Err(e) = made_durable {
            drop(writer);
            let _ = fs.remove_file(path);
            return Err(e);
        }
        Ok(writer)
    }

    /// Appends one record holding `payload` to the in-memory buffer.
    ///
    /// Returns [`Error::InvalidArgument`] (without poisoning the writer) if
    /// `payload` is longer than [`MAX_RECORD_LEN`], or the poisoning error.
    pub fn append(&mut self, payload: &[u8]) -> Result<()> {
        self.check_poisoned()?;
        check_payload_len(payload.len())?;
        encode_record_into(&mut self.buf, payload);
        Ok(())
    }

    /// Appends one record per payload, in order. Either all are appended or,
    /// if one is too large, none is.
    pub fn append_many(&mut self, payloads: &[&[u8]]) -> Result<()> {
        self.check_poisoned()?;
        let mut total = 0usize;
        for p in payloads {
            check_payload_len(p.len())?;
            total = total.saturating_add(RECORD_HEADER_LEN + p.len());
        }
        self.buf.reserve(total);
        for p in payloads {
            encode_record_into(&mut self.buf, p);
        }
        Ok(())
    }

    /// Hands all buffered records to the operating system with one
    /// `write_all`. After `Ok`, they survive a process crash.
    pub fn flush(&mut self) -> Result<()> {
        self.check_poisoned()?;
        if self.buf.is_empty() {
            return Ok(());
        }
        if let Err(e) = self.file.write_all(&self.buf) {
            return Err(self.poison(e));
        }
        self.flushed += self.buf.len() as u64;
        self.buf.clear();
        if self.buf.capacity() > MAX_RETAINED_BUF_CAPACITY {
            self.buf = Vec::with_capacity(INITIAL_BUF_CAPACITY);
        }
        Ok(())
    }

    /// [`flush`](Self::flush), then `fdatasync`. After `Ok`, every record
    /// appended so far survives a machine crash. Skips the system call when
    /// nothing was written since the last successful sync.
    pub fn sync(&mut self) -> Result<()> {
        self.flush()?;
        if self.synced == self.flushed {
            return Ok(());
        }
        if let Err(e) = self.file.sync_data() {
            return Err(self.poison(e));
        }
        self.synced = self.flushed;
        Ok(())
    }

    /// Syncs everything and closes the file.
    pub fn close(mut self) -> Result<()> {
        self.sync()
    }

    /// Size of the log in bytes, including the file header and records still
    /// buffered in memory.
    pub fn len(&self) -> u64 {
        self.flushed + self.buf.len() as u64
    }

    /// True if no record has been appended (the log holds only its header).
    pub fn is_empty(&self) -> bool {
        self.len() <= super::FILE_HEADER_LEN as u64
    }

    /// Bytes that have reached the OS (survive a process crash).
    pub fn flushed_len(&self) -> u64 {
        self.flushed
    }

    /// Bytes that are known to be durable (survive a machine crash).
    pub fn synced_len(&self) -> u64 {
        self.synced
    }

    /// The log file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The log number written in the file header.
    pub fn log_number(&self) -> u64 {
        self.log_number
    }

    /// The error that poisoned this writer, if any.
    pub fn poisoned(&self) -> Option<&Error> {
        self.poisoned.as_ref()
    }

    fn check_poisoned(&self) -> Result<()> {
        match &self.poisoned {
            Some(e) => Err(e.clone()),
            None => Ok(()),
        }
    }

    /// Records `e` as the poisoning error and returns it.
    fn poison(&mut self, e: io::Error) -> Error {
        let err = Error::io(&self.path, e);
        self.poisoned = Some(err.clone());
        err
    }

    /// Replaces the underlying file (tests use it to inject I/O errors).
    #[cfg(test)]
    pub(super) fn replace_file_for_test(&mut self, file: std::fs::File) {
        self.file = Box::new(file);
    }
}

/// Rejects payloads larger than [`MAX_RECORD_LEN`].
pub(super) fn check_payload_len(len: usize) -> Result<()> {
    if len > MAX_RECORD_LEN {
        return Err(Error::InvalidArgument(format!(
            "WAL record of {len} bytes exceeds the limit of {MAX_RECORD_LEN} bytes; \
             split the write batch"
        )));
    }
    Ok(())
}
