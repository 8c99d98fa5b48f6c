//! `slsm.Error` and its subclasses: every engine error becomes one of
//! them, with the engine's message.

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::types::PyTuple;
use pyo3::prelude::*;

create_exception!(
    slsm,
    Error,
    PyException,
    "Base class of every error slsm raises."
);
create_exception!(
    slsm,
    CorruptionError,
    Error,
    "Stored data failed a checksum or a format check."
);
create_exception!(
    slsm,
    IoError,
    Error,
    "The operating system refused a file operation (full disk, permissions, ...)."
);
create_exception!(
    slsm,
    InvalidArgumentError,
    Error,
    "A key or value too large, an invalid option, an empty range (also a ValueError)."
);
create_exception!(
    slsm,
    LockedError,
    Error,
    "Another process or another Db holds the database."
);
create_exception!(
    slsm,
    ReadOnlyError,
    Error,
    "A write to a database opened read-only."
);
create_exception!(
    slsm,
    NotADatabaseError,
    Error,
    "The directory holds something that is not an slsm database."
);
create_exception!(
    slsm,
    ConflictError,
    Error,
    "A transaction read something written since it began; retry it."
);
create_exception!(
    slsm,
    ClosedError,
    Error,
    "The Db (or snapshot, or batch) was closed."
);

/// The Python exception for an engine error.
pub fn to_py(e: slsm::Error) -> PyErr {
    let msg = e.to_string();
    match e {
        slsm::Error::Corruption { .. } => CorruptionError::new_err(msg),
        slsm::Error::Io { .. } => IoError::new_err(msg),
        slsm::Error::InvalidArgument(_) => InvalidArgumentError::new_err(msg),
        slsm::Error::Locked(_) => LockedError::new_err(msg),
        // The engine's text names the Rust call; a Python user opens with
        // `slsm.Db`.
        slsm::Error::ReadOnly(path) => ReadOnlyError::new_err(format!(
            "database {} is open read-only (Db.open_read_only); open it with slsm.Db(path) to write",
            path.display()
        )),
        slsm::Error::NotADatabase { .. } => NotADatabaseError::new_err(msg),
        slsm::Error::Conflict => ConflictError::new_err(msg),
        slsm::Error::Closed(_) => ClosedError::new_err("the database is closed"),
        _ => Error::new_err(msg),
    }
}

/// `?` for engine results.
pub trait OrPy<T> {
    fn or_py(self) -> PyResult<T>;
}

impl<T> OrPy<T> for slsm::Result<T> {
    fn or_py(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    // An invalid argument is a `ValueError` too, as Python code expects
    // (`except ValueError` around a call with a bad key or option);
    // `create_exception!` takes one base, so the second is added here.
    let bases = PyTuple::new(
        py,
        [
            py.get_type::<Error>().into_any(),
            py.get_type::<PyValueError>().into_any(),
        ],
    )?;
    py.get_type::<InvalidArgumentError>()
        .setattr("__bases__", bases)?;
    m.add("Error", py.get_type::<Error>())?;
    m.add("CorruptionError", py.get_type::<CorruptionError>())?;
    m.add("IoError", py.get_type::<IoError>())?;
    m.add(
        "InvalidArgumentError",
        py.get_type::<InvalidArgumentError>(),
    )?;
    m.add("LockedError", py.get_type::<LockedError>())?;
    m.add("ReadOnlyError", py.get_type::<ReadOnlyError>())?;
    m.add("NotADatabaseError", py.get_type::<NotADatabaseError>())?;
    m.add("ConflictError", py.get_type::<ConflictError>())?;
    m.add("ClosedError", py.get_type::<ClosedError>())?;
    Ok(())
}
