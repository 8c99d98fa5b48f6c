//! `slsm cluster status|add|remove`: a cluster's membership through any of
//! its nodes, over the Redis protocol (`RAFT STATUS|ADD|REMOVE`, which
//! `slsm serve --cluster` answers), following `-MOVED` to the leader.
//!
//! The client is a few lines of RESP rather than a client crate: it sends
//! one command and reads one reply of the kinds `RAFT` answers.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};

/// Most redirects followed before giving up (a leader changing under us).
const MAX_HOPS: usize = 5;

/// How long a node that knows no leader is asked again before its
/// `CLUSTERDOWN` is the answer.
const NO_LEADER_WAIT: Duration = Duration::from_secs(10);

/// Runs `action` with `args` through the node at `node`; prints the answer.
pub fn run(node: &str, action: &str, args: &[String]) -> Result<()> {
    let mut cmd: Vec<String> = vec!["RAFT".into(), action.to_ascii_uppercase()];
    match (action, args.len()) {
        ("status", 0) | ("add", 2) | ("remove", 1) => cmd.extend(args.iter().cloned()),
        ("status", _) => bail!("usage: slsm cluster status [--node ADDR]"),
        ("add", _) => bail!("usage: slsm cluster add ID RAFT_ADDR/CLIENT_ADDR [--node ADDR]"),
        _ => bail!("usage: slsm cluster remove ID [--node ADDR]"),
    }
    let mut addr = node.to_string();
    let mut hops = 0;
    let no_leader_until = Instant::now() + NO_LEADER_WAIT;
    while hops < MAX_HOPS {
        match request(&addr, &cmd)? {
            // An election under way, or a node just started that has not
            // heard from the leader yet.
            Answer::Error(e)
                if e.starts_with("CLUSTERDOWN") && Instant::now() < no_leader_until =>
            {
                std::thread::sleep(Duration::from_millis(100));
            }
            Answer::Text(text) => {
                println!("{}", text.trim_end());
                return Ok(());
            }
            Answer::Error(e) => match e.strip_prefix("MOVED ") {
                Some(rest) => {
                    hops += 1;
                    addr = rest
                        .split_whitespace()
                        .nth(1)
                        .ok_or_else(|| anyhow!("malformed redirect: {e}"))?
                        .to_string();
                }
                None => bail!("{addr}: {e}"),
            },
        }
    }
    bail!("no leader answered after {MAX_HOPS} redirects")
}

enum Answer {
    Text(String),
    Error(String),
}

fn request(addr: &str, cmd: &[String]) -> Result<Answer> {
    let mut stream = TcpStream::connect(addr).with_context(|| format!("cannot reach {addr}"))?;
    // A learner's catch-up (add) may take minutes on a large database.
    stream.set_read_timeout(Some(Duration::from_secs(600)))?;
    let mut out = format!("*{}\r\n", cmd.len());
    for arg in cmd {
        out.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
    }
    stream.write_all(out.as_bytes())?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let line = line.trim_end_matches(['\r', '\n']);
    let (kind, rest) = line.split_at(line.len().min(1));
    Ok(match kind {
        "+" | ":" => Answer::Text(rest.to_string()),
        "-" => Answer::Error(rest.to_string()),
        "$" | "=" => {
            let len: usize = rest.parse().context("malformed reply")?;
            let mut body = vec![0; len + 2];
            reader.read_exact(&mut body)?;
            body.truncate(len);
            let text = String::from_utf8_lossy(&body).into_owned();
            // A verbatim string starts with its format (`txt:`).
            let text = match kind {
                "=" => text.get(4..).unwrap_or_default().to_string(),
                _ => text,
            };
            Answer::Text(text.replace("\r\n", "\n"))
        }
        _ => bail!("unexpected reply from {addr}: {line}"),
    })
}
