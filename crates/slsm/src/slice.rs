//! [`Slice`]: an owned byte string returned by reads.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;

const INLINE: usize = 30;

/// An immutable byte string owned by the caller (keys and values returned by
/// reads). Values of up to 30 bytes are stored inline without a heap
/// allocation; longer ones in one boxed slice.
///
/// `Slice` is `Send + Sync` and independent of the database: it stays valid
/// after the data it was read from has been merged away or the `Db` closed.
#[derive(Clone)]
pub struct Slice(Repr);

#[derive(Clone)]
enum Repr {
    Inline(u8, [u8; INLINE]),
    Heap(Box<[u8]>),
}

impl Slice {
    /// Copies `bytes` into a new `Slice`.
    #[inline]
    pub fn copy_from(bytes: &[u8]) -> Slice {
        if bytes.len() <= INLINE {
            let mut buf = [0u8; INLINE];
            buf[..bytes.len()].copy_from_slice(bytes);
            Slice(Repr::Inline(bytes.len() as u8, buf))
        } else {
            Slice(Repr::Heap(bytes.into()))
        }
    }

    /// The bytes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline(len, buf) => &buf[..*len as usize],
            Repr::Heap(b) => b,
        }
    }
}

impl Deref for Slice {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl AsRef<[u8]> for Slice {
    #[inline]
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl Borrow<[u8]> for Slice {
    fn borrow(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl From<&[u8]> for Slice {
    fn from(b: &[u8]) -> Self {
        Slice::copy_from(b)
    }
}

impl From<Vec<u8>> for Slice {
    fn from(v: Vec<u8>) -> Self {
        if v.len() <= INLINE {
            Slice::copy_from(&v)
        } else {
            Slice(Repr::Heap(v.into_boxed_slice()))
        }
    }
}

impl From<Slice> for Vec<u8> {
    fn from(s: Slice) -> Vec<u8> {
        match s.0 {
            Repr::Heap(b) => b.into_vec(),
            Repr::Inline(..) => s.as_bytes().to_vec(),
        }
    }
}

impl PartialEq for Slice {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}
impl Eq for Slice {}

impl PartialEq<[u8]> for Slice {
    fn eq(&self, other: &[u8]) -> bool {
        self.as_bytes() == other
    }
}
impl PartialEq<&[u8]> for Slice {
    fn eq(&self, other: &&[u8]) -> bool {
        self.as_bytes() == *other
    }
}
impl<const N: usize> PartialEq<&[u8; N]> for Slice {
    fn eq(&self, other: &&[u8; N]) -> bool {
        self.as_bytes() == other.as_slice()
    }
}
impl PartialEq<Vec<u8>> for Slice {
    fn eq(&self, other: &Vec<u8>) -> bool {
        self.as_bytes() == other.as_slice()
    }
}

impl PartialOrd for Slice {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Slice {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
}

impl std::hash::Hash for Slice {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_bytes().hash(state)
    }
}

impl fmt::Debug for Slice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match std::str::from_utf8(self.as_bytes()) {
            Ok(s) => write!(f, "{s:?}"),
            Err(_) => write!(f, "{:02x?}", self.as_bytes()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_and_heap_round_trip() {
        for len in [0usize, 1, 29, 30, 31, 1000] {
            let data: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let s = Slice::copy_from(&data);
            assert_eq!(&*s, data.as_slice());
            assert_eq!(Vec::from(s.clone()), data);
            assert_eq!(Slice::from(data.clone()), s);
        }
    }
}
