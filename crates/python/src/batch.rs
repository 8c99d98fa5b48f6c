//! `slsm.WriteBatch`: writes applied atomically by `Db.write`, or by the
//! end of a `with db.batch() as b:` block.

use std::sync::{Arc, Mutex, MutexGuard, Weak};

use pyo3::prelude::*;

use crate::db::Keyspace;
use crate::errors::{ClosedError, InvalidArgumentError, OrPy};

/// Writes to apply atomically, across keyspaces. Keys and values are
/// checked when the batch is written; nothing of an invalid batch applies.
#[pyclass(frozen, module = "slsm")]
pub struct WriteBatch {
    batch: Mutex<slsm::WriteBatch>,
    /// The database of `db.batch()`, which the `with` block writes to.
    db: Option<Weak<slsm::Db>>,
}

impl WriteBatch {
    pub fn for_db(db: Arc<slsm::Db>) -> WriteBatch {
        WriteBatch {
            batch: Mutex::new(slsm::WriteBatch::new()),
            db: Some(Arc::downgrade(&db)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, slsm::WriteBatch> {
        self.batch.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Applies the batch to `db` and empties it.
    pub fn write_to(&self, py: Python<'_>, db: &slsm::Db, sync: bool) -> PyResult<()> {
        let batch = std::mem::take(&mut *self.lock());
        let opts = slsm::WriteOptions {
            sync,
            ..Default::default()
        };
        py.allow_threads(|| db.write_opt(batch, &opts)).or_py()
    }
}

#[pymethods]
impl WriteBatch {
    /// An empty batch, for `db.write(batch)`.
    #[new]
    fn new() -> WriteBatch {
        WriteBatch {
            batch: Mutex::new(slsm::WriteBatch::new()),
            db: None,
        }
    }

    /// Sets `key` to `value` (in `keyspace`, default the database's own).
    #[pyo3(signature = (key, value, keyspace = None))]
    fn put(&self, key: &[u8], value: &[u8], keyspace: Option<&Keyspace>) -> PyResult<()> {
        match keyspace {
            // The keyspace first: waiting for it must not hold the batch.
            Some(ks) => {
                let ks = ks.slot.get()?;
                self.lock().put_in(&ks, key, value)
            }
            None => self.lock().put(key, value),
        };
        Ok(())
    }

    /// Deletes `key`.
    #[pyo3(signature = (key, keyspace = None))]
    fn delete(&self, key: &[u8], keyspace: Option<&Keyspace>) -> PyResult<()> {
        match keyspace {
            Some(ks) => {
                let ks = ks.slot.get()?;
                self.lock().delete_in(&ks, key)
            }
            None => self.lock().delete(key),
        };
        Ok(())
    }

    /// Deletes every key `k` with `start <= k < end`.
    #[pyo3(signature = (start, end, keyspace = None))]
    fn delete_range(&self, start: &[u8], end: &[u8], keyspace: Option<&Keyspace>) -> PyResult<()> {
        match keyspace {
            Some(ks) => {
                let ks = ks.slot.get()?;
                self.lock().delete_range_in(&ks, start, end)
            }
            None => self.lock().delete_range(start, end),
        };
        Ok(())
    }

    /// Removes every operation.
    fn clear(&self) {
        self.lock().clear();
    }

    /// The number of operations.
    fn __len__(&self) -> usize {
        self.lock().len()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Writes the batch if the block ended without an exception; discards
    /// it otherwise.
    #[pyo3(signature = (exc_type = None, _exc = None, _tb = None))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyAny>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        if exc_type.is_some_and(|t| !t.is_none()) {
            self.lock().clear();
            return Ok(false);
        }
        let Some(db) = &self.db else {
            return Err(InvalidArgumentError::new_err(
                "a WriteBatch() made directly is written with db.write(batch); use db.batch() for a with block",
            ));
        };
        let db = db
            .upgrade()
            .ok_or_else(|| ClosedError::new_err("the database is closed"))?;
        self.write_to(py, &db, false)?;
        Ok(false)
    }
}
