//! Iterators over a range: `items()`, `keys()`, `values()`. Each reads the
//! database as of its creation (a snapshot), so writes meanwhile never
//! invalidate it; entries are fetched in chunks with the GIL released.

use std::ops::Bound;
use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::errors::OrPy;
use crate::handle::{closed, Close, Handles};

/// Entries fetched per release of the GIL.
const CHUNK: usize = 256;

/// What an iterator yields.
#[derive(Clone, Copy)]
pub enum Yield {
    Items,
    Keys,
    Values,
}

/// A range of keys, as the engine's `range` takes it.
pub type KeyRange = (Bound<Vec<u8>>, Bound<Vec<u8>>);

/// The bounds of `items(start, end, prefix)`.
pub fn bounds(
    start: Option<&[u8]>,
    end: Option<&[u8]>,
    prefix: Option<&[u8]>,
) -> PyResult<KeyRange> {
    if prefix.is_some() && (start.is_some() || end.is_some()) {
        return Err(PyValueError::new_err(
            "give prefix, or start and end, not both",
        ));
    }
    if let Some(p) = prefix {
        let mut end = p.to_vec();
        while let Some(last) = end.pop() {
            if last < 0xFF {
                end.push(last + 1);
                return Ok((Bound::Included(p.to_vec()), Bound::Excluded(end)));
            }
        }
        return Ok((Bound::Included(p.to_vec()), Bound::Unbounded));
    }
    let lower = start.map_or(Bound::Unbounded, |s| Bound::Included(s.to_vec()));
    let upper = end.map_or(Bound::Unbounded, |e| Bound::Excluded(e.to_vec()));
    Ok((lower, upper))
}

/// Entries fetched and not yet yielded: their bytes back to back in one
/// buffer, so that a chunk costs no allocation per entry (the engine lends
/// each key and value, `Iter::next_with`).
#[derive(Default)]
struct Chunk {
    bytes: Vec<u8>,
    /// Key and value lengths of each entry, in order.
    lens: Vec<(usize, usize)>,
    /// The next entry to yield, and where its bytes start.
    next: usize,
    at: usize,
}

impl Chunk {
    fn is_empty(&self) -> bool {
        self.next == self.lens.len()
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.lens.clear();
        self.next = 0;
        self.at = 0;
    }

    fn push(&mut self, k: &[u8], v: &[u8]) {
        self.bytes.extend_from_slice(k);
        self.bytes.extend_from_slice(v);
        self.lens.push((k.len(), v.len()));
    }

    /// The next entry's key and value.
    fn pop(&mut self) -> Option<(&[u8], &[u8])> {
        let &(klen, vlen) = self.lens.get(self.next)?;
        let (k_at, v_at) = (self.at, self.at + klen);
        self.next += 1;
        self.at = v_at + vlen;
        Some((&self.bytes[k_at..v_at], &self.bytes[v_at..self.at]))
    }
}

struct State {
    /// `None` once the database closed.
    it: Option<slsm::Iter>,
    /// The database closed: every later call raises `ClosedError` (even
    /// with entries left in the chunk or the end reached, so a loop cut
    /// short by a close never looks like a complete one).
    closed: bool,
    chunk: Chunk,
    reverse: bool,
    error: Option<slsm::Error>,
    done: bool,
}

impl State {
    fn fill(&mut self) {
        self.chunk.clear();
        let Some(it) = self.it.as_mut() else {
            return;
        };
        while self.chunk.lens.len() < CHUNK {
            let chunk = &mut self.chunk;
            let next = match self.reverse {
                true => it.next_back().map(|r| r.map(|(k, v)| chunk.push(&k, &v))),
                false => it.next_with(|k, v| chunk.push(k, v)),
            };
            match next {
                Some(Ok(())) => {}
                Some(Err(e)) => {
                    self.error = Some(e);
                    break;
                }
                None => {
                    self.done = true;
                    break;
                }
            }
        }
    }
}

/// An iterator's state, closed with its database.
struct Shared(Mutex<State>);

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Close for Shared {
    fn close_handle(&self, py: Python<'_>) {
        // Waits (without the GIL) for a chunk being fetched on another
        // thread, then lets go of the engine's iterator.
        let it = py.allow_threads(|| {
            let mut s = self.lock();
            s.closed = true;
            s.chunk.clear();
            s.it.take()
        });
        py.allow_threads(move || drop(it));
    }
}

/// An iterator over keys, values or `(key, value)` pairs.
#[pyclass(frozen, module = "slsm", name = "Iterator")]
pub struct RangeIter {
    state: Arc<Shared>,
    what: Yield,
}

impl RangeIter {
    /// An iterator over `it`, closed when the database is (`handles`).
    pub fn new(
        py: Python<'_>,
        handles: &Handles,
        it: slsm::Iter,
        reverse: bool,
        what: Yield,
    ) -> RangeIter {
        let state = Arc::new(Shared(Mutex::new(State {
            it: Some(it),
            closed: false,
            chunk: Chunk::default(),
            reverse,
            error: None,
            done: false,
        })));
        handles.track(py, &state);
        RangeIter { state, what }
    }

    /// An iterator over `range` of `ks`.
    pub fn over(
        py: Python<'_>,
        handles: &Handles,
        ks: &slsm::Keyspace,
        range: KeyRange,
        reverse: bool,
        what: Yield,
    ) -> PyResult<RangeIter> {
        let it = ks.range::<Vec<u8>, _>(range);
        Ok(RangeIter::new(py, handles, it, reverse, what))
    }

    fn convert(&self, py: Python<'_>, (k, v): (&[u8], &[u8])) -> PyResult<PyObject> {
        Ok(match self.what {
            Yield::Keys => PyBytes::new(py, k).into_any().unbind(),
            Yield::Values => PyBytes::new(py, v).into_any().unbind(),
            Yield::Items => PyTuple::new(py, [PyBytes::new(py, k), PyBytes::new(py, v)])?
                .into_any()
                .unbind(),
        })
    }
}

#[pymethods]
impl RangeIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<PyObject>> {
        loop {
            // Fast path with the GIL held: an entry already fetched.
            if let Ok(mut s) = self.state.0.try_lock() {
                if s.closed {
                    return Err(closed());
                }
                if let Some(kv) = s.chunk.pop() {
                    return self.convert(py, kv).map(Some);
                }
                if let Some(e) = s.error.take() {
                    s.done = true;
                    return Err(e).or_py();
                }
                if s.done {
                    return Ok(None);
                }
            }
            // Fetch the next chunk without the GIL (another thread may be
            // fetching: wait for it the same way).
            py.allow_threads(|| {
                let mut s = self.state.lock();
                if s.chunk.is_empty() && !s.done && s.error.is_none() {
                    s.fill();
                }
            });
        }
    }
}
