//! The command line's shape (clap) and dispatch.

use crate::admin::{self, Encoding, Space};
use crate::serve::{self, ServeArgs};
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
    Serve(Box<ServeArgs>),
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
        Cmd::Serve(args) => serve::run(*args),
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
