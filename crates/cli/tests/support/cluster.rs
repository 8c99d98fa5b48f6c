//! A 3-node `slsm serve --cluster` on loopback for the integration tests,
//! driven from outside as a user would: a minimal RESP client ([`Conn`]),
//! the processes ([`Cluster`]: started, killed, signalled, joined), and a
//! client that follows `-MOVED` ([`Client`]). Shared by several test
//! binaries, each using part of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, PartialEq)]
pub enum Resp {
    Ok(String),
    Int(i64),
    Bulk(Option<Vec<u8>>),
    Error(String),
    Array(Vec<Resp>),
}

/// A minimal blocking RESP2 client.
pub struct Conn {
    pub reader: BufReader<TcpStream>,
}

impl Conn {
    pub fn open(addr: &str) -> std::io::Result<Conn> {
        Conn::open_waiting(addr, Duration::from_secs(8))
    }

    /// A connection whose replies are waited for at most `wait`.
    pub fn open_waiting(addr: &str, wait: Duration) -> std::io::Result<Conn> {
        let stream = TcpStream::connect_timeout(&addr.parse().unwrap(), Duration::from_secs(1))?;
        stream.set_read_timeout(Some(wait))?;
        stream.set_nodelay(true)?;
        Ok(Conn {
            reader: BufReader::new(stream),
        })
    }

    pub fn call(&mut self, args: &[&str]) -> std::io::Result<Resp> {
        let mut out = format!("*{}\r\n", args.len());
        for a in args {
            out.push_str(&format!("${}\r\n{a}\r\n", a.len()));
        }
        self.reader.get_mut().write_all(out.as_bytes())?;
        self.read()
    }

    pub fn read(&mut self) -> std::io::Result<Resp> {
        let mut line = String::new();
        if self.reader.read_line(&mut line)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let line = line.trim_end().to_string();
        let (kind, rest) = line.split_at(1);
        let bad = || std::io::Error::other(format!("bad reply {line}"));
        Ok(match kind {
            "+" => Resp::Ok(rest.into()),
            "-" => Resp::Error(rest.into()),
            ":" => Resp::Int(rest.parse().map_err(|_| bad())?),
            "$" => match rest.parse::<i64>().map_err(|_| bad())? {
                -1 => Resp::Bulk(None),
                n => {
                    let mut body = vec![0; n as usize + 2];
                    self.reader.read_exact(&mut body)?;
                    body.truncate(n as usize);
                    Resp::Bulk(Some(body))
                }
            },
            "*" => {
                let n: i64 = rest.parse().map_err(|_| bad())?;
                let mut items = Vec::new();
                for _ in 0..n.max(0) {
                    items.push(self.read()?);
                }
                Resp::Array(items)
            }
            _ => return Err(bad()),
        })
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub struct Cluster {
    pub dir: tempfile::TempDir,
    pub spec: String,
    pub clients: Vec<String>,
    pub children: Vec<Option<Child>>,
    /// `--raft-snapshot-every` of every node.
    pub snapshot_every: u64,
}

impl Cluster {
    pub fn start() -> Cluster {
        Cluster::start_snapshotting_every(50_000)
    }

    pub fn start_snapshotting_every(snapshot_every: u64) -> Cluster {
        let mut c = Cluster::prepare(snapshot_every);
        for i in 0..3 {
            c.spawn(i);
        }
        c
    }

    /// Three members' addresses and directories, none started yet.
    pub fn prepare(snapshot_every: u64) -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        let mut spec = Vec::new();
        let mut clients = Vec::new();
        for id in 1..=3 {
            let (raft, client) = (free_port(), free_port());
            spec.push(format!("{id}=127.0.0.1:{raft}/127.0.0.1:{client}"));
            clients.push(format!("127.0.0.1:{client}"));
        }
        Cluster {
            dir,
            spec: spec.join(","),
            clients,
            children: vec![None, None, None],
            snapshot_every,
        }
    }

    /// Node `i`'s directory.
    pub fn node_dir(&self, i: usize) -> std::path::PathBuf {
        self.dir.path().join(format!("n{}", i + 1))
    }

    pub fn spawn(&mut self, i: usize) {
        let spec = self.spec.clone();
        self.spawn_with(i, &spec, &[]);
    }

    pub fn spawn_with(&mut self, i: usize, spec: &str, extra: &[&str]) {
        let db = self.node_dir(i);
        let child = Command::new(env!("CARGO_BIN_EXE_slsm"))
            .args(["serve", "--db"])
            .arg(&db)
            .args([
                "--bind",
                &self.clients[i],
                "--node-id",
                &(i + 1).to_string(),
            ])
            .args(["--cluster", spec, "--threads", "2"])
            .args(["--raft-snapshot-every", &self.snapshot_every.to_string()])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(match std::env::var_os("SLSM_CLUSTER_VERBOSE") {
                Some(_) => Stdio::inherit(),
                None => Stdio::null(),
            })
            .spawn()
            .unwrap();
        self.children[i] = Some(child);
        wait_listening(&self.clients[i]);
    }

    /// Starts one more node with `--join` (naming only itself): its index,
    /// and its member spec `RAFT_ADDR/CLIENT_ADDR` for `slsm cluster add`.
    pub fn start_joining(&mut self) -> (usize, String) {
        let (raft, client) = (free_port(), free_port());
        let i = self.clients.len();
        let addrs = format!("127.0.0.1:{raft}/127.0.0.1:{client}");
        self.clients.push(format!("127.0.0.1:{client}"));
        self.children.push(None);
        self.spawn_with(i, &format!("{}={addrs}", i + 1), &["--join"]);
        (i, addrs)
    }

    /// Waits until `slsm cluster status` through node `i` satisfies `ok`.
    pub fn wait_status(&self, i: usize, ok: impl Fn(&str) -> bool) {
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            let status = self.admin(i, &["status"]).unwrap_or_default();
            if ok(&status) {
                return;
            }
            assert!(Instant::now() < until, "node {}: {status}", i + 1);
            thread::sleep(Duration::from_millis(100));
        }
    }

    /// `slsm cluster ARGS... --node <node i>`: its output, or its error.
    pub fn admin(&self, i: usize, args: &[&str]) -> Result<String, String> {
        let out = Command::new(env!("CARGO_BIN_EXE_slsm"))
            .arg("cluster")
            .args(args)
            .args(["--node", &self.clients[i]])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        match out.status.success() {
            true => Ok(text.trim_end().to_string()),
            false => Err(format!("{text}{}", String::from_utf8_lossy(&out.stderr))),
        }
    }

    pub fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.children[i].take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    pub fn signal(&self, i: usize, sig: i32) {
        if let Some(child) = &self.children[i] {
            // SAFETY: kill(2) on our own child's pid; no memory involved.
            unsafe { libc::kill(child.id() as i32, sig) };
        }
    }

    /// The node every live node that knows a leader names, once they agree.
    pub fn leader(&self, timeout: Duration) -> Option<usize> {
        let until = Instant::now() + timeout;
        while Instant::now() < until {
            for (i, addr) in self.clients.iter().enumerate() {
                if self.children[i].is_none() {
                    continue;
                }
                let role = Conn::open(addr).and_then(|mut c| c.call(&["ROLE"]));
                if let Ok(Resp::Array(items)) = role {
                    if items.first() == Some(&Resp::Bulk(Some(b"master".to_vec()))) {
                        return Some(i);
                    }
                }
            }
            thread::sleep(Duration::from_millis(50));
        }
        None
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for i in 0..self.children.len() {
            self.signal(i, libc::SIGCONT);
            self.kill(i);
        }
    }
}

pub fn wait_listening(addr: &str) {
    let until = Instant::now() + Duration::from_secs(20);
    while Instant::now() < until {
        if TcpStream::connect(addr).is_ok() {
            return;
        }
        thread::sleep(Duration::from_millis(20));
    }
    panic!("{addr} never listened");
}

/// One client's view of the cluster: a connection, moved by `-MOVED`.
pub struct Client {
    pub addrs: Vec<String>,
    pub at: usize,
    pub conn: Option<Conn>,
    /// How long a reply is waited for.
    pub wait: Duration,
}

/// The outcome of one command.
pub enum Outcome {
    Done(Resp),
    Unknown,
}

impl Client {
    pub fn call(&mut self, args: &[&str]) -> Outcome {
        for _ in 0..8 {
            if self.conn.is_none() {
                match Conn::open_waiting(&self.addrs[self.at], self.wait) {
                    Ok(c) => self.conn = Some(c),
                    Err(_) => {
                        // Not sent: another node may lead.
                        self.at = (self.at + 1) % self.addrs.len();
                        thread::sleep(Duration::from_millis(50));
                        continue;
                    }
                }
            }
            let reply = self.conn.as_mut().map(|c| c.call(args));
            match reply {
                Some(Ok(Resp::Error(e))) if e.starts_with("MOVED ") => {
                    if std::env::var("SLSM_CLUSTER_VERBOSE").is_ok() {
                        eprintln!("{}: {e}", self.addrs[self.at]);
                    }
                    let addr = e.split_whitespace().nth(2).unwrap_or_default().to_string();
                    self.at = self
                        .addrs
                        .iter()
                        .position(|a| *a == addr)
                        .unwrap_or(self.at);
                    self.conn = None;
                }
                Some(Ok(Resp::Error(e))) if e.starts_with("CLUSTERDOWN The cluster is down") => {
                    // Refused before anything was proposed.
                    self.conn = None;
                    self.at = (self.at + 1) % self.addrs.len();
                    thread::sleep(Duration::from_millis(50));
                }
                Some(Ok(Resp::Error(e))) if std::env::var("SLSM_CLUSTER_VERBOSE").is_ok() => {
                    eprintln!("{}: {e}", self.addrs[self.at]);
                    self.conn = None;
                    self.at = (self.at + 1) % self.addrs.len();
                    return Outcome::Unknown;
                }
                Some(Ok(Resp::Error(_))) | Some(Err(_)) | None => {
                    // This node may be gone or paused: the next call tries
                    // another.
                    self.conn = None;
                    self.at = (self.at + 1) % self.addrs.len();
                    return Outcome::Unknown;
                }
                Some(Ok(r)) => return Outcome::Done(r),
            }
        }
        Outcome::Unknown
    }
}

/// Waits until `node`'s own copy (READONLY) answers `want` for `key`.
pub fn wait_replicated(addr: &str, key: &str, want: &Resp) {
    let mut conn = Conn::open(addr).unwrap();
    assert_eq!(conn.call(&["READONLY"]).unwrap(), Resp::Ok("OK".into()));
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let got = conn.call(&["GET", key]).unwrap();
        if got == *want {
            return;
        }
        let short = |r: &Resp| format!("{r:?}").chars().take(120).collect::<String>();
        assert!(
            Instant::now() < until,
            "{addr} has {key} = {}, not {}",
            short(&got),
            short(want)
        );
        thread::sleep(Duration::from_millis(50));
    }
}

/// A write through whichever node leads now (following `-MOVED`).
pub fn write(cluster: &Cluster, args: &[&str]) -> Resp {
    let mut client = Client {
        addrs: cluster.clients.clone(),
        at: 0,
        conn: None,
        wait: Duration::from_secs(8),
    };
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        if let Outcome::Done(r) = client.call(args) {
            return r;
        }
        assert!(Instant::now() < until, "no node took {args:?}");
        thread::sleep(Duration::from_millis(100));
    }
}
