//! The cluster's own commands: `CLUSTER INFO|NODES|SLOTS|SHARDS|MYID|
//! KEYSLOT` (one shard owning all 16384 slots: the leader its master, the
//! other voters its replicas), `READONLY`/`READWRITE`/`ASKING`, `RAFT
//! STATUS|ADD|REMOVE` (membership while serving: `slsm cluster`), and
//! `INFO replication`'s lines.
//!
//! * **Owns**: nothing; reads the node's Raft metrics.

use std::collections::BTreeSet;

use slsm_raft::openraft::ChangeMembers;
use slsm_raft::{Member, NodeId};

use super::route::key_slot;
use super::Cluster;
use crate::resp::{Reply, Request};
use crate::session::Session;

/// Redis Cluster's 40-character node name for node `id`.
fn node_name(id: NodeId) -> String {
    format!("{id:040x}")
}

/// What the node knows of the cluster now.
struct View {
    leader: Option<NodeId>,
    term: u64,
    voters: BTreeSet<NodeId>,
    members: Vec<(NodeId, Member)>,
    last_log: u64,
    committed: u64,
    applied: u64,
    /// The last entry in this node's snapshot, and the last purged.
    snapshot: u64,
    purged: u64,
    state: String,
}

fn view(c: &Cluster) -> Option<View> {
    let node = c.node()?;
    let m = node.raft().metrics().borrow().clone();
    let membership = m.membership_config.membership();
    Some(View {
        leader: m.current_leader,
        term: m.current_term,
        voters: membership.voter_ids().collect(),
        members: membership.nodes().map(|(id, n)| (*id, n.clone())).collect(),
        last_log: m.last_log_index.unwrap_or(0),
        committed: committed(&m, &membership.voter_ids().collect()),
        applied: m.last_applied.map_or(0, |id| id.index),
        snapshot: m.snapshot.map_or(0, |id| id.index),
        purged: m.purged.map_or(0, |id| id.index),
        state: format!("{:?}", m.state).to_ascii_lowercase(),
    })
}

/// The commit index as this node knows it: on the leader, the highest
/// index a majority of the voters has; elsewhere what it has applied.
fn committed(
    m: &slsm_raft::openraft::RaftMetrics<NodeId, Member>,
    voters: &BTreeSet<NodeId>,
) -> u64 {
    let applied = m.last_applied.map_or(0, |id| id.index);
    let Some(replication) = &m.replication else {
        return applied;
    };
    let mut matched: Vec<u64> = voters
        .iter()
        .map(|id| match *id == m.id {
            true => m.last_log_index.unwrap_or(0),
            false => replication
                .get(id)
                .and_then(|l| l.as_ref().map(|l| l.index))
                .unwrap_or(0),
        })
        .collect();
    matched.sort_unstable_by(|a, b| b.cmp(a));
    let majority = matched.len() / 2;
    matched.get(majority).copied().unwrap_or(0).max(applied)
}

fn host_port(addr: &str) -> (String, i64) {
    match addr.rsplit_once(':') {
        Some((h, p)) => (h.to_string(), p.parse().unwrap_or(0)),
        None => (addr.to_string(), 0),
    }
}

fn raft_port(m: &Member) -> i64 {
    host_port(&m.raft).1
}

/// `CLUSTER subcommand ...`.
pub fn cluster(c: &Cluster, req: &Request) -> Reply {
    let sub = req
        .get(1)
        .map(|s| s.to_ascii_lowercase())
        .unwrap_or_default();
    let Some(v) = view(c) else {
        return Reply::err("CLUSTERDOWN The cluster is down");
    };
    match sub.as_slice() {
        b"info" => Reply::Verbatim(info_text(&v).into_bytes()),
        b"myid" => Reply::Bulk(node_name(c.me()).into_bytes()),
        b"nodes" => Reply::Verbatim(nodes_text(c, &v).into_bytes()),
        b"slots" => slots(&v),
        b"shards" => shards(&v),
        b"keyslot" if req.len() == 3 => Reply::Int(key_slot(&req[2]) as i64),
        b"countkeysinslot" | b"getkeysinslot" => {
            Reply::err("ERR CLUSTER COUNTKEYSINSLOT and GETKEYSINSLOT are not supported")
        }
        _ => Reply::err(format!(
            "ERR unknown subcommand '{}'. Try CLUSTER INFO, NODES, SLOTS, SHARDS, MYID or KEYSLOT.",
            String::from_utf8_lossy(&sub)
        )),
    }
}

fn info_text(v: &View) -> String {
    let ok = v.leader.is_some();
    format!(
        "cluster_enabled:1\r\ncluster_state:{}\r\ncluster_slots_assigned:16384\r\ncluster_slots_ok:{}\r\ncluster_slots_pfail:0\r\ncluster_slots_fail:{}\r\ncluster_known_nodes:{}\r\ncluster_size:1\r\ncluster_current_epoch:{}\r\ncluster_my_epoch:{}\r\n",
        if ok { "ok" } else { "fail" },
        if ok { 16384 } else { 0 },
        if ok { 0 } else { 16384 },
        v.members.len(),
        v.term,
        v.term,
    )
}

/// The members the shard shows: the leader first, then the other voters
/// (learners are not shown: they serve nothing).
fn shown(v: &View) -> Vec<&(NodeId, Member)> {
    let mut out: Vec<&(NodeId, Member)> = v
        .members
        .iter()
        .filter(|(id, _)| v.voters.contains(id))
        .collect();
    out.sort_by_key(|(id, _)| (Some(*id) != v.leader, *id));
    out
}

fn nodes_text(c: &Cluster, v: &View) -> String {
    let master = v.leader.map_or("-".to_string(), node_name);
    let mut out = String::new();
    for (id, m) in shown(v) {
        let myself = if *id == c.me() { "myself," } else { "" };
        let (role, of, slots) = match Some(*id) == v.leader {
            true => ("master", "-".to_string(), " 0-16383"),
            false => ("slave", master.clone(), ""),
        };
        out.push_str(&format!(
            "{} {}@{} {myself}{role} {of} 0 0 {} connected{slots}\n",
            node_name(*id),
            m.client,
            raft_port(m),
            v.term,
        ));
    }
    out
}

fn endpoint(id: NodeId, m: &Member) -> Vec<Reply> {
    let (host, port) = host_port(&m.client);
    vec![
        Reply::Bulk(host.into_bytes()),
        Reply::Int(port),
        Reply::Bulk(node_name(id).into_bytes()),
    ]
}

fn slots(v: &View) -> Reply {
    if v.leader.is_none() {
        return Reply::Array(Vec::new());
    }
    let mut range = vec![Reply::Int(0), Reply::Int(16383)];
    range.extend(
        shown(v)
            .into_iter()
            .map(|(id, m)| Reply::Array(endpoint(*id, m))),
    );
    Reply::Array(vec![Reply::Array(range)])
}

fn shards(v: &View) -> Reply {
    let nodes = shown(v)
        .into_iter()
        .map(|(id, m)| {
            let (host, port) = host_port(&m.client);
            let role = if Some(*id) == v.leader {
                "master"
            } else {
                "replica"
            };
            let field = |k: &str, r: Reply| (Reply::bulk(k), r);
            Reply::Map(vec![
                field("id", Reply::Bulk(node_name(*id).into_bytes())),
                field("port", Reply::Int(port)),
                field("ip", Reply::Bulk(host.clone().into_bytes())),
                field("endpoint", Reply::Bulk(host.into_bytes())),
                field("role", Reply::bulk(role)),
                field("replication-offset", Reply::Int(v.applied as i64)),
                field("health", Reply::bulk("online")),
            ])
        })
        .collect();
    let slots = match v.leader {
        Some(_) => vec![Reply::Int(0), Reply::Int(16383)],
        None => Vec::new(),
    };
    Reply::Array(vec![Reply::Map(vec![
        (Reply::bulk("slots"), Reply::Array(slots)),
        (Reply::bulk("nodes"), Reply::Array(nodes)),
    ])])
}

/// `READONLY` / `READWRITE` / `ASKING`.
pub fn connection_mode(session: &mut Session, name: &str) -> Reply {
    match name {
        "readonly" => session.readonly = true,
        "readwrite" => session.readonly = false,
        _ => {}
    }
    Reply::ok()
}

/// `ROLE` in a cluster: the leader as a master with its replicas, a
/// follower as a replica of the leader.
pub fn role(c: &Cluster) -> Reply {
    let Some(v) = view(c) else {
        return Reply::err("CLUSTERDOWN The cluster is down");
    };
    let offset = v.applied as i64;
    if v.leader == Some(c.me()) {
        let replicas = shown(&v)
            .into_iter()
            .filter(|(id, _)| *id != c.me())
            .map(|(_, m)| {
                let (host, port) = host_port(&m.client);
                Reply::Array(vec![
                    Reply::Bulk(host.into_bytes()),
                    Reply::Bulk(port.to_string().into_bytes()),
                    Reply::Bulk(offset.to_string().into_bytes()),
                ])
            })
            .collect();
        return Reply::Array(vec![
            Reply::bulk("master"),
            Reply::Int(offset),
            Reply::Array(replicas),
        ]);
    }
    let leader = v
        .leader
        .and_then(|l| v.members.iter().find(|(id, _)| *id == l));
    let (host, port) = leader.map_or((String::new(), -1), |(_, m)| host_port(&m.client));
    let state = if leader.is_some() {
        "connected"
    } else {
        "connect"
    };
    Reply::Array(vec![
        Reply::bulk("slave"),
        Reply::Bulk(host.into_bytes()),
        Reply::Int(port),
        Reply::bulk(state),
        Reply::Int(offset),
    ])
}

/// `INFO replication`'s lines in a cluster.
pub fn replication_info(c: &Cluster) -> String {
    let Some(v) = view(c) else {
        return "role:slave\r\nmaster_link_status:down\r\n".into();
    };
    let leader = v
        .leader
        .and_then(|l| v.members.iter().find(|(id, _)| *id == l));
    let mut out = String::new();
    match v.leader == Some(c.me()) {
        true => {
            let replicas: Vec<_> = shown(&v)
                .into_iter()
                .filter(|(id, _)| *id != c.me())
                .collect();
            out.push_str(&format!(
                "role:master\r\nconnected_slaves:{}\r\n",
                replicas.len()
            ));
            for (i, (id, m)) in replicas.into_iter().enumerate() {
                let (host, port) = host_port(&m.client);
                out.push_str(&format!(
                    "slave{i}:ip={host},port={port},state=online,offset={},lag=0,node_id={id}\r\n",
                    v.applied
                ));
            }
        }
        false => {
            let (host, port) = leader.map_or((String::new(), 0), |(_, m)| host_port(&m.client));
            let link = if leader.is_some() { "up" } else { "down" };
            out.push_str(&format!(
                "role:slave\r\nmaster_host:{host}\r\nmaster_port:{port}\r\nmaster_link_status:{link}\r\nslave_repl_offset:{}\r\nslave_read_only:1\r\n",
                v.applied
            ));
        }
    }
    out.push_str(&format!(
        "raft_node_id:{}\r\nraft_state:{}\r\nraft_leader:{}\r\nraft_term:{}\r\nraft_last_log_index:{}\r\nraft_commit_index:{}\r\nraft_applied_index:{}\r\nraft_snapshot_index:{}\r\nraft_purged_index:{}\r\nraft_voters:{}\r\n",
        c.me(),
        v.state,
        v.leader.map_or("none".to_string(), |l| l.to_string()),
        v.term,
        v.last_log,
        v.committed,
        v.applied,
        v.snapshot,
        v.purged,
        v.voters.iter().map(|id| id.to_string()).collect::<Vec<_>>().join(","),
    ));
    out
}

/// `RAFT STATUS | ADD id raft/client | REMOVE id`: membership while
/// serving. `ADD` makes the node a learner, waits until it has caught up
/// (from a snapshot if the log behind was purged), then a voter; `REMOVE`
/// takes a voter out (the leader included: it steps down once the change
/// is committed). Both run on the leader.
pub fn raft(c: &Cluster, req: &Request) -> Reply {
    let sub = req
        .get(1)
        .map(|s| s.to_ascii_lowercase())
        .unwrap_or_default();
    let Some(node) = c.node() else {
        return Reply::err("CLUSTERDOWN The cluster is down");
    };
    match (sub.as_slice(), req.len()) {
        (b"status", 2) => Reply::Verbatim(replication_info(c).into_bytes()),
        (b"add", 4) => {
            let Some(id) = parse_id(&req[2]) else {
                return Reply::err("ERR node id must be a positive integer");
            };
            let spec = format!("{id}={}", String::from_utf8_lossy(&req[3]));
            let member = match super::parse_members(&spec) {
                Ok(mut m) => m.remove(&id).unwrap_or_default(),
                Err(e) => return Reply::err(format!("ERR {e}")),
            };
            if !c.is_leader() {
                return super::route::redirect(req, c.leader().map(|(_, m)| m.client).as_deref());
            }
            change(async move {
                node.raft()
                    .add_learner(id, member, true)
                    .await
                    .map_err(|e| e.to_string())?;
                node.raft()
                    .change_membership(ChangeMembers::AddVoterIds([id].into()), false)
                    .await
                    .map_err(|e| e.to_string())?;
                Ok(())
            })
        }
        (b"remove", 3) => {
            let Some(id) = parse_id(&req[2]) else {
                return Reply::err("ERR node id must be a positive integer");
            };
            if !c.is_leader() {
                return super::route::redirect(req, c.leader().map(|(_, m)| m.client).as_deref());
            }
            change(async move {
                node.raft()
                    .change_membership(ChangeMembers::RemoveVoters([id].into()), false)
                    .await
                    .map_err(|e| e.to_string())?;
                Ok(())
            })
        }
        _ => Reply::err("ERR RAFT STATUS | ADD <id> <raft-addr>/<client-addr> | REMOVE <id>"),
    }
}

fn parse_id(arg: &[u8]) -> Option<NodeId> {
    std::str::from_utf8(arg)
        .ok()?
        .parse()
        .ok()
        .filter(|id| *id > 0)
}

/// Runs a membership change to its end (a learner's catch-up may take a
/// while: no timeout but the client's).
fn change(fut: impl std::future::Future<Output = Result<(), String>>) -> Reply {
    match tokio::runtime::Handle::current().block_on(fut) {
        Ok(()) => Reply::ok(),
        Err(e) => Reply::err(format!("ERR membership change failed: {e}")),
    }
}
