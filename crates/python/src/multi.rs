//! The keys and values of a `multi_get`: the keys copied out of their
//! Python objects while the GIL is held, the values gathered into one
//! buffer while it is released.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::pybacked::PyBackedBytes;
use pyo3::types::{PyBytes, PyList, PyString};

/// The keys of a `multi_get`, copied back to back into one buffer while
/// the GIL is held: the engine then reads them after releasing it, when
/// the objects could change hands, without a reference count taken and
/// dropped on each (scattered writes that cost more than the copy).
pub struct Keys {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Keys {
    /// The keys, in order.
    pub fn slices(&self) -> Vec<&[u8]> {
        let mut start = 0;
        self.ends
            .iter()
            .map(|&end| {
                let key = &self.bytes[start..end];
                start = end;
                key
            })
            .collect()
    }

    /// How many keys.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    fn push(&mut self, key: &[u8]) {
        self.bytes.extend_from_slice(key);
        self.ends.push(self.bytes.len());
    }

    fn push_object(&mut self, key: &Bound<'_, PyAny>) -> PyResult<()> {
        match key.downcast::<PyBytes>() {
            Ok(bytes) => self.push(bytes.as_bytes()),
            // `bytearray` and the like.
            Err(_) => self.push(&key.extract::<PyBackedBytes>()?),
        }
        Ok(())
    }
}

/// The keys of a `multi_get`: any iterable of `bytes` (a list, a tuple, a
/// generator), but not one `bytes` or `str`, which would iterate as its
/// items.
pub fn keys_of(keys: &Bound<'_, PyAny>) -> PyResult<Keys> {
    if keys.is_instance_of::<PyBytes>() || keys.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(
            "multi_get takes an iterable of bytes keys, not a single key",
        ));
    }
    let n = keys.len().unwrap_or(0);
    let mut out = Keys {
        bytes: Vec::with_capacity(n * 24),
        ends: Vec::with_capacity(n),
    };
    if let Ok(list) = keys.downcast::<PyList>() {
        prefetch_items(list);
        for key in list.iter() {
            out.push_object(&key)?;
        }
        return Ok(out);
    }
    for key in keys.try_iter()? {
        out.push_object(&key?)?;
    }
    Ok(out)
}

/// The values a `multi_get` found, back to back in one buffer: the
/// engine hands each over borrowed (`Keyspace::multi_get_with`), and one
/// buffer for the batch spares an allocation and a copy per value against
/// a `Slice` each (perf had `malloc` and `free` at 9% of a cached
/// `multi_get` of 64).
pub struct Values {
    bytes: Vec<u8>,
    /// Where key `i`'s value lies in `bytes`, if it has one.
    spans: Vec<Option<(usize, usize)>>,
}

impl Values {
    /// The values of `keys` in `ks`.
    pub fn of(ks: &slsm::Keyspace, keys: &[&[u8]]) -> slsm::Result<Values> {
        // Room for a batch of small values up front (it grows as needed;
        // a huge batch does not reserve for values it may not have).
        let mut v = Values {
            bytes: Vec::with_capacity(keys.len().min(1024) * 128),
            spans: vec![None; keys.len()],
        };
        ks.multi_get_with(keys, |i, value| {
            v.spans[i] = Some((v.bytes.len(), value.len()));
            v.bytes.extend_from_slice(value);
        })?;
        Ok(v)
    }

    /// Key `i`'s value, if it has one.
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        let (start, len) = (*self.spans.get(i)?)?;
        self.bytes.get(start..start + len)
    }
}

/// Starts loading every item of `list` into the CPU's cache before any is
/// read. The keys of a batch are objects scattered over the heap: taken
/// one after the other, each was a cache miss the next waited for (the
/// list iterator's reference count increment: 14% of a `multi_get` of 64
/// random keys of 1M, perf); prefetched together, their misses overlap
/// (that `multi_get` 15% faster, and 11% more with the second line).
fn prefetch_items(list: &Bound<'_, PyList>) {
    for i in 0..list.len() {
        let Ok(i) = pyo3::ffi::Py_ssize_t::try_from(i) else {
            return;
        };
        // SAFETY: `list` is a live list and the GIL is held; `i` is in
        // bounds, so this is a borrowed reference to one of its items (no
        // count changed, no error set). Only its address is used.
        let item = unsafe { pyo3::ffi::PyList_GetItem(list.as_ptr(), i) };
        // The object's header and the first bytes of a key inline after
        // it: two lines when the allocator did not align it to one.
        prefetch(item.cast::<u8>());
        prefetch(item.cast::<u8>().wrapping_add(63));
    }
}

/// Asks the CPU to start loading the cache line at `p` (a hint: never
/// faults, whatever the address).
#[inline]
fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint that reads nothing architecturally; it
    // cannot fault on any address.
    unsafe {
        std::arch::x86_64::_mm_prefetch(p.cast(), std::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
