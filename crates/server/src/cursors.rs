//! `SCAN` cursors. Redis's cursors are numbers; ours name the last key a
//! scan returned, kept in a bounded table shared by every connection (a
//! cursor that fell out of the table restarts the scan: SCAN may return a
//! key twice, never miss one that exists throughout, as in Redis).

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
    keys: HashMap<u64, Vec<u8>>,
    order: VecDeque<u64>,
}

impl Cursors {
    /// A new cursor resuming after `key`.
    pub fn save(&self, key: Vec<u8>) -> u64 {
        let mut t = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        t.next += 1;
        let id = t.next;
        t.keys.insert(id, key);
        t.order.push_back(id);
        while t.order.len() > CAPACITY {
            if let Some(old) = t.order.pop_front() {
                t.keys.remove(&old);
            }
        }
        id
    }

    /// Where cursor `id` resumes (`None`: from the start).
    pub fn resume(&self, id: u64) -> Option<Vec<u8>> {
        let t = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        t.keys.get(&id).cloned()
    }
}
