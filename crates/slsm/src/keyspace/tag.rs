//! Keyspace tags: every key the engine stores starts with the tag of its
//! keyspace, so keyspaces share one tree (one WAL, one commit pipeline, one
//! version set) and a batch across keyspaces is one atomic record, a
//! snapshot sees every keyspace at one point, and recovery needs nothing
//! new.
//!
//! The code is prefix-free and order-preserving: ids below `0xF0` take one
//! byte (the default keyspace, id 0, is the byte `0x00`); larger ids are
//! `0xF0` followed by the id as 4 big-endian bytes. So the keys of one
//! keyspace are exactly the keys in `[tag, tag_end)`, in their own order.

use std::ops::Bound;

/// Ids below this take one byte.
const SHORT_LIMIT: u32 = 0xF0;
/// First byte of a 5-byte tag.
const LONG_MARK: u8 = 0xF0;
/// Largest id (the 5-byte tag of `u32::MAX` would have no successor).
pub(crate) const MAX_KEYSPACE_ID: u32 = u32::MAX - 1;
/// Bytes a tag adds to a key, at most.
pub(crate) const MAX_TAG_LEN: usize = 5;

/// The default keyspace's tag.
pub(crate) const DEFAULT_TAG: Tag = Tag {
    bytes: [0; MAX_TAG_LEN],
    len: 1,
};

/// No tag: for keys that already carry theirs.
pub(crate) const NO_TAG: Tag = Tag {
    bytes: [0; MAX_TAG_LEN],
    len: 0,
};

/// The tag of one keyspace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tag {
    bytes: [u8; MAX_TAG_LEN],
    len: u8,
}

impl Tag {
    /// The tag of keyspace `id`.
    pub fn of(id: u32) -> Tag {
        let mut bytes = [0; MAX_TAG_LEN];
        if id < SHORT_LIMIT {
            bytes[0] = id as u8;
            Tag { bytes, len: 1 }
        } else {
            bytes[0] = LONG_MARK;
            bytes[1..].copy_from_slice(&id.to_be_bytes());
            Tag { bytes, len: 5 }
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// `key` with this tag in front.
    pub fn prefixed(&self, key: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len as usize + key.len());
        out.extend_from_slice(self.as_bytes());
        out.extend_from_slice(key);
        out
    }

    /// The first stored key past every key of this keyspace.
    pub fn end(&self) -> Vec<u8> {
        let id = id_of(self.as_bytes()).map_or(0, |(id, _)| id);
        Tag::of(id + 1).as_bytes().to_vec()
    }

    /// A user range of this keyspace as a range of stored keys.
    pub fn bounds(
        &self,
        lower: Bound<&[u8]>,
        upper: Bound<&[u8]>,
    ) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
        let lower = match lower {
            Bound::Included(k) => Bound::Included(self.prefixed(k)),
            Bound::Excluded(k) => Bound::Excluded(self.prefixed(k)),
            Bound::Unbounded => Bound::Included(self.as_bytes().to_vec()),
        };
        let upper = match upper {
            Bound::Included(k) => Bound::Included(self.prefixed(k)),
            Bound::Excluded(k) => Bound::Excluded(self.prefixed(k)),
            Bound::Unbounded => Bound::Excluded(self.end()),
        };
        (lower, upper)
    }
}

/// The keyspace id a stored key starts with, and the tag's length; `None`
/// for a key too short to hold a tag.
pub(crate) fn id_of(stored: &[u8]) -> Option<(u32, usize)> {
    match *stored.first()? {
        b if b < LONG_MARK => Some((b as u32, 1)),
        _ => {
            let id: [u8; 4] = stored.get(1..5)?.try_into().ok()?;
            Some((u32::from_be_bytes(id), 5))
        }
    }
}

/// A tagged key built on the stack for one lookup (heap only for keys
/// longer than ~120 bytes).
pub(crate) struct TaggedKey {
    inline: [u8; 128],
    len: usize,
    heap: Vec<u8>,
}

impl TaggedKey {
    #[inline]
    pub fn new(tag: &Tag, key: &[u8]) -> TaggedKey {
        let t = tag.as_bytes();
        let len = t.len() + key.len();
        let mut k = TaggedKey {
            inline: [0; 128],
            len,
            heap: Vec::new(),
        };
        if len <= k.inline.len() {
            k.inline[..t.len()].copy_from_slice(t);
            k.inline[t.len()..len].copy_from_slice(key);
        } else {
            k.heap = tag.prefixed(key);
        }
        k
    }

    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        match self.heap.is_empty() {
            true => &self.inline[..self.len],
            false => &self.heap,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn short_and_long_tags_round_trip() {
        for id in [0, 1, 0xEF, 0xF0, 0xF1, 1 << 20, MAX_KEYSPACE_ID] {
            let t = Tag::of(id);
            let stored = t.prefixed(b"key");
            assert_eq!(id_of(&stored), Some((id, t.as_bytes().len())));
        }
        assert_eq!(Tag::of(0).as_bytes(), b"\x00");
        assert_eq!(Tag::of(0xEF).end(), vec![0xF0, 0, 0, 0, 0xF0]);
    }

    proptest! {
        /// Keys of keyspace `a` and `b` never interleave, and each
        /// keyspace's keys lie in `[tag, end)` in their own order.
        #[test]
        fn tags_separate_and_keep_order(a in 0u32..600, b in 0u32..600,
                                        k1 in prop::collection::vec(any::<u8>(), 0..6),
                                        k2 in prop::collection::vec(any::<u8>(), 0..6)) {
            let (ta, tb) = (Tag::of(a), Tag::of(b));
            let (x, y) = (ta.prefixed(&k1), tb.prefixed(&k2));
            if a == b {
                prop_assert_eq!(x.cmp(&y), k1.cmp(&k2));
            } else {
                prop_assert_eq!(x.cmp(&y), a.cmp(&b));
            }
            prop_assert!(x.as_slice() >= ta.as_bytes() && x < ta.end());
            prop_assert!(!(y.as_slice() >= ta.as_bytes() && y < ta.end()) || a == b);
        }
    }
}
