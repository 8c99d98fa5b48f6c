//! [`Compression`]: how run files compress their data blocks, level by
//! level.

use crate::sst::compress::Codec;

/// How run files compress data blocks, level by level (RocksDB's
/// `compression_per_level` and `bottommost_compression`).
///
/// ```
/// use slsm::{Codec, Compression};
/// // LZ4 everywhere but the deepest level, which gets Zstandard.
/// let c = Compression::all(Codec::Lz4).with_bottommost(Codec::Zstd(3));
/// assert_eq!(c.for_level(0, false), Codec::Lz4);
/// assert_eq!(c.for_level(5, true), Codec::Zstd(3));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compression {
    /// The codec of level `i` (level 0 first); levels past the end use the
    /// last entry. Never empty.
    pub levels: Vec<Codec>,
    /// The codec of the deepest level, overriding `levels` there.
    pub bottommost: Option<Codec>,
}

impl Default for Compression {
    /// LZ4 on every level.
    fn default() -> Self {
        Compression::all(Codec::Lz4)
    }
}

impl Compression {
    /// Nothing compressed.
    pub fn none() -> Compression {
        Compression::all(Codec::None)
    }

    /// `codec` on every level.
    pub fn all(codec: Codec) -> Compression {
        Compression {
            levels: vec![codec],
            bottommost: None,
        }
    }

    /// One codec per level (the last one for every deeper level).
    pub fn per_level(levels: Vec<Codec>) -> Compression {
        Compression {
            levels,
            bottommost: None,
        }
    }

    /// The same, with `codec` on the deepest level.
    pub fn with_bottommost(mut self, codec: Codec) -> Compression {
        self.bottommost = Some(codec);
        self
    }

    /// The codec for a run written to `level` (`bottommost`: nothing lies
    /// deeper).
    pub fn for_level(&self, level: usize, bottommost: bool) -> Codec {
        match (bottommost, self.bottommost) {
            (true, Some(codec)) => codec,
            _ => self
                .levels
                .get(level)
                .or(self.levels.last())
                .copied()
                .unwrap_or(Codec::None),
        }
    }

    pub(super) fn validate(&self) -> std::result::Result<(), String> {
        if self.levels.is_empty() {
            return Err("compression.levels must name at least one codec".into());
        }
        let zstd_ok = |c: &Codec| !matches!(c, Codec::Zstd(l) if !(1..=22).contains(l));
        if !self.levels.iter().chain(&self.bottommost).all(zstd_ok) {
            return Err("Zstandard levels must be between 1 and 22".into());
        }
        Ok(())
    }
}
