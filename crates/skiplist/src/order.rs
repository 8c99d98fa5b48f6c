//! Key orders: how whole keys compare and which part of a key is the
//! "user key" the node's 8-byte prefix is taken from.

use std::cmp::Ordering;

/// A total order on stored keys.
///
/// The skiplist stores, in every node, the first 8 bytes of
/// [`KeyOrder::user_key`] as a big-endian `u64` (zero padded on the right when
/// the user key is shorter than 8 bytes) and compares those prefixes as
/// **unsigned** integers before it looks at the key bytes at all. Only when two
/// prefixes are equal is [`KeyOrder::compare`] called.
///
/// Implementations must be `Send + Sync` because one order value is shared by
/// every thread using the list.
pub trait KeyOrder: Send + Sync + 'static {
    /// The user-key part of a stored key; the node's 8-byte prefix is taken from it.
    ///
    /// For an LSM internal key (`user_key ++ trailer`) this must strip the
    /// trailer: a prefix taken from the whole internal key would order a short
    /// user key's trailer bytes against a longer user key's bytes.
    fn user_key<'a>(&self, key: &'a [u8]) -> &'a [u8];

    /// Total order on whole keys. Contract: must agree with the prefix, i.e. if
    /// `prefix(a) < prefix(b)` then `a < b`.
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering;

    /// The 8-byte word a node stores and searches compare before any key bytes.
    /// Contract: monotone in the order (`a < b` implies `prefix(a) <= prefix(b)`);
    /// the more keys it tells apart, the fewer comparisons load key bytes.
    ///
    /// By default the first 8 bytes of [`KeyOrder::user_key`] ([`key_prefix`]).
    /// An order whose keys mostly share a leading prefix (zero-padded numbers,
    /// `"user:"`, a table tag) should return [`key_prefix_past`] instead: with
    /// the default every such key has the same word and every comparison reads
    /// the keys.
    #[inline]
    fn prefix(&self, key: &[u8]) -> u64 {
        key_prefix(self.user_key(key))
    }
}

/// Plain lexicographic byte order: `user_key(k) = k`, `compare = a.cmp(b)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Bytewise;

impl KeyOrder for Bytewise {
    #[inline]
    fn user_key<'a>(&self, key: &'a [u8]) -> &'a [u8] {
        key
    }

    #[inline]
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        a.cmp(b)
    }
}

/// The 8-byte big-endian prefix of `user_key`, zero padded on the right.
///
/// Compared as an unsigned integer this agrees with lexicographic byte order
/// on the first 8 bytes (a shorter key pads with `0x00`, which never sorts
/// after a real byte), so `prefix(a) < prefix(b)` implies `a < b`.
#[inline]
pub fn key_prefix(user_key: &[u8]) -> u64 {
    if user_key.len() >= 8 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&user_key[..8]);
        u64::from_be_bytes(b)
    } else {
        let mut b = [0u8; 8];
        b[..user_key.len()].copy_from_slice(user_key);
        u64::from_be_bytes(b)
    }
}

/// The 8 bytes of `user_key` past `shared`, for keys that start with
/// `shared`, as [`key_prefix`] takes them; 0 for keys that sort before every
/// key starting with `shared`, `u64::MAX` for keys that sort after them all.
///
/// Monotone in byte order, so an order may use it as its
/// [`KeyOrder::prefix`]: keys starting with `shared` compare by the bytes
/// after it, and keys that do not fall on 0 or `u64::MAX`, where their ties
/// are settled by the full comparison (correct, only slower for them).
#[inline]
pub fn key_prefix_past(shared: &[u8], user_key: &[u8]) -> u64 {
    match user_key.strip_prefix(shared) {
        Some(rest) => key_prefix(rest),
        None if user_key < shared => 0,
        None => u64::MAX,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// `key_prefix_past` never orders two keys against their bytes.
        #[test]
        fn prefix_past_is_monotone(
            shared in proptest::collection::vec(0u8..4, 0..4),
            a in proptest::collection::vec(0u8..4, 0..12),
            b in proptest::collection::vec(0u8..4, 0..12),
        ) {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            proptest::prop_assert!(key_prefix_past(&shared, &lo) <= key_prefix_past(&shared, &hi));
        }
    }

    #[test]
    fn prefix_past_reads_the_bytes_after_the_shared_prefix() {
        assert_eq!(
            key_prefix_past(b"user:", b"user:abcdefghZ"),
            key_prefix(b"abcdefgh")
        );
        assert_eq!(key_prefix_past(b"user:", b"user"), 0);
        assert_eq!(key_prefix_past(b"user:", b"aaaa:zzz"), 0);
        assert_eq!(key_prefix_past(b"user:", b"users"), u64::MAX);
        assert_eq!(key_prefix_past(b"", b"abc"), key_prefix(b"abc"));
    }

    #[test]
    fn prefix_is_unsigned_and_padded() {
        assert_eq!(key_prefix(b""), 0);
        assert_eq!(key_prefix(b"a"), 0x6100_0000_0000_0000);
        assert!(key_prefix(&[0xFF]) > key_prefix(&[0x7F, 0xFF, 0xFF]));
        assert!(key_prefix(&[0x80]) > key_prefix(&[0x7F]));
        assert_eq!(key_prefix(b"abcdefghXYZ"), key_prefix(b"abcdefgh"));
        assert_eq!(key_prefix(b"a"), key_prefix(b"a\0"));
    }
}
