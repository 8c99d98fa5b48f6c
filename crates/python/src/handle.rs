//! The engine handles the Python objects hold, and closing them: a closed
//! `Db` closes every keyspace, snapshot and iterator it gave out, so a
//! later call on any of them raises `ClosedError` instead of reaching a
//! closed engine, and the directory lock goes with the `Db` (not with the
//! last Python object to be collected: a snapshot kept in a variable would
//! otherwise hold the lock, and reopening the directory would fail).

use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard, TryLockError, Weak};

use pyo3::prelude::*;

use crate::errors::ClosedError;

/// A slot that holds an engine object until it is closed.
pub struct Slot<T>(RwLock<Option<T>>);

impl<T: Send + Sync> Slot<T> {
    pub fn new(value: T) -> Arc<Slot<T>> {
        Arc::new(Slot(RwLock::new(Some(value))))
    }

    /// The object, read-locked for one call (closing waits for it).
    ///
    /// Never blocks with the GIL held: a `close` waiting for the write lock
    /// makes new readers wait (the lock favours writers), and a thread
    /// that waited here holding the GIL would keep the calls already
    /// inside from taking it back to finish: a deadlock. So a contended
    /// read waits with the GIL released, then tries again.
    pub fn get(&self) -> PyResult<Guard<'_, T>> {
        let guard = loop {
            match self.0.try_read() {
                Ok(guard) => break guard,
                Err(TryLockError::Poisoned(p)) => break p.into_inner(),
                Err(TryLockError::WouldBlock) => Python::with_gil(|py| {
                    py.allow_threads(|| drop(self.0.read()));
                }),
            }
        };
        match guard.is_some() {
            true => Ok(Guard(guard)),
            false => Err(closed()),
        }
    }

    /// Empties the slot once no call is using it (without the GIL, so a
    /// call in flight on another thread can finish). Returns the object.
    pub fn close(&self, py: Python<'_>) -> Option<T> {
        py.allow_threads(|| self.0.write().unwrap_or_else(|p| p.into_inner()).take())
    }
}

/// The error of a call on anything of a closed database.
pub fn closed() -> PyErr {
    ClosedError::new_err("the database is closed")
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

/// Something a `Db` gave out that its `close` must close.
pub trait Close: Send + Sync {
    /// Releases what it holds of the engine; later calls raise
    /// `ClosedError`.
    fn close_handle(&self, py: Python<'_>);
}

impl<T: Send + Sync> Close for Slot<T> {
    fn close_handle(&self, py: Python<'_>) {
        if let Some(value) = self.close(py) {
            py.allow_threads(move || drop(value));
        }
    }
}

/// Every handle a `Db` gave out, held weakly (a collected one is simply
/// gone). Shared by the `Db` and everything made from it, since a keyspace
/// or a snapshot makes iterators of its own.
#[derive(Default)]
pub struct Handles(Mutex<Tracked>);

#[derive(Default)]
struct Tracked {
    handles: Vec<Weak<dyn Close>>,
    /// Past this many, dead entries are dropped before the next is added
    /// (doubling, so tracking stays O(1) amortized per handle).
    prune_at: usize,
    closed: bool,
}

impl Handles {
    /// Tracks `handle`; closes it at once if the `Db` closed meanwhile (a
    /// call that raced with `close`), so it never outlives the database.
    pub fn track<C: Close + 'static>(&self, py: Python<'_>, handle: &Arc<C>) {
        let mut t = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if t.closed {
            drop(t);
            handle.close_handle(py);
            return;
        }
        if t.handles.len() >= t.prune_at {
            t.handles.retain(|h| h.strong_count() > 0);
            t.prune_at = (2 * t.handles.len()).max(64);
        }
        let weak: Weak<dyn Close> = Arc::downgrade(handle) as Weak<dyn Close>;
        t.handles.push(weak);
    }

    /// Closes every live handle; later ones are closed as they are made.
    pub fn close_all(&self, py: Python<'_>) {
        let handles = {
            let mut t = self.0.lock().unwrap_or_else(|p| p.into_inner());
            t.closed = true;
            std::mem::take(&mut t.handles)
        };
        for h in handles.iter().filter_map(Weak::upgrade) {
            h.close_handle(py);
        }
    }
}
