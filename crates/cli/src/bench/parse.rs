//! db_bench-compatible flag parsing.
//!
//! Accepts gflags' spellings: `--flag=value`, `--flag value`, `-flag=value`,
//! booleans as `--sync`, `--sync=1`, `--sync=true`, `--sync=0`,
//! `--sync=false` and `--nosync`. Flags db_bench knows but this harness does
//! not use are accepted with a warning, so a db_bench command line runs
//! unchanged.

use anyhow::{bail, Context, Result};

use super::flags::{BenchFlags, Compression, FlagError};

/// What the command line asked for.
#[derive(Debug)]
pub enum Parsed {
    /// Run with these flags; the warnings go to stderr.
    Run {
        /// The flags.
        flags: Box<BenchFlags>,
        /// One line per flag accepted but ignored.
        warnings: Vec<String>,
    },
    /// `--help` was given.
    Help,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bool,
    Value,
}

/// Flags the harness implements.
const KNOWN: &[(&str, Kind)] = &[
    ("benchmarks", Kind::Value),
    ("num", Kind::Value),
    ("reads", Kind::Value),
    ("writes", Kind::Value),
    ("deletes", Kind::Value),
    ("key_size", Kind::Value),
    ("value_size", Kind::Value),
    ("batch_size", Kind::Value),
    ("threads", Kind::Value),
    ("db", Kind::Value),
    ("disable_wal", Kind::Bool),
    ("sync", Kind::Bool),
    ("seed", Kind::Value),
    ("histogram", Kind::Bool),
    ("write_buffer_size", Kind::Value),
    ("seek_nexts", Kind::Value),
    ("benchmark_write_rate_limit", Kind::Value),
    ("readwritepercent", Kind::Value),
    ("use_existing_db", Kind::Bool),
    ("compression_type", Kind::Value),
    ("compression_ratio", Kind::Value),
    ("cache_size", Kind::Value),
    ("memtable", Kind::Bool),
    ("statistics", Kind::Bool),
    ("json", Kind::Value),
    ("progress", Kind::Bool),
];

/// db_bench boolean flags that are accepted (and ignored) so that `--flag`
/// without a value does not swallow the next argument.
const DB_BENCH_BOOLS: &[&str] = &[
    "use_existing_keys",
    "verify_checksum",
    "mmap_read",
    "mmap_write",
    "use_direct_reads",
    "use_direct_io_for_flush_and_compaction",
    "disable_auto_compactions",
    "cache_index_and_filter_blocks",
    "pin_l0_filter_and_index_blocks_in_cache",
    "enable_pipelined_write",
    "allow_concurrent_memtable_write",
    "reverse_iterator",
    "multiread_batched",
    "report_file_operations",
    "optimize_filters_for_hits",
    "universal_allow_trivial_move",
    "dump_malloc_stats",
    "perf_level_enabled",
    "enable_write_thread_adaptive_yield",
    "avoid_flush_during_recovery",
    "fill_cache",
    "use_fsync",
    "enable_index_compression",
    "level_compaction_dynamic_level_bytes",
];

fn is_bool(n: &str) -> bool {
    DB_BENCH_BOOLS.contains(&n) || KNOWN.iter().any(|(k, kind)| *k == n && *kind == Kind::Bool)
}

fn parse_bool(name: &str, v: &str) -> Result<bool> {
    match v.to_ascii_lowercase().as_str() {
        "" | "1" | "true" | "t" | "yes" | "y" => Ok(true),
        "0" | "false" | "f" | "no" | "n" => Ok(false),
        _ => bail!("invalid value '{v}' for boolean flag --{name} (use 1/0/true/false)"),
    }
}

fn parse_num<T: std::str::FromStr>(name: &str, v: &str) -> Result<T>
where
    T::Err: std::fmt::Display,
{
    let cleaned: String = v.chars().filter(|&c| c != '_' && c != ',').collect();
    cleaned
        .parse::<T>()
        .map_err(|e| anyhow::anyhow!("invalid value '{v}' for --{name}: {e}"))
}

/// Parses a `slsm bench` command line (without the subcommand itself).
/// `engine_flags` lists the engine-specific flags the caller understands
/// (read back with [`BenchFlags::engine_flag`]).
pub fn parse(args: &[String], engine_flags: &[&str]) -> Result<Parsed> {
    parse_inner(args, engine_flags).map_err(|e| anyhow::Error::new(FlagError(format!("{e:#}"))))
}

fn parse_inner(args: &[String], engine_flags: &[&str]) -> Result<Parsed> {
    let mut f = BenchFlags::default();
    let mut warnings = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg == "--help" || arg == "-h" || arg == "-help" || arg == "--helpfull" {
            return Ok(Parsed::Help);
        }
        let body = if let Some(b) = arg.strip_prefix("--") {
            b
        } else if let Some(b) = arg.strip_prefix('-') {
            b
        } else {
            bail!("unexpected argument '{arg}' (flags look like --name=value)");
        };
        if body.is_empty() {
            bail!("unexpected argument '{arg}'");
        }
        let (raw_name, mut value) = match body.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (body, None),
        };
        let mut name = raw_name.replace('-', "_");
        // gflags' `--noflag` for booleans.
        if value.is_none() && !KNOWN.iter().any(|(n, _)| *n == name) {
            if let Some(stripped) = name.strip_prefix("no") {
                if is_bool(stripped) {
                    name = stripped.to_string();
                    value = Some("false".into());
                }
            }
        }
        let known = KNOWN.iter().find(|(n, _)| *n == name).map(|(_, k)| *k);
        let bool_flag = is_bool(&name);
        let value = match value {
            Some(v) => v,
            None if bool_flag => "true".to_string(),
            None => {
                // `--flag value`: the next argument is the value.
                match args.get(i) {
                    Some(next) if known.is_some() || engine_flags.contains(&name.as_str()) => {
                        i += 1;
                        next.clone()
                    }
                    Some(next) if !next.starts_with('-') => {
                        i += 1;
                        next.clone()
                    }
                    _ if known.is_some() || engine_flags.contains(&name.as_str()) => {
                        bail!("flag --{name} needs a value")
                    }
                    _ => "true".to_string(),
                }
            }
        };
        f.given.insert(name.clone(), value.clone());
        if known.is_none() {
            if !engine_flags.contains(&name.as_str()) {
                warnings.push(format!(
                    "warning: flag --{name}={value} is not supported by this benchmark and is ignored"
                ));
            }
            continue;
        }
        let v = value.as_str();
        let n = name.as_str();
        match n {
            "benchmarks" => {
                f.benchmarks = v
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect()
            }
            "num" => f.num = parse_num(n, v)?,
            "reads" => f.reads = parse_num(n, v)?,
            "writes" => f.writes = parse_num(n, v)?,
            "deletes" => f.deletes = parse_num(n, v)?,
            "key_size" => f.key_size = parse_num(n, v)?,
            "value_size" => f.value_size = parse_num(n, v)?,
            "batch_size" => f.batch_size = parse_num(n, v)?,
            "threads" => f.threads = parse_num(n, v)?,
            "db" => f.db = v.to_string(),
            "disable_wal" => f.disable_wal = parse_bool(n, v)?,
            "sync" => f.sync = parse_bool(n, v)?,
            "seed" => f.seed = parse_num(n, v)?,
            "histogram" => f.histogram = parse_bool(n, v)?,
            "write_buffer_size" => f.write_buffer_size = parse_num(n, v)?,
            "seek_nexts" => f.seek_nexts = parse_num(n, v)?,
            "benchmark_write_rate_limit" => f.benchmark_write_rate_limit = parse_num(n, v)?,
            "readwritepercent" => {
                f.readwritepercent = parse_num(n, v)?;
                if f.readwritepercent > 100 {
                    bail!("--readwritepercent must be between 0 and 100, got {v}");
                }
            }
            "use_existing_db" => f.use_existing_db = parse_bool(n, v)?,
            "compression_type" => f.compression_type = Compression::parse(v)?,
            "compression_ratio" => {
                f.compression_ratio = parse_num(n, v)?;
                if !(f.compression_ratio > 0.0 && f.compression_ratio <= 1.0) {
                    bail!("--compression_ratio must be in (0, 1], got {v}");
                }
            }
            "cache_size" => f.cache_size = parse_num(n, v)?,
            "memtable" => f.memtable = parse_bool(n, v)?,
            "statistics" => f.statistics = parse_bool(n, v)?,
            "json" => f.json = Some(v.to_string()),
            "progress" => f.progress = Some(parse_bool(n, v)?),
            _ => unreachable!("every KNOWN flag is handled"),
        }
    }
    if f.key_size == 0 {
        bail!("--key_size must be at least 1");
    }
    if f.key_size > 65536 {
        bail!("--key_size must be at most 65536");
    }
    if f.value_size > 256 << 20 {
        bail!("--value_size must be at most 268435456");
    }
    if f.batch_size > 1 << 20 {
        bail!("--batch_size must be at most 1048576");
    }
    if f.threads > 4096 {
        bail!("--threads must be at most 4096");
    }
    if f.threads == 0 {
        bail!("--threads must be at least 1");
    }
    if f.batch_size == 0 {
        bail!("--batch_size must be at least 1");
    }
    if f.num == 0 {
        bail!("--num must be at least 1");
    }
    if f.benchmarks.is_empty() {
        bail!("--benchmarks is empty");
    }
    for b in &f.benchmarks {
        super::catalog::Workload::parse(b)
            .with_context(|| format!("in --benchmarks={}", f.benchmarks.join(",")))?;
    }
    Ok(Parsed::Run {
        flags: Box::new(f),
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> (BenchFlags, Vec<String>) {
        let v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        match parse(&v, &["memory_runs"]).unwrap() {
            Parsed::Run { flags, warnings } => (*flags, warnings),
            Parsed::Help => panic!("help"),
        }
    }

    #[test]
    fn spellings() {
        let (f, w) = run(&[
            "--benchmarks=fillseq,readrandom",
            "--num",
            "1000",
            "-key_size=8",
            "--sync",
            "--disable_wal=0",
            "--histogram=true",
            "--nouse_existing_db",
            "--memory_runs=4",
        ]);
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(f.benchmarks, ["fillseq", "readrandom"]);
        assert_eq!(f.num, 1000);
        assert_eq!(f.key_size, 8);
        assert!(f.sync && !f.disable_wal && f.histogram && !f.use_existing_db);
        assert_eq!(f.engine_flag("memory_runs"), Some("4"));
    }

    #[test]
    fn unknown_flags_warn() {
        let (f, w) = run(&[
            "--max_background_jobs=4",
            "--bloom_bits",
            "10",
            "--disable_auto_compactions",
            "--num=5",
        ]);
        assert_eq!(w.len(), 3, "{w:?}");
        assert_eq!(f.num, 5);
        assert_eq!(f.given["bloom_bits"], "10");
    }

    #[test]
    fn bad_values_are_errors() {
        let v = |a: &[&str]| parse(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>(), &[]);
        assert!(v(&["--num=abc"]).is_err());
        assert!(v(&["--sync=maybe"]).is_err());
        assert!(v(&["--benchmarks=nonsense"]).is_err());
        assert!(v(&["--num"]).is_err());
        assert!(v(&["stray"]).is_err());
        assert!(v(&["--readwritepercent=101"]).is_err());
        assert!(v(&["--readwritepercent=100"]).is_ok());
        assert!(matches!(v(&["--help"]).unwrap(), Parsed::Help));
    }
}
