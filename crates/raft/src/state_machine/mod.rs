//! [`StateMachine`]: openraft's state machine on an slsm database.
//!
//! The replicated keys live in the database's default keyspace; the id of
//! the last applied entry and the membership live in its `raft` keyspace,
//! written in the same batch as the effects of the entries they follow, so
//! a crash never applies an entry twice or half (the batch is one WAL
//! record).
//!
//! The database is a generation directory under `data/`, named by the file
//! `data/CURRENT`: installing a snapshot unpacks it into a new generation,
//! syncs it, and then renames a new `CURRENT` into place, the one step that
//! switches; a node killed while installing comes back with the old state
//! or the new. Snapshots are built from `Db::checkpoint` (every key as of
//! one sequence number, the applied id with them) and packed into
//! `snapshots/current.snap` (see `snapshot`).
//!
//! * **Owns**: the state machine's database and the snapshot files.
//! * **Durability**: applied entries are not synced (the log has them, and
//!   openraft applies again what the state machine lost); an installed
//!   snapshot is synced before it is switched to.
//! * **Thread safety**: clones share one state; reads ([`StateMachine::get`])
//!   may run beside `apply` and snapshot builds.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use openraft::{AnyError, EntryPayload, StorageIOError};
use slsm::{Db, Keyspace, Options};

mod apply;
mod raft;

use apply::{apply_command, Applying};

use crate::machine::Machine;
use crate::snapshot;
use crate::types::{Entry, LogId, Response, SnapshotMeta, StorageError, StoredMembership};

const APPLIED: &[u8] = b"applied";
const MEMBERSHIP: &[u8] = b"membership";
/// The replicated clock (see `Stamp::clock`), u64 big endian.
const CLOCK: &[u8] = b"clock";
/// How far a batch entry was applied when its application's commands are
/// committed one by one: `(index, commands applied)`, bincode.
const PARTIAL: &[u8] = b"partial";
const META_KEYSPACE: &str = "raft";

/// The open database and its metadata keyspace.
struct Current {
    db: Arc<Db>,
    meta: Keyspace,
    generation: u64,
}

struct Shared {
    dir: PathBuf,
    current: RwLock<Arc<Current>>,
    /// Serialises snapshot builds and installs (they write the same files).
    snapshots: Mutex<()>,
    /// Files snapshots are being received into: removed once installed
    /// (the install works on a copy; see `install_snapshot`).
    receiving: Mutex<Vec<PathBuf>>,
    counter: AtomicU64,
    /// What applies the application's commands (none: they are refused).
    machine: Option<Arc<dyn Machine>>,
    /// The replicated clock as of the last applied entry.
    clock: AtomicU64,
}

/// The state machine of one node. See the [module docs](self).
#[derive(Clone)]
pub struct StateMachine {
    shared: Arc<Shared>,
}

pub(super) fn sm_err(e: &(impl std::error::Error + 'static)) -> StorageError {
    StorageIOError::write_state_machine(AnyError::new(e)).into()
}

pub(super) fn snap_err(e: &(impl std::error::Error + 'static)) -> StorageError {
    StorageIOError::write_snapshot(None, AnyError::new(e)).into()
}

fn generation_dir(dir: &Path, generation: u64) -> PathBuf {
    dir.join("data").join(format!("gen-{generation}"))
}

fn open_generation(
    dir: &Path,
    generation: u64,
    machine: Option<&Arc<dyn Machine>>,
) -> Result<Current, slsm::Error> {
    let options = machine.map_or_else(Options::default, |m| m.options());
    let db = Db::open(generation_dir(dir, generation), options)?;
    let meta = db.keyspace(META_KEYSPACE)?;
    Ok(Current {
        db: Arc::new(db),
        meta,
        generation,
    })
}

impl StateMachine {
    /// Opens (or creates) the state machine in the directory `dir`, and
    /// removes what an interrupted install or build left behind.
    pub fn open(dir: &Path) -> Result<StateMachine, StorageError> {
        Self::open_with(dir, None)
    }

    /// [`open`](Self::open) with `machine` applying the application's
    /// commands (it is attached to the database before this returns).
    pub fn open_with(
        dir: &Path,
        machine: Option<Arc<dyn Machine>>,
    ) -> Result<StateMachine, StorageError> {
        let data = dir.join("data");
        fs::create_dir_all(&data).map_err(|e| sm_err(&e))?;
        fs::create_dir_all(dir.join("snapshots")).map_err(|e| sm_err(&e))?;
        let generation = match fs::read_to_string(data.join("CURRENT")) {
            Ok(s) => s.trim().parse().map_err(|e| sm_err(&e))?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                write_current(&data, 0).map_err(|e| sm_err(&e))?;
                0
            }
            Err(e) => return Err(sm_err(&e)),
        };
        remove_leftovers(dir, generation);
        let current = open_generation(dir, generation, machine.as_ref()).map_err(|e| sm_err(&e))?;
        let clock = read_clock(&current)?;
        if let Some(m) = &machine {
            m.attach(&current.db, clock).map_err(|e| sm_err(&e))?;
        }
        Ok(StateMachine {
            shared: Arc::new(Shared {
                dir: dir.to_path_buf(),
                current: RwLock::new(Arc::new(current)),
                snapshots: Mutex::new(()),
                receiving: Mutex::new(Vec::new()),
                counter: AtomicU64::new(0),
                machine,
                clock: AtomicU64::new(clock),
            }),
        })
    }

    /// The replicated clock as of the last applied entry (see
    /// `Stamp::clock`).
    pub fn clock(&self) -> u64 {
        self.shared.clock.load(Ordering::Acquire)
    }

    fn current(&self) -> Arc<Current> {
        match self.shared.current.read() {
            Ok(c) => Arc::clone(&c),
            Err(poisoned) => Arc::clone(&poisoned.into_inner()),
        }
    }

    /// The value of `key` on this node's state machine (no consensus: the
    /// caller makes the read linearizable first if it must be).
    pub fn get(&self, key: &[u8]) -> slsm::Result<Option<Vec<u8>>> {
        Ok(self.current().db.get(key)?.map(|v| v.to_vec()))
    }

    /// The database the replicated keys live in now (a snapshot install
    /// replaces it).
    pub fn db(&self) -> Arc<Db> {
        Arc::clone(&self.current().db)
    }

    fn read_applied(cur: &Current) -> Result<(Option<LogId>, StoredMembership), StorageError> {
        let read = |k: &[u8]| cur.meta.get(k).map_err(|e| sm_err(&e));
        let applied = match read(APPLIED)? {
            Some(v) => bincode::deserialize(&v).map_err(|e| sm_err(&*e))?,
            None => None,
        };
        let membership = match read(MEMBERSHIP)? {
            Some(v) => bincode::deserialize(&v).map_err(|e| sm_err(&*e))?,
            None => StoredMembership::default(),
        };
        Ok((applied, membership))
    }

    fn snapshot_path(&self) -> PathBuf {
        self.shared.dir.join("snapshots").join("current.snap")
    }

    /// Builds a snapshot of the state now (blocking).
    fn build_blocking(&self) -> Result<SnapshotMeta, StorageError> {
        let _one = self
            .shared
            .snapshots
            .lock()
            .map_err(|_| sm_err(&io::Error::other("poisoned")))?;
        let n = self.shared.counter.fetch_add(1, Ordering::Relaxed);
        let tmp = self.shared.dir.join("snapshots").join(format!("build-{n}"));
        let _ = fs::remove_dir_all(&tmp);
        let cur = self.current();
        cur.db.checkpoint(&tmp).map_err(|e| snap_err(&e))?;
        // The applied id and membership as of the checkpoint itself.
        let (last_log_id, last_membership) = {
            let copy = open_read_only(&tmp).map_err(|e| snap_err(&e))?;
            Self::read_applied(&copy)?
        };
        let snapshot_id = match last_log_id {
            Some(id) => format!("{}-{}-{n}", id.leader_id.term, id.index),
            None => format!("0-0-{n}"),
        };
        let meta = SnapshotMeta {
            last_log_id,
            last_membership,
            snapshot_id,
        };
        let packed = snapshot::pack(&tmp, &meta, &self.snapshot_path());
        let _ = fs::remove_dir_all(&tmp);
        packed.map_err(|e| snap_err(&e))?;
        Ok(meta)
    }

    /// Installs the snapshot file `file` (blocking): unpacked into a new
    /// generation, synced, switched to by renaming `CURRENT`.
    fn install_blocking(&self, file: &Path) -> Result<(), StorageError> {
        let _one = self
            .shared
            .snapshots
            .lock()
            .map_err(|_| sm_err(&io::Error::other("poisoned")))?;
        let data = self.shared.dir.join("data");
        let old = self.current();
        let generation = old.generation + 1;
        let staging = data.join(format!("gen-{generation}.tmp"));
        let _ = fs::remove_dir_all(&staging);
        snapshot::unpack(file, &staging).map_err(|e| snap_err(&e))?;
        let target = generation_dir(&self.shared.dir, generation);
        let _ = fs::remove_dir_all(&target);
        fs::rename(&staging, &target).map_err(|e| snap_err(&e))?;
        snapshot::sync_dir(&data).map_err(|e| snap_err(&e))?;
        write_current(&data, generation).map_err(|e| snap_err(&e))?;
        let next = open_generation(&self.shared.dir, generation, self.shared.machine.as_ref())
            .map_err(|e| snap_err(&e))?;
        let clock = read_clock(&next)?;
        if let Some(m) = &self.shared.machine {
            m.attach(&next.db, clock).map_err(|e| snap_err(&e))?;
        }
        self.shared.clock.store(clock, Ordering::Release);
        {
            let mut slot = self
                .shared
                .current
                .write()
                .map_err(|_| sm_err(&io::Error::other("poisoned")))?;
            *slot = Arc::new(next);
        }
        // The installed file becomes the current snapshot.
        fs::rename(file, self.snapshot_path()).map_err(|e| snap_err(&e))?;
        // The old generation goes once nobody reads it (else at next open).
        if let Some(old) = Arc::into_inner(old) {
            drop(old);
            let _ = fs::remove_dir_all(generation_dir(&self.shared.dir, generation - 1));
        }
        Ok(())
    }

    fn apply_blocking(&self, entries: Vec<Entry>) -> Result<Vec<Response>, StorageError> {
        let cur = self.current();
        let mut run = Applying::new(self.clock());
        let mut responses = Vec::with_capacity(entries.len());
        for entry in entries {
            if let EntryPayload::Normal(cmd) = &entry.payload {
                if let Some(commands) = cmd.batched() {
                    let machine = self.shared.machine.as_deref();
                    responses.push(run.apply_batch(&cur, machine, entry.log_id, commands)?);
                    continue;
                }
                if let (Some(bytes), Some(machine)) = (cmd.app_bytes(), &self.shared.machine) {
                    // Earlier entries' batch first: the machine's commit
                    // carries this entry's stamp.
                    run.commit(&cur)?;
                    run.last = Some(entry.log_id);
                    run.clock = run.clock.max(cmd.at_millis);
                    responses.push(run.apply_app(&cur, machine.as_ref(), bytes)?);
                    continue;
                }
            }
            run.last = Some(entry.log_id);
            run.dirty = true;
            responses.push(match entry.payload {
                EntryPayload::Blank => Response::default(),
                EntryPayload::Normal(cmd) => {
                    run.clock = run.clock.max(cmd.at_millis);
                    apply_command(&cur.db, &mut run.batch, &mut run.pending, &cmd)?
                }
                EntryPayload::Membership(m) => {
                    run.membership = Some(StoredMembership::new(Some(entry.log_id), m));
                    Response::default()
                }
            });
        }
        run.commit(&cur)?;
        self.shared.clock.store(run.clock, Ordering::Release);
        Ok(responses)
    }
}

/// The replicated clock stored with the state (0 before any entry).
fn read_clock(cur: &Current) -> Result<u64, StorageError> {
    Ok(match cur.meta.get(CLOCK).map_err(|e| sm_err(&e))? {
        Some(v) if v.len() == 8 => u64::from_be_bytes(v[..8].try_into().unwrap_or([0; 8])),
        _ => 0,
    })
}

fn open_read_only(dir: &Path) -> Result<Current, slsm::Error> {
    let db = Db::open_read_only(dir, Options::default())?;
    let meta = db.keyspace(META_KEYSPACE)?;
    Ok(Current {
        db: Arc::new(db),
        meta,
        generation: 0,
    })
}

/// Renames a new `CURRENT` naming `generation` into place, synced.
fn write_current(data: &Path, generation: u64) -> io::Result<()> {
    let tmp = data.join("CURRENT.tmp");
    fs::write(&tmp, format!("{generation}\n"))?;
    fs::File::open(&tmp)?.sync_all()?;
    fs::rename(&tmp, data.join("CURRENT"))?;
    snapshot::sync_dir(data)
}

/// Removes generations other than `keep`, staging directories and
/// unfinished snapshot files.
fn remove_leftovers(dir: &Path, keep: u64) {
    let keep_name = format!("gen-{keep}");
    if let Ok(entries) = fs::read_dir(dir.join("data")) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("gen-") && name != keep_name {
                let _ = fs::remove_dir_all(e.path());
            }
        }
    }
    if let Ok(entries) = fs::read_dir(dir.join("snapshots")) {
        for e in entries.flatten() {
            if e.file_name() != "current.snap" {
                let path = e.path();
                let _ = fs::remove_dir_all(&path).or_else(|_| fs::remove_file(&path));
            }
        }
    }
}
