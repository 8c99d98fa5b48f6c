//! The write-ahead log (WAL): an append-only file of opaque, checksummed
//! records. The engine writes one encoded write batch per record before it
//! applies the batch to the memory buffer, and replays the log on open.
//!
//! # File format
//!
//! Every log file starts with a 24-byte file header, followed by records
//! packed back to back (no block padding):
//!
//! ```text
//! file header (24 bytes, all integers little-endian)
//! +-----------------+-------------+----------------+-----------------+
//! | magic           | version     | log number     | header CRC      |
//! | "SLSMWAL\0" 8 B | u32 = 1     | u64            | u32, masked     |
//! +-----------------+-------------+----------------+-----------------+
//!   0                 8             12               20              24
//!
//! record (8-byte header + payload), repeated
//! +-----------------+-------------+------------------------------+
//! | CRC             | length      | payload                      |
//! | u32, masked     | u32         | `length` bytes               |
//! +-----------------+-------------+------------------------------+
//! ```
//!
//! * The header CRC is CRC32C over bytes `0..20` of the file header; the log
//!   number in it detects a log from another program or a file renamed to
//!   the wrong number.
//! * A record's CRC is CRC32C over the 4 length bytes followed by the payload,
//!   so a damaged length is detected too.
//! * CRCs are stored *masked* (rotated and offset, as in LevelDB) so that a
//!   payload which itself contains CRCs of its own bytes does not produce
//!   accidental matches.
//! * Payloads are at most [`MAX_RECORD_LEN`] (1 GiB); larger appends are
//!   rejected with [`Error::InvalidArgument`](crate::error::Error::InvalidArgument).
//!
//! # Recovery
//!
//! [`WalReader`] reads the whole file into memory (WAL files are bounded by
//! the memory-buffer size, so this is cheap and avoids the `SIGBUS` hazards of
//! mapping a file that may be truncated) and returns records in order. When
//! a record fails to verify, the reader decides between two cases:
//!
//! * **torn tail**: no valid record exists anywhere after the bad one (an
//!   incomplete header or payload at end of file, a last record whose CRC
//!   fails, a zero-filled tail left by the file system). This is what a
//!   crash during an append leaves behind; it is dropped silently and
//!   reported by [`WalReader::tail_dropped`].
//! * **corruption in the middle**: a record that verifies can be found by
//!   scanning forward byte by byte from the bad one. Acknowledged writes
//!   after the damage exist, so [`RecoveryMode::Strict`] fails with
//!   [`Error::Corruption`](crate::error::Error::Corruption) at the bad record's
//!   offset; [`RecoveryMode::BestEffort`] stops there (point-in-time
//!   recovery: nothing after the damage is applied) and reports the dropped
//!   bytes.
//!
//! After a torn tail, the engine either truncates the file to
//! [`WalReader::valid_end`] before appending again, or starts a new log.
//!
//! # Writing
//!
//! [`WalWriter`] reserves the file's space ahead of the records (a full disk
//! is then an error at reservation) and writes through the file system's
//! [`LogFile`](crate::fs::LogFile): on the operating system's file system,
//! small records are copied into a shared mapping of the file (no system
//! call per commit), larger ones written with `pwrite(2)`. A log that was
//! not closed ends in zeros (reserved, never written), which the reader
//! reports as a torn tail of zeros; recovery knows that is no damage.

mod format;
mod reader;
mod resync;
mod writer;

#[cfg(test)]
mod tests;

pub use format::{
    RecoveryMode, TailDrop, TailDropKind, FILE_HEADER_LEN, MAX_RECORD_LEN, RECORD_HEADER_LEN,
    WAL_FORMAT_VERSION, WAL_MAGIC,
};
pub use reader::WalReader;
pub use writer::sync::PendingSync;
pub use writer::WalWriter;
