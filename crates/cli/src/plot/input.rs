//! Building a [`Chart`] from result files or from a compare summary.

use super::{Chart, Panel};
use anyhow::{Context, Result};
use serde::Deserialize;
use slsm_cli::bench::{RunReport, WorkloadResult};
use std::collections::BTreeMap;
use std::path::PathBuf;

fn usage(msg: String) -> anyhow::Error {
    anyhow::Error::new(crate::exit::Usage(msg))
}

fn read(file: &PathBuf) -> Result<String> {
    std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))
}

/// Every name in `names`, in first-seen order, once.
fn ordered<'a>(names: impl IntoIterator<Item = &'a String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in names {
        if !out.contains(n) {
            out.push(n.clone());
        }
    }
    out
}

fn latency_caption(what: &str, log: bool) -> String {
    if log {
        format!("{what} latency per call (us, log scale, lower is better)")
    } else {
        format!("{what} latency per call (us, lower is better)")
    }
}

/// One series per `slsm bench --json` file: throughput and p99 panels.
pub fn from_reports(files: &[PathBuf], log: bool) -> Result<Chart> {
    let mut labels = Vec::new();
    let mut reports: Vec<RunReport> = Vec::new();
    for f in files {
        let report: RunReport = serde_json::from_str(&read(f)?).map_err(|e| {
            usage(format!(
                "{} is not a `slsm bench --json` result file: {e}",
                f.display()
            ))
        })?;
        let stem = f
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        labels.push(if stem.contains(&report.engine) {
            stem
        } else {
            format!("{} ({stem})", report.engine)
        });
        reports.push(report);
    }
    let groups = ordered(
        reports
            .iter()
            .flat_map(|r| r.results.iter().map(|w| &w.workload)),
    );
    if groups.is_empty() {
        return Err(usage("the result files contain no workloads".into()));
    }
    let panel = |caption: String, log: bool, f: fn(&WorkloadResult) -> f64| Panel {
        caption,
        values: reports
            .iter()
            .map(|r| {
                groups
                    .iter()
                    .map(|g| r.results.iter().find(|w| &w.workload == g).map(f))
                    .collect()
            })
            .collect(),
        groups: groups.clone(),
        log,
    };
    Ok(Chart {
        title: "slsm bench".into(),
        series: labels,
        panels: vec![
            panel("throughput (ops/s, higher is better)".into(), false, |w| {
                w.ops_per_sec
            }),
            panel(latency_caption("p99", log), log, |w| w.p99_us),
        ],
    })
}

/// The parts of a compare `summary.json` a chart needs.
#[derive(Deserialize)]
struct Summary {
    sets: Vec<SetSummary>,
}

#[derive(Deserialize)]
struct SetSummary {
    set: String,
    variant: String,
    title: String,
    budget: Option<String>,
    engines: BTreeMap<String, EngineSummary>,
    #[serde(default)]
    labels: BTreeMap<String, String>,
}

#[derive(Deserialize)]
struct EngineSummary {
    workloads: BTreeMap<String, BTreeMap<String, serde_json::Value>>,
    phases: BTreeMap<String, BTreeMap<String, serde_json::Value>>,
}

impl EngineSummary {
    fn workload(&self, name: &str, key: &str) -> Option<f64> {
        self.workloads.get(name)?.get(key)?.as_f64()
    }

    /// Peak memory of a phase in MiB: the cgroup's under a budget, else RSS.
    fn peak_mib(&self, phase: &str, budget: bool) -> Option<f64> {
        let p = self.phases.get(phase)?;
        let key = if budget {
            "cgroup_peak_bytes"
        } else {
            "peak_rss_bytes"
        };
        Some(p.get(key)?.as_f64()? / 1048576.0)
    }
}

/// Every engine of one set of a compare summary side by side: throughput,
/// p50 and p99 latency per workload, and peak memory per phase.
pub fn from_summary(files: &[PathBuf], set: &str, log: bool) -> Result<Chart> {
    let [file] = files else {
        return Err(usage("--set takes exactly one summary.json".into()));
    };
    let summary: Summary = serde_json::from_str(&read(file)?)
        .map_err(|e| usage(format!("{} is not a compare summary: {e}", file.display())))?;
    let names: Vec<String> = summary
        .sets
        .iter()
        .map(|s| format!("{}-{}", s.set, s.variant))
        .collect();
    let s = summary
        .sets
        .iter()
        .find(|s| format!("{}-{}", s.set, s.variant) == set)
        .ok_or_else(|| {
            usage(format!(
                "no set {set} in the summary (it has {})",
                names.join(", ")
            ))
        })?;
    // slsm first, then the peers in the summary's order.
    let mut engines: Vec<&String> = s.engines.keys().collect();
    engines.sort_by_key(|e| e.as_str() != "slsm");
    let workloads = ordered(engines.iter().flat_map(|e| s.engines[*e].workloads.keys()));
    let phases = ordered(engines.iter().flat_map(|e| s.engines[*e].phases.keys()));
    let per_workload = |key: &str| -> Vec<Vec<Option<f64>>> {
        engines
            .iter()
            .map(|e| {
                workloads
                    .iter()
                    .map(|w| s.engines[*e].workload(w, key))
                    .collect()
            })
            .collect()
    };
    let budget = s.budget.is_some();
    let memory = Panel {
        caption: match &s.budget {
            Some(b) => format!("peak memory per phase (MiB, cgroup: RSS + page cache, budget {b})"),
            None => "peak RSS per phase (MiB)".into(),
        },
        values: engines
            .iter()
            .map(|e| {
                phases
                    .iter()
                    .map(|p| s.engines[*e].peak_mib(p, budget))
                    .collect()
            })
            .collect(),
        groups: phases,
        log: false,
    };
    let panel = |caption: String, key: &str, log: bool| Panel {
        caption,
        values: per_workload(key),
        groups: workloads.clone(),
        log,
    };
    Ok(Chart {
        title: format!("{} ({})", s.title, s.variant),
        series: engines
            .iter()
            .map(|e| s.labels.get(*e).cloned().unwrap_or_else(|| (*e).clone()))
            .collect(),
        panels: vec![
            panel(
                "throughput (ops/s, higher is better)".into(),
                "ops_per_sec",
                false,
            ),
            panel(latency_caption("p50", log), "p50_us", log),
            panel(latency_caption("p99", log), "p99_us", log),
            memory,
        ],
    })
}
