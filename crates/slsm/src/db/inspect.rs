//! Looking at a database without changing it: `check` (every checksum),
//! `stats` and `memory_usage`.

use super::handle::Db;
use crate::budget::MemoryUsage;
use crate::error::Result;
use crate::stats::Stats;

/// What [`Db::check`] verified.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// Run files read.
    pub files: usize,
    /// Entries whose blocks were verified.
    pub entries: u64,
}

impl std::fmt::Display for CheckReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ok: {} run files, {} entries, every checksum verified",
            self.files, self.entries
        )
    }
}

impl Db {
    /// Reads every block of every run file and verifies every checksum.
    pub fn check(&self) -> Result<CheckReport> {
        let version = self.inner.versions.current_arc();
        let mut report = CheckReport::default();
        for run in version.disk_runs_newest_first() {
            report.entries += run.file.verify()?;
            report.files += 1;
        }
        Ok(report)
    }

    /// Counters and the shape of the tree.
    pub fn stats(&self) -> Stats {
        let version = self.inner.versions.current();
        let mut stats = Stats::collect(&version, &self.inner.counters, self.inner.commit.visible());
        stats.memory = self.memory_usage();
        let (bytes, edits, files) = self.inner.versions.manifest_writes();
        stats.manifest_bytes_written = bytes;
        stats.manifest_edits = edits;
        stats.manifest_files_written = files;
        stats.background_error = self.inner.background.error().map(|e| e.to_string());
        stats
    }

    /// Where the engine's memory goes, against `Options::memory_budget`.
    pub fn memory_usage(&self) -> MemoryUsage {
        self.inner
            .budget
            .usage(|| self.inner.versions.current_arc())
    }
}
