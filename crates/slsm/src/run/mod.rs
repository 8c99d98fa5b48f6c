//! Sorted run files (paper section 2.4): immutable, memory-mapped files of
//! internal-key/value pairs sorted by [`crate::key::compare`], with fence
//! pointers, a Bloom filter over the user keys, min/max keys and sequence
//! numbers, and the run's range tombstones.
//!
//! Write a run with [`RunBuilder`], open it with [`RunFile::open`], read it
//! with [`RunFile::seek`], [`RunFile::multi_seek`] or a [`RunIter`].
//!
//! # File format (version 1)
//!
//! All fixed-size integers are little endian; `varint` is unsigned LEB128.
//! Every block ends with a 4-byte masked CRC32C of the bytes before it in
//! the block; the footer ends with the CRC32C of the footer.
//!
//! ```text
//! offset 0
//! +-----------------------------+  data blocks, contiguous, in key order
//! | data block 0                |  entry*  = varint key_len | varint value_len | key | value
//! | data block 1                |  then    u32 offset (from block start) of each entry
//! | ...                         |          u32 entry count (>= 1)
//! +-----------------------------+          u32 crc
//! | index block                 |  varint n; per data block: varint len | first ikey |
//! |  (the fence pointers)       |  varint len | last ikey | u64 offset | u32 length; crc
//! +-----------------------------+
//! | filter block                |  bloom::build_filter over the distinct user keys; crc
//! +-----------------------------+
//! | range-tombstone block       |  varint n; per tombstone: varint len | start |
//! |                             |  varint len | end | u64 seq; crc
//! +-----------------------------+
//! | properties block            |  u32 version | u64 entries | u64 tombstones |
//! |                             |  u64 range tombstones | u64 min seq | u64 max seq |
//! |                             |  u64 data bytes | varint len | min user key |
//! |                             |  varint len | max user key; crc
//! +-----------------------------+
//! | footer (80 bytes)           |  (u64 offset, u64 length) of index, filter,
//! |                             |  range-tombstone, properties blocks |
//! |                             |  u32 version | u64 magic "sLSMrun1" | u32 crc
//! +-----------------------------+ end of file
//! ```
//!
//! A data block holds at most `fence_entries` (the paper's mu) entries and
//! is closed before it would grow past `max_block_bytes`; an entry bigger
//! than that gets a block of its own. The index keeps both the first and the
//! last internal key of each block, so a seek picks the one block that holds
//! its answer ("first block whose last key >= lookup") and never has to read
//! a second one, and a reverse seek picks "last block whose first key <=
//! lookup".
//!
//! Empty runs (no point entries) are allowed: they may still carry range
//! tombstones. Their min/max user keys are empty and
//! [`RunFile::overlaps_user_key`] is always false; min/max user keys cover
//! point entries only (range tombstones are consulted separately), while the
//! sequence-number range covers both.
//!
//! Opening a run verifies the footer and the checksums of the index, filter,
//! range-tombstone and properties blocks; a data block is verified the first
//! time this process reads it (one bit per block remembers it, as a block
//! cache verifies on admission: a mapped page cannot change under an
//! immutable file short of a kernel or hardware fault, and re-checking 1-4
//! KiB on every lookup cost more than the lookup). [`RunFile::verify`]
//! checks the whole file every time.

mod block;
mod builder;
mod format;
mod index;
mod iter;
mod reader;
#[cfg(test)]
mod tests;

pub use builder::RunBuilder;
pub use iter::RunIter;
pub use reader::{KeyValue, RunFile};

use crate::error::{Error, Result};

/// Options for writing a run file.
#[derive(Clone, Debug, PartialEq)]
pub struct RunOptions {
    /// Entries per fence pointer (the paper's mu): the most entries in one
    /// data block. Default 16.
    pub fence_entries: usize,
    /// A data block is closed before it grows past this many bytes (a single
    /// bigger entry gets its own block). Default 16 KiB.
    pub max_block_bytes: usize,
    /// Target false-positive rate of the run's Bloom filter (the paper's
    /// epsilon), in `(0, 1)`. Default 0.01.
    pub bloom_fp_rate: f64,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            fence_entries: 16,
            max_block_bytes: 16 * 1024,
            bloom_fp_rate: 0.01,
        }
    }
}

impl RunOptions {
    /// Checks the options: `fence_entries` in `1..=1_000_000`,
    /// `max_block_bytes` in `64..=64 MiB`, `bloom_fp_rate` in `(0, 1)`.
    pub fn validate(&self) -> Result<()> {
        if !(1..=1_000_000).contains(&self.fence_entries) {
            return Err(Error::InvalidArgument(format!(
                "fence_entries must be between 1 and 1000000, got {}",
                self.fence_entries
            )));
        }
        if !(64..=64 << 20).contains(&self.max_block_bytes) {
            return Err(Error::InvalidArgument(format!(
                "max_block_bytes must be between 64 and 64 MiB, got {}",
                self.max_block_bytes
            )));
        }
        if !(self.bloom_fp_rate > 0.0 && self.bloom_fp_rate < 1.0) {
            return Err(Error::InvalidArgument(format!(
                "bloom_fp_rate must be strictly between 0 and 1, got {}",
                self.bloom_fp_rate
            )));
        }
        Ok(())
    }
}

/// What is known of a run file: its identity, size, checksum and contents.
/// The same record lives in the manifest (one per run of every level) and,
/// but for the fields only the finished file knows, in the run file's
/// properties block.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct RunProperties {
    /// The file's number; its name is [`crate::files::run_file_name`] of it.
    pub file_number: u64,
    /// Point entries (values and tombstones).
    pub entries: u64,
    /// Entries of kind `Kind::Delete`.
    pub tombstones: u64,
    /// Range tombstones.
    pub range_tombstones: u64,
    /// Smallest user key of the point entries (empty for an empty run).
    pub min_user_key: Vec<u8>,
    /// Largest user key of the point entries (empty for an empty run).
    pub max_user_key: Vec<u8>,
    /// Smallest sequence number of any entry or range tombstone (0 if none).
    pub min_seq: u64,
    /// Largest sequence number of any entry or range tombstone (0 if none).
    pub max_seq: u64,
    /// Size of the whole file in bytes.
    pub file_size: u64,
    /// Bytes of the data blocks.
    pub data_bytes: u64,
}

impl RunProperties {
    /// Appends the record as the manifest stores it: the integers, then the
    /// two keys, length-prefixed.
    pub(crate) fn encode_into(&self, out: &mut Vec<u8>) {
        use crate::codec::{put_bytes, put_u64};
        for v in [
            self.file_number,
            self.file_size,
            self.entries,
            self.tombstones,
            self.range_tombstones,
            self.min_seq,
            self.max_seq,
            self.data_bytes,
        ] {
            put_u64(out, v);
        }
        put_bytes(out, &self.min_user_key);
        put_bytes(out, &self.max_user_key);
    }

    /// Decodes what [`encode_into`](Self::encode_into) wrote; `None` if the
    /// input is short or malformed.
    pub(crate) fn decode_from(r: &mut crate::codec::Reader<'_>) -> Option<RunProperties> {
        let mut ints = [0u64; 8];
        for v in &mut ints {
            *v = r.u64()?;
        }
        let [file_number, file_size, entries, tombstones, range_tombstones, min_seq, max_seq, data_bytes] =
            ints;
        Some(RunProperties {
            file_number,
            file_size,
            entries,
            tombstones,
            range_tombstones,
            min_seq,
            max_seq,
            data_bytes,
            min_user_key: r.length_prefixed()?.to_vec(),
            max_user_key: r.length_prefixed()?.to_vec(),
        })
    }
}

/// A range deletion stored in a run: user keys in `start..end` (end
/// exclusive) written before `seq` are deleted.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RangeTombstone {
    /// First deleted user key.
    pub start: Vec<u8>,
    /// First user key after the deleted range.
    pub end: Vec<u8>,
    /// Sequence number of the deletion.
    pub seq: u64,
}

#[cfg(test)]
mod option_tests {
    use super::*;

    #[test]
    fn validate_rejects_out_of_range() {
        assert!(RunOptions::default().validate().is_ok());
        let bad = [
            RunOptions {
                fence_entries: 0,
                ..Default::default()
            },
            RunOptions {
                max_block_bytes: 0,
                ..Default::default()
            },
            RunOptions {
                bloom_fp_rate: 0.0,
                ..Default::default()
            },
            RunOptions {
                bloom_fp_rate: 1.0,
                ..Default::default()
            },
            RunOptions {
                bloom_fp_rate: f64::NAN,
                ..Default::default()
            },
        ];
        for o in bad {
            assert!(
                matches!(o.validate(), Err(Error::InvalidArgument(_))),
                "{o:?}"
            );
        }
    }
}
