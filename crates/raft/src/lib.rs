//! # slsm-raft: slsm as openraft's log and state machine
//!
//! A node keeps two slsm databases: its Raft log ([`LogStore`]: entries,
//! vote, committed and purged ids, synced before they are acknowledged)
//! and its state machine ([`StateMachine`]: the replicated keys with the
//! id of the last applied entry, written in one batch with its effects;
//! snapshots from `Db::checkpoint`, installed atomically). [`network`]
//! carries Raft's messages between nodes over TCP, and [`Node`] puts them
//! together: start a node, write through the leader, read linearizably.
//! `README.md` says what is durable when.

// openraft's StorageError (224 bytes) is what its storage traits return;
// the helpers around them return it too rather than convert twice.
#![allow(clippy::result_large_err)]

pub mod log_store;
pub mod machine;
pub mod network;
pub mod node;
pub mod proposals;
pub mod snapshot;
pub mod state_machine;
pub mod types;

/// The consensus engine, for its membership and metrics types.
pub use openraft;

pub use log_store::LogStore;
pub use machine::{Machine, Stamp};
pub use node::{Node, NodeConfig, WriteError};
pub use state_machine::StateMachine;
pub use types::{Command, Member, NodeId, Op, OpResult, Raft, Response, TypeConfig};
