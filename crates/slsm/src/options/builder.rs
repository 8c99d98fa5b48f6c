//! Chained setters beside [`Options`]' public fields, as fjall's `Config`
//! and RocksDB's `Options::set_*` offer:
//!
//! ```
//! use slsm::{Codec, Compression, Options};
//! let opts = Options::default()
//!     .memory_budget(256 << 20)
//!     .compression(Compression::all(Codec::Zstd(3)))
//!     .sync_writes(true);
//! assert_eq!(opts.memory_budget, 256 << 20);
//! assert!(opts.validate().is_ok());
//! ```
//!
//! Each setter only stores its value; [`Options::validate`] (which `Db::open`
//! calls) checks them together. The field's documentation gives the default
//! and the effect.

use super::{Compression, Options};
use crate::wal::RecoveryMode;

/// One `pub fn field(self, value) -> Options` per field.
macro_rules! setters {
    ($($field:ident: $ty:ty),* $(,)?) => {
        impl Options {
            $(
                #[doc = concat!("Sets [`", stringify!($field), "`](Self::", stringify!($field), ").")]
                #[must_use]
                pub fn $field(mut self, value: $ty) -> Options {
                    self.$field = value;
                    self
                }
            )*
        }
    };
}

setters! {
    create_if_missing: bool,
    error_if_exists: bool,
    read_only: bool,
    run_size: usize,
    run_entries: usize,
    memory_runs: usize,
    merge_fraction: f64,
    level_runs: usize,
    max_space_amplification: f64,
    bloom_fp_rate: f64,
    fence_entries: usize,
    block_size: usize,
    compression: Compression,
    memory_budget: usize,
    max_manifest_file_size: u64,
    sync_writes: bool,
    disable_wal: bool,
    recovery: RecoveryMode,
    background_merges: bool,
}

impl Options {
    /// Sets [`block_cache_size`](Self::block_cache_size): `bytes` of block
    /// cache instead of what the memory budget leaves for it.
    #[must_use]
    pub fn block_cache_size(mut self, bytes: usize) -> Options {
        self.block_cache_size = Some(bytes);
        self
    }

    /// Sets [`os_page_cache`](Self::os_page_cache): `keep` says whether
    /// blocks read from run files stay in the OS page cache, instead of the
    /// engine deciding from the memory limit.
    #[must_use]
    pub fn os_page_cache(mut self, keep: bool) -> Options {
        self.os_page_cache = Some(keep);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sst::Codec;

    #[test]
    fn setters_set_exactly_their_field() {
        let o = Options::default()
            .run_size(1 << 20)
            .memory_runs(4)
            .level_runs(3)
            .bloom_fp_rate(0.001)
            .block_cache_size(1 << 20)
            .compression(Compression::none())
            .recovery(RecoveryMode::BestEffort);
        assert_eq!(o.run_size, 1 << 20);
        assert_eq!(o.memory_runs, 4);
        assert_eq!(o.level_runs, 3);
        assert_eq!(o.bloom_fp_rate, 0.001);
        assert_eq!(o.block_cache_size, Some(1 << 20));
        assert_eq!(o.compression.for_level(0, false), Codec::None);
        assert_eq!(o.recovery, RecoveryMode::BestEffort);
        let d = Options::default();
        assert_eq!(o.run_entries, d.run_entries);
        assert_eq!(o.memory_budget, d.memory_budget);
        assert!(Options::default().memory_runs(1).validate().is_err());
    }
}
