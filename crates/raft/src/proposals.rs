//! [`Proposals`]: gathers the writes a node's callers make while earlier
//! ones are being replicated, and proposes them as one log entry.
//!
//! Why: openraft 0.9's core appends each `client_write` to the log and
//! waits for that append's sync before it takes the next message, and
//! while it works through queued writes it leaves peers' answers waiting.
//! One entry per write caps a leader at one write per sync of its log and
//! starves replication under load (measured with `examples/throughput`:
//! 50 writers, ~1,700 writes/s, writes waiting ~10 ms for their first
//! replication round). Here writes queue while at most [`IN_FLIGHT`]
//! entries are outstanding; each new entry takes everything queued
//! ([`Command::batch`], up to [`MAX_COMMANDS`] and [`MAX_BYTES`]), so the
//! sync and the replication round are shared by every write that waited
//! for them. A write that finds the queue empty and nothing in flight is
//! proposed at once, alone.
//!
//! * **Owns**: the queue of writes not yet proposed and the task that
//!   proposes them.
//! * **Ordering**: writes are proposed in the order they were queued (a
//!   batch's commands are applied in that order too), so one caller's
//!   writes apply in the order it made them.
//! * **Thread safety**: [`Proposals::write`] may be called from any task.

use std::sync::Arc;

use openraft::error::{ClientWriteError, RaftError};
use tokio::sync::{mpsc, oneshot, Semaphore};
use tokio::task::JoinHandle;

use crate::node::{not_leader, WriteError};
use crate::types::{Command, OpResult, Raft, Response};

/// Entries proposed and not yet answered, at most: one replicating while
/// the next is appended to the leader's log.
pub const IN_FLIGHT: usize = 2;
/// Commands in one entry, at most.
pub const MAX_COMMANDS: usize = 1024;
/// Bytes of commands in one entry, about, at most (a larger command goes
/// alone).
pub const MAX_BYTES: usize = 1 << 20;

type Answer = oneshot::Sender<Result<Response, WriteError>>;

/// The writes of one node. See the [module docs](self).
pub struct Proposals {
    queue: mpsc::UnboundedSender<(Command, Answer)>,
    task: JoinHandle<()>,
}

impl Proposals {
    /// Starts proposing through `raft`.
    pub fn start(raft: Raft) -> Proposals {
        let (queue, rx) = mpsc::unbounded_channel();
        let task = tokio::spawn(propose_queued(raft, rx));
        Proposals { queue, task }
    }

    /// Replicates `cmd` and returns the state machine's answer for it.
    pub async fn write(&self, cmd: Command) -> Result<Response, WriteError> {
        let (tx, rx) = oneshot::channel();
        if self.queue.send((cmd, tx)).is_err() {
            return Err(WriteError::Failed("the node is stopping".into()));
        }
        rx.await
            .unwrap_or_else(|_| Err(WriteError::Failed("the node stopped".into())))
    }
}

impl Drop for Proposals {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Takes queued writes as entries, up to [`IN_FLIGHT`] at a time.
async fn propose_queued(raft: Raft, mut rx: mpsc::UnboundedReceiver<(Command, Answer)>) {
    let in_flight = Arc::new(Semaphore::new(IN_FLIGHT));
    while let Some(first) = rx.recv().await {
        // Writes queue up while the entries in flight are outstanding.
        let Ok(permit) = Arc::clone(&in_flight).acquire_owned().await else {
            return;
        };
        let mut bytes = first.0.size_hint();
        let mut batch = vec![first];
        while batch.len() < MAX_COMMANDS && bytes < MAX_BYTES {
            match rx.try_recv() {
                Ok(next) => {
                    bytes += next.0.size_hint();
                    batch.push(next);
                }
                Err(_) => break,
            }
        }
        let raft = raft.clone();
        tokio::spawn(async move {
            propose(&raft, batch).await;
            drop(permit);
        });
    }
}

/// Proposes `batch` as one entry and answers each of its writes.
async fn propose(raft: &Raft, mut batch: Vec<(Command, Answer)>) {
    if batch.len() == 1 {
        if let Some((cmd, answer)) = batch.pop() {
            let _ = answer.send(client_write(raft, cmd).await);
        }
        return;
    }
    let (commands, answers): (Vec<Command>, Vec<Answer>) = batch.into_iter().unzip();
    match client_write(raft, Command::batch(commands)).await {
        Ok(mut response) => match response.results.pop() {
            Some(OpResult::Batch(each)) if each.len() == answers.len() => {
                for (answer, r) in answers.into_iter().zip(each) {
                    let _ = answer.send(Ok(r));
                }
            }
            _ => {
                let e = WriteError::Failed("the state machine answered a batch wrongly".into());
                for answer in answers {
                    let _ = answer.send(Err(e.clone()));
                }
            }
        },
        Err(e) => {
            for answer in answers {
                let _ = answer.send(Err(e.clone()));
            }
        }
    }
}

async fn client_write(raft: &Raft, cmd: Command) -> Result<Response, WriteError> {
    match raft.client_write(cmd).await {
        Ok(r) => Ok(r.data),
        Err(RaftError::APIError(ClientWriteError::ForwardToLeader(f))) => Err(not_leader(&f)),
        Err(e) => Err(WriteError::Failed(e.to_string())),
    }
}
