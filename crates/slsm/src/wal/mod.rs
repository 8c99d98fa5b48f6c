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
//!   rejected with [`Error::InvalidArgument`](crate::Error::InvalidArgument).
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
//!   [`Error::Corruption`](crate::Error::Corruption) at the bad record's
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

mod reader;
mod resync;
mod writer;

use crate::codec::mask_crc;

#[cfg(test)]
mod tests;

pub use reader::WalReader;
pub use writer::{PendingSync, WalWriter};

/// Magic bytes at the start of every WAL file.
pub const WAL_MAGIC: [u8; 8] = *b"SLSMWAL\0";
/// Current WAL format version.
pub const WAL_FORMAT_VERSION: u32 = 1;
/// Size of the file header in bytes.
pub const FILE_HEADER_LEN: usize = 24;
/// Size of a record header (masked CRC + length) in bytes.
pub const RECORD_HEADER_LEN: usize = 8;
/// Largest accepted record payload: 1 GiB.
pub const MAX_RECORD_LEN: usize = 1 << 30;

/// How [`WalReader`] treats damage that is not a torn tail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum RecoveryMode {
    /// Damage before the last valid record is an error
    /// ([`Error::Corruption`](crate::Error::Corruption)); so is a bad file
    /// header. A torn tail is still dropped silently. The default.
    ///
    /// Caveat: records that were only flushed, never synced, can reach the
    /// disk out of order in a *machine* crash (a later page persisted, an
    /// earlier one not). That looks like damage in the middle and fails
    /// here even though none of the lost records was durable. An engine that
    /// acknowledges writes without `sync` should recover its newest log
    /// with [`RecoveryMode::BestEffort`].
    #[default]
    Strict,
    /// Stop at the first damaged record and return everything before it
    /// (point-in-time recovery); a bad file header makes the log empty.
    /// What was dropped is reported by [`WalReader::tail_dropped`].
    BestEffort,
}

/// Why [`WalReader`] stopped before the end of the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TailDropKind {
    /// An incomplete or unverifiable last record (or file header) with no
    /// valid record after it: what a crash during an append leaves behind.
    Torn,
    /// Damage with (possibly) valid records after it, or a file header that
    /// is not a valid slsm WAL header; only reported in
    /// [`RecoveryMode::BestEffort`].
    Corruption,
}

/// The part of a log file that [`WalReader`] did not return.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TailDrop {
    /// File offset of the first byte not returned (the bad record's header,
    /// or 0 for a bad file header).
    pub offset: u64,
    /// Number of bytes dropped, from `offset` to the end of the file.
    pub bytes: u64,
    /// Torn tail or corruption.
    pub kind: TailDropKind,
}

/// The CRC stored for a record with `payload`: CRC32C over the 4 length
/// bytes and then the payload, masked.
fn record_crc(len_bytes: [u8; 4], payload: &[u8]) -> u32 {
    let crc = crc32c::crc32c(&len_bytes);
    mask_crc(crc32c::crc32c_append(crc, payload))
}

/// Encodes the file header of log `log_number`.
fn encode_file_header(log_number: u64) -> [u8; FILE_HEADER_LEN] {
    let mut h = [0u8; FILE_HEADER_LEN];
    h[0..8].copy_from_slice(&WAL_MAGIC);
    h[8..12].copy_from_slice(&WAL_FORMAT_VERSION.to_le_bytes());
    h[12..20].copy_from_slice(&log_number.to_le_bytes());
    let crc = mask_crc(crc32c::crc32c(&h[0..20]));
    h[20..24].copy_from_slice(&crc.to_le_bytes());
    h
}

/// Appends one encoded record (header + payload) to `out`. The caller has
/// checked `payload.len() <= MAX_RECORD_LEN`.
fn encode_record_into(out: &mut Vec<u8>, payload: &[u8]) {
    encode_record_header_into(out, payload);
    out.extend_from_slice(payload);
}

/// The header of the record holding `payload` (its checksum and length),
/// for a writer that writes the payload itself from where it lies.
fn encode_record_header_into(out: &mut Vec<u8>, payload: &[u8]) {
    let len_bytes = (payload.len() as u32).to_le_bytes();
    out.extend_from_slice(&record_crc(len_bytes, payload).to_le_bytes());
    out.extend_from_slice(&len_bytes);
}
