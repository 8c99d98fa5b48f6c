//! `slsm.Db(path, **options)`: every engine option by name.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use slsm::{Codec, Compression, Options, RecoveryMode};

/// The options named in `kwargs` over the defaults. Unknown names are a
/// `TypeError` (as for any Python function); values the engine refuses,
/// and unknown `compression` or `recovery` names, are
/// `InvalidArgumentError` (a `ValueError`).
pub fn from_kwargs(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Options> {
    let mut o = Options::default();
    let Some(kwargs) = kwargs else {
        return Ok(o);
    };
    for (name, value) in kwargs.iter() {
        let name: String = name.extract()?;
        match name.as_str() {
            "create_if_missing" => o.create_if_missing = field(&name, &value)?,
            "error_if_exists" => o.error_if_exists = field(&name, &value)?,
            "read_only" => o.read_only = field(&name, &value)?,
            "run_size" => o.run_size = field(&name, &value)?,
            "run_entries" => o.run_entries = field(&name, &value)?,
            "memory_runs" => o.memory_runs = field(&name, &value)?,
            "merge_fraction" => o.merge_fraction = field(&name, &value)?,
            "level_runs" => o.level_runs = field(&name, &value)?,
            "max_space_amplification" => o.max_space_amplification = field(&name, &value)?,
            "bloom_fp_rate" => o.bloom_fp_rate = field(&name, &value)?,
            "fence_entries" => o.fence_entries = field(&name, &value)?,
            "block_size" => o.block_size = field(&name, &value)?,
            "memory_budget" => o.memory_budget = field(&name, &value)?,
            "block_cache_size" => o.block_cache_size = field(&name, &value)?,
            "os_page_cache" => o.os_page_cache = field(&name, &value)?,
            "sync_writes" => o.sync_writes = field(&name, &value)?,
            "disable_wal" => o.disable_wal = field(&name, &value)?,
            "background_merges" => o.background_merges = field(&name, &value)?,
            "compression" => o.compression = compression(&field::<String>(&name, &value)?)?,
            "recovery" => o.recovery = recovery(&field::<String>(&name, &value)?)?,
            other => {
                return Err(PyTypeError::new_err(format!(
                    "Db() got an unexpected option {other:?}"
                )))
            }
        }
    }
    Ok(o)
}

/// The value of option `name`; a value of the wrong type or out of the
/// type's range raises what Python raises for it (`TypeError`,
/// `OverflowError` for a negative size), naming the option.
fn field<'py, T: FromPyObject<'py>>(name: &str, value: &Bound<'py, PyAny>) -> PyResult<T> {
    value.extract().map_err(|e| {
        let py = value.py();
        PyErr::from_type(e.get_type(py), format!("option {name}: {}", e.value(py)))
    })
}

fn compression(name: &str) -> PyResult<Compression> {
    Ok(match name {
        "none" => Compression::none(),
        "lz4" => Compression::all(Codec::Lz4),
        "zstd" => Compression::all(Codec::Zstd(3)),
        other => {
            return Err(crate::errors::InvalidArgumentError::new_err(format!(
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
            return Err(crate::errors::InvalidArgumentError::new_err(format!(
                "recovery must be 'strict' or 'best_effort', not {other:?}"
            )))
        }
    })
}
