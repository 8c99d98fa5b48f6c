//! `slsm serve`: its flags (Redis's names where Redis has the option) and
//! the server's options made from them.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::exit;

/// `--acl-pubsub-default`: the channels a new ACL user starts with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PubsubDefault {
    Allchannels,
    Resetchannels,
}

/// The flags of `slsm serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Database directory (created if missing).
    #[arg(long)]
    pub db: PathBuf,
    /// Address to listen on. A non-loopback address needs --requirepass.
    #[arg(long, default_value = "127.0.0.1:6379")]
    pub bind: std::net::SocketAddr,
    /// Password clients must give with AUTH (or HELLO ... AUTH).
    #[arg(long)]
    pub requirepass: Option<String>,
    /// ACL users to start with (Redis's `user NAME RULES...` lines);
    /// `ACL SAVE` writes there and `ACL LOAD` reads it again.
    #[arg(long)]
    pub aclfile: Option<PathBuf>,
    /// The channels a new ACL user starts with: none (resetchannels,
    /// Redis 7's default) or all (allchannels).
    #[arg(long, value_enum, default_value_t = PubsubDefault::Resetchannels)]
    pub acl_pubsub_default: PubsubDefault,
    /// Also serve TLS on this port (of --bind's address), with
    /// --tls-cert-file and --tls-key-file (PEM).
    #[arg(long, requires_all = ["tls_cert_file", "tls_key_file"])]
    pub tls_port: Option<u16>,
    /// The server's certificate chain (PEM), for --tls-port.
    #[arg(long)]
    pub tls_cert_file: Option<PathBuf>,
    /// The server's private key (PEM), for --tls-port.
    #[arg(long)]
    pub tls_key_file: Option<PathBuf>,
    /// CA certificates (PEM) that client certificates are checked
    /// against.
    #[arg(long)]
    pub tls_ca_cert_file: Option<PathBuf>,
    /// Whether clients must present a certificate signed by
    /// --tls-ca-cert-file: yes, optional or no (Redis's default: yes;
    /// without a CA file: no).
    #[arg(long, value_parser = ["yes", "optional", "no"])]
    pub tls_auth_clients: Option<String>,
    /// When writes reach the disk: always (before the reply), everysec,
    /// or no (the OS decides; a write still survives a server crash).
    #[arg(long, default_value = "everysec", value_parser = ["always", "everysec", "no"])]
    pub appendfsync: String,
    /// Most clients connected at once.
    #[arg(long, default_value_t = 10_000)]
    pub maxclients: usize,
    /// Memory the engine may use (Redis's size syntax: 64mb, 1gb, or
    /// bytes). Unlike Redis's maxmemory it bounds memory, not data:
    /// the data may be far larger and stays on disk; nothing is evicted.
    #[arg(long, default_value = "128mb", value_parser = parse_redis_size)]
    pub maxmemory: usize,
    /// The most unparsed input all clients together may hold (same
    /// syntax); past it, a client holding more than its share is closed.
    #[arg(long, default_value = "1gb", value_parser = parse_redis_size)]
    pub max_query_buffers: usize,
    /// Threads serving connections (default: one per CPU).
    #[arg(long)]
    pub threads: Option<usize>,
    /// This node's id in the cluster (with --cluster).
    #[arg(long, requires = "cluster")]
    pub node_id: Option<u64>,
    /// Serve as a member of a replicated cluster (Raft): every member
    /// as ID=RAFT_ADDR/CLIENT_ADDR, comma-separated, e.g.
    /// 1=127.0.0.1:17001/127.0.0.1:7001,2=...; every node started with
    /// the same list forms the cluster, and restarting one rejoins it.
    #[arg(long, requires = "node_id")]
    pub cluster: Option<String>,
    /// Join a running cluster instead of forming one: --cluster needs to
    /// name only this node; it serves once `slsm cluster add ID
    /// RAFT_ADDR/CLIENT_ADDR` (through any member) has added it and it has
    /// caught up. Restart it later with the same flags.
    #[arg(long, requires = "cluster")]
    pub join: bool,
    /// Entries applied between snapshots of this node's state (the log
    /// behind one is purged, but for a tenth of this, at most 1,000
    /// entries); a node that falls further behind catches up from a
    /// snapshot.
    #[arg(long, default_value_t = 50_000, requires = "cluster",
          value_parser = clap::value_parser!(u64).range(1..))]
    pub raft_snapshot_every: u64,
}

/// Serves until SIGTERM, SIGINT or SHUTDOWN; returns the exit status.
pub fn run(args: ServeArgs) -> Result<i32> {
    let ServeArgs {
        db,
        bind,
        requirepass,
        aclfile,
        acl_pubsub_default,
        tls_port,
        tls_cert_file,
        tls_key_file,
        tls_ca_cert_file,
        tls_auth_clients,
        appendfsync,
        maxclients,
        maxmemory,
        max_query_buffers,
        threads,
        node_id,
        cluster,
        join,
        raft_snapshot_every,
    } = args;
    let mut opts = slsm_server::ServerOptions::new(db);
    opts.bind = bind;
    opts.requirepass = requirepass;
    opts.aclfile = aclfile;
    opts.acl_pubsub_default_all = acl_pubsub_default == PubsubDefault::Allchannels;
    opts.tls = tls_options(
        tls_port,
        tls_cert_file,
        tls_key_file,
        tls_ca_cert_file,
        tls_auth_clients,
    );
    opts.appendfsync =
        slsm_server::Fsync::parse(&appendfsync).unwrap_or(slsm_server::Fsync::EverySec);
    opts.maxclients = maxclients;
    opts.max_query_buffers = max_query_buffers;
    opts.engine.memory_budget = maxmemory;
    opts.threads = threads.unwrap_or(opts.threads);
    if let (Some(node_id), Some(spec)) = (node_id, cluster) {
        let members = slsm_server::cluster::parse_members(&spec)
            .map_err(|e| anyhow::Error::new(exit::Usage(e)))?;
        opts.cluster = Some(slsm_server::cluster::ClusterOptions {
            node_id,
            members,
            join,
            snapshot_every: raft_snapshot_every,
            timeout: std::time::Duration::from_secs(5),
        });
    }
    if let Err(e) = opts.check() {
        return Err(anyhow::Error::new(exit::Usage(e)));
    }
    slsm_server::run(opts).map_err(anyhow::Error::msg)?;
    Ok(exit::OK)
}

/// The TLS listener's options, when --tls-port and its two files are given
/// (clap requires the files with the port). Redis's default for
/// --tls-auth-clients is yes; without a CA file no certificate could be
/// checked, so there it is no.
fn tls_options(
    port: Option<u16>,
    cert_file: Option<PathBuf>,
    key_file: Option<PathBuf>,
    ca_cert_file: Option<PathBuf>,
    auth_clients: Option<String>,
) -> Option<slsm_server::tls::TlsOptions> {
    let (port, cert_file, key_file) = (port?, cert_file?, key_file?);
    let default = if ca_cert_file.is_some() { "yes" } else { "no" };
    let auth = auth_clients.as_deref().unwrap_or(default);
    Some(slsm_server::tls::TlsOptions {
        port,
        cert_file,
        key_file,
        ca_cert_file,
        auth_clients: slsm_server::tls::AuthClients::parse(auth)
            .unwrap_or(slsm_server::tls::AuthClients::Yes),
    })
}

/// A size as redis.conf writes them: bytes, or with k/kb/m/mb/g/gb (k is
/// 1000, kb 1024, as in Redis).
fn parse_redis_size(s: &str) -> Result<usize, String> {
    let lower = s.trim().to_ascii_lowercase();
    let split = lower
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(lower.len());
    let (digits, unit) = lower.split_at(split);
    let scale: usize = match unit {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1 << 10,
        "m" => 1_000_000,
        "mb" => 1 << 20,
        "g" => 1_000_000_000,
        "gb" => 1 << 30,
        _ => {
            return Err(format!(
                "unknown size unit in {s:?} (use b, k, kb, m, mb, g, gb)"
            ))
        }
    };
    digits
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(scale))
        .ok_or_else(|| format!("not a size: {s:?}"))
}

#[cfg(test)]
mod tests {
    use super::parse_redis_size;

    #[test]
    fn redis_sizes() {
        assert_eq!(parse_redis_size("64mb"), Ok(64 << 20));
        assert_eq!(parse_redis_size("1GB"), Ok(1 << 30));
        assert_eq!(parse_redis_size("5k"), Ok(5000));
        assert_eq!(parse_redis_size("4096"), Ok(4096));
        assert!(parse_redis_size("12x").is_err());
        assert!(parse_redis_size("mb").is_err());
    }
}
