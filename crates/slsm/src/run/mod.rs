//! Sorted run files ("The Skiplist-Based LSM Tree", section 2.4): immutable
//! files of internal-key/value pairs sorted by [`crate::key::compare`],
//! with fence pointers, a Bloom filter over the user keys, min/max keys and
//! sequence numbers, the run's range tombstones, and the identity of the
//! database they belong to.
//!
//! Write a run with [`RunBuilder`], open it with [`RunFile::open`], read it
//! with [`RunFile::seek`], [`RunFile::multi_seek`] or a [`RunIter`].
//!
//! # File format (version 3; version 2, still read, has no block prefixes)
//!
//! All fixed-size integers are little endian; `varint` is unsigned LEB128.
//! Every stored block ends with a 5-byte trailer: a codec byte (0 raw,
//! 1 LZ4, 2 Zstandard) and the masked CRC32C of the payload and the codec
//! byte. A compressed payload is `varint raw_len | compressed bytes`
//! (see `compress.rs`); meta blocks are always raw.
//!
//! ```text
//! offset 0
//! +-----------------------------+  data blocks, contiguous, in key order; raw form:
//! | data block 0                |  entry*  = varint key_len | varint value_len | key | value
//! | data block 1                |  then    u32 offset (from block start) of each entry
//! | (padding) data block 2      |          [prefix bytes | u8 prefix length]
//! |                             |          u32 entry count (>= 1), top bit: has a prefix
//! | ...                         |
//! +-----------------------------+
//! | index block                 |  varint n | varint alignment (0: none); per data block:
//! |  (the fence pointers)       |  varint len | last ikey | varint (stored length << 1 | padded)
//! +-----------------------------+
//! | filter block                |  bloom::build_filter over the distinct user keys
//! +-----------------------------+
//! | range-tombstone block       |  varint n; per tombstone: varint len | start |
//! |                             |  varint len | end | u64 seq
//! +-----------------------------+
//! | properties block            |  u32 version | 16-byte database id | u64 file number |
//! |                             |  u64 entries | u64 tombstones | u64 range tombstones |
//! |                             |  u64 min seq | u64 max seq | u64 data bytes |
//! |                             |  u64 raw data bytes | u64 largest raw block |
//! |                             |  varint len | min user key | varint len | max user key
//! +-----------------------------+
//! | footer (84 bytes)           |  (u64 offset, u64 length) of index, filter,
//! |                             |  range-tombstone, properties blocks | u32 CRC32C of
//! |                             |  every byte before the footer | u32 version |
//! |                             |  u64 magic "sLSMrun1" | u32 crc of the footer
//! +-----------------------------+ end of file
//! ```
//!
//! The user keys of a data block share the prefix of its first and last
//! key; a block stores it once, after the offsets, and each entry's key
//! field holds the rest of its internal key (see `block`).
//!
//! A data block is closed once it reaches `max_block_bytes` (4 KiB by
//! default, about one read from the device) or `fence_entries` entries (the
//! paper's mu); an entry bigger than that gets a block of its own.
//!
//! Blocks follow one another, except that a block that would straddle a
//! page boundary (`block_align`, 4 KiB) but fits in fewer pages when
//! started on the next one is moved there, if that wastes at most an
//! eighth of a page; its index entry says so (the `padded` bit) and the
//! padding is zeros. An uncompressed block's stored form, trailer
//! included, is kept within `max_block_bytes`, so 4 KiB blocks tile 4 KiB
//! pages: a lookup that misses the cache reads one page from the device
//! instead of two, and the page cache holds whole blocks (measured: a
//! 4,039-byte block read at a random offset touches two pages ~99% of the
//! time). A compressed block is also closed where its stored form,
//! estimated from the ratio of the blocks before it, reaches the end of
//! the page it starts in, so most pages hold two whole blocks (db_bench's
//! values) and a lookup reads one page for it, not two about half the time.
//! The index keeps the last internal key of each block: a seek reads the one
//! block whose last key is the first at or after its target.
//!
//! Empty runs (no point entries) are allowed: they may still carry range
//! tombstones. Their min/max user keys are empty and
//! [`RunFile::overlaps_user_key`] is always false; min/max user keys cover
//! point entries only (range tombstones are consulted separately), while the
//! sequence-number range covers both.
//!
//! # Reading
//!
//! Files are read with positional reads, never mapped: a file truncated by
//! another process gives an error for the read that meets the damage, not a
//! signal. Opening a run reads and verifies the footer and the index,
//! filter, range-tombstone and properties blocks, which stay in memory
//! (pinned) as long as the file is open. Data blocks are read through the
//! database's [`BlockCache`]: a block is verified (checksum, codec, layout)
//! when it is read from the file and kept decompressed. A file the file
//! system already holds in memory (`MemFs`) is read in place, each block
//! verified the first time this process reads it. [`RunFile::verify`]
//! checks the whole file, and its checksum, every time.

mod block;
mod builder;
mod cache;
mod chunks;
pub(crate) mod compress;
mod fetch;
mod format;
mod index;
mod iter;
mod layout;
mod meta;
mod pages;
mod reader;
#[cfg(test)]
mod tests;
mod verify;
mod warm;

pub use crate::rangedel::RangeTombstone;
pub use builder::RunBuilder;
pub use cache::{BlockCache, CacheStats};
pub use compress::Codec;
pub(crate) use fetch::{fetch, fetch_wanted};
pub use iter::RunIter;
pub(crate) use pages::{page_beside_caches, PageBesideCaches, PAGE};
pub use reader::{Entry, KeyValue, RunFile};
pub(crate) use warm::{warm_after, warm_room};

use crate::db_id::DbId;
use crate::error::{Error, Result};

/// Options for writing a run file.
#[derive(Clone, Debug, PartialEq)]
pub struct RunOptions {
    /// Entries per fence pointer (the paper's mu): the most entries in one
    /// data block. Default 128 (blocks are usually closed by size first).
    pub fence_entries: usize,
    /// A data block is closed once it holds this many bytes (a single
    /// bigger entry gets its own block). Default 4 KiB.
    pub max_block_bytes: usize,
    /// Target false-positive rate of the run's Bloom filter (the paper's
    /// epsilon), in `(0, 1)`. Default 0.01.
    pub bloom_fp_rate: f64,
    /// How data blocks are compressed. Default none.
    pub codec: Codec,
    /// Blocks that fit a page of this many bytes are kept from straddling
    /// two (a power of two; 0: blocks are packed with no padding). Default
    /// 4096. See the [module docs](self).
    pub block_align: u64,
    /// The file's number in its database (recorded in the file).
    pub file_number: u64,
    /// The database the file belongs to (recorded in the file).
    pub db_id: DbId,
    /// Bytes buffered before a write to the file. Default 1 MiB.
    pub write_buffer: usize,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            fence_entries: 128,
            max_block_bytes: 4 * 1024,
            bloom_fp_rate: 0.01,
            codec: Codec::None,
            block_align: 4096,
            write_buffer: 1 << 20,
            file_number: 0,
            db_id: [0; 16],
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
        if self.block_align != 0
            && !(self.block_align.is_power_of_two() && (512..=1 << 20).contains(&self.block_align))
        {
            return Err(Error::InvalidArgument(format!(
                "block_align must be 0 or a power of two from 512 bytes to 1 MiB, got {}",
                self.block_align
            )));
        }
        Ok(())
    }
}

/// What is known of a run file: its identity, size, checksum and contents.
/// The same record lives in the manifest (one per run of every level) and in
/// the run file itself (its properties block and footer).
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
    /// Bytes of the data blocks as stored (compressed).
    pub data_bytes: u64,
    /// Bytes of the data blocks uncompressed.
    pub raw_data_bytes: u64,
    /// CRC32C of every byte of the file before its footer.
    pub checksum: u32,
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
            self.raw_data_bytes,
            u64::from(self.checksum),
        ] {
            put_u64(out, v);
        }
        put_bytes(out, &self.min_user_key);
        put_bytes(out, &self.max_user_key);
    }

    /// Decodes what [`encode_into`](Self::encode_into) wrote; `None` if the
    /// input is short or malformed.
    pub(crate) fn decode_from(r: &mut crate::codec::Reader<'_>) -> Option<RunProperties> {
        let mut ints = [0u64; 10];
        for v in &mut ints {
            *v = r.u64()?;
        }
        let [file_number, file_size, entries, tombstones, range_tombstones, min_seq, max_seq, data_bytes, raw_data_bytes, checksum] =
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
            raw_data_bytes,
            checksum: u32::try_from(checksum).ok()?,
            min_user_key: r.length_prefixed()?.to_vec(),
            max_user_key: r.length_prefixed()?.to_vec(),
        })
    }
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
