//! [`Fence`]: the read-index rounds of every connection, shared. A read
//! needs a round that began after it arrived (`Node::ensure_linearizable`);
//! readers that arrive while a round runs wait for the next one, which
//! serves all of them, so fifty clients reading at once cost about two
//! rounds, not fifty.
//!
//! * **Owns**: the queue of readers waiting for the next round and the
//!   task that runs the rounds.
//! * **Thread safety**: any thread may wait; one task runs the rounds.

use std::sync::{Arc, Mutex};

use slsm_raft::{Node, WriteError};
use tokio::sync::{oneshot, Notify};

type Waiter = oneshot::Sender<Result<(), WriteError>>;

/// See the [module docs](self).
#[derive(Default)]
pub struct Fence {
    waiting: Mutex<Vec<Waiter>>,
    wake: Notify,
}

impl Fence {
    /// Waits for a round begun after this call.
    pub async fn pass(&self) -> Result<(), WriteError> {
        let (tx, rx) = oneshot::channel();
        self.waiting
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(tx);
        self.wake.notify_one();
        match rx.await {
            Ok(r) => r,
            Err(_) => Err(WriteError::Failed("the node is stopping".into())),
        }
    }

    /// Runs rounds for as long as `node` lives, one whenever readers wait.
    pub async fn run(self: Arc<Self>, node: std::sync::Weak<Node>) {
        loop {
            self.wake.notified().await;
            let waiters =
                std::mem::take(&mut *self.waiting.lock().unwrap_or_else(|p| p.into_inner()));
            if waiters.is_empty() {
                continue;
            }
            let Some(node) = node.upgrade() else {
                return;
            };
            let result = node.ensure_linearizable().await;
            drop(node);
            for w in waiters {
                let _ = w.send(result.clone());
            }
            // Readers that came during the round: the next one starts now.
            if !self
                .waiting
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .is_empty()
            {
                self.wake.notify_one();
            }
        }
    }
}
