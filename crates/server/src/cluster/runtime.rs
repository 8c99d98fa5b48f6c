//! [`RaftRuntime`]: the threads a cluster node's Raft work runs on.
//!
//! * **Owns**: a tokio runtime of two worker threads named `slsm-raft`.
//! * **Calls**: nothing of the server's.

/// The runtime openraft's tasks (its core, replication, the state
/// machine, the log's network and the node's proposals) run on, apart
/// from the connections'. Why: on the connections' workers a leader's
/// core and replication tasks wait in the run queue behind every client's
/// parsing and replies, and each write waits on them twice; measured with
/// redis-benchmark SET -P 16 -c 50 on 2 cores, one shared runtime gave
/// 34K writes/s and a runtime of its own 77-86K (`bench/RESULTS.md`). Dropped without waiting (`shutdown_background`):
/// the node has been shut down by then, and it may be dropped on a
/// runtime's thread, where blocking is not allowed.
pub struct RaftRuntime(Option<tokio::runtime::Runtime>);

impl RaftRuntime {
    pub fn start() -> Result<RaftRuntime, String> {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("slsm-raft")
            .enable_all()
            .build()
            .map(|rt| RaftRuntime(Some(rt)))
            .map_err(|e| format!("cannot start the cluster's threads: {e}"))
    }

    pub fn handle(&self) -> Option<&tokio::runtime::Handle> {
        self.0.as_ref().map(tokio::runtime::Runtime::handle)
    }
}

impl Drop for RaftRuntime {
    fn drop(&mut self) {
        if let Some(rt) = self.0.take() {
            rt.shutdown_background();
        }
    }
}
