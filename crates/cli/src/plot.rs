//! `slsm plot`: throughput and p99 latency bars per workload, one color per
//! result file, as SVG.

use anyhow::{bail, Context, Result};
use plotters::prelude::*;
use slsm_cli::bench::{RunReport, WorkloadResult};
use std::path::{Path, PathBuf};

/// Which number of a workload a panel shows.
type Metric = fn(&WorkloadResult) -> f64;

struct Series {
    label: String,
    report: RunReport,
}

fn load(files: &[PathBuf]) -> Result<Vec<Series>> {
    let mut out = Vec::new();
    for f in files {
        let text =
            std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
        let report: RunReport = serde_json::from_str(&text).map_err(|e| {
            anyhow::Error::new(crate::exit::Usage(format!(
                "{} is not a `slsm bench --json` result file: {e}",
                f.display()
            )))
        })?;
        let stem = f
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let label = if stem.contains(&report.engine) {
            stem
        } else {
            format!("{} ({stem})", report.engine)
        };
        out.push(Series { label, report });
    }
    Ok(out)
}

/// Draws the chart for `files` into `output` (SVG).
/// The p99 panel is drawn on a log scale unless `linear` (latencies of
/// batched writes and point reads differ by orders of magnitude).
pub fn plot(files: &[PathBuf], output: &Path, title: Option<&str>, linear: bool) -> Result<()> {
    if output
        .extension()
        .is_some_and(|e| !e.eq_ignore_ascii_case("svg"))
    {
        bail!(crate::exit::Usage(format!(
            "{}: only SVG output is supported (use a .svg name)",
            output.display()
        )));
    }
    let series = load(files)?;
    let mut workloads: Vec<String> = Vec::new();
    for s in &series {
        for r in &s.report.results {
            if !workloads.contains(&r.workload) {
                workloads.push(r.workload.clone());
            }
        }
    }
    if workloads.is_empty() {
        bail!(crate::exit::Usage(
            "the result files contain no workloads".into()
        ));
    }
    let value =
        |s: &Series, w: &str, f: Metric| s.report.results.iter().find(|r| r.workload == w).map(f);
    let width = (200 + workloads.len() * (40 + 30 * series.len())).max(900) as u32;
    let root = SVGBackend::new(output, (width, 900)).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(title.unwrap_or("slsm bench"), ("sans-serif", 24))?;
    let (top, bottom) = root.split_vertically(440);
    let throughput: Metric = |r| r.ops_per_sec;
    let p99: Metric = |r| r.p99_us;
    let p99_caption = if linear {
        "p99 latency per call (us, lower is better)"
    } else {
        "p99 latency per call (us, log scale, lower is better)"
    };
    let panels = [
        (
            "throughput (ops/s, higher is better)",
            top,
            throughput,
            false,
        ),
        (p99_caption, bottom, p99, !linear),
    ];
    let n = workloads.len();
    let k = series.len();
    for (caption, area, metric, log) in panels {
        let values: Vec<f64> = series
            .iter()
            .flat_map(|s| workloads.iter().filter_map(move |w| value(s, w, metric)))
            .collect();
        let max = values.iter().copied().fold(0.0f64, f64::max).max(1e-9);
        // On a log scale the bars are drawn in log10 units from `floor`.
        let floor = if log {
            values
                .iter()
                .copied()
                .filter(|v| *v > 0.0)
                .fold(max, f64::min)
                .log10()
                .floor()
        } else {
            0.0
        };
        let y = |v: f64| if log { v.max(1e-12).log10() } else { v };
        let y_top = if log {
            max.log10().ceil().max(floor + 1.0) + 0.05
        } else {
            max * 1.15
        };
        let mut chart = ChartBuilder::on(&area)
            .caption(caption, ("sans-serif", 18))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), floor..y_top)?;
        let names = workloads.clone();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .y_labels(if log {
                (y_top - floor).ceil() as usize + 1
            } else {
                10
            })
            .x_labels(n * 2 + 1)
            .x_label_formatter(&move |x: &f64| {
                let i = x.round();
                if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < names.len() {
                    names[i as usize].clone()
                } else {
                    String::new()
                }
            })
            .y_label_formatter(&|y: &f64| {
                let y = &if log { 10f64.powf(*y) } else { *y };
                if *y >= 1e6 {
                    format!("{:.1}M", y / 1e6)
                } else if *y >= 1e3 {
                    format!("{:.0}k", y / 1e3)
                } else {
                    format!("{y:.1}")
                }
            })
            .draw()?;
        let bar = 0.8 / k as f64;
        for (si, s) in series.iter().enumerate() {
            let color = Palette99::pick(si).to_rgba();
            let bars: Vec<_> = workloads
                .iter()
                .enumerate()
                .filter_map(|(wi, w)| {
                    let v = value(s, w, metric)?;
                    let x0 = wi as f64 - 0.4 + si as f64 * bar;
                    Some(Rectangle::new(
                        [(x0, floor), (x0 + bar * 0.95, y(v).max(floor))],
                        color.filled(),
                    ))
                })
                .collect();
            chart
                .draw_series(bars)?
                .label(s.label.clone())
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled())
                });
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .position(SeriesLabelPosition::UpperRight)
            .draw()?;
    }
    root.present()
        .with_context(|| format!("writing {}", output.display()))?;
    eprintln!("wrote {}", output.display());
    Ok(())
}
