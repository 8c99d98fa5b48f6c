//! `slsm.Snapshot`: a point-in-time view with the read methods of `Db`.

use std::sync::Arc;

use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use crate::db::Keyspace;
use crate::errors::OrPy;
use crate::handle::{Close, Guard, Handles, Slot};
use crate::iter::{bounds, RangeIter, Yield};

/// A consistent view of every keyspace as of `db.snapshot()`. A context
/// manager: the end of the `with` block releases it (so merges may drop
/// what only it could see); later reads raise `ClosedError`.
#[pyclass(frozen, module = "slsm")]
pub struct Snapshot {
    snap: Arc<Slot<(slsm::Snapshot, slsm::Keyspace)>>,
    /// The database's handles: the snapshot and its iterators close with it.
    handles: Arc<Handles>,
}

impl Snapshot {
    pub fn new(
        py: Python<'_>,
        handles: &Arc<Handles>,
        snap: slsm::Snapshot,
        default: slsm::Keyspace,
    ) -> Snapshot {
        let snap = Slot::new((snap, default));
        handles.track(py, &snap);
        Snapshot {
            snap,
            handles: Arc::clone(handles),
        }
    }

    fn view(&self) -> PyResult<Guard<'_, (slsm::Snapshot, slsm::Keyspace)>> {
        self.snap.get()
    }
}

/// The keyspace a snapshot read goes to.
fn target<'a>(
    default: &'a slsm::Keyspace,
    given: &'a Option<Guard<'a, slsm::Keyspace>>,
) -> &'a slsm::Keyspace {
    match given {
        Some(g) => g,
        None => default,
    }
}

#[pymethods]
impl Snapshot {
    /// The value of `key` (in `keyspace`) as of the snapshot, or `default`.
    #[pyo3(signature = (key, default = None, keyspace = None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        key: &[u8],
        default: Option<Bound<'py, PyAny>>,
        keyspace: Option<&Keyspace>,
    ) -> PyResult<Option<Bound<'py, PyAny>>> {
        let view = self.view()?;
        let ks = keyspace.map(|k| k.slot.get()).transpose()?;
        let ks = target(&view.1, &ks);
        match py.allow_threads(|| view.0.get_in(ks, key)).or_py()? {
            Some(v) => Ok(Some(PyBytes::new(py, &v).into_any())),
            None => Ok(default),
        }
    }

    fn __getitem__<'py>(&self, py: Python<'py>, key: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
        let view = self.view()?;
        match py.allow_threads(|| view.0.get(key)).or_py()? {
            Some(v) => Ok(PyBytes::new(py, &v)),
            None => Err(PyKeyError::new_err(PyBytes::new(py, key).unbind())),
        }
    }

    fn __contains__(&self, py: Python<'_>, key: &[u8]) -> PyResult<bool> {
        let view = self.view()?;
        py.allow_threads(|| view.0.contains_key(key)).or_py()
    }

    /// The values of `keys` as of the snapshot.
    #[pyo3(signature = (keys, keyspace = None))]
    fn multi_get<'py>(
        &self,
        py: Python<'py>,
        keys: &Bound<'py, PyAny>,
        keyspace: Option<&Keyspace>,
    ) -> PyResult<Bound<'py, PyList>> {
        let keys = crate::multi::keys_of(keys)?;
        let view = self.view()?;
        let ks = keyspace.map(|k| k.slot.get()).transpose()?;
        let ks = target(&view.1, &ks);
        let values = py
            .allow_threads(|| view.0.multi_get_in(ks, &keys.slices()))
            .or_py()?;
        PyList::new(
            py,
            values
                .iter()
                .map(|v| v.as_deref().map(|v| PyBytes::new(py, v))),
        )
    }

    /// `(key, value)` pairs as of the snapshot (see `Db.items`).
    #[pyo3(signature = (start = None, end = None, reverse = false, prefix = None, keyspace = None))]
    fn items(
        &self,
        py: Python<'_>,
        start: Option<&[u8]>,
        end: Option<&[u8]>,
        reverse: bool,
        prefix: Option<&[u8]>,
        keyspace: Option<&Keyspace>,
    ) -> PyResult<RangeIter> {
        self.range(py, start, end, reverse, prefix, keyspace, Yield::Items)
    }

    /// Keys as of the snapshot.
    #[pyo3(signature = (start = None, end = None, reverse = false, prefix = None, keyspace = None))]
    fn keys(
        &self,
        py: Python<'_>,
        start: Option<&[u8]>,
        end: Option<&[u8]>,
        reverse: bool,
        prefix: Option<&[u8]>,
        keyspace: Option<&Keyspace>,
    ) -> PyResult<RangeIter> {
        self.range(py, start, end, reverse, prefix, keyspace, Yield::Keys)
    }

    /// Values as of the snapshot.
    #[pyo3(signature = (start = None, end = None, reverse = false, prefix = None, keyspace = None))]
    fn values(
        &self,
        py: Python<'_>,
        start: Option<&[u8]>,
        end: Option<&[u8]>,
        reverse: bool,
        prefix: Option<&[u8]>,
        keyspace: Option<&Keyspace>,
    ) -> PyResult<RangeIter> {
        self.range(py, start, end, reverse, prefix, keyspace, Yield::Values)
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (_exc_type = None, _exc = None, _tb = None))]
    fn __exit__(
        &self,
        py: Python<'_>,
        _exc_type: Option<&Bound<'_, PyAny>>,
        _exc: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) -> bool {
        self.close(py);
        false
    }

    /// Releases the snapshot.
    fn close(&self, py: Python<'_>) {
        self.snap.close_handle(py);
    }
}

impl Snapshot {
    #[allow(clippy::too_many_arguments)]
    fn range(
        &self,
        py: Python<'_>,
        start: Option<&[u8]>,
        end: Option<&[u8]>,
        reverse: bool,
        prefix: Option<&[u8]>,
        keyspace: Option<&Keyspace>,
        what: Yield,
    ) -> PyResult<RangeIter> {
        let view = self.view()?;
        let ks = keyspace.map(|k| k.slot.get()).transpose()?;
        let ks = target(&view.1, &ks);
        let range = bounds(start, end, prefix)?;
        let it = view.0.range_in::<Vec<u8>, _>(ks, range);
        Ok(RangeIter::new(py, &self.handles, it, reverse, what))
    }
}
