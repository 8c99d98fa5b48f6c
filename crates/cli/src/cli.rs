//! The command line's shape (clap) and dispatch.

use crate::admin::{self, Encoding, Space};
use crate::{exit, plot};
use anyhow::Result;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

const EXIT_CODES: &str = "\
Exit status:
  0  success
  1  not found (get: the key does not exist)
  2  usage error (bad arguments, invalid option)
  3  corruption (check found damage, or a command met damaged data)
  4  the database is locked by another process
  5  any other error (I/O, not a database, ...)";

/// Admin commands, a db_bench-compatible benchmark and plots for the slsm
/// storage engine.
#[derive(Parser, Debug)]
#[command(name = "slsm", version, after_help = EXIT_CODES)]
pub struct Cli {
    #[command(subcommand)]
    pub cmd: Cmd,
}

/// `--acl-pubsub-default`: the channels a new ACL user starts with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PubsubDefault {
    Allchannels,
    Resetchannels,
}

#[derive(Subcommand, Debug)]
pub enum Cmd {
    /// Print the value of KEY followed by a newline (exit 1 if absent).
    #[command(after_help = EXIT_CODES)]
    Get {
        /// Database directory.
        db: PathBuf,
        /// The key.
        key: String,
        #[command(flatten)]
        enc: Encoding,
        #[command(flatten)]
        space: Space,
    },
    /// Set KEY to VALUE (creates the database if missing).
    #[command(after_help = EXIT_CODES)]
    Put {
        /// Database directory.
        db: PathBuf,
        /// The key.
        key: String,
        /// The value.
        value: String,
        #[command(flatten)]
        enc: Encoding,
        /// Sync the write-ahead log before returning.
        #[arg(long)]
        sync: bool,
        #[command(flatten)]
        space: Space,
    },
    /// Delete KEY (succeeds whether or not it exists).
    #[command(after_help = EXIT_CODES)]
    Delete {
        /// Database directory.
        db: PathBuf,
        /// The key.
        key: String,
        #[command(flatten)]
        enc: Encoding,
        #[command(flatten)]
        space: Space,
    },
    /// Print entries in key order, one `KEY<TAB>VALUE` per line.
    #[command(after_help = EXIT_CODES)]
    Scan {
        /// Database directory.
        db: PathBuf,
        /// First key (inclusive).
        #[arg(long)]
        start: Option<String>,
        /// Last key (exclusive).
        #[arg(long)]
        end: Option<String>,
        /// Print at most N entries.
        #[arg(long)]
        limit: Option<u64>,
        /// Print in descending key order.
        #[arg(long)]
        reverse: bool,
        /// Print only the keys.
        #[arg(long)]
        keys_only: bool,
        #[command(flatten)]
        enc: Encoding,
        #[command(flatten)]
        space: Space,
    },
    /// Print levels, runs, sizes, Bloom filter false-positive rate, write
    /// amplification and stalls.
    #[command(after_help = EXIT_CODES)]
    Stats {
        /// Database directory.
        db: PathBuf,
        /// Print as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Read every block of every file and verify every checksum (exit 3 on
    /// corruption, naming the file and offset).
    #[command(after_help = EXIT_CODES)]
    Check {
        /// Database directory.
        db: PathBuf,
    },
    /// Write a consistent copy of the database (every keyspace, at one
    /// point in time) to DEST, which must not exist or be empty; run files
    /// are hard-linked where possible.
    #[command(after_help = EXIT_CODES)]
    Checkpoint {
        /// Database directory.
        db: PathBuf,
        /// Directory of the copy.
        dest: PathBuf,
    },
    /// Write every keyspace to FILE: a streaming, checksummed dump (its
    /// format is documented in crates/cli/README.md). Reads a snapshot;
    /// changes nothing.
    #[command(after_help = EXIT_CODES)]
    Dump {
        /// Database directory.
        db: PathBuf,
        /// The dump file to write.
        file: PathBuf,
    },
    /// Load a dump written by `slsm dump` (creates the database if
    /// missing): the whole file is verified first, then each keyspace is
    /// bulk-loaded as sorted run files.
    #[command(after_help = EXIT_CODES)]
    Load {
        /// Database directory.
        db: PathBuf,
        /// The dump file to read.
        file: PathBuf,
    },
    /// Serve the database over the Redis protocol (RESP2/RESP3): redis-cli,
    /// redis-benchmark and Redis clients work unchanged. Stops on SIGTERM,
    /// SIGINT or SHUTDOWN, flushing and closing the database.
    #[command(after_help = EXIT_CODES)]
    Serve {
        /// Database directory (created if missing).
        #[arg(long)]
        db: PathBuf,
        /// Address to listen on. A non-loopback address needs --requirepass.
        #[arg(long, default_value = "127.0.0.1:6379")]
        bind: std::net::SocketAddr,
        /// Password clients must give with AUTH (or HELLO ... AUTH).
        #[arg(long)]
        requirepass: Option<String>,
        /// ACL users to start with (Redis's `user NAME RULES...` lines);
        /// `ACL SAVE` writes there and `ACL LOAD` reads it again.
        #[arg(long)]
        aclfile: Option<PathBuf>,
        /// The channels a new ACL user starts with: none (resetchannels,
        /// Redis 7's default) or all (allchannels).
        #[arg(long, value_enum, default_value_t = PubsubDefault::Resetchannels)]
        acl_pubsub_default: PubsubDefault,
        /// Also serve TLS on this port (of --bind's address), with
        /// --tls-cert-file and --tls-key-file (PEM).
        #[arg(long, requires_all = ["tls_cert_file", "tls_key_file"])]
        tls_port: Option<u16>,
        /// The server's certificate chain (PEM), for --tls-port.
        #[arg(long)]
        tls_cert_file: Option<PathBuf>,
        /// The server's private key (PEM), for --tls-port.
        #[arg(long)]
        tls_key_file: Option<PathBuf>,
        /// CA certificates (PEM) that client certificates are checked
        /// against.
        #[arg(long)]
        tls_ca_cert_file: Option<PathBuf>,
        /// Whether clients must present a certificate signed by
        /// --tls-ca-cert-file: yes, optional or no (Redis's default: yes;
        /// without a CA file: no).
        #[arg(long, value_parser = ["yes", "optional", "no"])]
        tls_auth_clients: Option<String>,
        /// When writes reach the disk: always (before the reply), everysec,
        /// or no (the OS decides; a write still survives a server crash).
        #[arg(long, default_value = "everysec", value_parser = ["always", "everysec", "no"])]
        appendfsync: String,
        /// Most clients connected at once.
        #[arg(long, default_value_t = 10_000)]
        maxclients: usize,
        /// Memory the engine may use (Redis's size syntax: 64mb, 1gb, or
        /// bytes). Unlike Redis's maxmemory it bounds memory, not data:
        /// the data may be far larger and stays on disk; nothing is evicted.
        #[arg(long, default_value = "128mb", value_parser = parse_redis_size)]
        maxmemory: usize,
        /// The most unparsed input all clients together may hold (same
        /// syntax); past it, a client holding more than its share is closed.
        #[arg(long, default_value = "1gb", value_parser = parse_redis_size)]
        max_query_buffers: usize,
        /// Threads serving connections (default: one per CPU).
        #[arg(long)]
        threads: Option<usize>,
        /// This node's id in the cluster (with --cluster).
        #[arg(long, requires = "cluster")]
        node_id: Option<u64>,
        /// Serve as a member of a replicated cluster (Raft): every member
        /// as ID=RAFT_ADDR/CLIENT_ADDR, comma-separated, e.g.
        /// 1=127.0.0.1:17001/127.0.0.1:7001,2=...; every node started with
        /// the same list forms the cluster, and restarting one rejoins it.
        #[arg(long, requires = "node_id")]
        cluster: Option<String>,
    },
    /// A running cluster's membership, through any of its nodes (the
    /// command follows -MOVED to the leader): `status`, `add ID
    /// RAFT_ADDR/CLIENT_ADDR` (a learner that catches up, then a voter),
    /// `remove ID` (the leader too).
    #[command(after_help = EXIT_CODES)]
    Cluster {
        /// status, add or remove.
        #[arg(value_parser = ["status", "add", "remove"])]
        action: String,
        /// For add: ID and RAFT_ADDR/CLIENT_ADDR; for remove: ID.
        args: Vec<String>,
        /// A node's client address.
        #[arg(long, default_value = "127.0.0.1:7001")]
        node: String,
    },
    /// Merge everything into the last level.
    #[command(after_help = EXIT_CODES)]
    Compact {
        /// Database directory.
        db: PathBuf,
    },
    /// Run the db_bench-compatible benchmark: `slsm bench --help` lists its
    /// flags and workloads (db_bench's own, e.g. --benchmarks=fillrandom,readrandom
    /// --num=1000000).
    #[command(disable_help_flag = true)]
    Bench {
        /// db_bench flags.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// Draw ops/s and latency bars per workload from `bench --json` files
    /// (one color per file), or one set of a `bench/compare.sh` summary.json
    /// (`--set NAME`: every engine, p50/p99 and memory peaks), into an SVG.
    #[command(after_help = EXIT_CODES)]
    Plot {
        /// Result files written by `slsm bench --json` or the peers, or one
        /// summary.json with --set.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The set of a summary.json to draw, as SET-VARIANT (e.g. larger-lz4).
        #[arg(long)]
        set: Option<String>,
        /// Output SVG file.
        #[arg(short, long, default_value = "chart.svg")]
        output: PathBuf,
        /// Chart title.
        #[arg(long)]
        title: Option<String>,
        /// Draw the p99 panel on a linear scale (default: log scale).
        #[arg(long)]
        linear: bool,
    },
}

/// Runs the parsed command; returns the exit status.
pub fn run(cli: Cli) -> Result<i32> {
    match cli.cmd {
        Cmd::Get {
            db,
            key,
            enc,
            space,
        } => admin::get(&db, &key, enc, &space),
        Cmd::Put {
            db,
            key,
            value,
            enc,
            sync,
            space,
        } => admin::put(&db, &key, &value, enc, sync, &space).map(|_| exit::OK),
        Cmd::Delete {
            db,
            key,
            enc,
            space,
        } => admin::delete(&db, &key, enc, &space).map(|_| exit::OK),
        Cmd::Scan {
            db,
            start,
            end,
            limit,
            reverse,
            keys_only,
            enc,
            space,
        } => admin::scan(
            &db,
            admin::ScanArgs {
                start,
                end,
                limit,
                reverse,
                keys_only,
            },
            enc,
            &space,
        )
        .map(|_| exit::OK),
        Cmd::Stats { db, json } => admin::stats(&db, json).map(|_| exit::OK),
        Cmd::Check { db } => admin::check(&db),
        Cmd::Compact { db } => admin::compact(&db).map(|_| exit::OK),
        Cmd::Serve {
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
        } => {
            let mut opts = slsm_server::ServerOptions::new(db);
            opts.bind = bind;
            opts.requirepass = requirepass;
            opts.aclfile = aclfile;
            opts.acl_pubsub_default_all = acl_pubsub_default == PubsubDefault::Allchannels;
            if let (Some(port), Some(cert_file), Some(key_file)) =
                (tls_port, tls_cert_file, tls_key_file)
            {
                let default = match tls_ca_cert_file {
                    Some(_) => "yes",
                    None => "no",
                };
                let auth = tls_auth_clients.as_deref().unwrap_or(default);
                opts.tls = Some(slsm_server::tls::TlsOptions {
                    port,
                    cert_file,
                    key_file,
                    ca_cert_file: tls_ca_cert_file,
                    auth_clients: slsm_server::tls::AuthClients::parse(auth)
                        .unwrap_or(slsm_server::tls::AuthClients::Yes),
                });
            }
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
                    timeout: std::time::Duration::from_secs(5),
                });
            }
            if let Err(e) = opts.check() {
                return Err(anyhow::Error::new(exit::Usage(e)));
            }
            slsm_server::run(opts).map_err(anyhow::Error::msg)?;
            Ok(exit::OK)
        }
        Cmd::Cluster { action, args, node } => {
            slsm_cli::cluster_admin::run(&node, &action, &args).map(|_| exit::OK)
        }
        Cmd::Checkpoint { db, dest } => admin::checkpoint(&db, &dest).map(|_| exit::OK),
        Cmd::Dump { db, file } => admin::dump(&db, &file).map(|_| exit::OK),
        Cmd::Load { db, file } => admin::load(&db, &file).map(|_| exit::OK),
        Cmd::Bench { mut args } => {
            let name = slsm_cli::engine::take_engine_flag(&mut args)?;
            let factory = slsm_cli::engine::factory(&name).ok_or_else(|| {
                anyhow::Error::new(exit::Usage(format!(
                    "unknown --engine={name} (slsm, skiplist or btreemap)"
                )))
            })?;
            slsm_cli::bench::run_cli("slsm bench", factory, &args)?;
            Ok(exit::OK)
        }
        Cmd::Plot {
            files,
            set,
            output,
            title,
            linear,
        } => plot::plot(&plot::PlotArgs {
            files: &files,
            set: set.as_deref(),
            output: &output,
            title: title.as_deref(),
            linear,
        })
        .map(|_| exit::OK),
    }
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
