//! A server on an ephemeral loopback port, stopped when dropped.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use redis::Connection;
use slsm_server::{Fsync, ServerOptions};

pub struct Server {
    url: String,
    pub addr: std::net::SocketAddr,
    /// The TLS listener's address, when one was asked for.
    pub tls_addr: Option<std::net::SocketAddr>,
    rt: Option<tokio::runtime::Runtime>,
    running: Option<slsm_server::Running>,
    _dir: tempfile::TempDir,
}

impl Server {
    pub fn start(password: Option<&str>) -> Server {
        Server::start_with(|opts| opts.requirepass = password.map(str::to_string))
    }

    pub fn start_with(configure: impl FnOnce(&mut ServerOptions)) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("db");
        Server::start_at(dir, db, configure)
    }

    /// A server on database `db`, whose directory `dir` lives as long as
    /// the server (a later server on the same `db` needs its own `dir`).
    pub fn start_at(
        dir: tempfile::TempDir,
        db: std::path::PathBuf,
        configure: impl FnOnce(&mut ServerOptions),
    ) -> Server {
        let mut opts = ServerOptions::new(db);
        opts.bind = "127.0.0.1:0".parse().unwrap();
        opts.appendfsync = Fsync::No;
        configure(&mut opts);
        let password = opts.requirepass.clone();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let running = rt.block_on(slsm_server::start(opts)).unwrap();
        let addr = running.addr;
        let tls_addr = running.tls_addr;
        let url = match &password {
            Some(p) => format!("redis://:{p}@{addr}/"),
            None => format!("redis://{addr}/"),
        };
        Server {
            url,
            addr,
            tls_addr,
            rt: Some(rt),
            running: Some(running),
            _dir: dir,
        }
    }

    pub fn conn(&self) -> Connection {
        redis::Client::open(self.url.as_str())
            .unwrap()
            .get_connection()
            .unwrap()
    }

    pub fn raw(&self, bytes: &[u8]) -> Vec<u8> {
        let mut s = TcpStream::connect(self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(bytes).unwrap();
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        out
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let (Some(rt), Some(running)) = (self.rt.take(), self.running.take()) {
            running.shutdown();
            rt.block_on(running.stopped());
        }
    }
}

/// `args` as one RESP request.
pub fn request(args: &[&str]) -> Vec<u8> {
    let mut out = format!("*{}\r\n", args.len()).into_bytes();
    for a in args {
        out.extend(format!("${}\r\n{a}\r\n", a.len()).into_bytes());
    }
    out
}

/// RESP2 replies (no arrays) as text: a bulk string as its content, `nil`
/// for a null one, any other reply as its line.
pub fn replies(raw: &[u8]) -> Vec<String> {
    let text = String::from_utf8(raw.to_vec()).unwrap();
    let mut lines = text.split("\r\n");
    let mut out = Vec::new();
    while let Some(line) = lines.next() {
        match line.strip_prefix('$') {
            Some("-1") => out.push("nil".to_string()),
            Some(_) => out.push(lines.next().unwrap().to_string()),
            None if line.is_empty() => {}
            None => out.push(line.to_string()),
        }
    }
    out
}

/// The error message the server answers `args` with (the call must fail).
pub fn error_of(c: &mut redis::Connection, args: &[&str]) -> String {
    redis::cmd(args[0])
        .arg(&args[1..])
        .query::<redis::Value>(c)
        .unwrap_err()
        .to_string()
}

/// A connection read and written in raw RESP.
pub struct Raw(pub TcpStream);

impl Raw {
    pub fn new(s: &Server) -> Raw {
        let c = TcpStream::connect(s.addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        Raw(c)
    }

    pub fn send(&mut self, requests: &[&[&str]]) -> &mut Self {
        let bytes: Vec<u8> = requests.iter().flat_map(|r| request(r)).collect();
        self.0.write_all(&bytes).unwrap();
        self
    }

    /// Reads exactly `want`'s length and compares.
    pub fn expect(&mut self, want: &str) {
        let mut got = vec![0; want.len()];
        self.0.read_exact(&mut got).unwrap();
        assert_eq!(String::from_utf8_lossy(&got), want);
    }

    /// The raw reply to `args`: sent with a `PING` behind it, read up to
    /// the `PONG`.
    pub fn reply_to(&mut self, args: &[&str]) -> Vec<u8> {
        self.send(&[args, &["PING"]]);
        let mut got = Vec::new();
        let mut buf = [0u8; 65536];
        while !got.ends_with(b"+PONG\r\n") {
            let n = self.0.read(&mut buf).unwrap();
            assert!(n > 0, "connection closed");
            got.extend_from_slice(&buf[..n]);
        }
        got.truncate(got.len() - 7);
        got
    }

    /// Nothing more arrives within a short while.
    pub fn expect_quiet(&mut self) {
        self.0
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let mut b = [0u8; 256];
        match self.0.read(&mut b) {
            Ok(n) => panic!("unexpected: {:?}", String::from_utf8_lossy(&b[..n])),
            Err(e) => assert!(
                matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ),
                "{e}"
            ),
        }
        self.0
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
    }
}

/// Sends each request of `cases` on one connection and checks its reply,
/// byte for byte; then that nothing more arrives.
pub fn expect_replies(s: &Server, cases: &[(&[&str], &str)]) {
    let mut c = Raw::new(s);
    for (request, reply) in cases {
        c.send(&[request]);
        c.expect(reply);
    }
    c.expect_quiet();
}

/// Waits until `INFO clients` shows `n` blocked clients.
pub fn wait_blocked(c: &mut redis::Connection, n: usize) {
    let want = format!("blocked_clients:{n}\r");
    for _ in 0..2000 {
        let info: String = redis::cmd("INFO").arg("clients").query(c).unwrap();
        if info.contains(&want) {
            return;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    panic!("never saw {want}");
}

/// CRC-64 (Jones, reflected), bit by bit: an independent check of the
/// server's table-driven one.
pub fn crc64(data: &[u8]) -> u64 {
    let mut crc = 0u64;
    for b in data {
        crc ^= u64::from(*b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0x95ac9329ac4bc9b5
            } else {
                crc >> 1
            };
        }
    }
    crc
}
