//! The workloads by name: db_bench's benchmark names, what each one does
//! and how it is classified (fill, read, delete), independent of any engine.

use anyhow::{bail, Result};

/// db_bench benchmarks that are accepted but skipped with a note.
const DB_BENCH_OTHERS: &[&str] = &[
    "fillseqdeterministic",
    "filluniquerandomdeterministic",
    "newiterator",
    "newiteratorwhilewriting",
    "seekrandomwhilemerging",
    "readtorowcache",
    "readtocache",
    "readwhilemerging",
    "readwhilescanning",
    "xorupdaterandom",
    "approximatesizerandom",
    "randomwithverify",
    "crc32c",
    "xxhash",
    "xxh3",
    "compress",
    "uncompress",
    "acquireload",
    "fillseekseq",
    "randomtransaction",
    "randomreplacekeys",
    "timeseries",
    "getmergeoperands",
    "readrandomoperands",
    "backup",
    "restore",
    "resetstats",
    "verify",
    "verifychecksum",
    "verifyfilechecksums",
    "replay",
    "openandcompact",
    "readrandomfast",
    "readrandommergerandom",
    "mergerandom",
    "appendrandom",
    "block_cache_entry_stats",
    "cache_report_problems",
    "mixgraph",
];

/// What a workload does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Sequential keys into a fresh database.
    FillSeq,
    /// Random keys into a fresh database.
    FillRandom,
    /// Every key once, in random order, into a fresh database.
    FillUniqueRandom,
    /// `fillrandom` of `num / 1000` synced writes (db_bench's `fillsync`).
    FillSync,
    /// `fillrandom` of `num / 1000` values of 100,000 bytes.
    Fill100K,
    /// Sequential keys in batches of 1,000 into a fresh database
    /// (db_bench's `fillbatch`).
    FillBatch,
    /// Random keys into the existing database.
    Overwrite,
    /// Random point reads.
    ReadRandom,
    /// Random point reads of keys that are not there: each key one byte
    /// shorter than every stored key (db_bench's `readmissing`).
    ReadMissing,
    /// Random point reads within the first 1% of the key range
    /// (db_bench's `readhot`).
    ReadHot,
    /// In-order scan from the first key.
    ReadSeq,
    /// Descending scan from the last key.
    ReadReverse,
    /// Random multi-gets of `batch_size` keys.
    MultiReadRandom,
    /// Random seeks plus `seek_nexts` nexts.
    SeekRandom,
    /// Random reads while one thread writes.
    ReadWhileWriting,
    /// Random seeks while one thread writes.
    SeekRandomWhileWriting,
    /// Random multi-gets while one thread writes.
    MultiReadWhileWriting,
    /// Random read-modify-writes: a get, then a put of the same key.
    UpdateRandom,
    /// Random gets and puts mixed by `--readwritepercent`.
    ReadRandomWriteRandom,
    /// Random deletes.
    DeleteRandom,
    /// Sequential deletes.
    DeleteSeq,
    /// A db_bench benchmark this harness does not implement (skipped).
    Unsupported,
    /// Flush memory to storage (db_bench's `flush`).
    Flush,
    /// Full compaction (db_bench's `compact`).
    Compact,
    /// Print the engine's statistics (db_bench's `stats`).
    Stats,
    /// Wait until the engine's background flushes and compactions are done
    /// (db_bench's `waitforcompaction`): a load's write amplification and
    /// space then count the work it left behind.
    WaitForCompaction,
}

/// One entry of `--benchmarks`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workload {
    /// Name as given (printed in the result line).
    pub name: String,
    /// What it does.
    pub kind: Kind,
    /// Memtable mode (`_mem` suffix).
    pub mem: bool,
}

impl Workload {
    /// Parses a workload name, with an optional `_mem` suffix.
    pub fn parse(name: &str) -> Result<Workload> {
        let (base, mem) = match name.strip_suffix("_mem") {
            Some(b) => (b, true),
            None => (name, false),
        };
        let kind = match base {
            "fillseq" => Kind::FillSeq,
            "fillrandom" => Kind::FillRandom,
            "filluniquerandom" => Kind::FillUniqueRandom,
            "fillsync" if !mem => Kind::FillSync,
            "fill100K" => Kind::Fill100K,
            "fillbatch" => Kind::FillBatch,
            "readmissing" => Kind::ReadMissing,
            "readhot" => Kind::ReadHot,
            "overwrite" => Kind::Overwrite,
            "readrandom" => Kind::ReadRandom,
            "readseq" => Kind::ReadSeq,
            "seekrandomwhilewriting" => Kind::SeekRandomWhileWriting,
            "multireadwhilewriting" => Kind::MultiReadWhileWriting,
            "updaterandom" => Kind::UpdateRandom,
            "readrandomwriterandom" => Kind::ReadRandomWriteRandom,
            "readreverse" => Kind::ReadReverse,
            "multireadrandom" => Kind::MultiReadRandom,
            "seekrandom" => Kind::SeekRandom,
            "readwhilewriting" => Kind::ReadWhileWriting,
            "deleterandom" => Kind::DeleteRandom,
            "deleteseq" => Kind::DeleteSeq,
            "compactall" if !mem => Kind::Compact,
            "flushall" if !mem => Kind::Flush,
            "waitforcompaction" if !mem => Kind::WaitForCompaction,
            "levelstats" | "sstables" | "memstats" if !mem => Kind::Stats,
            _ if !mem && DB_BENCH_OTHERS.contains(&base) => Kind::Unsupported,
            "flush" if !mem => Kind::Flush,
            "compact" if !mem => Kind::Compact,
            "stats" if !mem => Kind::Stats,
            _ => bail!(
                "unknown benchmark '{name}' (known: fillseq, fillrandom, overwrite, readrandom, \
                 filluniquerandom, fillsync, fill100K, fillbatch, readmissing, readhot, readseq, readreverse, multireadrandom, \
                 seekrandom, readwhilewriting, seekrandomwhilewriting, multireadwhilewriting, updaterandom, \
                 readrandomwriterandom, deleterandom, deleteseq, each \
                 optionally with _mem; flush, compact, waitforcompaction, stats)"
            ),
        };
        Ok(Workload {
            name: name.to_string(),
            kind,
            mem,
        })
    }

    /// A fill of a fresh database (any key order or size).
    pub(crate) fn is_fresh_fill(&self) -> bool {
        matches!(
            self.kind,
            Kind::FillSeq
                | Kind::FillRandom
                | Kind::FillUniqueRandom
                | Kind::FillSync
                | Kind::Fill100K
                | Kind::FillBatch
        )
    }

    /// A workload of puts only: a fill or `overwrite`.
    pub(crate) fn is_write(&self) -> bool {
        self.is_fresh_fill() || self.kind == Kind::Overwrite
    }

    /// `flush`, `compact`, `waitforcompaction`, `stats`: no operations to
    /// measure, only the time they take.
    pub(crate) fn is_maintenance(&self) -> bool {
        matches!(
            self.kind,
            Kind::Flush | Kind::Compact | Kind::WaitForCompaction | Kind::Stats
        )
    }

    /// A workload of deletes only.
    pub(crate) fn is_delete(&self) -> bool {
        matches!(self.kind, Kind::DeleteRandom | Kind::DeleteSeq)
    }

    pub(crate) fn op_word(&self) -> &'static str {
        match self.kind {
            _ if self.is_write() => "write",
            _ if self.is_delete() => "delete",
            Kind::SeekRandom => "seek",
            Kind::MultiReadRandom => "multiread",
            _ => "read",
        }
    }
}
