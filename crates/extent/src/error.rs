//! Error types of [`ExtentMap`](crate::ExtentMap).

use std::fmt;

/// Error returned by [`ExtentMap::insert`](crate::ExtentMap::insert).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Error {
    /// The new range overlaps an extent already in the map; `start` and
    /// `len` describe that existing extent.
    Overlap {
        /// Start of the existing, overlapping extent.
        start: u64,
        /// Length of the existing, overlapping extent.
        len: u64,
    },
    /// `len == 0`, or `start + len` overflows `u64`.
    InvalidRange,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Overlap { start, len } => {
                write!(f, "range overlaps existing extent [{start}, +{len})")
            }
            Error::InvalidRange => write!(f, "invalid range (zero length or overflow)"),
        }
    }
}

impl std::error::Error for Error {}

/// Error returned by [`ExtentMap::insert_hole`](crate::ExtentMap::insert_hole).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HoleError {
    /// No free, aligned range of the requested length lies in `[hint, limit)`
    /// (this includes `hint > limit`, `len > limit`, and aligning `hint` up
    /// overflowing `u64`).
    NoSpace,
    /// `len == 0`, or `align` is not a power of two (`0` included).
    InvalidArgument,
}

impl fmt::Display for HoleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HoleError::NoSpace => write!(f, "no free range of the requested size"),
            HoleError::InvalidArgument => {
                write!(
                    f,
                    "invalid argument (zero length or alignment not a power of two)"
                )
            }
        }
    }
}

impl std::error::Error for HoleError {}
