//! Opening and starting this node: its state machine (with the server's
//! machine, `apply.rs`) and database first, the Raft node once the server
//! is built around them.
//!
//! * **Owns**: nothing past the call; the node is the [`Cluster`]'s.

use std::sync::{Arc, OnceLock};

use slsm_raft::{Machine, Node, NodeConfig, StateMachine};

use super::apply::ServerMachine;
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
    });
    Ok(((cluster, machine, sm), db))
}

/// Starts the node (binds its Raft address, joins or forms the cluster).
pub async fn start_node(c: &Arc<Cluster>, sm: StateMachine) -> Result<(), String> {
    let cfg = NodeConfig::new(c.me(), c.dir.clone(), c.opts.members.clone());
    let node = Node::start_on(cfg, sm)
        .await
        .map_err(|e| format!("cannot start the cluster node: {e}"))?;
    tokio::spawn(Arc::clone(&c.fence).run(Arc::downgrade(&node)));
    c.set_node(node);
    Ok(())
}
