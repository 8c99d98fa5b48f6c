//! The `slsm` Python module: an embedded key-value store that feels like a
//! dict of `bytes` (see `crates/python/README.md`).
//!
//! Every engine call that may block or take long runs with the GIL
//! released, so threads scale; iteration fetches entries in chunks of 256
//! the same way. Objects are safe to share between threads.

mod batch;
mod db;
mod errors;
mod handle;
mod iter;
mod multi;
mod options;
mod snapshot;
mod space;
mod stats;
mod transaction;

use pyo3::prelude::*;

#[pymodule]
fn slsm(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<db::Db>()?;
    m.add_class::<db::Keyspace>()?;
    m.add_class::<batch::WriteBatch>()?;
    m.add_class::<snapshot::Snapshot>()?;
    m.add_class::<iter::RangeIter>()?;
    m.add_class::<transaction::Transaction>()?;
    errors::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
