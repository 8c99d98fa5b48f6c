//! Opening and starting this node: its state machine (with the server's
//! machine, `apply.rs`) and database first, the Raft node once the server
//! is built around them.
//!
//! * **Owns**: nothing past the call; the node is the [`Cluster`]'s.

use std::sync::{Arc, OnceLock};

use slsm_raft::{Machine, Member, Node, NodeConfig, NodeId, StateMachine};

use super::apply::ServerMachine;
use super::runtime::RaftRuntime;
use super::{Cluster, ClusterOptions};

/// A node's parts between opening its state machine and starting it:
/// the server is built around the state machine's database in between.
pub type Pending = (Arc<Cluster>, Arc<ServerMachine>, StateMachine);

/// Opens the state machine under `opts.db` (`sm/`; the log is `log/`)
/// with the server's machine: the parts, and the database to serve.
pub fn open(
    opts: &crate::options::ServerOptions,
    c: &ClusterOptions,
) -> Result<(Pending, Arc<slsm::Db>), String> {
    if !c.members.contains_key(&c.node_id) {
        return Err(format!(
            "--node-id {} is not among the --cluster members",
            c.node_id
        ));
    }
    let machine = Arc::new(ServerMachine::new(c.node_id, opts.engine.clone()));
    let as_machine: Arc<dyn Machine> = Arc::clone(&machine) as Arc<dyn Machine>;
    let sm = StateMachine::open_with(&opts.db.join("sm"), Some(as_machine))
        .map_err(|e| format!("cannot open the state machine: {e}"))?;
    let db = machine
        .take_attached()
        .ok_or("the state machine opened no database")?;
    let cluster = Arc::new(Cluster {
        opts: c.clone(),
        dir: opts.db.clone(),
        node: OnceLock::new(),
        fence: Arc::default(),
        stopped: OnceLock::new(),
        runtime: OnceLock::new(),
    });
    Ok(((cluster, machine, sm), db))
}

/// Starts the node (binds its Raft address, joins or forms the cluster)
/// on its own runtime; `stop` stops the server if the node's Raft core
/// stops.
pub async fn start_node(
    c: &Arc<Cluster>,
    sm: StateMachine,
    stop: impl FnOnce() + Send + 'static,
) -> Result<(), String> {
    let mut cfg = NodeConfig::new(c.me(), c.dir.clone(), c.opts.members.clone());
    cfg.join = c.opts.join;
    cfg.snapshot_every = c.opts.snapshot_every.max(1);
    cfg.logs_to_keep = (cfg.snapshot_every / 10).min(1_000);
    let _ = c.runtime.set(RaftRuntime::start()?);
    let Some(rt) = c.runtime.get().and_then(RaftRuntime::handle).cloned() else {
        return Err("the cluster's threads were started twice".into());
    };
    let node = rt
        .spawn(Node::start_on(cfg, sm))
        .await
        .map_err(|e| format!("cannot start the cluster node: {e}"))?
        .map_err(|e| format!("cannot start the cluster node: {e}"))?;
    rt.spawn(Arc::clone(&c.fence).run(Arc::downgrade(&node)));
    tokio::spawn(stop_with_the_core(
        Arc::clone(c),
        node.raft().metrics(),
        stop,
    ));
    c.set_node(node);
    Ok(())
}

/// Waits for openraft's core to stop on its own (it does on a storage
/// error: a full disk, a failed sync, a log it cannot read) and stops the
/// server with the reason. A node whose core has stopped can neither vote
/// nor apply, so serving on would answer every client `CLUSTERDOWN` or stale
/// reads for ever; exiting with the error, as etcd does, tells the operator
/// and lets a supervisor restart it once the cause is fixed (it rejoins
/// from its disk, and its log loses nothing that was acknowledged).
async fn stop_with_the_core(
    c: Arc<Cluster>,
    mut metrics: tokio::sync::watch::Receiver<slsm_raft::openraft::RaftMetrics<NodeId, Member>>,
    stop: impl FnOnce(),
) {
    loop {
        let fatal = metrics.borrow().running_state.clone().err();
        if let Some(fatal) = fatal {
            // A shutdown we asked for is not a failure.
            if !matches!(fatal, slsm_raft::openraft::error::Fatal::Stopped) {
                // `run` returns it once the server has stopped.
                let _ = c.stopped.set(format!("the cluster node stopped: {fatal}"));
                stop();
            }
            return;
        }
        if metrics.changed().await.is_err() {
            return;
        }
    }
}
