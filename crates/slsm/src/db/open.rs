//! Opening a database: lock the directory, load the manifest, open the run
//! files, replay the logs past the flushed sequence number (recovery),
//! flush what was replayed, start a new log, and wire the components.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::keyspace::catalog::DEFAULT_KEYSPACE;
use crate::keyspace::rules::{RuleBook, Rules};
use crate::keyspace::state::KeyspaceState;
use crate::txn::gate::Transactions;
use std::thread::JoinHandle;

use super::components::Components;
use super::dir::{
    load_existing_manifest, load_or_create_manifest, lock_dir, prepare_dir, refuse_foreign,
    require_dir, scan_dir,
};
use crate::background::Background;
use crate::budget::MemoryBudget;
use crate::buffer::{ActiveLog, MemoryBuffer};
use crate::commit::CommitPipeline;
use crate::error::{Error, Result};
use crate::fs::durable;
use crate::fs::FileSystem;
use crate::jobs::Jobs;
use crate::manifest::{self, FileKind, Manifest, ManifestLog};
use crate::memtable::MemRun;
use crate::options::Options;
use crate::recovery;
use crate::snapshot::list::SnapshotList;
use crate::sst::{BlockCache, RunFile, RunProperties};
use crate::stats::Counters;
use crate::version::{DiskRun, Version, VersionSet};
use crate::wal::WalWriter;

/// Opens the database in `dir`: its components, and the background threads
/// already running.
pub(super) fn open(dir: &Path, opts: Options) -> Result<(Arc<Components>, Vec<JoinHandle<()>>)> {
    opts.validate()?;
    let read_only = opts.read_only;
    if read_only {
        require_dir(dir, &opts)?;
    } else {
        prepare_dir(dir, &opts)?;
    }
    let opts = Arc::new(opts);
    let fs = &*opts.fs;
    // Before the lock file is created: a refused directory is left as it
    // was found.
    refuse_foreign(fs, dir)?;
    let lock = if read_only {
        None
    } else {
        Some(lock_dir(fs, dir)?)
    };
    let budget = Arc::new(MemoryBudget::new(&opts));
    let Loaded {
        manifest,
        levels,
        files,
        replayed,
    } = load_state(dir, &opts, budget.cache())?;
    let max_seen = files.iter().map(|(n, _)| *n).max().unwrap_or(0);
    let last_sequence = replayed.max_seq.max(manifest.last_sequence);

    let log_number = manifest.next_file_number.max(max_seen + 1);
    let log = match read_only {
        true => ActiveLog::Off,
        false => start_log(&opts, dir, log_number)?,
    };
    // The active run's log is `log_number` even if it could not be started
    // yet: the one the first write starts has a higher number, and every
    // log from a memory run's own on is kept.
    let shared = replayed.runs.last().map(|run| run.key_prefix_shared());
    let active = Arc::new(MemRun::new(
        &opts,
        if opts.disable_wal { 0 } else { log_number },
        shared.as_deref().unwrap_or_default(),
    ));
    let mems = std::iter::once(active)
        .chain(replayed.runs.into_iter().rev())
        .collect();
    let versions = Arc::new(VersionSet::new(
        ManifestLog::new(Arc::clone(&opts.fs), dir, opts.max_manifest_file_size),
        &manifest,
        Version::new(mems, levels),
        log_number + 1,
    ));
    let snapshots = Arc::new(SnapshotList::default());
    let counters = Arc::new(Counters::default());
    // Merges drop expired values of TTL keyspaces from the start, whether
    // or not a handle on them is opened.
    let rules = Arc::new(RuleBook::default());
    for k in versions
        .catalog()
        .keyspaces
        .iter()
        .filter(|k| k.ttl_millis > 0)
    {
        rules.set(
            k.id,
            Rules {
                ttl_millis: k.ttl_millis,
                filter: None,
            },
        );
    }
    let jobs = Arc::new(Jobs::new(
        dir.to_path_buf(),
        Arc::clone(&opts),
        Arc::clone(&versions),
        Arc::clone(&snapshots),
        Arc::clone(&counters),
        Arc::clone(&budget),
        Arc::clone(&rules),
    ));
    budget.rebalance(&versions.current());
    if !read_only {
        // What was replayed goes to a run file, so the old logs can go. On a
        // full disk it stays in memory runs instead (their logs are kept),
        // and the background flush writes it once there is space: the
        // database opens for reading whatever the free space.
        // (The manifest's sequence number says what run files hold: it is
        // recorded only once the replayed writes are in them.)
        match jobs.flush_all() {
            Ok(()) => tolerate_no_space(versions.persist(last_sequence))?,
            Err(e) if e.is_no_space() => {}
            Err(e) => return Err(e),
        }
        remove_obsolete_files(fs, dir, &files, &versions);
    }

    let background = Arc::new(Background::new(
        Arc::clone(&jobs),
        Arc::clone(&versions),
        opts.background_merges && !read_only,
    ));
    let buffer = MemoryBuffer::new(
        dir.to_path_buf(),
        Arc::clone(&opts),
        Arc::clone(&versions),
        Arc::clone(&background),
        Arc::clone(&counters),
        Arc::clone(&budget),
    );
    let commit = CommitPipeline::new(buffer, Arc::clone(&counters), &opts, last_sequence, log);
    let threads = match read_only {
        true => Vec::new(),
        false => background.start().map_err(|e| Error::io(dir, e))?,
    };
    let default_space = Arc::new(KeyspaceState::new(0, DEFAULT_KEYSPACE, 0));
    let components = Components {
        dir: dir.to_path_buf(),
        opts,
        _lock: lock,
        versions,
        snapshots,
        counters,
        budget,
        jobs,
        background,
        commit,
        keyspaces: Mutex::new(HashMap::from([(
            DEFAULT_KEYSPACE.to_string(),
            Arc::clone(&default_space),
        )])),
        default_space,
        txns: Transactions::default(),
        rules,
        closed: Default::default(),
    };
    Ok((Arc::new(components), threads))
}

/// The log writes go to: none with `disable_wal`, and none yet if the
/// disk is full (the first write starts it, and fails while there is no
/// space).
fn start_log(opts: &Options, dir: &Path, number: u64) -> Result<ActiveLog> {
    if opts.disable_wal {
        return Ok(ActiveLog::Off);
    }
    let path = dir.join(manifest::wal_file_name(number));
    match WalWriter::create_sized(&*opts.fs, &path, number, opts.run_size as u64) {
        Ok(mut log) => {
            log.retain_at_most(opts.log_buffer_bytes());
            Ok(ActiveLog::Open(log))
        }
        Err(e) if e.is_no_space() => Ok(ActiveLog::Missing),
        Err(e) => Err(e),
    }
}

/// `Ok` for a step of opening that may wait for free space (a manifest
/// rewrite whose content the next one also records).
fn tolerate_no_space(result: Result<()>) -> Result<()> {
    match result {
        Err(e) if !e.is_no_space() => Err(e),
        _ => Ok(()),
    }
}

/// What a database holds on disk when it is opened: the manifest, its run
/// files (open), the files of the directory, and the logs replayed.
struct Loaded {
    manifest: Manifest,
    levels: Vec<Vec<Arc<DiskRun>>>,
    files: Vec<(u64, FileKind)>,
    replayed: recovery::Replayed,
}

/// Attempts of a read-only open to read the logs before the writer beside
/// it retires them.
const READ_ONLY_ATTEMPTS: u32 = 50;

/// Loads the state of `dir`: the manifest, its runs, then the logs from the
/// manifest's oldest needed one on. The lock keeps it still for a writer.
///
/// A read-only open takes no lock, and the writer beside it may at any
/// moment replace the manifest and delete what that made obsolete: run
/// files after a merge, logs after a flush (which moved their writes into
/// a run file this open's manifest does not list). A run file, once open,
/// stays readable after its deletion; a log deleted before it was read
/// would leave a hole, silently. Logs are deleted only after a manifest
/// that no longer needs them (a higher `min_wal_number`) is in place, so
/// if the manifest still needs the same logs once they have been read,
/// none was missed; otherwise, or if a file vanished, the open starts
/// again from the new manifest, keeping the runs it already opened (a
/// retry costs the logs, which hold a few memory runs at most).
fn load_state(dir: &Path, opts: &Options, cache: &Arc<BlockCache>) -> Result<Loaded> {
    let mut opened = HashMap::new();
    if !opts.read_only {
        let manifest = load_or_create_manifest(dir, opts)?;
        return load_from(dir, opts, cache, manifest, &mut opened);
    }
    let mut attempt = 0;
    loop {
        attempt += 1;
        let manifest = load_existing_manifest(dir, opts)?;
        let loaded = load_from(dir, opts, cache, manifest.clone(), &mut opened);
        let now = load_existing_manifest(dir, opts)?;
        match loaded {
            Ok(l) if now.min_wal_number == l.manifest.min_wal_number => return Ok(l),
            // Nothing moved meanwhile: the failure is the database's own.
            Err(e) if now == manifest || attempt == READ_ONLY_ATTEMPTS => return Err(e),
            Ok(_) if attempt == READ_ONLY_ATTEMPTS => {
                return Err(Error::io(
                    dir,
                    std::io::Error::other(
                        "the writer beside this read-only open retired its logs before \
                         every attempt could read them (it flushes constantly); try again",
                    ),
                ))
            }
            _ => {}
        }
        // Give the writer's flush or merge time to finish its deletions.
        std::thread::sleep(std::time::Duration::from_millis(u64::from(attempt.min(10))));
    }
}

/// [`load_state`] from `manifest`: its runs (those already in `opened` are
/// taken from there), the directory, the logs.
fn load_from(
    dir: &Path,
    opts: &Options,
    cache: &Arc<BlockCache>,
    manifest: Manifest,
    opened: &mut HashMap<u64, Arc<DiskRun>>,
) -> Result<Loaded> {
    let levels = open_runs(opts, dir, &manifest, cache, opened)?;
    let files = scan_dir(&*opts.fs, dir)?;
    let logs: Vec<u64> = files
        .iter()
        .filter(|(n, kind)| *kind == FileKind::Wal && *n >= manifest.min_wal_number)
        .map(|(n, _)| *n)
        .collect();
    let replayed = recovery::replay_logs(dir, &logs, manifest.last_sequence, opts)?;
    Ok(Loaded {
        manifest,
        levels,
        files,
        replayed,
    })
}

/// The runs `manifest` lists, by level; a run already in `opened` is
/// taken from there, and every run opened here is added to it.
fn open_runs(
    opts: &Options,
    dir: &Path,
    manifest: &Manifest,
    cache: &Arc<BlockCache>,
    opened: &mut HashMap<u64, Arc<DiskRun>>,
) -> Result<Vec<Vec<Arc<DiskRun>>>> {
    let mut levels = Vec::with_capacity(manifest.levels.len());
    for records in &manifest.levels {
        let mut level = Vec::with_capacity(records.len());
        for rec in records {
            if let Some(run) = opened.get(&rec.file_number) {
                level.push(Arc::clone(run));
                continue;
            }
            let path = dir.join(manifest::run_file_name(rec.file_number));
            if !opts.fs.exists(&path) {
                return Err(Error::corruption(
                    &path,
                    0,
                    "run file listed in the MANIFEST is missing",
                ));
            }
            let file = RunFile::open_in(opts.fs.clone(), &path, Arc::clone(cache))?;
            check_identity(&file, rec, manifest).map_err(|why| Error::corruption(&path, 0, why))?;
            let run = Arc::new(DiskRun::new(rec.file_number, Arc::new(file)));
            opened.insert(rec.file_number, Arc::clone(&run));
            level.push(run);
        }
        levels.push(level);
    }
    Ok(levels)
}

/// A run file is the one the manifest names only if it says so itself: the
/// same database, the same file number, the same size and checksum. A file
/// swapped with another, copied in from another database or left from an
/// older state is caught here, before any read trusts it.
fn check_identity(
    file: &RunFile,
    rec: &RunProperties,
    manifest: &Manifest,
) -> std::result::Result<(), String> {
    let p = file.properties();
    if file.db_id() != manifest.db_id {
        return Err("run file belongs to another database".into());
    }
    if p.file_number != rec.file_number {
        return Err(format!(
            "run file says it is file {} but the MANIFEST lists it as file {}",
            p.file_number, rec.file_number
        ));
    }
    if p.file_size != rec.file_size || p.checksum != rec.checksum {
        return Err(format!(
            "run file is {} bytes with checksum {:#x} but the MANIFEST records {} bytes with \
             checksum {:#x}",
            p.file_size, p.checksum, rec.file_size, rec.checksum
        ));
    }
    Ok(())
}

/// Deletes the logs recovery replayed and flushed, and run files the
/// version does not name (left by a crash in the middle of a job).
/// Failures are harmless: the files are retried at the next open.
fn remove_obsolete_files(
    fs: &dyn FileSystem,
    dir: &Path,
    files: &[(u64, FileKind)],
    versions: &VersionSet,
) {
    let version = versions.current();
    let live: std::collections::HashSet<u64> =
        version.disk_runs_newest_first().map(|r| r.number).collect();
    let oldest_log = version.oldest_log_needed().unwrap_or(u64::MAX);
    for &(n, kind) in files {
        let obsolete = match kind {
            FileKind::Wal => n < oldest_log,
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
    let _ = durable::sync_dir_with(fs, dir);
}
