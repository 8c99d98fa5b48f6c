//! [`WalWriter`]: appends records to a new log file, through the
//! [`LogFile`] of whatever file system the database runs on.

use std::path::{Path, PathBuf};

use super::format::{
    encode_file_header, encode_record_header_into, encode_record_into, MAX_RECORD_LEN,
    RECORD_HEADER_LEN,
};
use crate::error::{Error, Result};
use crate::fs::durable;
use crate::fs::{FileSystem, LogFile, StdFs};

pub(super) mod sync;

/// Space is reserved in steps of at most this many bytes.
const GROW_STEP: u64 = 4 << 20;
/// Smallest reservation step (logs of tiny test databases).
const MIN_STEP: u64 = 64 << 10;
/// Every this many written bytes, the writeback of what was written so far
/// is started (without waiting), like RocksDB's `wal_bytes_per_sync`: a
/// later `sync` (at the latest when the log is retired, on the write path)
/// then finds little left to write.
const WRITEBACK_STEP: u64 = 256 << 10;
/// A buffer that grew past this (a huge record or group) is released
/// after use, unless [`WalWriter::retain_at_most`] says otherwise.
const MAX_RETAINED_BUF: usize = 1 << 20;

/// Appends records to one write-ahead log file.
///
/// # Durability contract
///
/// * [`append`](Self::append) only encodes the record into a buffer of the
///   writer: a process crash loses it. Do not acknowledge a write on
///   `append` alone.
/// * [`flush`](Self::flush) hands the buffered records to the file system
///   with one write. After it returns `Ok`, they survive a crash of the
///   *process*, not of the machine.
/// * [`sync`](Self::sync) is `flush` and then a sync of the log. After it
///   returns `Ok`, every record survives a machine crash.
/// * [`create`](Self::create) makes the new log itself durable (header
///   synced, directory entry synced), so a synced record never vanishes with
///   its file.
/// * The file's space is reserved ahead of the records and reads as zeros:
///   [`WalReader`](super::WalReader) treats a zero tail as the end of the
///   log. [`close`](Self::close) trims it.
/// * A crash in the middle of a write may leave a partial last record;
///   the reader drops it as a torn tail. Records are therefore atomic.
///
/// # Poisoning
///
/// If any write or sync fails, the writer is *poisoned*: that call and
/// every later one return the same error. The file may hold a partial
/// record, and after a failed sync the kernel may have dropped dirty pages
/// while reporting later syncs as successful, so retrying could
/// acknowledge a write that is not on disk. The engine stops writing to
/// this log: [`retire_damaged`](Self::retire_damaged) cuts the records of
/// the failed call (never acknowledged) off the file and syncs it, and the
/// engine continues in a new log.
///
/// Dropping a writer does not flush it: records appended since the last
/// successful `flush` were never acknowledged and are discarded.
#[derive(Debug)]
pub struct WalWriter {
    file: Box<dyn LogFile>,
    path: PathBuf,
    log_number: u64,
    /// Encoded records not yet handed to the file system.
    buf: Vec<u8>,
    /// Bytes handed to the file system (file header included).
    flushed: u64,
    /// Bytes known to be durable.
    synced: u64,
    /// Bytes of reserved space.
    reserved: u64,
    /// Reservation step: grows to `GROW_STEP` as the log grows.
    step: u64,
    /// Writeback was started for the bytes below this offset.
    writeback_started: u64,
    poisoned: Option<Error>,
    /// Where the records of the call that poisoned the writer begin: the
    /// file is cut there when it is retired.
    good_len: u64,
    /// The most buffer capacity kept between writes.
    retain: usize,
    /// Where the records not yet handed over by a [`flush`](Self::flush)
    /// begin: a big record or group is written out before the flush that
    /// hands it over (see [`append`](Self::append)), and if that call fails
    /// the file is still cut here.
    pending_from: u64,
}

impl WalWriter {
    /// Creates the log file `path` (which must not exist) on the operating
    /// system's file system; see [`create_with`](Self::create_with).
    pub fn create(path: &Path, log_number: u64) -> Result<Self> {
        Self::create_with(&StdFs, path, log_number)
    }

    /// Creates the log file `path` (which must not exist) through `fs`,
    /// writes and syncs its file header for log `log_number`, and syncs the
    /// parent directory. On failure a best effort is made to remove it.
    pub fn create_with(fs: &dyn FileSystem, path: &Path, log_number: u64) -> Result<Self> {
        Self::create_sized(fs, path, log_number, MIN_STEP)
    }

    /// [`create_with`](Self::create_with), reserving space in steps sized
    /// for a log expected to reach about `expected_bytes`.
    pub fn create_sized(
        fs: &dyn FileSystem,
        path: &Path,
        log_number: u64,
        expected_bytes: u64,
    ) -> Result<Self> {
        let file = fs.create_log(path).map_err(|e| Error::io(path, e))?;
        let mut writer = WalWriter {
            file,
            path: path.to_path_buf(),
            log_number,
            buf: Vec::new(),
            flushed: 0,
            synced: 0,
            reserved: 0,
            step: expected_bytes
                .clamp(MIN_STEP, GROW_STEP)
                .next_power_of_two(),
            writeback_started: 0,
            poisoned: None,
            good_len: 0,
            retain: MAX_RETAINED_BUF,
            pending_from: 0,
        };
        writer
            .buf
            .extend_from_slice(&encode_file_header(log_number));
        let made_durable = writer
            .sync()
            .and_then(|()| durable::sync_parent_dir_with(fs, path));
        if let Err(e) = made_durable {
            drop(writer);
            let _ = fs.remove_file(path);
            return Err(e);
        }
        Ok(writer)
    }

    /// Appends one record holding `payload` to the writer's buffer.
    ///
    /// The buffer never grows much past what [`retain_at_most`] allows (the
    /// log's share of the memory budget): past it, the buffered records are
    /// written out, and a record bigger than it is written straight from
    /// `payload` with no copy. Either way nothing is acknowledged before the
    /// [`flush`](Self::flush) that follows, and a failure cuts the file
    /// where this call's records began.
    ///
    /// Returns [`Error::InvalidArgument`] (without poisoning the writer) if
    /// `payload` is longer than [`MAX_RECORD_LEN`], or the poisoning error.
    ///
    /// [`retain_at_most`]: Self::retain_at_most
    pub fn append(&mut self, payload: &[u8]) -> Result<()> {
        self.check_poisoned()?;
        check_payload_len(payload.len())?;
        self.add_record(payload)
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
        self.buf.reserve(total.min(self.retain));
        for p in payloads {
            self.add_record(p)?;
        }
        Ok(())
    }

    fn add_record(&mut self, payload: &[u8]) -> Result<()> {
        if RECORD_HEADER_LEN + payload.len() > self.retain {
            self.write_out()?;
            let mut header = Vec::with_capacity(RECORD_HEADER_LEN);
            encode_record_header_into(&mut header, payload);
            self.write_bytes(&header)?;
            return self.write_bytes(payload);
        }
        if self.buf.len() + RECORD_HEADER_LEN + payload.len() > self.retain {
            self.write_out()?;
        }
        encode_record_into(&mut self.buf, payload);
        Ok(())
    }

    /// Bytes the buffer holds room for.
    #[cfg(test)]
    pub(crate) fn buffer_capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// Keeps at most `bytes` of buffer between writes (what the memory
    /// budget sets aside for the log; default 1 MiB): a bigger group is
    /// written out in pieces, a bigger record straight from its payload.
    pub fn retain_at_most(&mut self, bytes: usize) {
        self.retain = bytes.max(4096);
    }

    /// Hands all buffered records to the file system with one write. After
    /// `Ok`, they survive a process crash.
    pub fn flush(&mut self) -> Result<()> {
        self.check_poisoned()?;
        self.write_out()?;
        self.pending_from = self.flushed;
        if self.buf.capacity() > self.retain {
            self.buf = Vec::new();
        }
        if self.flushed - self.writeback_started >= WRITEBACK_STEP {
            self.file.start_writeback(self.flushed);
            self.writeback_started = self.flushed;
        }
        Ok(())
    }

    /// Writes the buffered records to the file.
    fn write_out(&mut self) -> Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let buf = std::mem::take(&mut self.buf);
        let written = self.write_bytes(&buf);
        self.buf = buf;
        self.buf.clear();
        written
    }

    /// Writes `bytes` at the end of what was written; a failure poisons
    /// the writer, to be cut where the unflushed records began.
    fn write_bytes(&mut self, bytes: &[u8]) -> Result<()> {
        let end = self.flushed + bytes.len() as u64;
        let written = self
            .reserve(end)
            .and_then(|()| self.file.write_at(self.flushed, bytes));
        if let Err(e) = written {
            return Err(self.poison(e, self.pending_from));
        }
        self.flushed = end;
        Ok(())
    }

    /// Reserves space for the log to reach `end` bytes, a step at a time.
    fn reserve(&mut self, end: u64) -> std::io::Result<()> {
        if end <= self.reserved {
            return Ok(());
        }
        let target = end.div_ceil(self.step) * self.step;
        self.file.reserve(target)?;
        self.reserved = target;
        self.step = (self.step * 2).min(GROW_STEP);
        Ok(())
    }

    /// Retires a poisoned log so that the engine can continue in a new one:
    /// cuts off the records of the call that failed (they were never
    /// acknowledged, and their sequence numbers will be used again) and
    /// syncs what is left. An error leaves the writer poisoned; it may be
    /// retried.
    pub fn retire_damaged(&mut self) -> Result<()> {
        self.buf = Vec::new();
        let cut = self.good_len;
        match self.file.truncate(cut) {
            Ok(()) => {
                self.flushed = cut;
                self.pending_from = cut;
                self.synced = cut;
                self.reserved = cut;
                Ok(())
            }
            Err(e) => Err(Error::io(&self.path, e)),
        }
    }

    /// Retires the log: syncs every record and trims the reserved tail.
    pub fn close(mut self) -> Result<()> {
        self.sync()?;
        if self.reserved > self.flushed {
            if let Err(e) = self.file.truncate(self.flushed) {
                return Err(self.poison(e, self.flushed));
            }
        }
        Ok(())
    }

    /// Size of the log in bytes, including the file header and records still
    /// buffered.
    pub fn len(&self) -> u64 {
        self.flushed + self.buf.len() as u64
    }

    /// True if no record has been appended (the log holds only its header).
    pub fn is_empty(&self) -> bool {
        self.len() <= super::format::FILE_HEADER_LEN as u64
    }

    /// Bytes that have reached the file system (survive a process crash).
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

    /// Records `e` as the poisoning error of a call whose records begin at
    /// `call_start`, and returns it. A second failing call (a sync that ran
    /// beside the first, see `begin_sync`) can only move the cut earlier.
    fn poison(&mut self, e: std::io::Error, call_start: u64) -> Error {
        let err = Error::io(&self.path, e);
        self.good_len = match self.poisoned {
            None => call_start,
            Some(_) => self.good_len.min(call_start),
        };
        self.poisoned = Some(err.clone());
        err
    }

    /// Replaces the underlying log file (tests use it to inject I/O errors).
    #[cfg(test)]
    pub(super) fn replace_file_for_test(&mut self, file: Box<dyn LogFile>) {
        self.file = file;
        self.reserved = 0;
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
