//! The runner: opens the engine, runs the workloads of `--benchmarks` in
//! order on their threads and prints db_bench's lines.

use super::catalog::{Kind, Workload};
use super::engine::{Engine, EngineFactory, WriteMode};
use super::flags::BenchFlags;
use super::io::{disk_usage, IoCounters};
use super::measure::measure;
use super::report::{db_bench_line, Merged, ThreadStats, WorkloadResult};
use super::workloads::{Ctx, READ_SEED_SALT};
use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// Keys per batch of db_bench's `fillbatch`.
const FILLBATCH_SIZE: usize = 1000;

/// "N * model name" from /proc/cpuinfo, as db_bench's header shows it.
fn cpu_description() -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    let model = info
        .lines()
        .find(|l| l.starts_with("model name"))?
        .split_once(':')?
        .1
        .trim()
        .to_string();
    let n = info.lines().filter(|l| l.starts_with("processor")).count();
    Some(format!("{n} * {model}"))
}

/// Runs the workloads of `flags` against engines from `factory`, printing
/// db_bench lines to `out`.
pub struct Runner<'a> {
    flags: &'a BenchFlags,
    factory: &'a dyn EngineFactory,
    db: Option<Arc<dyn Engine>>,
    db_mem: bool,
    threads_started: u64,
    /// Results so far, one per measured workload.
    pub results: Vec<WorkloadResult>,
}

impl<'a> Runner<'a> {
    /// A runner; nothing is opened yet.
    pub fn new(flags: &'a BenchFlags, factory: &'a dyn EngineFactory) -> Self {
        Runner {
            flags,
            factory,
            db: None,
            db_mem: false,
            threads_started: 0,
            results: Vec::new(),
        }
    }

    fn open(&mut self, mem: bool, fresh: bool) -> Result<()> {
        let path = Path::new(&self.flags.db);
        if let Some(db) = self.db.take() {
            // Make what was written reach storage before the next open.
            db.flush().context("flushing before reopening")?;
            drop(db);
            crate::allocator::release_free_memory();
        }
        if fresh {
            self.remove_database()?;
        }
        let db = self
            .factory
            .open(path, self.flags, mem, fresh)
            .with_context(|| {
                format!(
                    "opening {} database in {}",
                    self.factory.name(),
                    path.display()
                )
            })?;
        self.db = Some(db);
        self.db_mem = mem;
        Ok(())
    }

    /// Deletes the database in `--db` before a fresh fill, as db_bench does,
    /// but only if it is this engine's database or an empty directory:
    /// anything else may be a user's files, and is refused untouched.
    fn remove_database(&self) -> Result<()> {
        let path = Path::new(&self.flags.db);
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return Ok(()); // nothing there
        };
        let empty_dir = meta.is_dir()
            && std::fs::read_dir(path)
                .with_context(|| format!("reading {}", path.display()))?
                .next()
                .is_none();
        let ours = meta.is_dir() && self.factory.recognizes(path);
        if !(empty_dir || ours) {
            bail!(
                "refusing to delete {}: it is not empty and holds no {} database (give --db a new or \
                 empty directory, or one an earlier run of this benchmark created)",
                path.display(),
                self.factory.name()
            );
        }
        std::fs::remove_dir_all(path)
            .with_context(|| format!("removing old database {}", path.display()))
    }

    /// Prints db_bench's header.
    pub fn header(&self, out: &mut dyn Write) -> Result<()> {
        let f = self.flags;
        let raw = (f.key_size + f.value_size) as f64 * f.num as f64 / 1048576.0;
        writeln!(out, "Engine:     {}", self.factory.name())?;
        if let Some(cpu) = cpu_description() {
            writeln!(out, "CPU:        {cpu}")?;
        }
        writeln!(out, "Keys:       {} bytes each", f.key_size)?;
        writeln!(out, "Values:     {} bytes each", f.value_size)?;
        writeln!(out, "Entries:    {}", f.num)?;
        writeln!(out, "RawSize:    {raw:.1} MB (estimated)")?;
        writeln!(
            out,
            "WAL:        {}",
            match (f.disable_wal || f.memtable, f.sync) {
                (true, _) => "off",
                (false, true) => "on, sync every write",
                (false, false) => "on, no sync",
            }
        )?;
        writeln!(
            out,
            "Values compress to: {:.0}% (--compression_ratio)",
            f.compression_ratio * 100.0
        )?;
        for (name, value) in self.factory.describe(f) {
            writeln!(out, "{:<11} {value}", format!("{name}:"))?;
        }
        writeln!(out, "------------------------------------------------")?;
        Ok(())
    }

    /// Runs every workload in order.
    pub fn run_all(&mut self, out: &mut dyn Write) -> Result<()> {
        let path = Path::new(&self.flags.db);
        if self.flags.use_existing_db {
            if !path.exists() {
                bail!(
                    "--use_existing_db is set but there is no database at {}",
                    path.display()
                );
            }
        } else {
            self.remove_database()?;
        }
        let workloads: Vec<Workload> = self
            .flags
            .benchmarks
            .iter()
            .map(|b| Workload::parse(b))
            .collect::<Result<_>>()?;
        for w in &workloads {
            self.run_one(w, out)?;
            out.flush()?;
        }
        if let Some(db) = self.db.take() {
            db.flush().context("final flush")?;
            if self.flags.statistics {
                if let Some(r) = db.report() {
                    writeln!(out, "{r}")?;
                }
            }
        }
        Ok(())
    }

    fn run_one(&mut self, w: &Workload, out: &mut dyn Write) -> Result<()> {
        let f = self.flags;
        let mem = w.mem || f.memtable;
        if w.kind == Kind::Unsupported {
            writeln!(
                out,
                "{:<12} : skipped (not implemented by this harness)",
                w.name
            )?;
            return Ok(());
        }
        if w.is_fresh_fill() {
            if f.use_existing_db {
                writeln!(out, "{:<12} : skipped (--use_existing_db is true)", w.name)?;
                return Ok(());
            }
            self.open(mem, true)?;
        } else if self.db.is_none() || self.db_mem != mem {
            self.open(mem, false)?;
        }
        let engine = Arc::clone(self.db.as_ref().expect("opened above"));
        if w.is_maintenance() {
            return self.run_maintenance(w, &*engine, out);
        }
        let io_before = IoCounters::now();
        let adjusted;
        let f = match w.kind {
            Kind::FillSync | Kind::Fill100K => {
                adjusted = f.for_small_fill(w.kind == Kind::FillSync);
                &adjusted
            }
            Kind::FillBatch => {
                adjusted = f.with_batch_size(FILLBATCH_SIZE);
                &adjusted
            }
            _ => f,
        };
        let threads = f.threads;
        let mode = WriteMode {
            sync: f.sync && !mem,
            disable_wal: f.disable_wal || mem,
        };
        let per_thread = if w.is_write() {
            f.writes_per_thread()
        } else if w.is_delete() {
            f.deletes_per_thread()
        } else {
            f.reads_per_thread()
        };
        let bar = self.progress_bar(&w.name, per_thread * threads as u64);
        let seed_base = self.threads_started;
        self.threads_started += threads as u64 + 1;
        let reads = !w.is_write() && !w.is_delete();
        let ctx = Ctx {
            flags: f,
            seed_base,
            seed_salt: if reads { READ_SEED_SALT } else { 0 },
            engine: &*engine,
            mode,
            bar: bar.as_ref(),
        };
        let m = measure(w, &ctx, threads, per_thread)?;
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        let (merged, found, message) = (m.merged, m.found, m.message);
        let line = db_bench_line(&w.name, &merged, &message);
        writeln!(out, "{line}")?;
        if f.histogram {
            writeln!(out, "Microseconds per {}:", w.op_word())?;
            writeln!(out, "{}", merged.hist.to_db_bench_string())?;
        }
        let mut result =
            WorkloadResult::new(&w.name, &merged, found, threads, engine.stats(), line);
        self.record_io(&mut result, io_before);
        self.results.push(result);
        Ok(())
    }

    /// `flush`, `compact`, `waitforcompaction` and `stats`: timed, with the
    /// I/O they caused and the space the database takes afterwards.
    fn run_maintenance(
        &mut self,
        w: &Workload,
        engine: &dyn Engine,
        out: &mut dyn Write,
    ) -> Result<()> {
        if w.kind == Kind::Stats {
            if let Some(r) = engine.report() {
                writeln!(out, "{r}")?;
            }
            return Ok(());
        }
        let io_before = IoCounters::now();
        let mut stats = ThreadStats::start();
        match w.kind {
            Kind::Flush => engine.flush()?,
            Kind::Compact => engine.compact()?,
            _ => engine.wait_for_compaction()?,
        }
        stats.finish = Instant::now();
        let merged = Merged::from_threads(&[stats]);
        let line = format!("{:<12} : {:.3} seconds", w.name, merged.elapsed);
        writeln!(out, "{line}")?;
        let mut result = WorkloadResult::new(&w.name, &merged, None, 1, engine.stats(), line);
        self.record_io(&mut result, io_before);
        self.results.push(result);
        Ok(())
    }

    /// Adds the storage I/O since `before` and the database's size on disk.
    fn record_io(&self, result: &mut WorkloadResult, before: Option<IoCounters>) {
        if let (Some(before), Some(now)) = (before, IoCounters::now()) {
            let d = now.since(&before);
            result.io_read_bytes = Some(d.read_bytes);
            result.io_write_bytes = Some(d.write_bytes);
        }
        if !self.db_mem {
            result.disk_bytes = disk_usage(Path::new(&self.flags.db));
        }
    }

    fn progress_bar(&self, name: &str, total: u64) -> Option<ProgressBar> {
        let show = self
            .flags
            .progress
            .unwrap_or_else(|| std::io::IsTerminal::is_terminal(&std::io::stderr()));
        if !show {
            return None;
        }
        let bar = ProgressBar::new(total);
        bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(
            "{prefix:>12} [{bar:30}] {human_pos}/{human_len} ({elapsed}, eta {eta})",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_prefix(name.to_string());
        Some(bar)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::engine::MemFactory;
    use crate::bench::flags::{parse, Parsed};

    fn flags(args: &[&str]) -> BenchFlags {
        let v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        match parse(&v, &[]).unwrap() {
            Parsed::Run { flags, .. } => *flags,
            Parsed::Help => unreachable!(),
        }
    }

    /// db_bench's fill variants: filluniquerandom writes every key once;
    /// fillsync and fill100K write a thousandth of `num` (synced, or with
    /// 100,000-byte values) into a fresh database.
    #[test]
    fn fill_variants_follow_db_bench() {
        let dir = tempfile::tempdir().unwrap();
        let db = format!("--db={}", dir.path().join("db").display());
        let f = flags(&[
            "--benchmarks=filluniquerandom,readrandom,fillsync,fill100K",
            "--num=5000",
            "--reads=2000",
            &db,
        ]);
        let mut r = Runner::new(&f, &MemFactory);
        let mut out = Vec::new();
        r.run_all(&mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert_eq!(r.results[0].ops, 5000, "{out}");
        assert_eq!(
            r.results[1].found,
            Some(2000),
            "every key was written: {out}"
        );
        assert_eq!(
            (r.results[2].workload.as_str(), r.results[2].ops),
            ("fillsync", 5)
        );
        let fill100k = &r.results[3];
        assert_eq!(fill100k.ops, 5);
        assert_eq!(fill100k.bytes, 5 * (16 + 100_000), "{out}");
    }

    #[test]
    fn every_workload_runs() {
        let dir = tempfile::tempdir().unwrap();
        let db = format!("--db={}", dir.path().join("db").display());
        let f = flags(&[
            "--benchmarks=fillseq,fillrandom,overwrite,readrandom,readseq,readreverse,\
             updaterandom,readrandomwriterandom,seekrandomwhilewriting,multireadwhilewriting,\
             multireadrandom,seekrandom,readwhilewriting,deleterandom,fillrandom_mem,\
             readrandom_mem,stats",
            "--num=2000",
            "--reads=500",
            "--batch_size=7",
            "--seek_nexts=3",
            "--threads=2",
            "--histogram",
            &db,
        ]);
        let mut r = Runner::new(&f, &MemFactory);
        let mut out = Vec::new();
        r.run_all(&mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        assert_eq!(r.results.len(), 16, "{out}");
        let rr = &r.results[3];
        assert_eq!(rr.workload, "readrandom");
        assert_eq!(rr.ops, 1000);
        // fillrandom then overwrite of 2 x 2000 random keys each: most found.
        assert!(rr.found.unwrap() > 700, "{out}");
        let readseq = &r.results[4];
        assert_eq!(readseq.ops, 1000);
        let readreverse = &r.results[5];
        assert_eq!(readreverse.workload, "readreverse");
        assert_eq!(readreverse.ops, 1000);
        // Two threads x 500 reads each; db_bench's wording for the mixes.
        let updates = &r.results[6];
        assert_eq!(
            (updates.workload.as_str(), updates.ops),
            ("updaterandom", 1000)
        );
        assert!(out.contains("( updates:1000 found:"), "{out}");
        let mixed = out
            .lines()
            .find(|l| l.starts_with("readrandomwriterandom"))
            .unwrap();
        let count = |name: &str| -> u64 {
            let at = mixed.find(name).unwrap() + name.len();
            let digits: String = mixed[at..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().unwrap()
        };
        assert_eq!(count("reads:") + count("writes:"), 1000, "{mixed}");
        assert!(
            count("writes:") > 20 && count("writes:") < 250,
            "~10% writes: {mixed}"
        );
        for (i, name) in [(8, "seekrandomwhilewriting"), (9, "multireadwhilewriting")] {
            assert_eq!(
                (r.results[i].workload.as_str(), r.results[i].ops),
                (name, 1000)
            );
        }
        let fillseq = &r.results[0];
        assert_eq!(fillseq.ops, 4000);
        assert!(out.contains("Percentiles: P50:"));
    }
}
