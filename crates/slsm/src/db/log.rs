//! The engine's choice of WAL writer: the mapped writer where the file
//! system can reserve space (no system call per commit), else the buffered
//! one (one `write(2)` per commit group). Both give the same durability.

use std::path::Path;
use std::sync::Arc;

use crate::error::Result;
use crate::fs::FileSystem;
use crate::wal::{MappedWal, WalWriter};

/// The active write-ahead log.
pub(crate) enum LogWriter {
    Mapped(MappedWal),
    Buffered(WalWriter),
}

impl LogWriter {
    /// Creates log `number` at `path`, reserving about `expected_bytes`.
    /// Only the operating system's file system gets the mapped writer; any
    /// other (a test's fault-injecting one) gets the buffered writer
    /// through its own file operations.
    pub fn create(
        fs: &Arc<dyn FileSystem>,
        path: &Path,
        number: u64,
        expected_bytes: u64,
    ) -> Result<LogWriter> {
        if fs.is_native() {
            if let Ok(w) = MappedWal::create(path, number, expected_bytes) {
                return Ok(LogWriter::Mapped(w));
            }
        }
        WalWriter::create_with(&**fs, path, number).map(LogWriter::Buffered)
    }

    pub fn append(&mut self, payload: &[u8]) -> Result<()> {
        match self {
            LogWriter::Mapped(w) => w.append(payload),
            LogWriter::Buffered(w) => w.append(payload),
        }
    }

    /// Bytes written to the log (header and records).
    pub fn len(&self) -> u64 {
        match self {
            LogWriter::Mapped(w) => w.len(),
            LogWriter::Buffered(w) => w.len(),
        }
    }

    /// Hands appended records to the operating system.
    pub fn flush(&mut self) -> Result<()> {
        match self {
            LogWriter::Mapped(w) => w.flush(),
            LogWriter::Buffered(w) => w.flush(),
        }
    }

    /// Makes appended records durable against power loss.
    pub fn sync(&mut self) -> Result<()> {
        match self {
            LogWriter::Mapped(w) => w.sync(),
            LogWriter::Buffered(w) => w.sync(),
        }
    }

    /// Retires the log: everything durable, the file trimmed.
    pub fn finish(self) -> Result<()> {
        match self {
            LogWriter::Mapped(w) => w.finish(),
            LogWriter::Buffered(w) => w.close(),
        }
    }
}
