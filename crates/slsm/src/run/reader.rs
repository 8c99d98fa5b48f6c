//! [`RunFile`]: an open, immutable, memory-mapped run.

use std::cmp::Ordering;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering as AtomicOrdering};
use std::sync::Arc;

use super::block::Block;
use super::format::{self, check_block, corrupt, Corrupt, Decoded, Footer, Handle, FOOTER_LEN};
use super::index::{self, Fence};
use super::{RangeTombstone, RunProperties};
use crate::bloom::BloomView;
use crate::error::{Error, Result};
use crate::fs::{FileBytes, FileSystem};
use crate::key;

/// An entry borrowed from a mapped run: `(internal key, value)`.
pub type KeyValue<'a> = (&'a [u8], &'a [u8]);

/// An open run file. Immutable, `Send + Sync`; share it as `Arc<RunFile>`.
pub struct RunFile {
    path: PathBuf,
    fs: Arc<dyn FileSystem>,
    map: FileBytes,
    props: RunProperties,
    fences: Vec<Fence>,
    /// User-key prefixes of the fences' last keys (see `index::last_prefixes`).
    last_prefixes: Vec<u64>,
    /// Top index over `last_prefixes` (see `index::group_lasts`).
    group_lasts: Vec<u64>,
    /// One bit per data block whose checksum this process has verified.
    verified: Box<[AtomicU64]>,
    filter: Range<usize>,
    range_dels: Vec<RangeTombstone>,
    obsolete: AtomicBool,
}

impl std::fmt::Debug for RunFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunFile")
            .field("path", &self.path)
            .field("properties", &self.props)
            .field("blocks", &self.fences.len())
            .finish()
    }
}

/// The metadata decoded from the footer and meta blocks.
struct Meta {
    props: RunProperties,
    fences: Vec<Fence>,
    filter: Range<usize>,
    range_dels: Vec<RangeTombstone>,
}

impl RunFile {
    /// Maps the run at `path` and verifies its footer and the checksums and
    /// structure of its index, filter, range-tombstone and properties
    /// blocks. Damage is reported as `Error::Corruption`.
    pub fn open(path: &Path) -> Result<RunFile> {
        RunFile::open_with(crate::fs::std_fs(), path)
    }

    /// [`open`](Self::open) through the file system `fs` (the real one maps
    /// the file; see `StdFs::map` for why that is sound).
    pub fn open_with(fs: Arc<dyn FileSystem>, path: &Path) -> Result<RunFile> {
        let map = fs.map(path).map_err(|e| Error::io(path, e))?;
        if map.len() < FOOTER_LEN {
            return Err(Error::corruption(
                path,
                0,
                "file too short for a run footer",
            ));
        }
        let meta = decode_meta(&map).map_err(|c| Error::corruption(path, c.offset, c.reason))?;
        let last_prefixes = index::last_prefixes(&map, &meta.fences);
        let group_lasts = index::group_lasts(&last_prefixes);
        let verified = (0..meta.fences.len().div_ceil(64))
            .map(|_| AtomicU64::new(0))
            .collect();
        Ok(RunFile {
            path: path.to_path_buf(),
            fs,
            map,
            props: meta.props,
            fences: meta.fences,
            last_prefixes,
            group_lasts,
            verified,
            filter: meta.filter,
            range_dels: meta.range_dels,
            obsolete: AtomicBool::new(false),
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The run's properties.
    pub fn properties(&self) -> &RunProperties {
        &self.props
    }

    /// Size of the file in bytes.
    pub fn file_size(&self) -> u64 {
        self.props.file_size
    }

    /// False if no user key with [`crate::bloom::hash_key`] hash `h` is in
    /// the run (Bloom filter test).
    pub fn may_contain_hash(&self, h: u64) -> bool {
        BloomView::parse(&self.map[self.filter.clone()]).is_none_or(|v| v.may_contain_hash(h))
    }

    /// Bytes of the run's Bloom filter.
    pub fn filter_bytes(&self) -> usize {
        self.filter.len()
    }

    /// How many of `hashes` pass the run's Bloom filter.
    pub fn filter_passes(&self, hashes: &[u64]) -> usize {
        hashes.iter().filter(|&&h| self.may_contain_hash(h)).count()
    }

    /// Starts loading the filter block [`may_contain_hash`](Self::may_contain_hash)
    /// will read for `h`, so that a lookup probing many runs waits for
    /// their filters' cache misses once, not once per run.
    pub fn prefetch_filter(&self, h: u64) {
        if let Some(v) = BloomView::parse(&self.map[self.filter.clone()]) {
            v.prefetch_hash(h);
        }
    }

    /// True if `user_key` lies between the run's min and max user keys.
    pub fn overlaps_user_key(&self, user_key: &[u8]) -> bool {
        self.props.entries > 0
            && self.props.min_user_key.as_slice() <= user_key
            && user_key <= self.props.max_user_key.as_slice()
    }

    /// The range tombstones of the run, in the order they were written.
    pub fn range_tombstones(&self) -> &[RangeTombstone] {
        &self.range_dels
    }

    /// The first entry whose internal key is `>= lookup` (by
    /// [`key::compare`]), or `None` if every key is smaller. The block read
    /// is checksum-verified.
    pub fn seek(&self, lookup: &[u8]) -> Result<Option<KeyValue<'_>>> {
        let i = self.block_for_point(lookup);
        if i == self.fences.len() {
            return Ok(None);
        }
        self.prefetch_block(i);
        let block = self.load_block(i)?;
        self.answer_in(&block, lookup, 0).map(|(_, kv)| Some(kv))
    }

    /// Starts loading the data block a seek to `ikey` reads, so that a
    /// merging iterator positioning many runs waits for their blocks in
    /// parallel instead of one after another. A hint: nothing is verified.
    pub fn prefetch_seek(&self, ikey: &[u8]) {
        let i = self.block_for_point(ikey);
        if i < self.fences.len() {
            self.prefetch_block(i);
        }
    }

    /// [`RunFile::seek`] for many lookups sorted ascending by
    /// [`key::compare`]: sweeps the fences forward (galloping from the
    /// current block) and reuses the decoded block between lookups that land
    /// in the same block. Calls `out(i, result)` for each `lookups[i]` in
    /// order. Unsorted input still gives correct answers, only slower.
    pub fn multi_seek(
        &self,
        lookups: &[&[u8]],
        out: &mut dyn FnMut(usize, Option<KeyValue<'_>>),
    ) -> Result<()> {
        let mut fence = 0;
        let mut cached: Option<(usize, Block)> = None;
        let mut pos = 0;
        for (n, lookup) in lookups.iter().enumerate() {
            if n > 0 && key::compare(lookup, lookups[n - 1]) == Ordering::Less {
                (fence, pos) = (0, 0);
            }
            fence = self.block_for(lookup, fence);
            if fence == self.fences.len() {
                out(n, None);
                continue;
            }
            let block = match cached {
                Some((i, b)) if i == fence => b,
                _ => {
                    let b = self.load_block(fence)?;
                    cached = Some((fence, b));
                    pos = 0;
                    b
                }
            };
            let (j, kv) = self.answer_in(&block, lookup, pos)?;
            pos = j;
            out(n, Some(kv));
        }
        Ok(())
    }

    /// Reads every block, checks every checksum, that keys are valid and
    /// strictly sorted and match the index and the properties, and that the
    /// filter knows every user key. Returns the number of entries checked.
    pub fn verify(&self) -> Result<u64> {
        let mut prev: Option<&[u8]> = None;
        let (mut entries, mut tombstones) = (0u64, 0u64);
        for i in 0..self.fences.len() {
            let block = self.load_block_checked(i)?;
            for j in 0..block.count() {
                let (k, _) = self.kv(&block, j)?;
                let bad = |why: &str| self.corruption(block.offset(), why);
                let parsed = key::parse(k).ok_or_else(|| bad("invalid internal key"))?;
                if prev.is_some_and(|p| key::compare(p, k) != Ordering::Less) {
                    return Err(bad("keys out of order"));
                }
                if !self.may_contain_hash(crate::bloom::hash_key(parsed.user_key)) {
                    return Err(bad("Bloom filter misses a stored key"));
                }
                let fence = &self.fences[i];
                if (j == 0 && k != &self.map[fence.first.clone()])
                    || (j + 1 == block.count() && k != &self.map[fence.last.clone()])
                {
                    return Err(bad("block does not match its fence pointer"));
                }
                tombstones += u64::from(parsed.kind == key::Kind::Delete);
                entries += 1;
                prev = Some(k);
            }
        }
        if entries != self.props.entries || tombstones != self.props.tombstones {
            return Err(self.corruption(
                self.props.data_bytes,
                "entry counts disagree with properties",
            ));
        }
        Ok(entries)
    }

    /// Marks the file for deletion when the last reference is dropped (used
    /// when a merge replaces the run; readers holding an `Arc` keep it).
    pub fn mark_obsolete(&self) {
        self.obsolete.store(true, AtomicOrdering::Release);
    }

    /// The mapped bytes.
    pub(crate) fn data(&self) -> &[u8] {
        &self.map
    }

    /// Number of data blocks.
    pub(crate) fn num_blocks(&self) -> usize {
        self.fences.len()
    }

    /// Releases `range` of the mapped file from resident memory (see
    /// `FileBytes::release`).
    pub(crate) fn release(&self, range: std::ops::Range<usize>) {
        self.map.release(range);
    }

    /// The fence pointers.
    pub(crate) fn fences(&self) -> &[Fence] {
        &self.fences
    }

    /// Index of the first block whose last key is `>= target`
    /// (`num_blocks()` if none), for a search from scratch: through the
    /// sampled top index, two or three cache lines of fences.
    pub(crate) fn block_for_point(&self, target: &[u8]) -> usize {
        index::point_last_ge(
            &self.map,
            &self.fences,
            &self.last_prefixes,
            &self.group_lasts,
            target,
        )
    }

    /// Index of the first block at or after `from` whose last key is
    /// `>= target` (`num_blocks()` if none).
    pub(crate) fn block_for(&self, target: &[u8], from: usize) -> usize {
        index::gallop_last_ge(&self.map, &self.fences, &self.last_prefixes, target, from)
    }

    /// Decodes data block `i`, verifying its checksum the first time this
    /// process reads it (a block cache verifies on admission the same way;
    /// [`verify`](Self::verify) always checks).
    pub(crate) fn load_block(&self, i: usize) -> Result<Block> {
        let (word, bit) = (&self.verified[i / 64], 1u64 << (i % 64));
        if word.load(AtomicOrdering::Relaxed) & bit != 0 {
            let f = &self.fences[i];
            return Block::open_verified(&self.map, f.offset, f.len).map_err(|c| self.to_error(c));
        }
        let block = self.load_block_checked(i)?;
        word.fetch_or(bit, AtomicOrdering::Relaxed);
        Ok(block)
    }

    /// Starts loading all of data block `i` (typically 1-4 KiB): its
    /// trailer and the entries a binary search visits then arrive in
    /// parallel instead of one dependent cache miss after another.
    fn prefetch_block(&self, i: usize) {
        let f = &self.fences[i];
        if let Some(bytes) = self.map.get(f.offset..f.offset + f.len) {
            for line in bytes.chunks(64) {
                slsm_skiplist::prefetch(line.as_ptr());
            }
            slsm_skiplist::prefetch(bytes[bytes.len().saturating_sub(1)..].as_ptr());
        }
    }

    /// Verifies the checksum of data block `i` and decodes it.
    fn load_block_checked(&self, i: usize) -> Result<Block> {
        let f = &self.fences[i];
        Block::open(&self.map, f.offset, f.len).map_err(|c| self.to_error(c))
    }

    /// Entry `j` of `block` as slices of the mapping.
    pub(crate) fn kv(&self, block: &Block, j: usize) -> Result<KeyValue<'_>> {
        let e = block.entry(&self.map, j).map_err(|c| self.to_error(c))?;
        Ok((&self.map[e.key], &self.map[e.value]))
    }

    /// An `Error::Corruption` for this file.
    pub(crate) fn corruption(&self, offset: u64, why: &str) -> Error {
        Error::corruption(&self.path, offset, why)
    }

    fn to_error(&self, c: Corrupt) -> Error {
        Error::corruption(&self.path, c.offset, c.reason)
    }

    /// The first entry `>= lookup` in a block whose last key is `>= lookup`.
    fn answer_in(
        &self,
        block: &Block,
        lookup: &[u8],
        from: usize,
    ) -> Result<(usize, KeyValue<'_>)> {
        let j = block
            .lower_bound(&self.map, lookup, from)
            .map_err(|c| self.to_error(c))?;
        if j == block.count() {
            return Err(self.corruption(block.offset(), "block does not match its fence pointer"));
        }
        Ok((j, self.kv(block, j)?))
    }
}

impl Drop for RunFile {
    /// An obsolete file is unmapped and deleted on the clean-up thread (see
    /// `reaper`): the thread dropping the last reference may be a writer.
    fn drop(&mut self) {
        if self.obsolete.load(AtomicOrdering::Acquire) {
            let map = std::mem::replace(&mut self.map, FileBytes::Owned(Vec::new()));
            let (fs, path) = (Arc::clone(&self.fs), std::mem::take(&mut self.path));
            crate::reaper::defer(move || {
                drop(map);
                let _ = fs.remove_file(&path);
            });
        }
    }
}

/// A meta block's verified payload and where it starts.
fn meta_block<'a>(file: &'a [u8], h: Handle, what: &str) -> Decoded<(usize, &'a [u8])> {
    let limit = file.len() - FOOTER_LEN;
    let bytes = h.slice(file, limit).ok_or_else(|| {
        corrupt(
            limit as u64,
            format!("{what} block handle outside the file"),
        )
    })?;
    Ok((h.offset as usize, check_block(bytes, h.offset, what)?))
}

fn decode_meta(file: &[u8]) -> Decoded<Meta> {
    let footer_at = file.len() - FOOTER_LEN;
    let footer = Footer::decode(&file[footer_at..], footer_at as u64)?;
    let (at, payload) = meta_block(file, footer.properties, "properties")?;
    let props = format::decode_properties(payload, file.len() as u64)
        .ok_or_else(|| corrupt(at as u64, "malformed properties block"))?;
    let (at, payload) = meta_block(file, footer.range_dels, "range tombstone")?;
    let range_dels = format::decode_range_tombstones(payload)
        .filter(|l| l.len() as u64 == props.range_tombstones)
        .ok_or_else(|| corrupt(at as u64, "malformed range tombstone block"))?;
    let (at, payload) = meta_block(file, footer.filter, "filter")?;
    BloomView::parse(payload).ok_or_else(|| corrupt(at as u64, "malformed filter block"))?;
    let filter = at..at + payload.len();
    let (at, payload) = meta_block(file, footer.index, "index")?;
    if footer.index.offset != props.data_bytes {
        return Err(corrupt(
            at as u64,
            "index block does not follow the data blocks",
        ));
    }
    let fences = index::decode(file, at, payload, props.data_bytes)?;
    check_props(file, &props, &fences).map_err(|why| corrupt(at as u64, why))?;
    Ok(Meta {
        props,
        fences,
        filter,
        range_dels,
    })
}

/// Cross-checks the properties against the fence pointers.
fn check_props(file: &[u8], props: &RunProperties, fences: &[Fence]) -> Result<(), &'static str> {
    let (Some(first), Some(last)) = (fences.first(), fences.last()) else {
        return match props.entries {
            0 => Ok(()),
            _ => Err("properties count entries but there are no data blocks"),
        };
    };
    if props.entries < fences.len() as u64 || props.tombstones > props.entries {
        return Err("entry counts disagree with the index");
    }
    let min = key::user_key(&file[first.first.clone()]);
    let max = key::user_key(&file[last.last.clone()]);
    if min != props.min_user_key.as_slice() || max != props.max_user_key.as_slice() {
        return Err("min/max user keys disagree with the index");
    }
    Ok(())
}
