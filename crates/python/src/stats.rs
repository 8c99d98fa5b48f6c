//! `Db.stats()` as a dict.

use pyo3::prelude::*;
use pyo3::types::PyDict;

pub fn to_dict<'py>(py: Python<'py>, s: &slsm::Stats) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let levels = s
        .levels
        .iter()
        .map(|l| {
            let level = PyDict::new(py);
            level.set_item("runs", l.runs)?;
            level.set_item("entries", l.entries)?;
            level.set_item("bytes", l.bytes)?;
            Ok(level)
        })
        .collect::<PyResult<Vec<_>>>()?;
    d.set_item("levels", levels)?;
    d.set_item("memory_runs", s.memory_runs)?;
    d.set_item("memory_entries", s.memory_entries)?;
    d.set_item("memory_bytes", s.memory_bytes)?;
    d.set_item("flushes", s.flushes)?;
    d.set_item("merges", s.merges)?;
    d.set_item("user_bytes_written", s.user_bytes_written)?;
    d.set_item("write_amplification", s.write_amplification())?;
    d.set_item("stall_count", s.stall_count)?;
    d.set_item("last_sequence", s.last_sequence)?;
    let cache = &s.memory.cache;
    let c = PyDict::new(py);
    c.set_item("capacity", cache.capacity)?;
    c.set_item("usage", cache.usage)?;
    c.set_item("hits", cache.hits)?;
    c.set_item("misses", cache.misses)?;
    c.set_item("bypasses_os_cache", cache.bypasses_os_cache)?;
    c.set_item("readahead", cache.readahead)?;
    d.set_item("block_cache", c)?;
    d.set_item("memory_budget", s.memory.budget)?;
    d.set_item("memory_total", s.memory.total())?;
    d.set_item("background_error", s.background_error.clone())?;
    Ok(d)
}
