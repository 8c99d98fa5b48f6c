//! The engine handles the Python objects hold, and closing them: a closed
//! `Db` empties every handle it gave out, so a later call raises
//! `ClosedError` instead of reaching a closed engine, and the directory
//! lock goes with the `Db` (not with the last Python object to be
//! collected).

use std::sync::{Arc, RwLock, RwLockReadGuard};

use pyo3::prelude::*;

use crate::errors::ClosedError;

/// A slot that holds an engine object until it is closed.
pub struct Slot<T>(RwLock<Option<T>>);

impl<T> Slot<T> {
    pub fn new(value: T) -> Arc<Slot<T>> {
        Arc::new(Slot(RwLock::new(Some(value))))
    }

    /// The object, read-locked for one call (closing waits for it).
    pub fn get(&self) -> PyResult<Guard<'_, T>> {
        let guard = self.0.read().unwrap_or_else(|p| p.into_inner());
        match guard.is_some() {
            true => Ok(Guard(guard)),
            false => Err(ClosedError::new_err("the database is closed")),
        }
    }

    /// Empties the slot once no call is using it (without the GIL, so a
    /// call in flight on another thread can finish). Returns the object.
    pub fn close(&self, py: Python<'_>) -> Option<T>
    where
        T: Send + Sync,
    {
        py.allow_threads(|| self.0.write().unwrap_or_else(|p| p.into_inner()).take())
    }
}

/// A read-locked, present object.
pub struct Guard<'a, T>(RwLockReadGuard<'a, Option<T>>);

impl<T> std::ops::Deref for Guard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // Checked present when the guard was made; nothing empties a slot
        // while a read guard exists.
        match self.0.as_ref() {
            Some(v) => v,
            None => unreachable!("a guard exists only for a present value"),
        }
    }
}
