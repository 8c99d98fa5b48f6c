//! [`BlockLayout`]: where a run file's data blocks are cut and placed, so
//! that a lookup that misses every cache reads as few device pages as it
//! can (see the [format](super)).
//!
//! * Uncompressed and aligned, a block closes at `max_block_bytes` less its
//!   trailer, so a full block fills its pages exactly.
//! * Compressed and aligned, a block also closes where its stored form,
//!   estimated from the blocks before it, reaches the end of the page it
//!   starts in. Cut at a fixed raw size, a compressed block (~2.2 KB of 4
//!   KiB at db_bench's values) straddled a page boundary about half the
//!   time, and a lookup that missed every cache read two pages from the
//!   device for it (5.8 KB per found key against 4.1 KB uncompressed, 5M
//!   keys in 256 MiB). Cut to the page, most pages hold two blocks whole,
//!   and a block the estimate undershot straddles as before.
//! * A block that would straddle a page boundary but fits in fewer pages
//!   when started on the next one is moved there if that wastes at most an
//!   eighth of a page (the sliver a page has left after its last block).
//!
//! * **Owns**: the compression estimate and the current block's size limit.
//! * **Thread safety**: one builder's, not shared.

use super::compress::Codec;
use super::format::TRAILER_LEN;
use super::options::RunOptions;

/// The share of a page's room a compressed block aims its stored size at:
/// the margin absorbs blocks that compress worse than the estimate.
const PAGE_FILL: f64 = 0.94;
/// The smallest raw size a block is cut at to fit a page's room.
const MIN_FITTED_BLOCK: usize = 512;

/// Where blocks are cut and placed. See the [module docs](self).
pub(crate) struct BlockLayout {
    align: u64,
    compressed: bool,
    max_block_bytes: usize,
    /// Stored bytes per raw byte of the compressed blocks so far (an
    /// average leaning to the latest).
    stored_per_raw: Option<f64>,
    /// The raw size at which the block being built closes.
    limit: usize,
}

impl BlockLayout {
    /// The layout of a new file's first block.
    pub fn new(opts: &RunOptions) -> BlockLayout {
        let mut layout = BlockLayout {
            align: opts.block_align,
            compressed: opts.codec != Codec::None,
            max_block_bytes: opts.max_block_bytes,
            stored_per_raw: None,
            limit: 0,
        };
        layout.limit = layout.limit_at(0);
        layout
    }

    /// The raw size at which the block being built closes.
    pub fn block_limit(&self) -> usize {
        self.limit
    }

    /// Places a block of `raw_len` raw bytes stored in `stored_len` bytes
    /// at file offset `offset`: returns the zero bytes to write before it,
    /// and sets the limit of the block after it.
    pub fn place(&mut self, offset: u64, raw_len: usize, stored_len: usize) -> u64 {
        self.note_compression(raw_len, stored_len);
        let pad = self.padding_before(offset, stored_len as u64);
        self.limit = self.limit_at(offset + pad + stored_len as u64);
        pad
    }

    /// The raw size limit of a block starting at `offset`.
    fn limit_at(&self, offset: u64) -> usize {
        let max = self.max_block_bytes;
        let align = self.align as usize;
        if align == 0 {
            return max;
        }
        if !self.compressed {
            return max.saturating_sub(TRAILER_LEN).max(64);
        }
        let Some(stored_per_raw) = self.stored_per_raw else {
            return max;
        };
        let room = match align - (offset as usize) % align {
            sliver if sliver <= align / 8 => align,
            room => room,
        };
        let stored_target = room.saturating_sub(TRAILER_LEN) as f64 * PAGE_FILL;
        let raw_target = stored_target / stored_per_raw.max(0.01);
        (raw_target as usize).clamp(MIN_FITTED_BLOCK.min(max), max)
    }

    /// Folds a stored block into `stored_per_raw`.
    fn note_compression(&mut self, raw_len: usize, stored_len: usize) {
        if !self.compressed || raw_len == 0 {
            return;
        }
        let ratio = stored_len as f64 / raw_len as f64;
        self.stored_per_raw = Some(match self.stored_per_raw {
            None => ratio,
            Some(before) => (before + ratio) / 2.0,
        });
    }

    /// Zero bytes to write before a block of `len` stored bytes at
    /// `offset` so that it starts a page: only when that makes it touch
    /// fewer pages and wastes at most an eighth of one.
    fn padding_before(&self, offset: u64, len: u64) -> u64 {
        let align = self.align;
        if align == 0 || offset.is_multiple_of(align) {
            return 0;
        }
        let pad = align - offset % align;
        let pages_here = (offset % align + len).div_ceil(align);
        let pages_aligned = len.div_ceil(align);
        if pages_aligned < pages_here && pad <= align / 8 {
            pad
        } else {
            0
        }
    }
}
