//! [`WriteBatch`]: several writes applied atomically, and its encoding, which
//! is also the payload of one WAL record.
//!
//! Encoding: `sequence: u64 LE | count: u32 LE | op*`, each op is
//! `tag: u8 | varint len | key [| varint len | value-or-end]`. Operation `i`
//! of a batch gets sequence number `sequence + i`. Keys (and range ends)
//! are stored keys: the keyspace's tag, then the user's key
//! (`keyspace::tag`).

use std::sync::Arc;

use crate::codec::{put_bytes, put_varint, Reader};
use crate::error::{Error, Result};
use crate::key::{MAX_KEY_SIZE, MAX_STORED_KEY_SIZE, MAX_VALUE_SIZE};
use crate::keyspace::state::KeyspaceState;
use crate::keyspace::tag::{Tag, DEFAULT_TAG};

const HEADER_LEN: usize = 12;
const TAG_PUT: u8 = 1;
const TAG_DELETE: u8 = 2;
const TAG_DELETE_RANGE: u8 = 3;

/// Writes to apply atomically: after a crash either all of them are present
/// or none. Build it with [`put`](Self::put), [`delete`](Self::delete) and
/// [`delete_range`](Self::delete_range), then hand it to `Db::write`.
///
/// Invalid input (an oversized key or value, an empty range) is remembered
/// and reported by `Db::write` as [`Error::InvalidArgument`]; nothing of the
/// batch is applied then. A `WriteBatch` is a plain value (`Send + Sync`).
#[derive(Clone)]
pub struct WriteBatch {
    rep: Vec<u8>,
    count: u32,
    invalid: Option<String>,
    /// Keyspaces other than the default one the batch writes to: a batch
    /// naming a dropped keyspace is refused.
    keyspaces: Vec<Arc<KeyspaceState>>,
}

/// One operation of a decoded batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op<'a> {
    /// Set `key` to `value`.
    Put(&'a [u8], &'a [u8]),
    /// Delete `key`.
    Delete(&'a [u8]),
    /// Delete every key in `[start, end)`.
    DeleteRange(&'a [u8], &'a [u8]),
}

impl Default for WriteBatch {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for WriteBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriteBatch")
            .field("ops", &self.count)
            .field("bytes", &self.rep.len())
            .finish()
    }
}

impl WriteBatch {
    /// An empty batch.
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// An empty batch with room for `bytes` of encoded operations.
    pub fn with_capacity(bytes: usize) -> Self {
        let mut rep = Vec::with_capacity(HEADER_LEN + bytes);
        rep.resize(HEADER_LEN, 0);
        WriteBatch {
            rep,
            count: 0,
            invalid: None,
            keyspaces: Vec::new(),
        }
    }

    /// Checks a user's key (or, without a tag, a stored key).
    fn check_key(&mut self, key: &[u8], tag: &Tag) -> bool {
        let limit = match tag.as_bytes().is_empty() {
            true => MAX_STORED_KEY_SIZE,
            false => MAX_KEY_SIZE,
        };
        if key.len() > limit {
            self.invalid.get_or_insert_with(|| {
                format!(
                    "key of {} bytes exceeds the limit of {MAX_KEY_SIZE} bytes",
                    key.len()
                )
            });
            return false;
        }
        true
    }

    fn push_op(&mut self, op: u8, tag: &Tag, a: &[u8], b: Option<&[u8]>) {
        self.rep.push(op);
        let t = tag.as_bytes();
        put_varint(&mut self.rep, (t.len() + a.len()) as u64);
        self.rep.extend_from_slice(t);
        self.rep.extend_from_slice(a);
        if let Some(b) = b {
            match op {
                TAG_DELETE_RANGE => {
                    put_varint(&mut self.rep, (t.len() + b.len()) as u64);
                    self.rep.extend_from_slice(t);
                    self.rep.extend_from_slice(b);
                }
                _ => put_bytes(&mut self.rep, b),
            }
        }
        self.count += 1;
    }

    /// The tag of the keyspace of `state`, which the batch now writes to
    /// (`Db::write` fails if it is dropped meanwhile). The `*_in` methods
    /// that take a `Keyspace` handle are the facade's (`db/keyspace.rs`).
    pub(crate) fn note_keyspace(&mut self, state: &Arc<KeyspaceState>) -> Tag {
        if state.id != 0 && !self.keyspaces.iter().any(|k| Arc::ptr_eq(k, state)) {
            self.keyspaces.push(Arc::clone(state));
        }
        state.tag
    }

    /// Sets `key` to `value` in the default keyspace.
    pub fn put(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> &mut Self {
        self.put_tagged(&DEFAULT_TAG, key.as_ref(), value.as_ref())
    }

    /// Fails if a keyspace the batch writes to was dropped.
    fn check_keyspaces(&self) -> Result<()> {
        match self.keyspaces.iter().find(|k| k.is_dropped()) {
            Some(k) => Err(k.dropped_error()),
            None => Ok(()),
        }
    }

    pub(crate) fn put_tagged(&mut self, tag: &Tag, key: &[u8], value: &[u8]) -> &mut Self {
        if value.len() > MAX_VALUE_SIZE {
            self.invalid.get_or_insert_with(|| {
                format!(
                    "value of {} bytes exceeds the limit of {MAX_VALUE_SIZE} bytes",
                    value.len()
                )
            });
        } else if self.check_key(key, tag) {
            self.push_op(TAG_PUT, tag, key, Some(value));
        }
        self
    }

    /// Deletes `key` in the default keyspace (a tombstone; deleting an
    /// absent key is not an error).
    pub fn delete(&mut self, key: impl AsRef<[u8]>) -> &mut Self {
        self.delete_tagged(&DEFAULT_TAG, key.as_ref())
    }

    pub(crate) fn delete_tagged(&mut self, tag: &Tag, key: &[u8]) -> &mut Self {
        if self.check_key(key, tag) {
            self.push_op(TAG_DELETE, tag, key, None);
        }
        self
    }

    /// Deletes every key `k` with `start <= k < end` in the default
    /// keyspace. `start < end` is required.
    pub fn delete_range(&mut self, start: impl AsRef<[u8]>, end: impl AsRef<[u8]>) -> &mut Self {
        self.delete_range_tagged(&DEFAULT_TAG, start.as_ref(), end.as_ref())
    }

    pub(crate) fn delete_range_tagged(&mut self, tag: &Tag, start: &[u8], end: &[u8]) -> &mut Self {
        if start >= end {
            self.invalid
                .get_or_insert_with(|| "delete_range needs start < end".to_string());
        } else if self.check_key(start, tag) && self.check_key(end, tag) {
            self.push_op(TAG_DELETE_RANGE, tag, start, Some(end));
        }
        self
    }

    /// Number of operations.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// True if the batch has no operations.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Removes every operation.
    pub fn clear(&mut self) {
        // Keep the allocation: a cleared batch is typically refilled.
        self.rep.truncate(HEADER_LEN);
        self.rep.fill(0);
        self.count = 0;
        self.invalid = None;
        self.keyspaces.clear();
    }

    /// Bytes allocated for the encoded batch.
    pub(crate) fn capacity(&self) -> usize {
        self.rep.capacity()
    }

    /// Bytes of the encoded batch (what the WAL record will hold).
    pub fn encoded_size(&self) -> usize {
        self.rep.len()
    }

    /// The first invalid operation's description, if any.
    pub(crate) fn validate(&self) -> Result<()> {
        match &self.invalid {
            Some(msg) => Err(Error::InvalidArgument(msg.clone())),
            None => self.check_keyspaces(),
        }
    }

    /// Stamps the batch with its first sequence number and returns the
    /// encoding (the WAL payload).
    pub(crate) fn seal(&mut self, first_seq: u64) -> &[u8] {
        self.rep[..8].copy_from_slice(&first_seq.to_le_bytes());
        self.rep[8..12].copy_from_slice(&self.count.to_le_bytes());
        &self.rep
    }

    /// The operations in order.
    pub(crate) fn ops(&self) -> OpIter<'_> {
        OpIter {
            r: Reader::at(&self.rep, HEADER_LEN),
            left: self.count,
        }
    }
}

/// A batch decoded from a WAL record.
pub(crate) struct DecodedBatch<'a> {
    pub first_seq: u64,
    pub ops: OpIter<'a>,
}

/// Decodes a WAL payload; `None` if it is malformed (the caller reports
/// corruption with the record's file and offset).
pub(crate) fn decode(payload: &[u8]) -> Option<DecodedBatch<'_>> {
    let mut header = Reader::new(payload);
    let first_seq = header.u64()?;
    let count = header.u32()?;
    let ops = OpIter {
        r: header,
        left: count,
    };
    // Validate the whole body up front so that a batch is applied all or nothing.
    let mut check = ops.clone();
    for _ in 0..count {
        check.next()?.ok()?;
    }
    if !check.r.is_empty() {
        return None;
    }
    Some(DecodedBatch { first_seq, ops })
}

/// Iterator over the operations of an encoded batch.
#[derive(Clone)]
pub(crate) struct OpIter<'a> {
    r: Reader<'a>,
    left: u32,
}

impl<'a> Iterator for OpIter<'a> {
    type Item = std::result::Result<Op<'a>, ()>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        Some(self.decode_one().ok_or(()))
    }
}

impl<'a> OpIter<'a> {
    fn decode_one(&mut self) -> Option<Op<'a>> {
        let tag = self.r.u8()?;
        let a = self.r.length_prefixed()?;
        match tag {
            TAG_PUT => Some(Op::Put(a, self.r.length_prefixed()?)),
            TAG_DELETE => Some(Op::Delete(a)),
            TAG_DELETE_RANGE => Some(Op::DeleteRange(a, self.r.length_prefixed()?)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let mut b = WriteBatch::new();
        b.put(b"a", b"1").delete(b"").delete_range(b"b", b"c");
        b.put(b"k", vec![7u8; 1000]);
        let enc = b.seal(42).to_vec();
        let d = decode(&enc).unwrap();
        assert_eq!(d.first_seq, 42);
        let ops: Vec<_> = d.ops.map(|o| o.unwrap()).collect();
        // Stored keys carry the default keyspace's tag, 0x00.
        assert_eq!(ops[0], Op::Put(b"\0a", b"1"));
        assert_eq!(ops[1], Op::Delete(b"\0"));
        assert_eq!(ops[2], Op::DeleteRange(b"\0b", b"\0c"));
        assert_eq!(ops[3], Op::Put(b"\0k", &[7u8; 1000][..]));
    }

    #[test]
    fn truncated_or_garbage_is_rejected() {
        let mut b = WriteBatch::new();
        b.put(b"key", b"value").delete(b"other");
        let enc = b.seal(1).to_vec();
        for cut in 0..enc.len() {
            assert!(decode(&enc[..cut]).is_none(), "cut at {cut}");
        }
        let mut extra = enc.clone();
        extra.push(0);
        assert!(decode(&extra).is_none());
    }

    #[test]
    fn invalid_ops_are_reported() {
        let mut b = WriteBatch::new();
        b.put(vec![0u8; MAX_KEY_SIZE + 1], b"v");
        assert!(b.validate().is_err());
        let mut b = WriteBatch::new();
        b.delete_range(b"z", b"a");
        assert!(b.validate().is_err());
        let mut b = WriteBatch::new();
        b.put(vec![0u8; MAX_KEY_SIZE], b"v");
        assert!(b.validate().is_ok());
    }
}
