//! [`Node`]: one member of a replicated slsm: its log, its state machine,
//! openraft over them, and the listener its peers reach it at.
//!
//! Started with the initial membership (every node with the same one), a
//! node whose log is empty proposes it; the others' proposals of the same
//! membership are refused as already initialized, which is harmless, so
//! starting every node the same way forms the cluster, and restarting one
//! with the same configuration rejoins it from its own disk (or, from an
//! empty directory, is caught up by the leader: the proposal it makes is
//! the same first entry the others hold). A node added to a running
//! cluster starts with `join` and proposes nothing.
//!
//! * **Owns**: the raft handle and the listener task.
//! * **Durability**: a write returns once a majority has the entry in its
//!   synced log and the leader applied it (openraft's `client_write`).
//! * **Thread safety**: `&self` methods may be called from any task.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use openraft::error::{ForwardToLeader, RaftError};
use openraft::{Config, SnapshotPolicy};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::network::{serve, Network};
use crate::proposals::Proposals;
use crate::types::{Command, Member, NodeId, Raft, Response};
use crate::{LogStore, Machine, StateMachine};

/// How to start a node.
#[derive(Clone, Debug)]
pub struct NodeConfig {
    /// This node's id (a key of `members`).
    pub id: NodeId,
    /// Where the node keeps its log (`log/`) and state machine (`sm/`).
    pub dir: PathBuf,
    /// Every member of the initial cluster, this one included (with
    /// `join`, this one alone is enough: its address).
    pub members: BTreeMap<NodeId, Member>,
    /// Joins a running cluster instead of forming one: the node never
    /// proposes `members` and waits, as a blank learner, for the leader to
    /// add it (etcd's `--initial-cluster-state existing`). Default false.
    pub join: bool,
    /// How often the leader sends heartbeats. Default 100 ms.
    pub heartbeat: Duration,
    /// A follower that hears no leader for a random time in this range
    /// starts an election. Default 500-1000 ms.
    pub election_timeout: (Duration, Duration),
    /// Entries applied since the last snapshot that trigger a new one (the
    /// log is then purged behind it). Default 50,000.
    pub snapshot_every: u64,
    /// Entries kept in the log behind a snapshot (a follower that fell
    /// fewer behind catches up from the log, not a snapshot). Default 1,000.
    pub logs_to_keep: u64,
}

impl NodeConfig {
    /// A configuration with the defaults above.
    pub fn new(
        id: NodeId,
        dir: impl Into<PathBuf>,
        members: BTreeMap<NodeId, Member>,
    ) -> NodeConfig {
        NodeConfig {
            id,
            dir: dir.into(),
            members,
            join: false,
            heartbeat: Duration::from_millis(100),
            election_timeout: (Duration::from_millis(500), Duration::from_millis(1000)),
            snapshot_every: 50_000,
            logs_to_keep: 1_000,
        }
    }
}

/// Why a write or a linearizable read was not done.
#[derive(Clone, Debug)]
pub enum WriteError {
    /// This node is not the leader; the leader, if one is known.
    NotLeader(Option<(NodeId, Member)>),
    /// Anything else (the node is shutting down, its storage failed, the
    /// membership change was refused): the write may or may not have been
    /// applied if it was sent before the failure.
    Failed(String),
}

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WriteError::NotLeader(Some((id, m))) => {
                write!(f, "not the leader; node {id} at {m} is")
            }
            WriteError::NotLeader(None) => write!(f, "not the leader, and no leader is known"),
            WriteError::Failed(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for WriteError {}

pub(crate) fn not_leader(f: &ForwardToLeader<NodeId, Member>) -> WriteError {
    WriteError::NotLeader(f.leader_id.zip(f.leader_node.clone()))
}

/// A running node. See the [module docs](self).
pub struct Node {
    id: NodeId,
    raft: Raft,
    proposals: Proposals,
    sm: StateMachine,
    listener: JoinHandle<()>,
}

impl Node {
    /// Opens the node's storage, binds its raft address, starts openraft
    /// and, on an empty log, proposes the initial membership.
    pub async fn start(
        cfg: NodeConfig,
    ) -> Result<Arc<Node>, Box<dyn std::error::Error + Send + Sync>> {
        Self::start_with(cfg, None).await
    }

    /// [`start`](Self::start) with `machine` applying the application's
    /// commands ([`Command::app`]).
    pub async fn start_with(
        cfg: NodeConfig,
        machine: Option<Arc<dyn Machine>>,
    ) -> Result<Arc<Node>, Box<dyn std::error::Error + Send + Sync>> {
        let sm = StateMachine::open_with(&cfg.dir.join("sm"), machine)?;
        Self::start_on(cfg, sm).await
    }

    /// [`start`](Self::start) on a state machine already opened (from
    /// `cfg.dir/sm`), so that its application can be built around its
    /// database before any entry is applied.
    pub async fn start_on(
        cfg: NodeConfig,
        sm: StateMachine,
    ) -> Result<Arc<Node>, Box<dyn std::error::Error + Send + Sync>> {
        let me = cfg
            .members
            .get(&cfg.id)
            .ok_or_else(|| format!("node {} is not among the members", cfg.id))?
            .clone();
        let config = Config {
            cluster_name: "slsm".into(),
            heartbeat_interval: cfg.heartbeat.as_millis() as u64,
            election_timeout_min: cfg.election_timeout.0.as_millis() as u64,
            election_timeout_max: cfg.election_timeout.1.as_millis() as u64,
            snapshot_policy: SnapshotPolicy::LogsSinceLast(cfg.snapshot_every),
            max_in_snapshot_log_to_keep: cfg.logs_to_keep,
            purge_batch_size: 256,
            snapshot_max_chunk_size: 1 << 20,
            // A chunk's answer waits for the follower to write it, and the
            // last one for the whole install (unpacked, synced, opened):
            // openraft's 200 ms default made a follower's install time out
            // and start over, forever, on a loaded machine.
            install_snapshot_timeout: 10_000,
            ..Config::default()
        }
        .validate()?;
        let log = LogStore::open(&cfg.dir.join("log"))?;
        let listener = TcpListener::bind(&me.raft).await?;
        let raft = Raft::new(cfg.id, Arc::new(config), Network, log, sm.clone()).await?;
        let listener = tokio::spawn(serve(listener, raft.clone()));
        if !cfg.join && !raft.is_initialized().await? {
            // Refused when another member's proposal got here first.
            let _ = raft.initialize(cfg.members.clone()).await;
        }
        Ok(Arc::new(Node {
            id: cfg.id,
            proposals: Proposals::start(raft.clone()),
            raft,
            sm,
            listener,
        }))
    }

    /// This node's id.
    pub fn id(&self) -> NodeId {
        self.id
    }

    /// The raft handle (metrics, membership changes).
    pub fn raft(&self) -> &Raft {
        &self.raft
    }

    /// The state machine (this node's copy of the replicated keys).
    pub fn state_machine(&self) -> &StateMachine {
        &self.sm
    }

    /// The current leader, as this node knows it.
    pub fn leader(&self) -> Option<NodeId> {
        self.raft.metrics().borrow().current_leader
    }

    /// Replicates `cmd` and returns the state machine's answer once a
    /// majority has it durably and this node (the leader) applied it.
    /// Writes made while earlier ones replicate share an entry with each
    /// other (see `proposals`).
    pub async fn write(&self, cmd: Command) -> Result<Response, WriteError> {
        self.proposals.write(cmd).await
    }

    /// Returns once this node has confirmed with a majority that it still
    /// leads and has applied everything committed before the call: a read
    /// of the state machine after it is linearizable (Raft's read index).
    pub async fn ensure_linearizable(&self) -> Result<(), WriteError> {
        match self.raft.ensure_linearizable().await {
            Ok(_) => Ok(()),
            Err(RaftError::APIError(openraft::error::CheckIsLeaderError::ForwardToLeader(f))) => {
                Err(not_leader(&f))
            }
            Err(e) => Err(WriteError::Failed(e.to_string())),
        }
    }

    /// The value of `key`: linearizable (the leader confirms with a
    /// majority that it still leads and waits until it applied what was
    /// committed before answering), or this node's copy as it is.
    pub async fn read(
        &self,
        key: &[u8],
        linearizable: bool,
    ) -> Result<Option<Vec<u8>>, WriteError> {
        if linearizable {
            self.ensure_linearizable().await?;
        }
        self.sm
            .get(key)
            .map_err(|e| WriteError::Failed(e.to_string()))
    }

    /// Stops the node: openraft, then its listener (the storage closes when
    /// the last handle goes).
    pub async fn shutdown(&self) {
        let _ = self.raft.shutdown().await;
        self.listener.abort();
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.listener.abort();
    }
}
