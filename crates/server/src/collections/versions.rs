//! [`Versions`]: the versions collections are created with (see the
//! collections' module docs for why they must never repeat).
//!
//! * **Owns**: the next version and the end of the reserved block.
//! * **Durability**: a block is reserved by a synced write before any of
//!   its versions is handed out, so no version is handed out twice, even
//!   across a crash.
//! * **Thread safety**: any number of threads (one lock).

use std::sync::Mutex;

use slsm::{Keyspace, WriteOptions};

/// Hands out collection versions, each once for the life of the database
/// (across restarts): blocks of them are reserved by a synced write of the
/// block's end to the items keyspace (under a key no element has: element
/// keys are at least 12 bytes), so a restart starts past every version
/// handed out before it.
#[derive(Default)]
pub struct Versions {
    state: Mutex<VersionState>,
}

#[derive(Default)]
struct VersionState {
    next: u64,
    limit: u64,
    loaded: bool,
}

const VERSIONS_KEY: &[u8] = b"\0";
const VERSION_BLOCK: u64 = 1 << 16;

impl Versions {
    /// Forgets the reserved block (the items keyspace was replaced).
    pub fn reset(&self) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        s.loaded = false;
    }

    pub fn next(&self, items: &Keyspace) -> slsm::Result<u64> {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if !s.loaded {
            let stored = match items.get(VERSIONS_KEY)? {
                Some(v) => v.as_ref().try_into().map(u64::from_be_bytes).map_err(|_| {
                    slsm::Error::Corruption {
                        file: items.name().into(),
                        offset: 0,
                        reason: "the collection version counter is not 8 bytes".into(),
                    }
                })?,
                None => 1,
            };
            s.next = s.next.max(stored);
            s.limit = s.next;
            s.loaded = true;
        }
        if s.next >= s.limit {
            let limit = s.next + VERSION_BLOCK;
            let opts = WriteOptions {
                sync: true,
                ..WriteOptions::default()
            };
            items.put_opt(VERSIONS_KEY, limit.to_be_bytes(), &opts)?;
            s.limit = limit;
        }
        let v = s.next;
        s.next += 1;
        Ok(v)
    }
}
