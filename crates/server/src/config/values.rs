//! `CONFIG SET`'s stored values and the replica settings writes check:
//! the state `crate::config`'s command reads and changes.
//!
//! * **Owns**: the values. **Thread safety**: a mutex; atomics.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

/// The stored parameters' values, by name; a parameter not in it has its
/// default.
#[derive(Default)]
pub struct Values(Mutex<HashMap<&'static str, String>>);

impl Values {
    pub(super) fn lock(&self) -> MutexGuard<'_, HashMap<&'static str, String>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// `min-replicas-to-write` and `min-replicas-max-lag`: a single node has
/// no replica, so with the first above 0 (and the second not 0) writes are
/// refused, as Redis refuses them short of good replicas. (A cluster
/// refuses the setting: its writes wait for a majority of its nodes.)
pub struct Replicas {
    pub to_write: std::sync::atomic::AtomicU64,
    pub max_lag: std::sync::atomic::AtomicU64,
}

impl Default for Replicas {
    fn default() -> Replicas {
        Replicas {
            to_write: 0.into(),
            max_lag: 10.into(),
        }
    }
}

impl Replicas {
    pub fn short(&self) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        self.to_write.load(Relaxed) > 0 && self.max_lag.load(Relaxed) > 0
    }
}
