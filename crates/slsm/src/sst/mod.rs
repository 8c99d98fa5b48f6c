//! The run-file format (an SST: sorted string table) of the sorted runs
//! of "The Skiplist-Based LSM Tree", section 2.4: immutable
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
//! database's block cache (`crate::cache`, which knows nothing of this
//! format: it holds blocks by file and block number), through one door,
//! `RunFile::block`, that takes how the block is wanted (`cache::Want`: a
//! lookup, a batch's fetch, a scan's readahead, a merge's pass, warming).
//! A block is verified (checksum, codec, layout) when it is read from the
//! file and kept decompressed. Every read positions itself in a file the
//! same way: the fences pick the block, then the block the entry
//! (`reader/search.rs`). A file the file
//! system already holds in memory (`MemFs`) is read in place, each block
//! verified the first time this process reads it. [`RunFile::verify`]
//! checks the whole file, and its checksum, every time.

mod block;
mod builder;
pub(crate) mod compress;
mod format;
mod index;
mod iter;
mod layout;
mod meta;
mod options;
mod properties;
mod reader;
#[cfg(test)]
mod tests;
mod verify;

pub use crate::cache::CacheStats;
pub use crate::rangedel::RangeTombstone;
pub use builder::RunBuilder;
pub use compress::Codec;
pub use iter::RunIter;
pub use options::RunOptions;
pub use properties::RunProperties;
pub(crate) use reader::BlockCache;
pub use reader::{Entry, KeyValue, RunFile};

#[cfg(test)]
mod option_tests {
    use super::*;
    use crate::error::Error;

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
