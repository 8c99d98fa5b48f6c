//! What travels through the log: the commands a client writes, what the
//! state machine answers, a member's addresses, and openraft's type
//! configuration over them.
//!
//! * **Owns**: nothing: plain data, serialized with serde.
//! * **Thread safety**: values only.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A write, applied the same way on every node: the leader's clock travels
/// with it (`at_millis`), so whatever it does with time is absolute and the
/// same everywhere.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Command {
    /// The leader's wall clock when it took the command (milliseconds since
    /// the Unix epoch).
    pub at_millis: u64,
    /// What to do, in order, atomically.
    pub ops: Vec<Op>,
}

/// One change to the replicated keys.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Op {
    /// Sets `key` to `value`.
    Put {
        #[serde(with = "serde_bytes")]
        key: Vec<u8>,
        #[serde(with = "serde_bytes")]
        value: Vec<u8>,
    },
    /// Removes `key`.
    Delete {
        #[serde(with = "serde_bytes")]
        key: Vec<u8>,
    },
    /// Adds `by` to the decimal integer stored at `key` (absent: 0); the
    /// answer is the new value, or an error if the value is not an integer
    /// or the sum overflows (the key is then left unchanged).
    Incr {
        #[serde(with = "serde_bytes")]
        key: Vec<u8>,
        by: i64,
    },
    /// An application's command, applied by the node's [`Machine`]
    /// (`crate::machine`): opaque here. A command holding one holds
    /// nothing else ([`Command::app`] makes one).
    ///
    /// [`Machine`]: crate::machine::Machine
    App(#[serde(with = "serde_bytes")] Vec<u8>),
    /// Commands proposed together (`Node::write` gathers the commands
    /// that arrive while earlier ones are being replicated into one
    /// entry, one sync of the log for them all): applied in order, each
    /// as if it were an entry of its own; the answer is
    /// [`OpResult::Batch`]. A command holding one holds nothing else
    /// ([`Command::batch`] makes one).
    Batch(Vec<Command>),
}

impl Command {
    /// A command of the application's, taken at `at_millis`.
    pub fn app(at_millis: u64, bytes: Vec<u8>) -> Command {
        Command {
            at_millis,
            ops: vec![Op::App(bytes)],
        }
    }

    /// The application's bytes, if this is an application's command.
    pub fn app_bytes(&self) -> Option<&[u8]> {
        match self.ops.as_slice() {
            [Op::App(bytes)] => Some(bytes),
            _ => None,
        }
    }

    /// `commands` as one command, at the latest of their clocks.
    pub fn batch(commands: Vec<Command>) -> Command {
        Command {
            at_millis: commands.iter().map(|c| c.at_millis).max().unwrap_or(0),
            ops: vec![Op::Batch(commands)],
        }
    }

    /// The commands of a batch, if this is one.
    pub fn batched(&self) -> Option<&[Command]> {
        match self.ops.as_slice() {
            [Op::Batch(commands)] => Some(commands),
            _ => None,
        }
    }

    /// About how many bytes the command takes in the log.
    pub fn size_hint(&self) -> usize {
        let op_size = |op: &Op| match op {
            Op::Put { key, value } => key.len() + value.len(),
            Op::Delete { key } | Op::Incr { key, .. } => key.len() + 8,
            Op::App(bytes) => bytes.len(),
            Op::Batch(commands) => commands.iter().map(Command::size_hint).sum(),
        };
        16 + self.ops.iter().map(|op| 8 + op_size(op)).sum::<usize>()
    }
}

/// What the state machine answered for one command: one result per op.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Response {
    pub results: Vec<OpResult>,
}

/// The answer to one [`Op`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum OpResult {
    /// A put or delete was applied.
    Done,
    /// An increment's new value.
    Value(i64),
    /// The op changed nothing, and why (the same on every node).
    Error(String),
    /// The application's answer to an [`Op::App`].
    App(#[serde(with = "serde_bytes")] Vec<u8>),
    /// The answer to each command of an [`Op::Batch`], in order.
    Batch(Vec<Response>),
}

/// A member of the cluster: where its peers reach it (`raft`) and where
/// its clients do (`client`), as `host:port`.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Member {
    pub raft: String,
    pub client: String,
}

impl fmt::Display for Member {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.raft, self.client)
    }
}

/// A member's id.
pub type NodeId = u64;

openraft::declare_raft_types!(
    /// openraft's types for a cluster of slsm nodes.
    pub TypeConfig:
        D = Command,
        R = Response,
        NodeId = NodeId,
        Node = Member,
        SnapshotData = tokio::fs::File,
);

/// The raft handle of a node.
pub type Raft = openraft::Raft<TypeConfig>;
/// A log entry.
pub type Entry = openraft::Entry<TypeConfig>;
/// A log id.
pub type LogId = openraft::LogId<NodeId>;
/// A vote.
pub type Vote = openraft::Vote<NodeId>;
/// Membership as stored with the state.
pub type StoredMembership = openraft::StoredMembership<NodeId, Member>;
/// Metadata of a snapshot.
pub type SnapshotMeta = openraft::SnapshotMeta<NodeId, Member>;
/// An error of the storage.
pub type StorageError = openraft::StorageError<NodeId>;
