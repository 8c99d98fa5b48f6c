//! Internal keys: how a user key, a sequence number and an operation kind are
//! packed into one byte string that every sorted structure of the engine
//! (memory runs, run files, merges) orders the same way.
//!
//! Layout: `user_key ++ trailer`, where the trailer is the 8-byte big-endian
//! encoding of `!(seq << 8 | kind)`. Inverting the packed value makes a plain
//! byte comparison of two trailers sort *newer sequence numbers first*, so
//! the order is "user key ascending, then sequence descending" and the first
//! entry at or after `lookup_key(k, s)` is the newest version of `k` visible
//! at snapshot `s`.
//!
//! The skiplist's 8-byte node prefix is taken from the user-key part
//! ([`InternalOrder::user_key`]), never from the trailer: that is the trap
//! goleveldb pull request #387 ("Speed up memory db by using fixed-size
//! keys in skiplist search") warns of.

use std::cmp::Ordering;

use slsm_skiplist::KeyOrder;

/// Bytes of the trailer appended to every user key.
pub const TRAILER_LEN: usize = 8;
/// Largest sequence number (56 bits).
pub const MAX_SEQUENCE: u64 = (1 << 56) - 1;
/// Largest accepted user key, in bytes.
pub const MAX_KEY_SIZE: usize = 64 * 1024;
/// Largest key the engine stores: a user key behind its keyspace's tag
/// (at most 5 bytes).
pub const MAX_STORED_KEY_SIZE: usize = MAX_KEY_SIZE + 5;
/// Largest accepted value, in bytes.
pub const MAX_VALUE_SIZE: usize = 256 * 1024 * 1024;

/// What an internal key records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Kind {
    /// A tombstone: the user key was deleted at this sequence number.
    Delete = 0,
    /// A value was written.
    Value = 1,
}

/// The kind used in lookup keys: sorts before every real entry of the same
/// sequence number.
const KIND_FOR_SEEK: u8 = 0xFF;

impl Kind {
    /// Decodes a kind byte read from storage.
    pub fn from_u8(b: u8) -> Option<Kind> {
        match b {
            0 => Some(Kind::Delete),
            1 => Some(Kind::Value),
            _ => None,
        }
    }
}

fn packed_trailer(seq: u64, kind: u8) -> [u8; TRAILER_LEN] {
    debug_assert!(seq <= MAX_SEQUENCE);
    (!((seq << 8) | kind as u64)).to_be_bytes()
}

/// Appends the internal key for `(user_key, seq, kind)` to `out`.
pub fn encode_into(out: &mut Vec<u8>, user_key: &[u8], seq: u64, kind: Kind) {
    out.extend_from_slice(user_key);
    out.extend_from_slice(&packed_trailer(seq, kind as u8));
}

/// The internal key for `(user_key, seq, kind)`.
pub fn encode(user_key: &[u8], seq: u64, kind: Kind) -> Vec<u8> {
    let mut out = Vec::with_capacity(user_key.len() + TRAILER_LEN);
    encode_into(&mut out, user_key, seq, kind);
    out
}

/// The smallest internal key that is at or after every version of
/// `user_key` with a sequence number `<= snapshot`.
pub fn lookup_key(user_key: &[u8], snapshot: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(user_key.len() + TRAILER_LEN);
    lookup_key_into(&mut out, user_key, snapshot);
    out
}

/// [`lookup_key`] written into a reusable buffer (cleared first).
pub fn lookup_key_into(out: &mut Vec<u8>, user_key: &[u8], snapshot: u64) {
    out.clear();
    append_lookup_key(out, user_key, snapshot);
}

/// [`lookup_key`] appended to `out`.
pub fn append_lookup_key(out: &mut Vec<u8>, user_key: &[u8], snapshot: u64) {
    out.extend_from_slice(user_key);
    out.extend_from_slice(&packed_trailer(snapshot, KIND_FOR_SEEK));
}

/// A lookup key (see [`lookup_key`]) built on the stack when the user key is
/// short, so a point read allocates nothing.
pub struct LookupKey {
    inline: [u8; 64],
    len: usize,
    heap: Vec<u8>,
}

impl LookupKey {
    /// The lookup key of `user_key` at `snapshot`.
    #[inline]
    pub fn new(user_key: &[u8], snapshot: u64) -> LookupKey {
        let mut k = LookupKey {
            inline: [0; 64],
            len: user_key.len() + TRAILER_LEN,
            heap: Vec::new(),
        };
        if k.len <= k.inline.len() {
            k.inline[..user_key.len()].copy_from_slice(user_key);
            k.inline[user_key.len()..k.len]
                .copy_from_slice(&packed_trailer(snapshot, KIND_FOR_SEEK));
        } else {
            lookup_key_into(&mut k.heap, user_key, snapshot);
        }
        k
    }

    /// The encoded key.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        if self.heap.is_empty() {
            &self.inline[..self.len]
        } else {
            &self.heap
        }
    }
}

/// Remembers `key` in `slot`, reusing its allocation.
#[inline]
pub(crate) fn remember(slot: &mut Option<Vec<u8>>, key: &[u8]) {
    match slot {
        Some(buf) => {
            buf.clear();
            buf.extend_from_slice(key);
        }
        None => *slot = Some(key.to_vec()),
    }
}

/// A decoded view of an internal key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParsedKey<'a> {
    /// The user's key.
    pub user_key: &'a [u8],
    /// The sequence number of the write.
    pub seq: u64,
    /// What the write did.
    pub kind: Kind,
}

/// Decodes an internal key; `None` if it is too short or has an unknown kind
/// (callers reading from disk turn that into `Error::Corruption`).
pub fn parse(ikey: &[u8]) -> Option<ParsedKey<'_>> {
    let split = ikey.len().checked_sub(TRAILER_LEN)?;
    let (user_key, trailer) = ikey.split_at(split);
    let packed = !u64::from_be_bytes(trailer.try_into().ok()?);
    let kind = Kind::from_u8((packed & 0xFF) as u8)?;
    Some(ParsedKey {
        user_key,
        seq: packed >> 8,
        kind,
    })
}

/// The user-key part of an internal key (the whole slice if it is too short).
#[inline]
pub fn user_key(ikey: &[u8]) -> &[u8] {
    &ikey[..ikey.len().saturating_sub(TRAILER_LEN)]
}

/// Compares two internal keys: user key ascending, then sequence descending.
#[inline]
pub fn compare(a: &[u8], b: &[u8]) -> Ordering {
    let (ua, ta) = a.split_at(a.len().saturating_sub(TRAILER_LEN));
    let (ub, tb) = b.split_at(b.len().saturating_sub(TRAILER_LEN));
    ua.cmp(ub).then_with(|| ta.cmp(tb))
}

/// The internal-key order, for the skiplist: the node prefix comes from the
/// user key only, from its bytes past `shared`.
///
/// Keys often share a long leading part (zero-padded numbers, `"user:"`,
/// a keyspace's tag): with the prefix taken from the first 8 bytes, every
/// such key had the same one and every step of a search compared key bytes
/// (a Python `get` of 1M keys `b"%016d"` spent 8% of its time searching the
/// memory runs, most of it in `memcmp`). A memory run takes `shared` from
/// the run before it ([`shared_prefix`]); keys without it stay correct,
/// their ties settled by the full comparison.
#[derive(Clone, Debug, Default)]
pub struct InternalOrder {
    shared: Box<[u8]>,
}

impl InternalOrder {
    /// The order whose node prefixes are the 8 bytes of each user key after
    /// `shared` (see [`slsm_skiplist::key_prefix_past`]).
    pub fn past(shared: &[u8]) -> InternalOrder {
        InternalOrder {
            shared: shared.into(),
        }
    }
}

impl KeyOrder for InternalOrder {
    #[inline]
    fn user_key<'a>(&self, key: &'a [u8]) -> &'a [u8] {
        user_key(key)
    }

    #[inline]
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        compare(a, b)
    }

    #[inline]
    fn prefix(&self, key: &[u8]) -> u64 {
        slsm_skiplist::key_prefix_past(&self.shared, user_key(key))
    }
}

/// Longest shared prefix a memory run's order skips: past it, keys are
/// still ordered correctly, with more key comparisons.
pub const MAX_SHARED_PREFIX: usize = 32;

/// The leading bytes `first` and `last` (a run's smallest and largest user
/// keys) share, at most [`MAX_SHARED_PREFIX`]: every key between them
/// starts with it.
pub fn shared_prefix<'a>(first: &'a [u8], last: &[u8]) -> &'a [u8] {
    &first[..common_prefix_len(first, last).min(MAX_SHARED_PREFIX)]
}

/// How many leading bytes `a` and `b` share.
pub(crate) fn common_prefix_len(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newer_sequence_sorts_first() {
        let old = encode(b"k", 5, Kind::Value);
        let new = encode(b"k", 9, Kind::Delete);
        assert_eq!(compare(&new, &old), Ordering::Less);
        assert_eq!(compare(&lookup_key(b"k", 9), &new), Ordering::Less);
        assert_eq!(compare(&lookup_key(b"k", 8), &new), Ordering::Greater);
        assert_eq!(compare(&lookup_key(b"k", 8), &old), Ordering::Less);
    }

    #[test]
    fn user_key_order_dominates_trailer() {
        // "a" + trailer must sort before "ab" + trailer whatever the trailers are.
        let a = encode(b"a", 0, Kind::Delete);
        let ab = encode(b"ab", MAX_SEQUENCE, Kind::Value);
        assert_eq!(compare(&a, &ab), Ordering::Less);
        let empty = encode(b"", 0, Kind::Delete);
        assert_eq!(compare(&empty, &a), Ordering::Less);
    }

    #[test]
    fn stack_lookup_key_equals_heap_one() {
        for len in [0usize, 1, 55, 56, 57, 200] {
            let user: Vec<u8> = (0..len).map(|i| i as u8).collect();
            assert_eq!(
                LookupKey::new(&user, 77).as_bytes(),
                lookup_key(&user, 77).as_slice()
            );
        }
    }

    #[test]
    fn parse_round_trips() {
        let k = encode(b"\x00\xffkey", 12345, Kind::Value);
        let p = parse(&k).unwrap();
        assert_eq!(p.user_key, b"\x00\xffkey");
        assert_eq!(p.seq, 12345);
        assert_eq!(p.kind, Kind::Value);
        assert!(parse(b"short").is_none());
        assert!(
            parse(&lookup_key(b"x", 1)).is_none(),
            "seek kind is not storable"
        );
    }
}
