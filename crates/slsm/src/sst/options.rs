//! [`RunOptions`]: how a run file is written (a leaf of `sst/`).

use super::compress::Codec;
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
