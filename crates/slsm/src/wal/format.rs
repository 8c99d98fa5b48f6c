//! The log's format: the file header, a record's header and checksum, and
//! what a reader reports of a damaged tail (the module docs of `wal/` give
//! the layout). A leaf of `wal/`: the reader, the writer and the resync
//! scan all build on it.

use crate::codec::mask_crc;

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

/// How [`WalReader`](super::WalReader) treats damage that is not a torn tail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum RecoveryMode {
    /// Damage before the last valid record is an error
    /// ([`Error::Corruption`](crate::error::Error::Corruption)); so is a bad file
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
    /// What was dropped is reported by [`WalReader::tail_dropped`](super::WalReader::tail_dropped).
    BestEffort,
}

/// Why [`WalReader`](super::WalReader) stopped before the end of the file.
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

/// The part of a log file that [`WalReader`](super::WalReader) did not return.
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
#[inline]
pub(super) fn record_crc(len_bytes: [u8; 4], payload: &[u8]) -> u32 {
    let crc = crc32c::crc32c(&len_bytes);
    mask_crc(crc32c::crc32c_append(crc, payload))
}

/// Encodes the file header of log `log_number`.
pub(super) fn encode_file_header(log_number: u64) -> [u8; FILE_HEADER_LEN] {
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
#[inline]
pub(super) fn encode_record_into(out: &mut Vec<u8>, payload: &[u8]) {
    encode_record_header_into(out, payload);
    out.extend_from_slice(payload);
}

/// The header of the record holding `payload` (its checksum and length),
/// for a writer that writes the payload itself from where it lies.
#[inline]
pub(super) fn encode_record_header_into(out: &mut Vec<u8>, payload: &[u8]) {
    let len_bytes = (payload.len() as u32).to_le_bytes();
    out.extend_from_slice(&record_crc(len_bytes, payload).to_le_bytes());
    out.extend_from_slice(&len_bytes);
}
