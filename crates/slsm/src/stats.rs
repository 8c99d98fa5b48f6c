//! Counters and the [`Stats`] report.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::counter::StripedCounter;
use crate::version::Version;

/// Engine-wide counters.
#[derive(Default)]
pub(crate) struct Counters {
    pub bloom_checks: StripedCounter,
    pub bloom_negatives: StripedCounter,
    pub bloom_false_positives: StripedCounter,
    pub user_bytes_written: StripedCounter,
    pub wal_bytes_written: AtomicU64,
    pub flushes: AtomicU64,
    pub merges: AtomicU64,
    pub space_merges: AtomicU64,
    pub merge_bytes_written: AtomicU64,
    /// Merges that gave up for want of memory (and were retried).
    pub merges_deferred: AtomicU64,
    pub stall_count: AtomicU64,
    pub stall_micros: AtomicU64,
}

/// Entries and bytes of one disk level.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LevelStats {
    /// Runs on the level.
    pub runs: usize,
    /// Entries (every version and tombstone counts).
    pub entries: u64,
    /// Bytes of the level's run files.
    pub bytes: u64,
    /// Bytes of the level's Bloom filters.
    pub filter_bytes: u64,
    /// Pseudo-random hashes (none of a stored key, but for chance) tested
    /// against each run filter of the level...
    pub filter_probes: u64,
    /// ...and how many of those tests passed: the filters' false-positive
    /// rate, measured on the files as they are (see
    /// [`filter_false_positive_rate`](Self::filter_false_positive_rate)),
    /// whatever the process has looked up so far.
    pub filter_passes: u64,
}

impl LevelStats {
    /// Measured false-positive rate of the level's Bloom filters (0 for an
    /// empty level).
    pub fn filter_false_positive_rate(&self) -> f64 {
        if self.filter_probes == 0 {
            return 0.0;
        }
        self.filter_passes as f64 / self.filter_probes as f64
    }

    /// Bloom filter bits per entry.
    pub fn filter_bits_per_entry(&self) -> f64 {
        if self.entries == 0 {
            return 0.0;
        }
        self.filter_bytes as f64 * 8.0 / self.entries as f64
    }
}

/// A point-in-time report of the database's shape and activity since open.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Disk levels, level 0 first.
    pub levels: Vec<LevelStats>,
    /// Memory runs (active plus immutable).
    pub memory_runs: usize,
    /// Entries in the memory runs.
    pub memory_entries: u64,
    /// Bytes reserved by the memory runs.
    pub memory_bytes: u64,
    /// Run-file Bloom filter probes.
    pub bloom_checks: u64,
    /// Probes that ruled a run out.
    pub bloom_negatives: u64,
    /// Probes that passed but the run did not hold the key.
    pub bloom_false_positives: u64,
    /// Flushes of memory runs to level 0.
    pub flushes: u64,
    /// Merges of disk levels (whole merges included).
    pub merges: u64,
    /// Whole merges run because space amplification crossed
    /// `Options::max_space_amplification`.
    pub space_merges: u64,
    /// Merges that gave up for want of room in the memory budget (retried
    /// later; nothing of them was kept).
    pub merges_deferred: u64,
    /// Bytes written to run files by flushes and merges.
    pub merge_bytes_written: u64,
    /// Bytes of keys and values written by users.
    pub user_bytes_written: u64,
    /// Bytes appended to the write-ahead log.
    pub wal_bytes_written: u64,
    /// Bytes written to the manifest: edits appended, and files written
    /// whole (at open, and when the edits outgrew the snapshot).
    pub manifest_bytes_written: u64,
    /// Edits appended to the manifest.
    pub manifest_edits: u64,
    /// Manifest files written whole.
    pub manifest_files_written: u64,
    /// Times a writer waited because every memory run was full.
    pub stall_count: u64,
    /// Total time writers waited, in microseconds.
    pub stall_micros: u64,
    /// Highest sequence number visible to reads.
    pub last_sequence: u64,
    /// Where the memory goes, against the budget.
    pub memory: crate::budget::MemoryUsage,
    /// The error of a background flush or merge that is failing and being
    /// retried (a full disk, say), if any.
    pub background_error: Option<String>,
}

/// Hashes `stats` tests every run filter with to measure its false-positive
/// rate: pseudo-random (splitmix64 of a counter), so a stored key's hash is
/// among them only by chance (~1 in 2^64 / entries per probe).
fn filter_probe_hashes() -> Vec<u64> {
    const PROBES: u64 = 4096;
    (0..PROBES)
        .map(|i| {
            let mut z = i.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
        .collect()
}

impl Stats {
    /// The report of `version` and the counters, at `last_sequence`.
    pub(crate) fn collect(version: &Version, c: &Counters, last_sequence: u64) -> Stats {
        let probes = filter_probe_hashes();
        Stats {
            levels: version
                .levels
                .iter()
                .map(|l| LevelStats {
                    runs: l.len(),
                    entries: l.iter().map(|r| r.file.properties().entries).sum(),
                    bytes: l.iter().map(|r| r.file.properties().file_size).sum(),
                    filter_bytes: l.iter().map(|r| r.file.filter_bytes() as u64).sum(),
                    filter_probes: (l.len() * probes.len()) as u64,
                    filter_passes: l.iter().map(|r| r.file.filter_passes(&probes) as u64).sum(),
                })
                .collect(),
            memory_runs: version.mems.len(),
            memory_entries: version.mems.iter().map(|m| m.len() as u64).sum(),
            memory_bytes: version.mems.iter().map(|m| m.memory_usage() as u64).sum(),
            bloom_checks: c.bloom_checks.get(),
            bloom_negatives: c.bloom_negatives.get(),
            bloom_false_positives: c.bloom_false_positives.get(),
            flushes: c.flushes.load(Ordering::Relaxed),
            merges: c.merges.load(Ordering::Relaxed),
            space_merges: c.space_merges.load(Ordering::Relaxed),
            merges_deferred: c.merges_deferred.load(Ordering::Relaxed),
            merge_bytes_written: c.merge_bytes_written.load(Ordering::Relaxed),
            user_bytes_written: c.user_bytes_written.get(),
            wal_bytes_written: c.wal_bytes_written.load(Ordering::Relaxed),
            manifest_bytes_written: 0,
            manifest_edits: 0,
            manifest_files_written: 0,
            stall_count: c.stall_count.load(Ordering::Relaxed),
            stall_micros: c.stall_micros.load(Ordering::Relaxed),
            last_sequence,
            memory: crate::budget::MemoryUsage::default(),
            background_error: None,
        }
    }

    /// Bytes written to disk (WAL and run files) per byte written by users.
    pub fn write_amplification(&self) -> f64 {
        if self.user_bytes_written == 0 {
            return 0.0;
        }
        (self.wal_bytes_written + self.merge_bytes_written) as f64 / self.user_bytes_written as f64
    }

    /// Observed false-positive rate of the run-file Bloom filters.
    pub fn bloom_false_positive_rate(&self) -> f64 {
        let positives = self.bloom_checks - self.bloom_negatives;
        let absent = self.bloom_negatives + self.bloom_false_positives;
        if absent == 0 || positives == 0 {
            return 0.0;
        }
        self.bloom_false_positives as f64 / absent as f64
    }
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / 1048576.0
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "memory: {} runs, {} entries, {:.1} MiB",
            self.memory_runs,
            self.memory_entries,
            self.memory_bytes as f64 / 1048576.0
        )?;
        for (i, l) in self.levels.iter().enumerate() {
            writeln!(
                f,
                "level {i}: {} runs, {} entries, {:.1} MiB; filters {:.1} bits/entry, {:.2}% false positives (measured)",
                l.runs,
                l.entries,
                l.bytes as f64 / 1048576.0,
                l.filter_bits_per_entry(),
                100.0 * l.filter_false_positive_rate()
            )?;
        }
        writeln!(
            f,
            "bloom lookups since open: {} checks, {} negatives, {} false positives ({:.4}%)",
            self.bloom_checks,
            self.bloom_negatives,
            self.bloom_false_positives,
            100.0 * self.bloom_false_positive_rate()
        )?;
        writeln!(
            f,
            "writes: {:.1} MiB user, {:.1} MiB WAL, {:.1} MiB by {} flushes and {} merges ({} to bound space amplification), write amplification {:.2}",
            self.user_bytes_written as f64 / 1048576.0,
            self.wal_bytes_written as f64 / 1048576.0,
            self.merge_bytes_written as f64 / 1048576.0,
            self.flushes,
            self.merges,
            self.space_merges,
            self.write_amplification()
        )?;
        writeln!(
            f,
            "manifest: {:.1} KiB in {} edits and {} whole files",
            self.manifest_bytes_written as f64 / 1024.0,
            self.manifest_edits,
            self.manifest_files_written
        )?;
        writeln!(
            f,
            "stalls: {} ({:.3} s); last sequence {}",
            self.stall_count,
            self.stall_micros as f64 / 1e6,
            self.last_sequence
        )?;
        let m = &self.memory;
        let c = &m.cache;
        let lookups = (c.hits + c.misses).max(1);
        write!(
            f,
            "memory: {:.1} of {:.1} MiB budget: memory runs {:.1} (limit {:.1}), indexes and filters {:.1}, \
             block cache {:.1} of {:.1} ({} blocks, {:.1}% of {} lookups hit, {:.1} MiB read{}), buffers {:.1}, files being built {:.1}",
            mib(m.total()),
            mib(m.budget),
            mib(m.memory_runs),
            mib(m.memory_runs_limit),
            mib(m.pinned),
            mib(c.usage),
            mib(c.capacity),
            c.entries,
            100.0 * c.hits as f64 / lookups as f64,
            c.hits + c.misses,
            mib(c.bytes_read),
            if c.bypasses_os_cache {
                ", not kept in the OS page cache"
            } else {
                ""
            },
            mib(m.buffers),
            mib(m.building)
        )?;
        if let Some(e) = &self.background_error {
            write!(f, "\nbackground jobs failing (retried): {e}")?;
        }
        Ok(())
    }
}
