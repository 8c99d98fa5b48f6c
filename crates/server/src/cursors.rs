//! `SCAN`, `HSCAN`, `SSCAN` and `ZSCAN` cursors. Redis's cursors are
//! numbers; ours name the last key (or element) a scan returned, kept in a
//! bounded table shared by every connection, with the scope it belongs to
//! (nothing for `SCAN`, the collection for the others). A cursor that fell
//! out of the table, or that belongs to another scope, restarts the scan:
//! a scan may return an element twice, never miss one that exists
//! throughout, as in Redis.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// Cursors remembered at once.
const CAPACITY: usize = 65536;

#[derive(Default)]
pub struct Cursors {
    inner: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    next: u64,
    /// Cursor id -> (scope, where it resumes).
    keys: HashMap<u64, (Vec<u8>, Vec<u8>)>,
    order: VecDeque<u64>,
}

impl Cursors {
    /// A new cursor of `scope` resuming after `key`.
    pub fn save(&self, scope: &[u8], key: Vec<u8>) -> u64 {
        let mut t = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        t.next += 1;
        let id = t.next;
        t.keys.insert(id, (scope.to_vec(), key));
        t.order.push_back(id);
        while t.order.len() > CAPACITY {
            if let Some(old) = t.order.pop_front() {
                t.keys.remove(&old);
            }
        }
        id
    }

    /// Where cursor `id` of `scope` resumes (`None`: from the start).
    pub fn resume(&self, id: u64, scope: &[u8]) -> Option<Vec<u8>> {
        let t = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        match t.keys.get(&id) {
            Some((of, key)) if of == scope => Some(key.clone()),
            _ => None,
        }
    }
}
