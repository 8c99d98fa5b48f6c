//! `slsm.Db(path, **options)`: every engine option by name.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use slsm::{Codec, Compression, Options, RecoveryMode};

/// The options named in `kwargs` over the defaults. Unknown names are a
/// `TypeError` (as for any Python function); values the engine refuses are
/// reported by `Db.open` as `InvalidArgumentError`.
pub fn from_kwargs(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Options> {
    let mut o = Options::default();
    let Some(kwargs) = kwargs else {
        return Ok(o);
    };
    for (name, value) in kwargs.iter() {
        let name: String = name.extract()?;
        match name.as_str() {
            "create_if_missing" => o.create_if_missing = value.extract()?,
            "error_if_exists" => o.error_if_exists = value.extract()?,
            "read_only" => o.read_only = value.extract()?,
            "run_size" => o.run_size = value.extract()?,
            "run_entries" => o.run_entries = value.extract()?,
            "memory_runs" => o.memory_runs = value.extract()?,
            "merge_fraction" => o.merge_fraction = value.extract()?,
            "level_runs" => o.level_runs = value.extract()?,
            "max_space_amplification" => o.max_space_amplification = value.extract()?,
            "bloom_fp_rate" => o.bloom_fp_rate = value.extract()?,
            "fence_entries" => o.fence_entries = value.extract()?,
            "block_size" => o.block_size = value.extract()?,
            "memory_budget" => o.memory_budget = value.extract()?,
            "block_cache_size" => o.block_cache_size = value.extract()?,
            "os_page_cache" => o.os_page_cache = value.extract()?,
            "sync_writes" => o.sync_writes = value.extract()?,
            "disable_wal" => o.disable_wal = value.extract()?,
            "background_merges" => o.background_merges = value.extract()?,
            "compression" => o.compression = compression(&value.extract::<String>()?)?,
            "recovery" => o.recovery = recovery(&value.extract::<String>()?)?,
            other => {
                return Err(PyTypeError::new_err(format!(
                    "Db() got an unexpected option {other:?}"
                )))
            }
        }
    }
    Ok(o)
}

fn compression(name: &str) -> PyResult<Compression> {
    Ok(match name {
        "none" => Compression::none(),
        "lz4" => Compression::all(Codec::Lz4),
        "zstd" => Compression::all(Codec::Zstd(3)),
        other => {
            return Err(PyValueError::new_err(format!(
                "compression must be 'none', 'lz4' or 'zstd', not {other:?}"
            )))
        }
    })
}

fn recovery(name: &str) -> PyResult<RecoveryMode> {
    Ok(match name {
        "strict" => RecoveryMode::Strict,
        "best_effort" => RecoveryMode::BestEffort,
        other => {
            return Err(PyValueError::new_err(format!(
                "recovery must be 'strict' or 'best_effort', not {other:?}"
            )))
        }
    })
}
