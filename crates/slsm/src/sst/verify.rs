//! [`RunFile::verify`]: reading a whole run file and checking everything.

use std::cmp::Ordering;

use super::format::FOOTER_LEN;
use super::reader::RunFile;
use crate::cache::{ChunkReader, Want};
use crate::error::{Error, Result};
use crate::key;

impl RunFile {
    /// Reads the whole file: checks its checksum, every block's checksum,
    /// that keys are valid and strictly sorted and match the index and the
    /// properties, and that the filter knows every user key. Returns the
    /// number of entries checked.
    pub fn verify(&self) -> Result<u64> {
        verify(self)
    }
}

/// [`RunFile::verify`] of `run`.
fn verify(run: &RunFile) -> Result<u64> {
    check_body_crc(run)?;
    let mut chunks = ChunkReader::new(false);
    let mut prev: Option<Vec<u8>> = None;
    let mut key = Vec::new();
    let (mut entries, mut tombstones) = (0u64, 0u64);
    for i in 0..run.num_blocks() {
        let Some(block) = run.block(i, Want::Pass(&mut chunks))? else {
            return Err(run.corruption(0, "the index names a block the file lacks"));
        };
        for j in 0..block.count() {
            block.key_into(j, &mut key).map_err(|c| run.to_error(c))?;
            let k = key.as_slice();
            let bad = |why: &str| run.corruption(block.offset(), why);
            let parsed = key::parse(k).ok_or_else(|| bad("invalid internal key"))?;
            if prev
                .as_deref()
                .is_some_and(|p| key::compare(p, k) != Ordering::Less)
            {
                return Err(bad("keys out of order"));
            }
            if !run.may_contain_hash(crate::bloom::hash_key(parsed.user_key)) {
                return Err(bad("Bloom filter misses a stored key"));
            }
            if j + 1 == block.count() && k != run.index().last_key(i) {
                return Err(bad("block does not match its fence pointer"));
            }
            if entries == 0 && parsed.user_key != run.properties().min_user_key.as_slice() {
                return Err(bad("first key disagrees with the properties"));
            }
            tombstones += u64::from(parsed.kind == key::Kind::Delete);
            entries += 1;
            key::remember(&mut prev, k);
        }
    }
    let p = run.properties();
    if entries != p.entries || tombstones != p.tombstones {
        return Err(run.corruption(p.data_bytes, "entry counts disagree with properties"));
    }
    Ok(entries)
}

/// Checks the CRC32C of every byte before the footer against the footer's.
fn check_body_crc(run: &RunFile) -> Result<()> {
    let file = run.raw_file();
    let body_len = run.file_size() - FOOTER_LEN as u64;
    let mut chunks = ChunkReader::new(false);
    let mut crc = 0u32;
    let mut offset = 0u64;
    while offset < body_len {
        let len = (body_len - offset).min(1 << 20);
        let bytes = chunks
            .bytes(file, (offset, len), body_len)
            .map_err(|e| Error::io(run.path(), e))?;
        crc = crc32c::crc32c_append(crc, bytes);
        offset += len;
    }
    if crc != run.properties().checksum {
        return Err(run.corruption(0, "file checksum mismatch"));
    }
    Ok(())
}
