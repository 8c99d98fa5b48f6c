//! `slsm.Db` and `slsm.Keyspace`.

use std::sync::Arc;

use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::batch::WriteBatch;
use crate::errors::OrPy;
use crate::handle::{Close, Guard, Handles, Slot};
use crate::iter::{bounds, RangeIter, Yield};
use crate::options;
use crate::snapshot::Snapshot;
use crate::space::keyspace_methods;
use crate::transaction::Transaction;

/// An open database (see the module documentation). A context manager:
/// `with slsm.Db(path) as db:` closes it at the end of the block.
#[pyclass(frozen, module = "slsm")]
pub struct Db {
    db: Arc<Slot<Arc<slsm::Db>>>,
    default: Arc<Slot<slsm::Keyspace>>,
    /// Every keyspace, snapshot and iterator given out, closed with it.
    handles: Arc<Handles>,
    path: String,
}

impl Db {
    fn space(&self) -> PyResult<Guard<'_, slsm::Keyspace>> {
        self.default.get()
    }

    pub fn engine(&self) -> PyResult<Guard<'_, Arc<slsm::Db>>> {
        self.db.get()
    }

    fn open(py: Python<'_>, path: String, opts: slsm::Options) -> PyResult<Db> {
        let db = py.allow_threads(|| slsm::Db::open(&path, opts)).or_py()?;
        let default = db.keyspace(slsm::DEFAULT_KEYSPACE).or_py()?;
        Ok(Db {
            db: Slot::new(Arc::new(db)),
            default: Slot::new(default),
            handles: Arc::default(),
            path,
        })
    }
}

keyspace_methods!(Db);

#[pymethods]
impl Db {
    /// Opens (or creates) the database in directory `path`. Every engine
    /// option can be given by name: `memory_budget`, `compression`
    /// (`'none'`, `'lz4'`, `'zstd'`), `sync_writes`, `disable_wal`,
    /// `run_size`, `memory_runs`, `level_runs`,
    /// `max_space_amplification`, `bloom_fp_rate`,
    /// `block_size`, `block_cache_size`, `os_page_cache` (`None`: decided
    /// from the memory limit), `recovery` (`'strict'`,
    /// `'best_effort'`), `create_if_missing`, `error_if_exists`,
    /// `read_only`, ...
    #[new]
    #[pyo3(signature = (path, **options))]
    fn new(
        py: Python<'_>,
        path: std::path::PathBuf,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Db> {
        let opts = options::from_kwargs(options)?;
        Db::open(py, path.to_string_lossy().into_owned(), opts)
    }

    /// Opens `path` for reading only: no lock, nothing written (the log is
    /// replayed in memory); writes raise `ReadOnlyError`.
    #[staticmethod]
    #[pyo3(signature = (path, **options))]
    fn open_read_only(
        py: Python<'_>,
        path: std::path::PathBuf,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Db> {
        let mut opts = options::from_kwargs(options)?;
        opts.read_only = true;
        Db::open(py, path.to_string_lossy().into_owned(), opts)
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

    /// Closes the database (flushes what is only in memory, syncs the log,
    /// releases the lock). Later calls raise `ClosedError`, on it and on
    /// every keyspace, snapshot and iterator it gave out; closing twice is
    /// harmless.
    fn close(&self, py: Python<'_>) {
        self.handles.close_all(py);
        self.default.close_handle(py);
        self.db.close_handle(py);
    }

    /// The database directory.
    #[getter]
    fn path(&self) -> &str {
        &self.path
    }

    /// Applies `batch` atomically (all of it or none, across keyspaces).
    #[pyo3(signature = (batch, sync = false))]
    fn write(&self, py: Python<'_>, batch: &WriteBatch, sync: bool) -> PyResult<()> {
        let db = self.engine()?;
        batch.write_to(py, &db, sync)
    }

    /// A batch applied when the `with` block ends without an exception
    /// (and discarded if one is raised): `with db.batch() as b: b.put(...)`.
    fn batch(&self) -> PyResult<WriteBatch> {
        Ok(WriteBatch::for_db(Arc::clone(&*self.engine()?)))
    }

    /// A consistent view of every keyspace as of now; a context manager
    /// that releases it at the end of the block.
    fn snapshot(&self, py: Python<'_>) -> PyResult<Snapshot> {
        let db = self.engine()?;
        let default = self.default.get()?.clone();
        Ok(Snapshot::new(py, &self.handles, db.snapshot(), default))
    }

    /// An optimistic, serializable transaction (see `Transaction`): `with
    /// db.transaction() as tx:` commits at the end of the block, or raises
    /// `ConflictError` if something it read was written meanwhile.
    fn transaction(&self, py: Python<'_>) -> PyResult<Transaction> {
        let db = self.engine()?;
        let tx = py.allow_threads(|| db.transaction());
        Ok(Transaction::new(py, &self.handles, tx))
    }

    /// The keyspace `name` (created if missing).
    fn keyspace(&self, py: Python<'_>, name: &str) -> PyResult<Keyspace> {
        let db = self.engine()?;
        let ks = py.allow_threads(|| db.keyspace(name)).or_py()?;
        let slot = Slot::new(ks);
        self.handles.track(py, &slot);
        Ok(Keyspace {
            slot,
            db: Arc::clone(&self.db),
            handles: Arc::clone(&self.handles),
            name: name.to_string(),
        })
    }

    /// The names of every keyspace, `'default'` first.
    fn keyspace_names(&self) -> PyResult<Vec<String>> {
        Ok(self.engine()?.keyspace_names())
    }

    /// Drops keyspace `name` and all its keys.
    fn drop_keyspace(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        let db = self.engine()?;
        py.allow_threads(|| db.drop_keyspace(name)).or_py()
    }

    /// Writes every memory run to disk.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        let db = self.engine()?;
        py.allow_threads(|| db.flush()).or_py()
    }

    /// Merges everything into one run on the deepest level.
    fn compact(&self, py: Python<'_>) -> PyResult<()> {
        let db = self.engine()?;
        py.allow_threads(|| db.compact()).or_py()
    }

    /// Makes every acknowledged write durable against a power loss.
    fn sync(&self, py: Python<'_>) -> PyResult<()> {
        let db = self.engine()?;
        py.allow_threads(|| db.sync()).or_py()
    }

    /// A consistent copy of the database in directory `dest` (which must
    /// not exist or be empty), taken while it stays open.
    fn checkpoint(&self, py: Python<'_>, dest: std::path::PathBuf) -> PyResult<()> {
        let db = self.engine()?;
        py.allow_threads(|| db.checkpoint(&dest)).or_py()
    }

    /// Levels, memory and cache figures, as a dict.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.engine()?.stats();
        crate::stats::to_dict(py, &s)
    }

    fn __repr__(&self) -> String {
        format!("slsm.Db({:?})", self.path)
    }
}

/// A keyspace (column family): its own sorted key space in the database,
/// with the same methods as `Db`. Get one with `db.keyspace(name)`.
#[pyclass(frozen, module = "slsm")]
pub struct Keyspace {
    pub(crate) slot: Arc<Slot<slsm::Keyspace>>,
    /// The database's own slot: its transactions serve `pop` and
    /// `setdefault`.
    db: Arc<Slot<Arc<slsm::Db>>>,
    handles: Arc<Handles>,
    name: String,
}

impl Keyspace {
    fn space(&self) -> PyResult<Guard<'_, slsm::Keyspace>> {
        self.slot.get()
    }

    fn engine(&self) -> PyResult<Guard<'_, Arc<slsm::Db>>> {
        self.db.get()
    }
}

keyspace_methods!(Keyspace);

#[pymethods]
impl Keyspace {
    /// The keyspace's name.
    #[getter]
    fn name(&self) -> &str {
        &self.name
    }

    fn __repr__(&self) -> String {
        format!("slsm.Keyspace({:?})", self.name)
    }
}
