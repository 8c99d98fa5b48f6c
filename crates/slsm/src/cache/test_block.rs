//! A stand-in for a run file's block in the cache's own tests: the cache
//! knows nothing of the format, so its tests need none of it.

use std::sync::Arc;

use super::block::Cacheable;

/// A cached item that says which it is, charged about what a run's block
/// with one entry of its bytes is (the payload, its key, the offsets).
#[derive(Debug)]
pub(crate) struct Block {
    tag: u64,
    bytes: Box<[u8]>,
}

impl Block {
    /// Which block it is (as a run's block says where it starts).
    pub fn offset(&self) -> u64 {
        self.tag
    }

    /// What it is charged.
    pub fn len(&self) -> usize {
        self.charge()
    }

    /// Its payload.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }
}

impl Cacheable for Block {
    fn charge(&self) -> usize {
        self.bytes.len() + 25
    }
}

/// A block of `pad` bytes, each the low byte of `tag`.
pub(crate) fn padded(tag: u64, pad: usize) -> Arc<Block> {
    Arc::new(Block {
        tag,
        bytes: vec![tag as u8; pad].into(),
    })
}

/// A small block that says which it is.
pub(crate) fn block(tag: u64) -> Arc<Block> {
    padded(tag, 16)
}
