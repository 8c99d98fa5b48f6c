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

    /// Total order on whole keys. Contract: must agree with the prefix, i.e. if the
    /// zero-padded big-endian u64 of the first 8 bytes of user_key(a) is < that of user_key(b), then a < b.
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering;
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

#[cfg(test)]
mod tests {
    use super::*;

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
