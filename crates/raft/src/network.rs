//! Raft's messages between nodes over plain TCP: each message one frame
//! (its length as 4 little-endian bytes, then its bincode), answered by one
//! frame on the same connection. A node keeps one connection to each peer,
//! opened when first needed and again after any error; every call is
//! bounded by openraft's time-to-live for it, and a peer that cannot be
//! reached is reported `Unreachable`, which makes openraft back off
//! instead of hammering it. Snapshots travel in openraft's chunks
//! (`Config::snapshot_max_chunk_size`), one frame each, so a frame never
//! holds a whole snapshot. Backpressure is TCP's: a call waits for its
//! answer before the next is sent on that connection.
//!
//! * **Owns**: the connections to peers ([`Peer`]) and the listener's
//!   tasks ([`serve`]).
//! * **Thread safety**: a [`Peer`] belongs to one openraft replication
//!   task; [`serve`] spawns a task per incoming connection.

use std::io;
use std::time::Duration;

use openraft::error::{InstallSnapshotError, NetworkError, RPCError, RaftError, Unreachable};
use openraft::network::{RPCOption, RaftNetwork, RaftNetworkFactory};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, InstallSnapshotResponse,
    VoteRequest, VoteResponse,
};
use serde::{de::DeserializeOwned, Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::types::{Member, NodeId, Raft, TypeConfig};

/// The largest frame accepted (a chunk of a snapshot, or a batch of
/// entries, is far smaller).
const MAX_FRAME: usize = 256 << 20;

/// How long connecting to a peer may take.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(500);

/// A message from one node to another.
#[derive(Serialize, Deserialize)]
enum Request {
    AppendEntries(AppendEntriesRequest<TypeConfig>),
    Vote(VoteRequest<NodeId>),
    InstallSnapshot(InstallSnapshotRequest<TypeConfig>),
}

/// The answer to a [`Request`], as the receiving node's raft gave it.
#[derive(Serialize, Deserialize)]
enum Reply {
    AppendEntries(Result<AppendEntriesResponse<NodeId>, RaftError<NodeId>>),
    Vote(Result<VoteResponse<NodeId>, RaftError<NodeId>>),
    InstallSnapshot(
        Result<InstallSnapshotResponse<NodeId>, RaftError<NodeId, InstallSnapshotError>>,
    ),
}

/// Writes `value` as one frame.
async fn write_frame<T: Serialize>(stream: &mut TcpStream, value: &T) -> io::Result<()> {
    let bytes = bincode::serialize(value).map_err(io::Error::other)?;
    if bytes.len() > MAX_FRAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "frame too large",
        ));
    }
    let mut frame = Vec::with_capacity(4 + bytes.len());
    frame.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    frame.extend_from_slice(&bytes);
    stream.write_all(&frame).await
}

/// Reads one frame; `None` at a clean end of the stream.
async fn read_frame<T: DeserializeOwned>(stream: &mut TcpStream) -> io::Result<Option<T>> {
    let mut len = [0u8; 4];
    match stream.read_exact(&mut len).await {
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_FRAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "frame too large",
        ));
    }
    let mut bytes = vec![0u8; len];
    stream.read_exact(&mut bytes).await?;
    bincode::deserialize(&bytes)
        .map(Some)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// Makes a [`Peer`] for each node openraft replicates to.
#[derive(Clone, Default)]
pub struct Network;

impl RaftNetworkFactory<TypeConfig> for Network {
    type Network = Peer;

    async fn new_client(&mut self, target: NodeId, node: &Member) -> Peer {
        Peer {
            target,
            addr: node.raft.clone(),
            conn: None,
        }
    }
}

/// The connection to one peer.
pub struct Peer {
    target: NodeId,
    addr: String,
    conn: Option<TcpStream>,
}

/// Why a call to a peer failed.
enum CallError {
    /// No connection could be made.
    Unreachable(io::Error),
    /// The connection failed or timed out during the call.
    Network(io::Error),
}

impl Peer {
    /// Sends `request` and waits up to `ttl` for its reply.
    async fn call(&mut self, request: Request, ttl: Duration) -> Result<Reply, CallError> {
        let result = tokio::time::timeout(ttl, self.call_untimed(&request)).await;
        let result = match result {
            Ok(r) => r,
            Err(_) => Err(CallError::Network(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("no answer from node {} within {ttl:?}", self.target),
            ))),
        };
        if result.is_err() {
            self.conn = None; // a half-finished exchange: start afresh
        }
        result
    }

    async fn call_untimed(&mut self, request: &Request) -> Result<Reply, CallError> {
        if self.conn.is_none() {
            let connect = tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(&self.addr));
            let stream = match connect.await {
                Ok(Ok(s)) => s,
                Ok(Err(e)) => return Err(CallError::Unreachable(e)),
                Err(_) => {
                    let e = io::Error::new(io::ErrorKind::TimedOut, "connect timed out");
                    return Err(CallError::Unreachable(e));
                }
            };
            let _ = stream.set_nodelay(true);
            self.conn = Some(stream);
        }
        let Some(stream) = self.conn.as_mut() else {
            return Err(CallError::Unreachable(io::Error::other("no connection")));
        };
        write_frame(stream, request)
            .await
            .map_err(CallError::Network)?;
        match read_frame(stream).await {
            Ok(Some(reply)) => Ok(reply),
            Ok(None) => Err(CallError::Network(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the peer closed the connection",
            ))),
            Err(e) => Err(CallError::Network(e)),
        }
    }
}

fn rpc_error<E: std::error::Error>(e: CallError) -> RPCError<NodeId, Member, E> {
    match e {
        CallError::Unreachable(e) => RPCError::Unreachable(Unreachable::new(&e)),
        CallError::Network(e) => RPCError::Network(NetworkError::new(&e)),
    }
}

fn unexpected<E: std::error::Error>() -> RPCError<NodeId, Member, E> {
    let e = io::Error::new(io::ErrorKind::InvalidData, "a reply of another kind");
    RPCError::Network(NetworkError::new(&e))
}

impl RaftNetwork<TypeConfig> for Peer {
    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<AppendEntriesResponse<NodeId>, RPCError<NodeId, Member, RaftError<NodeId>>> {
        match self
            .call(Request::AppendEntries(rpc), option.hard_ttl())
            .await
        {
            Ok(Reply::AppendEntries(r)) => r.map_err(|e| {
                RPCError::RemoteError(openraft::error::RemoteError::new(self.target, e))
            }),
            Ok(_) => Err(unexpected()),
            Err(e) => Err(rpc_error(e)),
        }
    }

    async fn install_snapshot(
        &mut self,
        rpc: InstallSnapshotRequest<TypeConfig>,
        option: RPCOption,
    ) -> Result<
        InstallSnapshotResponse<NodeId>,
        RPCError<NodeId, Member, RaftError<NodeId, InstallSnapshotError>>,
    > {
        match self
            .call(Request::InstallSnapshot(rpc), option.hard_ttl())
            .await
        {
            Ok(Reply::InstallSnapshot(r)) => r.map_err(|e| {
                RPCError::RemoteError(openraft::error::RemoteError::new(self.target, e))
            }),
            Ok(_) => Err(unexpected()),
            Err(e) => Err(rpc_error(e)),
        }
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<NodeId>,
        option: RPCOption,
    ) -> Result<VoteResponse<NodeId>, RPCError<NodeId, Member, RaftError<NodeId>>> {
        match self.call(Request::Vote(rpc), option.hard_ttl()).await {
            Ok(Reply::Vote(r)) => r.map_err(|e| {
                RPCError::RemoteError(openraft::error::RemoteError::new(self.target, e))
            }),
            Ok(_) => Err(unexpected()),
            Err(e) => Err(rpc_error(e)),
        }
    }
}

/// Answers peers' messages arriving at `listener` with `raft`, until the
/// task is aborted, which closes every connection it accepted too (a
/// stopped node must not go on answering for a raft that is gone). A
/// connection that sends a bad frame is closed; others are not disturbed.
pub async fn serve(listener: TcpListener, raft: Raft) {
    let mut connections = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let _ = stream.set_nodelay(true);
                    connections.spawn(answer(stream, raft.clone()));
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

async fn answer(mut stream: TcpStream, raft: Raft) {
    while let Ok(Some(request)) = read_frame::<Request>(&mut stream).await {
        let reply = match request {
            Request::AppendEntries(r) => Reply::AppendEntries(raft.append_entries(r).await),
            Request::Vote(r) => Reply::Vote(raft.vote(r).await),
            Request::InstallSnapshot(r) => Reply::InstallSnapshot(raft.install_snapshot(r).await),
        };
        if write_frame(&mut stream, &reply).await.is_err() {
            return;
        }
    }
}
