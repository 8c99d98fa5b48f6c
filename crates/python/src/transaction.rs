//! `slsm.Transaction`: the engine's optimistic, serializable transactions
//! (`Db.transaction()`), with the point reads and writes of a dict.
//!
//! Reads see the transaction's snapshot and its own writes; writes stay in
//! the transaction until `commit`, which applies them all at once if
//! nothing the transaction read was written since it began, and raises
//! `ConflictError` (applying nothing) otherwise. As a context manager it
//! commits when the block ends without an exception and rolls back when
//! one is raised, like `Db.batch()`. Range reads are not offered: a
//! snapshot (`Db.snapshot()`) reads ranges, and a transaction that must
//! see a range stay unchanged is better written as reads of its keys.

use std::sync::{Arc, Mutex, MutexGuard};

use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use crate::db::Keyspace;
use crate::errors::{InvalidArgumentError, OrPy};
use crate::handle::{Guard, Handles, Slot};

/// The engine's transaction, `None` once committed or rolled back.
type Open = Mutex<Option<slsm::Transaction>>;

/// A transaction on a database (see the module documentation): `with
/// db.transaction() as tx: tx[b"n"] = ...` commits at the end of the block
/// or raises `ConflictError`; retry the block on that error.
#[pyclass(frozen, module = "slsm")]
pub struct Transaction {
    tx: Arc<Slot<Open>>,
}

impl Transaction {
    pub fn new(py: Python<'_>, handles: &Arc<Handles>, tx: slsm::Transaction) -> Transaction {
        let tx = Slot::new(Mutex::new(Some(tx)));
        handles.track(py, &tx);
        Transaction { tx }
    }

    /// Runs `f` on the open transaction with the GIL released (the
    /// engine's reads may wait for the disk); `InvalidArgumentError` once
    /// it is committed or rolled back.
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut slsm::Transaction) -> slsm::Result<T> + Send,
    ) -> PyResult<T> {
        let slot = self.tx.get()?;
        py.allow_threads(|| {
            let mut open = lock(&slot);
            match open.as_mut() {
                Some(tx) => Ok(f(tx)),
                None => Err(ended()),
            }
        })?
        .or_py()
    }

    /// Ends the transaction with `end` (a commit or a rollback), with the
    /// GIL released; `None` if it had already ended. The slot stays held
    /// until `end` returns, so a `Db.close` racing with it waits, and the
    /// call sees the database open or raises `ClosedError`, never the
    /// engine's own closed-database error.
    fn end<T: Send>(
        &self,
        py: Python<'_>,
        end: impl FnOnce(slsm::Transaction) -> T + Send,
    ) -> PyResult<Option<T>> {
        let slot = self.tx.get()?;
        Ok(py.allow_threads(|| lock(&slot).take().map(end)))
    }
}

fn lock<'a>(slot: &'a Guard<'_, Open>) -> MutexGuard<'a, Option<slsm::Transaction>> {
    slot.lock().unwrap_or_else(|p| p.into_inner())
}

fn ended() -> PyErr {
    InvalidArgumentError::new_err("the transaction was already committed or rolled back")
}

/// The engine keyspace of a `keyspace=` argument, held for one call.
fn space(keyspace: Option<&Keyspace>) -> PyResult<Option<Guard<'_, slsm::Keyspace>>> {
    keyspace.map(|k| k.slot.get()).transpose()
}

#[pymethods]
impl Transaction {
    /// The value of `key` (in `keyspace`) as the transaction sees it, or
    /// `default`.
    #[pyo3(signature = (key, default = None, keyspace = None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        key: &[u8],
        default: Option<Bound<'py, PyAny>>,
        keyspace: Option<&Keyspace>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let ks = space(keyspace)?;
        let value = self.with(py, |tx| match &ks {
            Some(ks) => tx.get_in(ks, key),
            None => tx.get(key),
        })?;
        match value {
            Some(v) => Ok(Some(PyBytes::new(py, &v).into_any())),
            None => Ok(default),
        }
    }

    fn __getitem__<'py>(&self, py: Python<'py>, key: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
        match self.with(py, |tx| tx.get(key))? {
            Some(v) => Ok(PyBytes::new(py, &v)),
            None => Err(PyKeyError::new_err(PyBytes::new(py, key).unbind())),
        }
    }

    fn __contains__(&self, py: Python<'_>, key: &[u8]) -> PyResult<bool> {
        self.with(py, |tx| tx.contains_key(key))
    }

    /// The values of `keys` (`None` where absent), as the transaction
    /// sees them.
    #[pyo3(signature = (keys, keyspace = None))]
    fn multi_get<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        keyspace: Option<&Keyspace>,
    ) -> PyResult<Bound<'py, PyList>> {
        let keys = crate::multi::keys_of(keys)?;
        let ks = space(keyspace)?;
        let values = self.with(py, |tx| match &ks {
            Some(ks) => tx.multi_get_in(ks, &keys.slices()),
            None => tx.multi_get(&keys.slices()),
        })?;
        PyList::new(
            py,
            values
                .iter()
                .map(|v| v.as_deref().map(|v| PyBytes::new(py, v))),
        )
    }

    /// Sets `key` to `value` when the transaction commits.
    #[pyo3(signature = (key, value, keyspace = None))]
    fn put(
        &self,
        py: Python<'_>,
        key: &[u8],
        value: &[u8],
        keyspace: Option<&Keyspace>,
    ) -> PyResult<()> {
        let ks = space(keyspace)?;
        self.with(py, |tx| match &ks {
            Some(ks) => tx.put_in(ks, key, value),
            None => tx.put(key, value),
        })
    }

    fn __setitem__(&self, py: Python<'_>, key: &[u8], value: &[u8]) -> PyResult<()> {
        self.with(py, |tx| tx.put(key, value))
    }

    /// Deletes `key` when the transaction commits.
    #[pyo3(signature = (key, keyspace = None))]
    fn delete(&self, py: Python<'_>, key: &[u8], keyspace: Option<&Keyspace>) -> PyResult<()> {
        let ks = space(keyspace)?;
        self.with(py, |tx| match &ks {
            Some(ks) => tx.delete_in(ks, key),
            None => tx.delete(key),
        })
    }

    /// `del tx[key]`: `KeyError` if the transaction sees no value.
    fn __delitem__(&self, py: Python<'_>, key: &[u8]) -> PyResult<()> {
        let existed = self.with(py, |tx| {
            let existed = tx.contains_key(key)?;
            if existed {
                tx.delete(key)?;
            }
            Ok(existed)
        })?;
        match existed {
            true => Ok(()),
            false => Err(PyKeyError::new_err(PyBytes::new(py, key).unbind())),
        }
    }

    /// Applies every write at once if nothing the transaction read was
    /// written since it began; raises `ConflictError` otherwise (nothing
    /// applied). `sync=True` returns once the writes are durable against
    /// a power loss. The transaction ends either way.
    #[pyo3(signature = (sync = false))]
    fn commit(&self, py: Python<'_>, sync: bool) -> PyResult<()> {
        let opts = slsm::WriteOptions {
            sync,
            ..Default::default()
        };
        self.end(py, |tx| tx.commit_opt(&opts))?
            .ok_or_else(ended)?
            .or_py()
    }

    /// Discards the writes and ends the transaction (harmless if it
    /// already ended).
    fn rollback(&self, py: Python<'_>) -> PyResult<()> {
        self.end(py, slsm::Transaction::rollback).map(drop)
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Commits if the block ended without an exception (raising
    /// `ConflictError` on a conflict) and the transaction is still open;
    /// rolls back otherwise.
    #[pyo3(signature = (exc_type = None, _exc = None, _tb = None))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: Option<&Bound<'_, PyAny>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<bool> {
        let failed = exc_type.is_some_and(|t| !t.is_none());
        // `None`: committed or rolled back inside the block.
        let ended = self.end(py, |tx| match failed {
            true => {
                tx.rollback();
                Ok(())
            }
            false => tx.commit(),
        })?;
        ended.unwrap_or(Ok(())).or_py()?;
        Ok(false)
    }
}
