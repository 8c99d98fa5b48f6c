//! Opening a database: lock the directory, load the manifest, open the run
//! files, replay the WAL past the last flushed sequence number, and start a
//! fresh WAL.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;

use arc_swap::ArcSwap;
use parking_lot::{Condvar, Mutex};

use super::background::{build_run, RunPlan};
use super::write::WriteQueue;
use super::{BgState, Shared, VersionState};
use crate::batch::{self, Op};
use crate::bloom::hash_key;
use crate::error::{Error, Result};
use crate::fs::{FileSystem, FsLock};
use crate::fsutil;
use crate::iter::InternalIter;
use crate::key::{self, Kind};
use crate::manifest::{self, FileKind, Manifest};
use crate::memtable::{Inserters, MemRun};
use crate::merge::MergePolicy;
use crate::options::Options;
use crate::run::RunFile;
use crate::stats::Counters;
use crate::version::{DiskRun, Version};
use crate::wal::{RecoveryMode, TailDropKind, WalReader};

use super::log::LogWriter;

const LOCK_FILE: &str = "LOCK";

pub(super) fn open(dir: &Path, opts: Options) -> Result<Shared> {
    opts.validate()?;
    prepare_dir(dir, &opts)?;
    let fs = &*opts.fs;
    let lock = lock_dir(fs, dir)?;
    let mut manifest = load_or_create_manifest(dir, &opts)?;
    let levels = open_runs(&opts, dir, &manifest)?;
    let files = scan_dir(fs, dir)?;
    let max_seen = files.iter().map(|(n, _)| *n).max().unwrap_or(0);
    let mut next_file = manifest.next_file_number.max(max_seen + 1);

    let wal_numbers: Vec<u64> = files
        .iter()
        .filter(|(n, kind)| *kind == FileKind::Wal && *n >= manifest.min_wal_number)
        .map(|(n, _)| *n)
        .collect();
    let replay = replay_wals(dir, &wal_numbers, manifest.last_sequence, &opts)?;
    let mut levels = levels;
    let last_sequence = replay.max_seq.max(manifest.last_sequence);
    if let Some(run) = flush_recovered(dir, &opts, &replay.runs, &levels, &mut next_file)? {
        if levels.is_empty() {
            levels.push(Vec::new());
        }
        levels[0].push(run);
    }

    let wal_number = next_file;
    next_file += 1;
    let wal = if opts.disable_wal {
        None
    } else {
        let path = dir.join(manifest::wal_file_name(wal_number));
        Some(LogWriter::create(
            &opts.fs,
            &path,
            wal_number,
            opts.run_size as u64,
        )?)
    };
    let version = Version {
        mems: vec![Arc::new(MemRun::new(
            &opts,
            if wal.is_some() { wal_number } else { 0 },
        ))],
        levels,
    };
    manifest.next_file_number = next_file;
    manifest.last_sequence = last_sequence;
    manifest.min_wal_number = wal_number;
    manifest.levels = version.manifest_levels();
    manifest.store_with(fs, dir)?;
    remove_obsolete_files(fs, dir, &manifest, &files);

    Ok(Shared {
        dir: dir.to_path_buf(),
        opts,
        _lock: lock,
        current: ArcSwap::from_pointee(version),
        version_lock: Mutex::new(VersionState {
            flushed_sequence: last_sequence,
        }),
        next_file: AtomicU64::new(next_file),
        visible_seq: AtomicU64::new(last_sequence),
        writes: Mutex::new(WriteQueue::new(last_sequence, wal)),
        snapshots: Mutex::new(BTreeMap::new()),
        bg: Mutex::new(BgState::default()),
        bg_work: Condvar::new(),
        bg_done: Condvar::new(),
        flush_lock: Mutex::new(()),
        merge_lock: Mutex::new(()),
        counters: Counters::default(),
        unlogged: AtomicBool::new(false),
        bg_failed: AtomicBool::new(false),
    })
}

fn prepare_dir(dir: &Path, opts: &Options) -> Result<()> {
    let fs = &*opts.fs;
    match fs.is_dir(dir) {
        Ok(true) => Ok(()),
        Ok(_) => Err(Error::NotADatabase {
            path: dir.to_path_buf(),
            reason: "it is a file, not a directory".into(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if !opts.create_if_missing {
                return Err(Error::InvalidArgument(format!(
                    "database {} does not exist (set create_if_missing to create it)",
                    dir.display()
                )));
            }
            fs.create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
            if let Some(parent) = dir.parent() {
                if !parent.as_os_str().is_empty() {
                    fsutil::sync_dir_with(fs, parent)?;
                }
            }
            Ok(())
        }
        Err(e) => Err(Error::io(dir, e)),
    }
}

fn lock_dir(fs: &dyn FileSystem, dir: &Path) -> Result<FsLock> {
    let path = dir.join(LOCK_FILE);
    match fs.lock(&path) {
        Ok(Some(lock)) => Ok(lock),
        Ok(None) => Err(Error::Locked(dir.to_path_buf())),
        Err(e) => Err(Error::io(&path, e)),
    }
}

fn load_or_create_manifest(dir: &Path, opts: &Options) -> Result<Manifest> {
    let fs = &*opts.fs;
    match Manifest::load_with(fs, dir) {
        Ok(Some(m)) if opts.error_if_exists => {
            let _ = m;
            Err(Error::InvalidArgument(format!(
                "database {} already exists (error_if_exists is set)",
                dir.display()
            )))
        }
        Ok(Some(m)) => Ok(m),
        Ok(None) => {
            let foreign = fs
                .read_dir(dir)
                .map_err(|e| Error::io(dir, e))?
                .into_iter()
                .find(|name| name != LOCK_FILE && !name.ends_with(fsutil::TMP_SUFFIX));
            if let Some(name) = foreign {
                return Err(Error::NotADatabase {
                    path: dir.to_path_buf(),
                    reason: format!("it holds {name:?} but no {}", manifest::MANIFEST_FILE),
                });
            }
            let m = Manifest::new();
            m.store_with(fs, dir)?;
            Ok(m)
        }
        Err(e @ Error::Corruption { .. }) => {
            // A file named MANIFEST that does not even carry our magic
            // belongs to somebody else.
            let path = dir.join(manifest::MANIFEST_FILE);
            let head = fs.read(&path).map_err(|e| Error::io(&path, e))?;
            if !head.starts_with(&manifest::MANIFEST_MAGIC) {
                return Err(Error::NotADatabase {
                    path: dir.to_path_buf(),
                    reason: "its MANIFEST is not an slsm manifest".into(),
                });
            }
            Err(e)
        }
        Err(e) => Err(e),
    }
}

fn open_runs(opts: &Options, dir: &Path, manifest: &Manifest) -> Result<Vec<Vec<Arc<DiskRun>>>> {
    let mut levels = Vec::with_capacity(manifest.levels.len());
    for records in &manifest.levels {
        let mut level = Vec::with_capacity(records.len());
        for rec in records {
            let path = dir.join(manifest::run_file_name(rec.file_number));
            if !opts.fs.exists(&path) {
                return Err(Error::corruption(
                    &path,
                    0,
                    "run file listed in the MANIFEST is missing",
                ));
            }
            let file = RunFile::open_with(opts.fs.clone(), &path)?;
            if file.properties().file_size != rec.file_size {
                return Err(Error::corruption(
                    &path,
                    0,
                    format!(
                        "run file is {} bytes but the MANIFEST records {}",
                        file.properties().file_size,
                        rec.file_size
                    ),
                ));
            }
            level.push(Arc::new(DiskRun::new(rec.file_number, Arc::new(file))));
        }
        levels.push(level);
    }
    Ok(levels)
}

/// The database's numbered files, ascending by number.
fn scan_dir(fs: &dyn FileSystem, dir: &Path) -> Result<Vec<(u64, FileKind)>> {
    let mut files = Vec::new();
    for name in fs.read_dir(dir).map_err(|e| Error::io(dir, e))? {
        if let Some((n, kind)) = manifest::parse_file_name(&name) {
            files.push((n, kind));
        }
    }
    files.sort_by_key(|(n, _)| *n);
    Ok(files)
}

struct Replay {
    runs: Vec<MemRun>,
    max_seq: u64,
}

fn replay_wals(dir: &Path, numbers: &[u64], flushed: u64, opts: &Options) -> Result<Replay> {
    let mut replay = Replay {
        runs: vec![MemRun::new(opts, 0)],
        max_seq: flushed,
    };
    // Sequence numbers strictly increase from record to record, across logs.
    let mut prev_last: Option<u64> = None;
    for (i, &number) in numbers.iter().enumerate() {
        let path = dir.join(manifest::wal_file_name(number));
        let mut reader = WalReader::open_with(&*opts.fs, &path, Some(number), opts.recovery)?;
        while let Some((offset, payload)) = reader.next_record()? {
            let seqs = record_seqs(payload, prev_last);
            if let Some((_, last)) = seqs {
                prev_last = Some(last);
            }
            let batch = seqs.and_then(|_| batch::decode(payload)).ok_or_else(|| {
                Error::corruption(
                    &path,
                    offset,
                    "WAL record is not a valid write batch (malformed, or its sequence \
                     numbers do not follow the previous record's)",
                )
            });
            let batch = match (batch, opts.recovery) {
                (Ok(b), _) => b,
                (Err(e), RecoveryMode::Strict) => return Err(e),
                (Err(_), RecoveryMode::BestEffort) => return Ok(replay),
            };
            apply_recovered(&mut replay, batch, flushed, opts);
        }
        if let Some(drop) = reader.tail_dropped() {
            let last_log = i + 1 == numbers.len();
            // A zero-filled tail is space the mapped writer reserved and a
            // crash kept it from trimming: the log simply ends there.
            let reserved_tail =
                drop.kind == TailDropKind::Torn && zero_tail(&*opts.fs, &path, drop.offset)?;
            let stop = drop.kind == TailDropKind::Corruption
                || !(last_log
                    || reserved_tail
                    || (drop.kind == TailDropKind::Torn
                        && later_logs_empty(dir, &numbers[i + 1..], opts)?));
            if stop && opts.recovery == RecoveryMode::Strict {
                return Err(Error::corruption(
                    &path,
                    drop.offset,
                    "WAL ends early but a newer WAL follows",
                ));
            }
            if stop {
                // Point-in-time recovery: nothing after the damage.
                return Ok(replay);
            }
        }
    }
    Ok(replay)
}

/// The first and last sequence numbers of the write batch in `payload`, if
/// it decodes completely, has operations, comes after `prev_last` and stays
/// within the sequence-number space. A record that checksums but fails this
/// (never written by the engine) must not be half-applied or collide with
/// another record's keys.
fn record_seqs(payload: &[u8], prev_last: Option<u64>) -> Option<(u64, u64)> {
    let b = batch::decode(payload)?;
    let mut n = 0u64;
    for op in b.ops {
        op.ok()?;
        n += 1;
    }
    let last = b.first_seq.checked_add(n.checked_sub(1)?)?;
    let after_prev = prev_last.is_none_or(|p| b.first_seq > p);
    (b.first_seq > 0 && after_prev && last <= key::MAX_SEQUENCE).then_some((b.first_seq, last))
}

/// True if none of the logs `numbers` holds a record. A torn tail followed
/// only by such logs is still the end of the history: a crash came after
/// the next log was created (e.g. while recovery started a new log) but
/// before anything was written to it.
fn later_logs_empty(dir: &Path, numbers: &[u64], opts: &Options) -> Result<bool> {
    for &n in numbers {
        let path = dir.join(manifest::wal_file_name(n));
        let mut r = WalReader::open_with(&*opts.fs, &path, Some(n), RecoveryMode::BestEffort)?;
        if r.next_record()?.is_some() {
            return Ok(false);
        }
    }
    Ok(true)
}

/// True if every byte of `path` from `offset` on is zero.
fn zero_tail(fs: &dyn FileSystem, path: &Path, offset: u64) -> Result<bool> {
    let bytes = fs.read(path).map_err(|e| Error::io(path, e))?;
    Ok(bytes
        .get(offset as usize..)
        .is_some_and(|tail| tail.iter().all(|&b| b == 0)))
}

fn apply_recovered(replay: &mut Replay, b: batch::DecodedBatch<'_>, flushed: u64, opts: &Options) {
    let mut buf = Vec::new();
    for (seq, op) in (b.first_seq..).zip(b.ops) {
        let Ok(op) = op else { break };
        if seq > flushed {
            let run = current_run(&mut replay.runs, opts);
            match op {
                Op::Put(k, v) => {
                    key::encode_into(&mut buf, k, seq, Kind::Value);
                    run.insert(&buf, v, hash_key(k), seq, Inserters::Alone);
                }
                Op::Delete(k) => {
                    key::encode_into(&mut buf, k, seq, Kind::Delete);
                    run.insert(&buf, &[], hash_key(k), seq, Inserters::Alone);
                }
                Op::DeleteRange(start, end) => run.insert_range_del(start, end, seq),
            }
            buf.clear();
            replay.max_seq = replay.max_seq.max(seq);
        }
    }
}

fn current_run<'a>(runs: &'a mut Vec<MemRun>, opts: &Options) -> &'a MemRun {
    if runs.last().is_some_and(MemRun::is_full) {
        runs.push(MemRun::new(opts, 0));
    }
    runs.last().expect("at least one run")
}

/// Writes the replayed writes to a new level-0 run, so that the old WALs can
/// go.
fn flush_recovered(
    dir: &Path,
    opts: &Options,
    runs: &[MemRun],
    levels: &[Vec<Arc<DiskRun>>],
    next_file: &mut u64,
) -> Result<Option<Arc<DiskRun>>> {
    if runs.iter().all(|r| r.is_empty()) {
        return Ok(None);
    }
    let number = *next_file;
    *next_file += 1;
    let children: Vec<Box<dyn InternalIter>> = runs
        .iter()
        .map(|r| Box::new(r.cursor()) as Box<dyn InternalIter>)
        .collect();
    let plan = RunPlan {
        dir,
        number,
        opts,
        policy: MergePolicy {
            snapshots: Vec::new(),
            bottommost: levels.iter().all(|l| l.is_empty()),
        },
    };
    let range_dels = runs.iter().flat_map(|r| r.range_tombstones()).collect();
    Ok(build_run(plan, children, range_dels)?.map(|(run, _)| run))
}

/// Deletes WALs older than the manifest's, run files it does not name, and
/// temporary files. Failures are harmless (the files are retried next open).
fn remove_obsolete_files(fs: &dyn FileSystem, dir: &Path, m: &Manifest, files: &[(u64, FileKind)]) {
    let live: std::collections::HashSet<u64> = m.runs().map(|r| r.file_number).collect();
    for &(n, kind) in files {
        let obsolete = match kind {
            FileKind::Wal => n < m.min_wal_number,
            FileKind::Run => !live.contains(&n),
        };
        if obsolete {
            let name = match kind {
                FileKind::Wal => manifest::wal_file_name(n),
                FileKind::Run => manifest::run_file_name(n),
            };
            let _ = fs.remove_file(&dir.join(name));
        }
    }
    let _ = fsutil::sync_dir_with(fs, dir);
}
