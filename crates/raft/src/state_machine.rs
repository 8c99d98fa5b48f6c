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

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use openraft::storage::{RaftStateMachine, Snapshot};
use openraft::{AnyError, EntryPayload, RaftSnapshotBuilder, StorageIOError};
use slsm::{Db, Keyspace, Options, WriteBatch};
use tokio::io::AsyncSeekExt;

use crate::snapshot;
use crate::types::{
    Command, Entry, LogId, Op, OpResult, Response, SnapshotMeta, StorageError, StoredMembership,
    TypeConfig,
};

const APPLIED: &[u8] = b"applied";
const MEMBERSHIP: &[u8] = b"membership";
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
}

/// The state machine of one node. See the [module docs](self).
#[derive(Clone)]
pub struct StateMachine {
    shared: Arc<Shared>,
}

fn sm_err(e: &(impl std::error::Error + 'static)) -> StorageError {
    StorageIOError::write_state_machine(AnyError::new(e)).into()
}

fn snap_err(e: &(impl std::error::Error + 'static)) -> StorageError {
    StorageIOError::write_snapshot(None, AnyError::new(e)).into()
}

fn generation_dir(dir: &Path, generation: u64) -> PathBuf {
    dir.join("data").join(format!("gen-{generation}"))
}

fn open_generation(dir: &Path, generation: u64) -> Result<Current, slsm::Error> {
    let db = Db::open(generation_dir(dir, generation), Options::default())?;
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
        let current = open_generation(dir, generation).map_err(|e| sm_err(&e))?;
        Ok(StateMachine {
            shared: Arc::new(Shared {
                dir: dir.to_path_buf(),
                current: RwLock::new(Arc::new(current)),
                snapshots: Mutex::new(()),
                receiving: Mutex::new(Vec::new()),
                counter: AtomicU64::new(0),
            }),
        })
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
        let next = open_generation(&self.shared.dir, generation).map_err(|e| snap_err(&e))?;
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
        let mut batch = WriteBatch::new();
        let mut pending: HashMap<Vec<u8>, Option<Vec<u8>>> = HashMap::new();
        let mut responses = Vec::with_capacity(entries.len());
        let mut last = None;
        let mut membership = None;
        for entry in entries {
            last = Some(entry.log_id);
            match entry.payload {
                EntryPayload::Blank => responses.push(Response::default()),
                EntryPayload::Normal(cmd) => {
                    responses.push(apply_command(&cur.db, &mut batch, &mut pending, &cmd)?)
                }
                EntryPayload::Membership(m) => {
                    membership = Some(StoredMembership::new(Some(entry.log_id), m));
                    responses.push(Response::default());
                }
            }
        }
        let Some(last) = last else {
            return Ok(responses);
        };
        let applied = bincode::serialize(&Some(last)).map_err(|e| sm_err(&*e))?;
        batch.put_in(&cur.meta, APPLIED, applied);
        if let Some(m) = membership {
            let m = bincode::serialize(&m).map_err(|e| sm_err(&*e))?;
            batch.put_in(&cur.meta, MEMBERSHIP, m);
        }
        cur.db.write(batch).map_err(|e| sm_err(&e))?;
        Ok(responses)
    }
}

/// Applies one command's ops to `batch`; `pending` holds what earlier ops
/// of the same `apply` call wrote (the batch is not readable yet).
fn apply_command(
    db: &Db,
    batch: &mut WriteBatch,
    pending: &mut HashMap<Vec<u8>, Option<Vec<u8>>>,
    cmd: &Command,
) -> Result<Response, StorageError> {
    let mut results = Vec::with_capacity(cmd.ops.len());
    for op in &cmd.ops {
        results.push(match op {
            Op::Put { key, value } => {
                batch.put(key, value);
                pending.insert(key.clone(), Some(value.clone()));
                OpResult::Done
            }
            Op::Delete { key } => {
                batch.delete(key);
                pending.insert(key.clone(), None);
                OpResult::Done
            }
            Op::Incr { key, by } => {
                let now = match pending.get(key) {
                    Some(v) => v.clone(),
                    None => db.get(key).map_err(|e| sm_err(&e))?.map(|v| v.to_vec()),
                };
                match incremented(now.as_deref(), *by) {
                    Ok(n) => {
                        let v = n.to_string().into_bytes();
                        batch.put(key, &v);
                        pending.insert(key.clone(), Some(v));
                        OpResult::Value(n)
                    }
                    Err(why) => OpResult::Error(why.into()),
                }
            }
        });
    }
    Ok(Response { results })
}

/// `value` (a decimal integer, absent: 0) plus `by`.
fn incremented(value: Option<&[u8]>, by: i64) -> Result<i64, &'static str> {
    let now: i64 = match value {
        None => 0,
        Some(v) => std::str::from_utf8(v)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or("value is not an integer or out of range")?,
    };
    now.checked_add(by)
        .ok_or("increment or decrement would overflow")
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

/// Runs blocking storage work off openraft's async threads.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, StorageError> + Send + 'static,
) -> Result<T, StorageError> {
    match tokio::task::spawn_blocking(f).await {
        Ok(r) => r,
        Err(e) => Err(sm_err(&e)),
    }
}

impl RaftSnapshotBuilder<TypeConfig> for StateMachine {
    async fn build_snapshot(&mut self) -> Result<Snapshot<TypeConfig>, StorageError> {
        let sm = self.clone();
        let meta = blocking(move || sm.build_blocking()).await?;
        let file = tokio::fs::File::open(self.snapshot_path())
            .await
            .map_err(|e| snap_err(&e))?;
        Ok(Snapshot {
            meta,
            snapshot: Box::new(file),
        })
    }
}

impl RaftStateMachine<TypeConfig> for StateMachine {
    type SnapshotBuilder = StateMachine;

    async fn applied_state(&mut self) -> Result<(Option<LogId>, StoredMembership), StorageError> {
        let sm = self.clone();
        blocking(move || Self::read_applied(&sm.current())).await
    }

    async fn apply<I>(&mut self, entries: I) -> Result<Vec<Response>, StorageError>
    where
        I: IntoIterator<Item = Entry> + Send,
        I::IntoIter: Send,
    {
        let entries: Vec<Entry> = entries.into_iter().collect();
        let sm = self.clone();
        blocking(move || sm.apply_blocking(entries)).await
    }

    async fn get_snapshot_builder(&mut self) -> Self::SnapshotBuilder {
        self.clone()
    }

    async fn begin_receiving_snapshot(&mut self) -> Result<Box<tokio::fs::File>, StorageError> {
        let n = self.shared.counter.fetch_add(1, Ordering::Relaxed);
        let path = self
            .shared
            .dir
            .join("snapshots")
            .join(format!("incoming-{n}.snap"));
        let file = tokio::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .await
            .map_err(|e| snap_err(&e))?;
        if let Ok(mut receiving) = self.shared.receiving.lock() {
            receiving.push(path);
        }
        Ok(Box::new(file))
    }

    async fn install_snapshot(
        &mut self,
        _meta: &SnapshotMeta,
        mut snapshot: Box<tokio::fs::File>,
    ) -> Result<(), StorageError> {
        // Copied to a file of ours whatever handle it came in (a file
        // being received, or another store's snapshot), then installed.
        let n = self.shared.counter.fetch_add(1, Ordering::Relaxed);
        let path = self
            .shared
            .dir
            .join("snapshots")
            .join(format!("install-{n}.snap"));
        snapshot
            .seek(io::SeekFrom::Start(0))
            .await
            .map_err(|e| snap_err(&e))?;
        let mut out = tokio::fs::File::create(&path)
            .await
            .map_err(|e| snap_err(&e))?;
        tokio::io::copy(&mut *snapshot, &mut out)
            .await
            .map_err(|e| snap_err(&e))?;
        out.sync_all().await.map_err(|e| snap_err(&e))?;
        drop(out);
        let sm = self.clone();
        blocking(move || sm.install_blocking(&path)).await?;
        let received = match self.shared.receiving.lock() {
            Ok(mut r) => std::mem::take(&mut *r),
            Err(_) => Vec::new(),
        };
        for path in received {
            let _ = tokio::fs::remove_file(path).await;
        }
        Ok(())
    }

    async fn get_current_snapshot(&mut self) -> Result<Option<Snapshot<TypeConfig>>, StorageError> {
        let path = self.snapshot_path();
        let meta = {
            let path = path.clone();
            blocking(move || match snapshot::read_meta(&path) {
                Ok(m) => Ok(Some(m)),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(snap_err(&e)),
            })
            .await?
        };
        let Some(meta) = meta else {
            return Ok(None);
        };
        let file = tokio::fs::File::open(path)
            .await
            .map_err(|e| snap_err(&e))?;
        Ok(Some(Snapshot {
            meta,
            snapshot: Box::new(file),
        }))
    }
}
