//! `slsm plot`: grouped bar charts as SVG, one color per engine (or per
//! result file): throughput, latency percentiles and memory peaks.
//!
//! Two inputs: `slsm bench --json` files (one series each), or the
//! `summary.json` of a `bench/compare.sh` run with `--set NAME` (every
//! engine of that set side by side, with its memory peaks per phase).

mod draw;
mod input;

use anyhow::{bail, Result};
use std::path::{Path, PathBuf};

/// One panel: bars per group (workload or phase), one per series.
pub struct Panel {
    /// Title of the panel.
    pub caption: String,
    /// The groups along the x axis.
    pub groups: Vec<String>,
    /// `values[series][group]`.
    pub values: Vec<Vec<Option<f64>>>,
    /// Draw on a log scale.
    pub log: bool,
}

/// A whole chart.
pub struct Chart {
    /// Title above the panels.
    pub title: String,
    /// Legend labels, one per series.
    pub series: Vec<String>,
    /// Panels, top to bottom.
    pub panels: Vec<Panel>,
}

/// What to chart: `files` are result files, or one `summary.json` when
/// `set` names one of its sets (`SET-VARIANT`, e.g. `larger-lz4`).
pub struct PlotArgs<'a> {
    /// Input files.
    pub files: &'a [PathBuf],
    /// A set of a compare summary.
    pub set: Option<&'a str>,
    /// Output SVG.
    pub output: &'a Path,
    /// Chart title (default: from the input).
    pub title: Option<&'a str>,
    /// Latency panels on a linear scale instead of a log scale.
    pub linear: bool,
}

/// Draws the chart `args` asks for.
pub fn plot(args: &PlotArgs<'_>) -> Result<()> {
    if args
        .output
        .extension()
        .is_some_and(|e| !e.eq_ignore_ascii_case("svg"))
    {
        bail!(crate::exit::Usage(format!(
            "{}: only SVG output is supported (use a .svg name)",
            args.output.display()
        )));
    }
    let mut chart = match args.set {
        Some(set) => input::from_summary(args.files, set, !args.linear)?,
        None => input::from_reports(args.files, !args.linear)?,
    };
    if let Some(t) = args.title {
        chart.title = t.to_string();
    }
    draw::draw(&chart, args.output)?;
    eprintln!("wrote {}", args.output.display());
    Ok(())
}
