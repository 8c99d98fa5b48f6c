//! The read and write methods `Db` and `Keyspace` share (a `Db`'s act on
//! its default keyspace), written once as a macro that expands into a
//! `#[pymethods]` block for each class; their own methods are in another.

use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;

use crate::errors::OrPy;

/// Expands to `#[pymethods] impl $class { shared methods }`. `$class` has
/// `fn space(&self) -> PyResult<Guard<'_, slsm::Keyspace>>` and a field
/// `handles: Arc<Handles>` (where its iterators are tracked).
macro_rules! keyspace_methods {
    ($class:ty) => {
        #[pymethods]
        impl $class {
            /// `self[key]`: the value, or `KeyError`.
            fn __getitem__<'py>(
                &self,
                py: Python<'py>,
                key: &[u8],
            ) -> PyResult<Bound<'py, PyBytes>> {
                let ks = self.space()?;
                match py.allow_threads(|| ks.get(key)).or_py()? {
                    Some(v) => Ok(PyBytes::new(py, &v)),
                    None => Err(PyKeyError::new_err(PyBytes::new(py, key).unbind())),
                }
            }

            /// `self[key] = value`.
            fn __setitem__(&self, py: Python<'_>, key: &[u8], value: &[u8]) -> PyResult<()> {
                let ks = self.space()?;
                py.allow_threads(|| ks.put(key, value)).or_py()
            }

            /// `del self[key]`: `KeyError` if absent, as for a dict. One
            /// transaction: of two threads deleting one key, one gets the
            /// `KeyError`.
            fn __delitem__(&self, py: Python<'_>, key: &[u8]) -> PyResult<()> {
                match $crate::space::take(py, &*self.engine()?, &*self.space()?, key)? {
                    Some(_) => Ok(()),
                    None => Err(PyKeyError::new_err(PyBytes::new(py, key).unbind())),
                }
            }

            /// Removes `key` and returns its value, as `dict.pop`: `default`
            /// if it is absent, or `KeyError` when no default is given. One
            /// transaction: a value is popped once.
            #[pyo3(signature = (key, *default))]
            fn pop<'py>(
                &self,
                py: Python<'py>,
                key: &[u8],
                default: &Bound<'py, pyo3::types::PyTuple>,
            ) -> PyResult<Bound<'py, PyAny>> {
                if default.len() > 1 {
                    return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                        "pop expected at most 2 arguments, got {}",
                        default.len() + 1
                    )));
                }
                match $crate::space::take(py, &*self.engine()?, &*self.space()?, key)? {
                    Some(v) => Ok(PyBytes::new(py, &v).into_any()),
                    None => default
                        .get_item(0)
                        .map_err(|_| PyKeyError::new_err(PyBytes::new(py, key).unbind())),
                }
            }

            /// The value of `key`, after setting it to `default` if it was
            /// absent, as `dict.setdefault` (but `default` is required: a
            /// value is `bytes`). One transaction.
            fn setdefault<'py>(
                &self,
                py: Python<'py>,
                key: &[u8],
                default: &[u8],
            ) -> PyResult<Bound<'py, PyBytes>> {
                let value = $crate::space::in_transaction(
                    py,
                    &*self.engine()?,
                    &*self.space()?,
                    |tx, ks| match tx.get_in(ks, key)? {
                        Some(v) => Ok(v.to_vec()),
                        None => tx.put_in(ks, key, default).map(|()| default.to_vec()),
                    },
                )?;
                Ok(PyBytes::new(py, &value))
            }

            /// Writes every pair of `other` (a mapping, or an iterable of
            /// `(key, value)` pairs), as `dict.update`, in one atomic batch.
            fn update(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> PyResult<()> {
                let pairs = $crate::space::pairs_of(other)?;
                let (db, ks) = (self.engine()?, self.space()?);
                py.allow_threads(|| {
                    let mut batch = slsm::WriteBatch::new();
                    for (k, v) in &pairs {
                        batch.put_in(&ks, k, v);
                    }
                    db.write(batch)
                })
                .or_py()
            }

            /// `key in self`.
            fn __contains__(&self, py: Python<'_>, key: &[u8]) -> PyResult<bool> {
                let ks = self.space()?;
                py.allow_threads(|| ks.contains_key(key)).or_py()
            }

            /// Iterates over the keys, ascending.
            fn __iter__(&self, py: Python<'_>) -> PyResult<RangeIter> {
                let ks = self.space()?;
                let it = ks.iter();
                Ok(RangeIter::new(py, &self.handles, it, false, Yield::Keys))
            }

            /// The value of `key`, or `default`.
            #[pyo3(signature = (key, default = None))]
            fn get<'py>(
                &self,
                py: Python<'py>,
                key: &[u8],
                default: Option<Bound<'py, PyAny>>,
            ) -> PyResult<Option<Bound<'py, PyAny>>> {
                let ks = self.space()?;
                match py.allow_threads(|| ks.get(key)).or_py()? {
                    Some(v) => Ok(Some(PyBytes::new(py, &v).into_any())),
                    None => Ok(default),
                }
            }

            /// Sets `key` to `value`; with `sync=True` the log is synced first.
            #[pyo3(signature = (key, value, sync = false))]
            fn put(&self, py: Python<'_>, key: &[u8], value: &[u8], sync: bool) -> PyResult<()> {
                let ks = self.space()?;
                let opts = slsm::WriteOptions {
                    sync,
                    ..Default::default()
                };
                py.allow_threads(|| ks.put_opt(key, value, &opts)).or_py()
            }

            /// Deletes `key` (no error if it is absent).
            #[pyo3(signature = (key, sync = false))]
            fn delete(&self, py: Python<'_>, key: &[u8], sync: bool) -> PyResult<()> {
                let ks = self.space()?;
                let opts = slsm::WriteOptions {
                    sync,
                    ..Default::default()
                };
                py.allow_threads(|| ks.delete_opt(key, &opts)).or_py()
            }

            /// Deletes every key `k` with `start <= k < end`, in O(1).
            fn delete_range(&self, py: Python<'_>, start: &[u8], end: &[u8]) -> PyResult<()> {
                let ks = self.space()?;
                py.allow_threads(|| ks.delete_range(start, end)).or_py()
            }

            /// The values of `keys` (`None` where absent), in their order:
            /// one sorted batch through the engine.
            fn multi_get<'py>(
                &self,
                py: Python<'py>,
                keys: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, PyList>> {
                let keys = $crate::multi::keys_of(keys)?;
                let ks = self.space()?;
                let values = py
                    .allow_threads(|| $crate::multi::Values::of(&ks, &keys.slices()))
                    .or_py()?;
                PyList::new(py, (0..keys.len()).map(|i| values.get(i).map(|v| PyBytes::new(py, v))))
            }

            /// Bulk-loads `(key, value)` pairs in strictly ascending key
            /// order straight into a run file; returns how many.
            fn ingest(
                &self,
                py: Python<'_>,
                pairs: Vec<(pyo3::pybacked::PyBackedBytes, pyo3::pybacked::PyBackedBytes)>,
            ) -> PyResult<u64> {
                let ks = self.space()?;
                py.allow_threads(|| ks.ingest(pairs)).or_py()
            }

            /// `(key, value)` pairs between `start` (inclusive) and `end`
            /// (exclusive), or with `prefix`; descending with `reverse`. A
            /// snapshot: writes meanwhile do not change what it yields.
            #[pyo3(signature = (start = None, end = None, reverse = false, prefix = None))]
            fn items(
                &self,
                py: Python<'_>,
                start: Option<&[u8]>,
                end: Option<&[u8]>,
                reverse: bool,
                prefix: Option<&[u8]>,
            ) -> PyResult<RangeIter> {
                RangeIter::over(
                    py,
                    &self.handles,
                    &*self.space()?,
                    bounds(start, end, prefix)?,
                    reverse,
                    Yield::Items,
                )
            }

            /// The keys of [`items`].
            #[pyo3(signature = (start = None, end = None, reverse = false, prefix = None))]
            fn keys(
                &self,
                py: Python<'_>,
                start: Option<&[u8]>,
                end: Option<&[u8]>,
                reverse: bool,
                prefix: Option<&[u8]>,
            ) -> PyResult<RangeIter> {
                RangeIter::over(
                    py,
                    &self.handles,
                    &*self.space()?,
                    bounds(start, end, prefix)?,
                    reverse,
                    Yield::Keys,
                )
            }

            /// The values of [`items`].
            #[pyo3(signature = (start = None, end = None, reverse = false, prefix = None))]
            fn values(
                &self,
                py: Python<'_>,
                start: Option<&[u8]>,
                end: Option<&[u8]>,
                reverse: bool,
                prefix: Option<&[u8]>,
            ) -> PyResult<RangeIter> {
                RangeIter::over(
                    py,
                    &self.handles,
                    &*self.space()?,
                    bounds(start, end, prefix)?,
                    reverse,
                    Yield::Values,
                )
            }
        }
    };
}

pub(crate) use keyspace_methods;

/// Runs `f` in a transaction on `ks`, with the GIL released, again and
/// again until it commits without a conflict.
pub fn in_transaction<T: Send>(
    py: Python<'_>,
    db: &slsm::Db,
    ks: &slsm::Keyspace,
    f: impl Fn(&mut slsm::Transaction, &slsm::Keyspace) -> slsm::Result<T> + Sync,
) -> PyResult<T> {
    py.allow_threads(|| loop {
        let mut tx = db.transaction();
        let out = f(&mut tx, ks)?;
        match tx.commit() {
            Ok(()) => return Ok(out),
            Err(slsm::Error::Conflict) => continue,
            Err(e) => return Err(e),
        }
    })
    .or_py()
}

/// Deletes `key` and returns the value it had, in one transaction.
pub fn take(
    py: Python<'_>,
    db: &slsm::Db,
    ks: &slsm::Keyspace,
    key: &[u8],
) -> PyResult<Option<Vec<u8>>> {
    in_transaction(py, db, ks, |tx, ks| {
        let old = tx.get_in(ks, key)?.map(|v| v.to_vec());
        if old.is_some() {
            tx.delete_in(ks, key)?;
        }
        Ok(old)
    })
}

/// The `(key, value)` pairs of `other`: a mapping's items (anything with
/// `items()`), or any iterable of pairs, each `bytes`.
pub fn pairs_of(other: &Bound<'_, PyAny>) -> PyResult<Vec<(PyBackedBytes, PyBackedBytes)>> {
    let items = if other.hasattr("items")? {
        other.call_method0("items")?
    } else {
        other.clone()
    };
    let mut out = Vec::with_capacity(items.len().unwrap_or(0));
    for pair in items.try_iter()? {
        out.push(pair?.extract::<(PyBackedBytes, PyBackedBytes)>()?);
    }
    Ok(out)
}
