//! A db_bench-compatible benchmark harness, generic over the engine.

pub mod catalog;
pub mod engine;
pub mod flags;
pub mod help;
pub mod histogram;
pub mod io;
pub mod keygen;
mod measure;
pub mod parse;
pub mod report;
pub mod runner;
pub mod workloads;

use anyhow::{Context, Result};
use std::io::Write;

pub use engine::{scan_order, seek_and_read, BatchOp, Engine, EngineFactory, WriteMode};
pub use flags::BenchFlags;
pub use report::{EngineStats, RunReport, WorkloadResult};

/// The `main` of a peer's benchmark binary: runs the command line against
/// `factory`; on failure prints the error and exits with 2 for a usage
/// error, 5 otherwise (as `slsm bench` does).
pub fn main_for(program: &str, factory: &dyn EngineFactory) {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Err(e) = run_cli(program, factory, &args) {
        eprintln!("{program}: error: {}", crate::error_message(&e));
        let usage = e
            .chain()
            .any(|c| c.downcast_ref::<flags::FlagError>().is_some());
        std::process::exit(if usage { 2 } else { 5 });
    }
}

/// Runs `program`'s bench command line `args` against `factory`: parses the
/// db_bench flags (warnings and help on stderr/stdout), runs the workloads,
/// prints db_bench lines and the peak RSS on stdout, and writes `--json`.
pub fn run_cli(program: &str, factory: &dyn EngineFactory, args: &[String]) -> Result<()> {
    crate::allocator::tune();
    let (flags, warnings) = match flags::parse(args, factory.engine_flags())? {
        flags::Parsed::Help => {
            let mut out = std::io::stdout().lock();
            out.write_all(help::help(program, &factory.engine_help()).as_bytes())?;
            out.flush()?;
            return Ok(());
        }
        flags::Parsed::Run { flags, warnings } => (flags, warnings),
    };
    for w in &warnings {
        eprintln!("{w}");
    }
    // Fail before measuring anything if the JSON file cannot be written.
    if let Some(path) = &flags.json {
        std::fs::File::create(path).with_context(|| format!("creating --json file {path}"))?;
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut runner = runner::Runner::new(&flags, factory);
    runner.header(&mut out)?;
    let result = runner.run_all(&mut out);
    let peak = report::peak_rss_bytes();
    if let Some(p) = peak {
        writeln!(out, "Peak RSS:   {:.1} MB (VmHWM)", p as f64 / 1048576.0)?;
    }
    out.flush()?;
    // Write what was measured even if a later workload failed.
    if let Some(path) = &flags.json {
        let report = RunReport {
            engine: factory.name().to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
            flags: serde_json::to_value(&*flags)?,
            config: factory.describe(&flags),
            results: runner.results.clone(),
            peak_rss_bytes: peak,
        };
        let text = serde_json::to_string_pretty(&report)?;
        std::fs::write(path, text + "\n").with_context(|| format!("writing {path}"))?;
    }
    result
}
