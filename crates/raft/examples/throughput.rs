//! Writes per second through a 3-node cluster in one process: `CLIENTS`
//! tasks each writing in a loop for `SECONDS`.
//!
//!   cargo run --release -p slsm-raft --example throughput [CLIENTS] [SECONDS]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use slsm_raft::{Command, Member, Node, NodeConfig, NodeId, Op};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(0)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let mut args = std::env::args().skip(1);
    let clients: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(50);
    let seconds: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let root = std::env::temp_dir().join(format!("slsm-raft-throughput-{}", std::process::id()));
    let members: BTreeMap<NodeId, Member> = (1..=3)
        .map(|id| {
            let m = Member {
                raft: format!("127.0.0.1:{}", free_port()),
                client: format!("127.0.0.1:{}", free_port()),
            };
            (id, m)
        })
        .collect();
    let mut nodes = Vec::new();
    for id in 1..=3 {
        let cfg = NodeConfig::new(id, root.join(format!("n{id}")), members.clone());
        nodes.push(Node::start(cfg).await?);
    }
    let leader = loop {
        if let Some(l) = nodes[0].leader() {
            if let Some(n) = nodes.iter().find(|n| n.id() == l) {
                break Arc::clone(n);
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let done = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut tasks = Vec::new();
    for c in 0..clients {
        let (leader, done) = (Arc::clone(&leader), Arc::clone(&done));
        tasks.push(tokio::spawn(async move {
            let mut i = 0u64;
            while Instant::now() < deadline {
                let cmd = Command {
                    at_millis: 0,
                    ops: vec![Op::Put {
                        key: format!("k{c}-{i}").into_bytes(),
                        value: vec![b'x'; 100],
                    }],
                };
                if leader.write(cmd).await.is_ok() {
                    done.fetch_add(1, Ordering::Relaxed);
                }
                i += 1;
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
    let n = done.load(Ordering::Relaxed);
    println!(
        "{clients} clients: {n} writes in {seconds} s = {:.0}/s",
        n as f64 / seconds as f64
    );
    for n in &nodes {
        n.shutdown().await;
    }
    let _ = std::fs::remove_dir_all(&root);
    Ok(())
}
