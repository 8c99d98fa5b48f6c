//! Per-workload statistics, db_bench's result line and the JSON report.

use super::histogram::Histogram;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// What one thread measured during one workload (db_bench's `Stats`).
#[derive(Debug)]
pub struct ThreadStats {
    /// When the thread started measuring.
    pub start: Instant,
    /// When it stopped.
    pub finish: Instant,
    /// Operations done (a batch of N entries counts N).
    pub done: u64,
    /// Bytes of keys and values written or read.
    pub bytes: u64,
    /// Keys found (reads) or exact seeks.
    pub found: u64,
    /// Latency of each call into the engine (one per batch).
    pub hist: Histogram,
}

impl ThreadStats {
    /// Fresh statistics starting now.
    pub fn start() -> Self {
        let now = Instant::now();
        ThreadStats {
            start: now,
            finish: now,
            done: 0,
            bytes: 0,
            found: 0,
            hist: Histogram::new(),
        }
    }
}

/// The merged statistics of all the threads of one workload.
#[derive(Debug)]
pub struct Merged {
    /// Sum of the threads' own elapsed seconds (db_bench's `seconds_`).
    pub thread_seconds: f64,
    /// Wall-clock seconds from the first start to the last finish.
    pub elapsed: f64,
    /// Total operations.
    pub done: u64,
    /// Total bytes.
    pub bytes: u64,
    /// Total found.
    pub found: u64,
    /// Merged latency histogram.
    pub hist: Histogram,
}

impl Merged {
    /// Merges per-thread statistics (at least one).
    pub fn from_threads(threads: &[ThreadStats]) -> Merged {
        let start = threads.iter().map(|t| t.start).min().expect("a thread");
        let finish = threads.iter().map(|t| t.finish).max().expect("a thread");
        let mut hist = Histogram::new();
        for t in threads {
            hist.merge(&t.hist);
        }
        Merged {
            thread_seconds: threads
                .iter()
                .map(|t| t.finish.duration_since(t.start).as_secs_f64())
                .sum(),
            elapsed: finish.duration_since(start).as_secs_f64(),
            done: threads.iter().map(|t| t.done).sum(),
            bytes: threads.iter().map(|t| t.bytes).sum(),
            found: threads.iter().map(|t| t.found).sum(),
            hist,
        }
    }

    /// Microseconds per op as db_bench computes it (sum of thread time / ops).
    pub fn micros_per_op(&self) -> f64 {
        if self.done == 0 {
            return 0.0;
        }
        self.thread_seconds * 1e6 / self.done as f64
    }

    /// Aggregate operations per second.
    pub fn ops_per_sec(&self) -> f64 {
        if self.elapsed > 0.0 {
            self.done as f64 / self.elapsed
        } else {
            0.0
        }
    }

    /// Throughput in MiB/s of the bytes moved.
    pub fn mb_per_sec(&self) -> f64 {
        if self.elapsed > 0.0 {
            self.bytes as f64 / 1048576.0 / self.elapsed
        } else {
            0.0
        }
    }
}

/// db_bench's result line:
/// `"%-12s : %11.3f micros/op %ld ops/sec %.3f seconds %lu operations;%s%s"`,
/// where the extra part is `"%6.1f MB/s"` when bytes moved, then the message.
pub fn db_bench_line(name: &str, m: &Merged, message: &str) -> String {
    let mut extra = String::new();
    if m.bytes > 0 {
        extra = format!("{:6.1} MB/s", m.mb_per_sec());
    }
    if !message.is_empty() {
        if !extra.is_empty() {
            extra.push(' ');
        }
        extra.push_str(message);
    }
    format!(
        "{:<12} : {:>11.3} micros/op {} ops/sec {:.3} seconds {} operations;{}{}",
        name,
        m.micros_per_op(),
        m.ops_per_sec() as i64,
        m.elapsed,
        m.done,
        if extra.is_empty() { "" } else { " " },
        extra
    )
}

/// Engine counters sampled after a workload (cumulative since open).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct EngineStats {
    /// Bytes of keys and values the user wrote.
    pub user_bytes_written: u64,
    /// Bytes written by merges/compactions.
    pub merge_bytes_written: u64,
    /// Write amplification as the engine computes it.
    pub write_amplification: f64,
    /// Times writers stalled.
    pub stall_count: u64,
    /// Microseconds writers spent stalled.
    pub stall_micros: u64,
}

/// One workload's result, as written to the JSON file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WorkloadResult {
    /// Workload name as given.
    pub workload: String,
    /// Operations done.
    pub ops: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// db_bench's micros/op.
    pub micros_per_op: f64,
    /// Operations per second (aggregate).
    pub ops_per_sec: f64,
    /// MiB/s of keys and values moved.
    pub mb_per_sec: f64,
    /// Bytes of keys and values moved.
    pub bytes: u64,
    /// Keys found, for read workloads.
    pub found: Option<u64>,
    /// Latency percentiles per engine call in microseconds.
    pub p50_us: f64,
    /// 75th percentile.
    pub p75_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// 99.9th percentile.
    pub p999_us: f64,
    /// 99.99th percentile.
    pub p9999_us: f64,
    /// Largest latency.
    pub max_us: f64,
    /// Threads measured.
    pub threads: usize,
    /// Engine counters after the workload, if the engine has them.
    pub engine_stats: Option<EngineStats>,
    /// Bytes this process read from storage during the workload
    /// (`/proc/self/io`; page-cache hits are not counted).
    #[serde(default)]
    pub io_read_bytes: Option<u64>,
    /// Bytes this process wrote to storage during the workload.
    #[serde(default)]
    pub io_write_bytes: Option<u64>,
    /// Bytes the database takes on disk after the workload.
    #[serde(default)]
    pub disk_bytes: Option<u64>,
    /// db_bench's line, verbatim.
    pub line: String,
}

impl WorkloadResult {
    /// Builds the record for one workload.
    pub fn new(
        name: &str,
        m: &Merged,
        found: Option<u64>,
        threads: usize,
        engine_stats: Option<EngineStats>,
        line: String,
    ) -> Self {
        WorkloadResult {
            workload: name.to_string(),
            ops: m.done,
            seconds: m.elapsed,
            micros_per_op: m.micros_per_op(),
            ops_per_sec: m.ops_per_sec(),
            mb_per_sec: m.mb_per_sec(),
            bytes: m.bytes,
            found,
            p50_us: m.hist.percentile_us(50.0),
            p75_us: m.hist.percentile_us(75.0),
            p99_us: m.hist.percentile_us(99.0),
            p999_us: m.hist.percentile_us(99.9),
            p9999_us: m.hist.percentile_us(99.99),
            max_us: m.hist.max_us(),
            threads,
            engine_stats,
            io_read_bytes: None,
            io_write_bytes: None,
            disk_bytes: None,
            line,
        }
    }
}

/// A whole run, as written by `--json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunReport {
    /// Engine name ("slsm", "fjall", ...).
    pub engine: String,
    /// Harness version.
    pub version: String,
    /// The flags used (resolved values and everything given).
    pub flags: serde_json::Value,
    /// The engine's configuration, as printed in the header.
    #[serde(default)]
    pub config: Vec<(String, String)>,
    /// One entry per workload, in order.
    pub results: Vec<WorkloadResult>,
    /// Peak resident set size of the process in bytes (VmHWM), if known.
    pub peak_rss_bytes: Option<u64>,
}

/// Peak resident set size of this process in bytes (Linux `VmHWM`).
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn line_matches_db_bench_format() {
        let start = Instant::now();
        let t = ThreadStats {
            start,
            finish: start + Duration::from_millis(571),
            done: 100_000,
            bytes: 100_000 * 116,
            found: 0,
            hist: Histogram::new(),
        };
        let m = Merged::from_threads(&[t]);
        let line = db_bench_line("fillrandom", &m, "");
        assert_eq!(
            line,
            "fillrandom   :       5.710 micros/op 175131 ops/sec 0.571 seconds 100000 operations;   19.4 MB/s"
        );
        let line = db_bench_line("readrandom", &m, "(5 of 10 found)");
        assert!(line.ends_with("MB/s (5 of 10 found)"), "{line}");
    }
}
