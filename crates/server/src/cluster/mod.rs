//! `slsm serve --cluster`: the server replicated by Raft (openraft, through
//! `slsm-raft`) over nodes that all speak the Redis protocol.
//!
//! Every command that writes is one log entry ([`proposal`]) the leader
//! proposes and every node applies the same way ([`apply`]); the client
//! gets the state machine's reply once a majority has the entry on disk
//! and the leader applied it. Reads run on the leader after a read-index
//! round (`Node::ensure_linearizable`, once per batch of a connection's
//! pipelined requests), or on a follower as they are after `READONLY`.
//! A node that is not the leader answers what must go to the leader with
//! `-MOVED <slot> <leader>` (or `-CLUSTERDOWN` with no leader), and
//! `CLUSTER` describes one shard owning every slot ([`commands`]).
//! [`route`] says which command goes where.
//!
//! What keeps its single-node meaning on the leader: pub/sub (`PUBLISH`
//! and the subscriptions are served by the leader alone, so a subscriber
//! hears every message; a follower answers them with `-MOVED`), blocking
//! pops (each attempt is a log entry; the blocked client waits on the
//! leader), `WATCH` (the leader reads the watched keys linearizably; the
//! `EXEC` entry carries a digest of each, and every node aborts it the same
//! way if one differs; a write that leaves a key's bytes as they were is
//! not seen, where Redis would abort) and `MULTI`/`EXEC` (one entry).
//! Scripts run on every node (`EVALSHA` travels as its body); their
//! `math.random` and the clock they see come from the entry.
//!
//! * **Owns**: the node (once started) and what it knows of the members.
//! * **Thread safety**: shared by every connection; `&self` methods.

pub mod apply;
pub mod commands;
pub mod fence;
pub mod node;
pub mod proposal;
pub mod route;
pub mod run;
mod runtime;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use slsm_raft::{Member, Node, NodeId};

/// How a node joins its cluster (`slsm serve --node-id N --cluster ...`).
#[derive(Clone, Debug)]
pub struct ClusterOptions {
    pub node_id: NodeId,
    /// The initial members, this node among them.
    pub members: BTreeMap<NodeId, Member>,
    /// Joins a running cluster (`--join`): proposes no membership and
    /// waits to be added (`slsm cluster add`).
    pub join: bool,
    /// Entries applied between snapshots (`--raft-snapshot-every`, etcd's
    /// `--snapshot-count`); the log behind a snapshot is purged but for
    /// a tenth of this, at most 1,000 entries, for followers a little
    /// behind.
    pub snapshot_every: u64,
    /// How long a write or a linearizable read waits for the cluster
    /// before it answers an error (the write may still apply).
    pub timeout: Duration,
}

/// Parses `--cluster`'s `ID=RAFT_ADDR/CLIENT_ADDR,...`.
pub fn parse_members(spec: &str) -> Result<BTreeMap<NodeId, Member>, String> {
    let mut members = BTreeMap::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || format!("--cluster: '{part}' is not ID=RAFT_ADDR/CLIENT_ADDR");
        let (id, addrs) = part.split_once('=').ok_or_else(bad)?;
        let (raft, client) = addrs.split_once('/').ok_or_else(bad)?;
        let id: NodeId = id.trim().parse().map_err(|_| bad())?;
        for addr in [raft, client] {
            addr.parse::<std::net::SocketAddr>()
                .map_err(|_| format!("--cluster: '{addr}' is not an address (host:port)"))?;
        }
        let member = Member {
            raft: raft.into(),
            client: client.into(),
        };
        if members.insert(id, member).is_some() {
            return Err(format!("--cluster: node {id} is named twice"));
        }
    }
    if members.is_empty() {
        return Err("--cluster names no node".into());
    }
    Ok(members)
}

/// A running node's cluster state. See the [module docs](self).
pub struct Cluster {
    pub opts: ClusterOptions,
    pub(crate) dir: PathBuf,
    pub(crate) node: OnceLock<Arc<Node>>,
    /// The read-index rounds, shared by every connection.
    pub fence: Arc<fence::Fence>,
    /// Why the node stopped, if its Raft core did (a storage error: a full
    /// disk, a failed sync): the server then stops too, with this error.
    pub(crate) stopped: OnceLock<String>,
    /// The threads openraft's tasks run on.
    pub(crate) runtime: OnceLock<runtime::RaftRuntime>,
}

impl Cluster {
    pub(crate) fn set_node(&self, node: Arc<Node>) {
        let _ = self.node.set(node);
    }

    /// The node, once it has started (it starts before any client is
    /// served).
    pub fn node(&self) -> Option<&Arc<Node>> {
        self.node.get()
    }

    pub fn me(&self) -> NodeId {
        self.opts.node_id
    }

    /// The leader as this node knows it, and whether it is this node.
    pub fn leader(&self) -> Option<(NodeId, Member)> {
        let node = self.node()?;
        let metrics = node.raft().metrics().borrow().clone();
        let id = metrics.current_leader?;
        let member = metrics
            .membership_config
            .membership()
            .get_node(&id)
            .cloned()?;
        Some((id, member))
    }

    /// Why the node stopped serving, if it did.
    pub fn stopped(&self) -> Option<&str> {
        self.stopped.get().map(String::as_str)
    }

    pub fn is_leader(&self) -> bool {
        self.node().is_some_and(|n| n.leader() == Some(self.me()))
    }
}
