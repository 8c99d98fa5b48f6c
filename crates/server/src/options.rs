//! How the server is told to run (`slsm serve`'s flags): the options and
//! their checks, and when writes reach the disk.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// When writes reach the disk (Redis's `appendfsync`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fsync {
    /// Every write is synced before it is acknowledged.
    Always,
    /// The log is synced at least once a second.
    EverySec,
    /// The OS decides (a write still survives a crash of the server).
    No,
}

impl Fsync {
    pub fn parse(s: &str) -> Option<Fsync> {
        match s {
            "always" => Some(Fsync::Always),
            "everysec" => Some(Fsync::EverySec),
            "no" => Some(Fsync::No),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Fsync::Always => "always",
            Fsync::EverySec => "everysec",
            Fsync::No => "no",
        }
    }
}

/// How to serve.
#[derive(Clone, Debug)]
pub struct ServerOptions {
    pub db: PathBuf,
    pub bind: SocketAddr,
    pub requirepass: Option<String>,
    /// `--aclfile`: the ACL users to start with, and where `ACL SAVE`
    /// writes them (`acl/file.rs`).
    pub aclfile: Option<PathBuf>,
    /// `--acl-pubsub-default allchannels`: users start with every channel
    /// (Redis 7's default, `resetchannels`, is none).
    pub acl_pubsub_default_all: bool,
    /// `--tls-port` and its files: TLS beside the plain listener.
    pub tls: Option<crate::tls::TlsOptions>,
    pub appendfsync: Fsync,
    pub maxclients: usize,
    /// The most unparsed input all clients together may hold; past it, a
    /// client holding more than its share is closed (see `conn.rs`).
    pub max_query_buffers: usize,
    /// Threads serving connections (`slsm serve --threads`; Redis's
    /// `io-threads`). Default: one per CPU.
    pub threads: usize,
    /// Engine options for the database.
    pub engine: slsm::Options,
    /// The pause between two steps of the sweep that reclaims unowned
    /// collection elements (`collections/sweep.rs`); a finished pass
    /// waits 60 of these before the next.
    pub sweep_interval: Duration,
    /// Serve as a member of a replicated cluster (`slsm serve --cluster`);
    /// `None`: a single node.
    pub cluster: Option<crate::cluster::ClusterOptions>,
}

impl ServerOptions {
    pub fn new(db: impl Into<PathBuf>) -> ServerOptions {
        ServerOptions {
            db: db.into(),
            bind: SocketAddr::from(([127, 0, 0, 1], 6379)),
            requirepass: None,
            aclfile: None,
            acl_pubsub_default_all: false,
            tls: None,
            appendfsync: Fsync::EverySec,
            maxclients: 10_000,
            max_query_buffers: 1 << 30,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            engine: slsm::Options::default(),
            sweep_interval: Duration::from_secs(1),
            cluster: None,
        }
    }

    /// Redis's protected mode: a non-loopback address needs a password.
    pub fn check(&self) -> Result<(), String> {
        if !self.bind.ip().is_loopback() && self.requirepass.is_none() && self.aclfile.is_none() {
            return Err(format!(
                "refusing to listen on {} without --requirepass or --aclfile: anyone who can reach it could read and change the data (bind to 127.0.0.1, or set a password)",
                self.bind
            ));
        }
        if self.maxclients == 0 {
            return Err("--maxclients must be at least 1".into());
        }
        if self.threads == 0 {
            return Err("--threads must be at least 1".into());
        }
        Ok(())
    }
}
