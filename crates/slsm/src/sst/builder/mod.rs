//! [`RunBuilder`]: writes a new run file.

use std::cmp::Ordering;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::block::BlockBuilder;
use super::compress::compress_into;
use super::format::{self, seal_block, FileProperties, Footer, Handle};
use super::index;
use super::layout::BlockLayout;
use super::options::RunOptions;
use super::properties::RunProperties;
use crate::bloom;
use crate::codec::put_varint;
use crate::error::{Error, Result};
use crate::fs::{FileSystem, FsFile};
use crate::key::{self, Kind};
use crate::rangedel::RangeTombstone;

mod charge;

/// Asked for the bytes a builder's buffers are about to hold: true if
/// granted. With `must` the bytes are taken whether or not there is room
/// (the answer is then ignored).
pub(crate) type MemoryCharge = Box<dyn FnMut(usize, bool) -> bool + Send>;

/// Writes a run file. Entries must be added in strictly increasing
/// [`key::compare`] order. Dropping a builder without calling
/// [`RunBuilder::finish`] removes the partial file (best effort).
pub struct RunBuilder {
    path: PathBuf,
    fs: Arc<dyn FileSystem>,
    out: Option<BufWriter<Box<dyn FsFile>>>,
    opts: RunOptions,
    block: BlockBuilder,
    index: Vec<u8>,
    blocks: u64,
    offset: u64,
    last_key: Vec<u8>,
    hashes: bloom::KeyHashes,
    props: RunProperties,
    seqs: Option<(u64, u64)>,
    range_dels: Vec<RangeTombstone>,
    failed: bool,
    bloom_bits_per_key: f64,
    /// The stored form of the block being written (reused).
    stored: Vec<u8>,
    /// CRC32C of every byte written so far.
    body_crc: u32,
    max_block_raw: u64,
    /// Where blocks are cut and placed.
    layout: BlockLayout,
    /// Asked for what the builder's buffers will hold before they grow (the
    /// engine charges it to its memory budget).
    memory_charge: Option<MemoryCharge>,
    charged: usize,
    /// What the charge last refused (0: nothing refused yet).
    refused: usize,
}

impl RunBuilder {
    /// Creates the file at `path` (which must not exist) for a new run.
    pub fn create(path: &Path, opts: RunOptions) -> Result<RunBuilder> {
        RunBuilder::create_with(crate::fs::std_fs(), path, opts)
    }

    /// [`create`](Self::create) through the file system `fs`.
    pub fn create_with(
        fs: Arc<dyn FileSystem>,
        path: &Path,
        opts: RunOptions,
    ) -> Result<RunBuilder> {
        opts.validate()?;
        let file = fs.create_new(path).map_err(|e| Error::io(path, e))?;
        let bloom_bits_per_key = bloom::bits_per_key(opts.bloom_fp_rate);
        Ok(RunBuilder {
            path: path.to_path_buf(),
            fs,
            out: Some(BufWriter::with_capacity(opts.write_buffer.max(4096), file)),
            layout: BlockLayout::new(&opts),
            opts,
            block: BlockBuilder::default(),
            index: Vec::new(),
            blocks: 0,
            offset: 0,
            last_key: Vec::new(),
            hashes: bloom::KeyHashes::default(),
            props: RunProperties::default(),
            seqs: None,
            range_dels: Vec::new(),
            failed: false,
            bloom_bits_per_key,
            stored: Vec::new(),
            body_crc: 0,
            max_block_raw: 0,
            memory_charge: None,
            charged: 0,
            refused: 0,
        })
    }

    /// Appends an entry. `ikey` must be a valid internal key strictly
    /// greater than the previous one, else `Error::InvalidArgument`.
    pub fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<()> {
        self.add_within(ikey, value, true).map(|_| ())
    }

    /// [`add`](Self::add) if the memory charge grants what the entry needs;
    /// `Ok(false)` (nothing added) if it refused: the caller finishes this
    /// file and goes on in a new one.
    pub(crate) fn try_add(&mut self, ikey: &[u8], value: &[u8]) -> Result<bool> {
        self.add_within(ikey, value, false)
    }

    fn add_within(&mut self, ikey: &[u8], value: &[u8], must: bool) -> Result<bool> {
        self.check_usable()?;
        let parsed = self.check_entry(ikey, value)?;
        let new_user_key =
            self.props.entries == 0 || key::user_key(&self.last_key) != parsed.user_key;
        if !self.reserve_for(ikey, new_user_key, must) {
            return Ok(false);
        }
        let limit = self.layout.block_limit();
        if self.block.count() > 0 && self.block.size_with(ikey, value) > limit {
            self.flush_block()?;
        }
        self.record(ikey, parsed, new_user_key);
        self.block.add(ikey, value);
        if self.block.count() >= self.opts.fence_entries || self.block.size() >= limit {
            self.flush_block()?;
        }
        Ok(true)
    }

    /// True if the next entry, of user key `user_key`, would start a new
    /// user key in this file (a file is only cut between user keys).
    pub(crate) fn is_new_user_key(&self, user_key: &[u8]) -> bool {
        self.props.entries == 0 || key::user_key(&self.last_key) != user_key
    }

    /// Records a range tombstone deleting user keys in `start..end` older
    /// than `seq`. Tombstones are stored in the order they are added.
    pub fn add_range_tombstone(&mut self, start: &[u8], end: &[u8], seq: u64) {
        self.note_seq(seq);
        self.range_dels.push(RangeTombstone {
            start: start.to_vec(),
            end: end.to_vec(),
            seq,
        });
    }

    /// The bytes the memory charge last refused (what the next entry
    /// needs the builder to hold), 0 if it never refused.
    pub(crate) fn refused_bytes(&self) -> usize {
        self.refused
    }

    /// The file's number (`RunOptions::file_number`).
    pub fn file_number(&self) -> u64 {
        self.opts.file_number
    }

    /// Range tombstones added so far.
    pub fn range_tombstones(&self) -> usize {
        self.range_dels.len()
    }

    /// Point entries added so far.
    pub fn entries(&self) -> u64 {
        self.props.entries
    }

    /// Approximate size the file would have if finished now.
    pub fn estimated_size(&self) -> u64 {
        let filter = self.hashes.len() as f64 * self.bloom_bits_per_key / 8.0;
        self.offset
            + (self.block.size() + self.index.len() + format::FOOTER_LEN) as u64
            + filter as u64
    }

    /// Writes the remaining blocks and the footer and fsyncs the file (the
    /// caller fsyncs the directory). Returns the run's properties.
    pub fn finish(mut self) -> Result<RunProperties> {
        self.check_usable()?;
        match self.write_tail() {
            Ok(()) => Ok(std::mem::take(&mut self.props)),
            Err(e) => {
                self.failed = true;
                Err(e)
            }
        }
    }

    fn write_tail(&mut self) -> Result<()> {
        if self.block.count() > 0 {
            self.flush_block()?;
        }
        self.props.data_bytes = self.offset;
        let mut idx = Vec::with_capacity(self.index.len() + 32);
        put_varint(&mut idx, self.blocks);
        put_varint(&mut idx, self.opts.block_align);
        idx.extend_from_slice(&std::mem::take(&mut self.index));
        let index = self.write_block(idx)?;
        let filter = self.write_block(self.hashes.build_filter(self.opts.bloom_fp_rate))?;
        let mut rd = Vec::new();
        format::encode_range_tombstones(&self.range_dels, &mut rd);
        let range_dels = self.write_block(rd)?;
        self.props.range_tombstones = self.range_dels.len() as u64;
        (self.props.min_seq, self.props.max_seq) = self.seqs.unwrap_or((0, 0));
        self.props.file_number = self.opts.file_number;
        let file_props = FileProperties {
            props: self.props.clone(),
            db_id: self.opts.db_id,
            max_block_raw: self.max_block_raw,
        };
        let mut pb = Vec::new();
        format::encode_properties(&file_props, &mut pb);
        let properties = self.write_block(pb)?;
        let footer = Footer {
            index,
            filter,
            range_dels,
            properties,
            body_crc: self.body_crc,
        }
        .encode();
        self.props.checksum = self.body_crc;
        self.write_raw(&footer)?;
        self.props.file_size = self.offset;
        let mut file = self
            .out
            .take()
            .expect("checked by check_usable")
            .into_inner()
            .map_err(|e| Error::io(&self.path, e.into_error()))?;
        file.sync_all().map_err(|e| Error::io(&self.path, e))
    }

    fn check_usable(&self) -> Result<()> {
        if self.failed || self.out.is_none() {
            return Err(Error::InvalidArgument(format!(
                "run builder for {} failed earlier; discard it",
                self.path.display()
            )));
        }
        Ok(())
    }

    fn check_entry<'k>(&self, ikey: &'k [u8], value: &[u8]) -> Result<key::ParsedKey<'k>> {
        let parsed = key::parse(ikey).ok_or_else(|| {
            Error::InvalidArgument("run entry is not a valid internal key".into())
        })?;
        if parsed.user_key.len() > key::MAX_STORED_KEY_SIZE || value.len() > key::MAX_VALUE_SIZE {
            return Err(Error::InvalidArgument(format!(
                "run entry too large: key {} bytes, value {} bytes",
                parsed.user_key.len(),
                value.len()
            )));
        }
        if self.props.entries > 0 && key::compare(&self.last_key, ikey) != Ordering::Less {
            return Err(Error::InvalidArgument(
                "run entries must be added in strictly increasing key order".into(),
            ));
        }
        Ok(parsed)
    }

    /// Updates the statistics for a new entry.
    fn record(&mut self, ikey: &[u8], parsed: key::ParsedKey<'_>, new_user_key: bool) {
        if self.props.entries == 0 {
            self.props.min_user_key = parsed.user_key.to_vec();
        }
        if new_user_key {
            self.hashes.push(bloom::hash_key(parsed.user_key));
            self.props.max_user_key.clear();
            self.props.max_user_key.extend_from_slice(parsed.user_key);
        }
        self.props.entries += 1;
        if parsed.kind == Kind::Delete {
            self.props.tombstones += 1;
        }
        self.note_seq(parsed.seq);
        self.last_key.clear();
        self.last_key.extend_from_slice(ikey);
    }

    fn note_seq(&mut self, seq: u64) {
        self.seqs = Some(match self.seqs {
            None => (seq, seq),
            Some((lo, hi)) => (lo.min(seq), hi.max(seq)),
        });
    }

    /// Compresses (if that pays), seals and writes the buffered block.
    fn flush_block(&mut self) -> Result<()> {
        let raw = self.block.finish();
        let raw_len = raw.len() as u64;
        self.stored.clear();
        let codec = compress_into(self.opts.codec, raw, &mut self.stored);
        seal_block(&mut self.stored, 0, codec);
        let pad = self
            .layout
            .place(self.offset, raw_len as usize, self.stored.len());
        index::put_entry(
            &mut self.index,
            self.block.last_key(),
            self.stored.len() as u64,
            pad > 0,
        );
        self.block.reset();
        self.props.raw_data_bytes += raw_len;
        self.max_block_raw = self.max_block_raw.max(raw_len);
        if pad > 0 {
            self.write_raw(&vec![0u8; pad as usize])?;
        }
        let stored = std::mem::take(&mut self.stored);
        let res = self.write_raw(&stored);
        self.stored = stored;
        res?;
        self.blocks += 1;
        Ok(())
    }

    fn fail_on_err<T>(&mut self, res: Result<T>) -> Result<T> {
        if res.is_err() {
            self.failed = true;
        }
        res
    }

    /// Writes a meta block (stored raw).
    fn write_block(&mut self, mut payload: Vec<u8>) -> Result<Handle> {
        seal_block(&mut payload, 0, 0);
        let handle = Handle {
            offset: self.offset,
            len: payload.len() as u64,
        };
        self.write_raw(&payload)?;
        Ok(handle)
    }

    fn write_raw(&mut self, bytes: &[u8]) -> Result<()> {
        self.body_crc = crc32c::crc32c_append(self.body_crc, bytes);
        let res = Self::write_to(&mut self.out, &self.path, bytes);
        self.fail_on_err(res)?;
        self.offset += bytes.len() as u64;
        Ok(())
    }

    fn write_to(
        out: &mut Option<BufWriter<Box<dyn FsFile>>>,
        path: &Path,
        bytes: &[u8],
    ) -> Result<()> {
        let w = out
            .as_mut()
            .ok_or_else(|| Error::InvalidArgument("run builder closed".into()))?;
        w.write_all(bytes).map_err(|e| Error::io(path, e))
    }
}

impl Drop for RunBuilder {
    fn drop(&mut self) {
        if self.out.is_some() || self.failed {
            drop(self.out.take());
            let _ = self.fs.remove_file(&self.path);
        }
    }
}
