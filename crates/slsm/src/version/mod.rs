//! The version set: the current [`Version`] (every memory run and every run
//! file of every level), the manifest that makes the disk part of it
//! durable, and the counters recorded with it (file numbers, the flushed
//! sequence number). LevelDB's `VersionSet::LogAndApply` plays this part
//! there.
//!
//! * **Owns**: the current version, the manifest file, the file-number
//!   counter, the flushed sequence number, the database's identity, the
//!   keyspace catalog.
//! * **One door**: [`VersionSet::apply`]. Sealing a memory run, a flush, a
//!   level merge, a compaction and recovery all change the set of runs by
//!   building a [`VersionEdit`] and applying it; nothing else stores a
//!   version or writes the manifest.
//! * **Calls**: the manifest codec and the file system only.
//! * **Thread safety**: `apply` is serialised by one lock; readers load the
//!   current version without locking ([`VersionSet::current`]) and keep it
//!   as long as they like.
//! * **Durability**: when an edit changes the levels or the flushed
//!   sequence, `apply` returns only after the manifest records it durably
//!   (`manifest::ManifestLog`: an edit appended and synced, or a new file
//!   written whole and renamed into place); run files an edit adds must be
//!   durable before it is applied. If the manifest cannot be
//!   written, the current version is unchanged and the error returned.

mod edit;
mod runs;

pub(crate) use edit::VersionEdit;
pub(crate) use runs::{DiskRun, Source, Version};

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arc_swap::{ArcSwap, Guard};
use parking_lot::Mutex;

use crate::error::Result;
use crate::keyspace::catalog::Catalog;
use crate::manifest::log::Written;
use crate::manifest::{DbId, Manifest, ManifestLog};

/// The versions of one database. See the [module docs](self).
pub(crate) struct VersionSet {
    db_id: DbId,
    current: ArcSwap<Version>,
    /// Every write with a sequence number `<=` this is in run files;
    /// guarded with `apply` itself.
    flushed_sequence: Mutex<u64>,
    next_file: AtomicU64,
    /// The keyspaces; changed through `apply` like the runs.
    catalog: ArcSwap<Catalog>,
    /// The manifest file; locked only inside `apply` and `persist`, under
    /// `flushed_sequence`.
    manifest: Mutex<ManifestLog>,
    manifest_writes: ManifestWrites,
}

/// What the manifest's writer has written since open.
#[derive(Default)]
struct ManifestWrites {
    bytes: AtomicU64,
    edits: AtomicU64,
    files: AtomicU64,
}

impl VersionSet {
    /// The version set of a database whose manifest said `manifest` and
    /// whose runs are `initial` (recovery builds it).
    pub fn new(
        manifest_log: ManifestLog,
        manifest: &Manifest,
        initial: Version,
        next_file: u64,
    ) -> VersionSet {
        VersionSet {
            manifest: Mutex::new(manifest_log),
            db_id: manifest.db_id,
            current: ArcSwap::from_pointee(initial),
            flushed_sequence: Mutex::new(manifest.last_sequence),
            next_file: AtomicU64::new(next_file.max(manifest.next_file_number)),
            catalog: ArcSwap::from_pointee(manifest.catalog.clone()),
            manifest_writes: ManifestWrites::default(),
        }
    }

    /// Bytes written to the manifest since open, edits appended and files
    /// written whole.
    pub fn manifest_writes(&self) -> (u64, u64, u64) {
        let w = &self.manifest_writes;
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        (get(&w.bytes), get(&w.edits), get(&w.files))
    }

    /// The current version, for a short look (no reference count taken).
    pub fn current(&self) -> Guard<Arc<Version>> {
        self.current.load()
    }

    /// The current version, to keep.
    pub fn current_arc(&self) -> Arc<Version> {
        self.current.load_full()
    }

    /// A new file number (for a run file or a log).
    pub fn new_file_number(&self) -> u64 {
        self.next_file.fetch_add(1, Ordering::Relaxed)
    }

    /// The keyspaces as of now.
    pub fn catalog(&self) -> Arc<Catalog> {
        self.catalog.load_full()
    }

    /// The database's identity (recorded in every run file).
    pub fn db_id(&self) -> DbId {
        self.db_id
    }

    /// Applies `edit`: builds the next version, makes it durable in the
    /// manifest if it changes the disk, and publishes it. Files the edit
    /// removes are deleted once the last reader holding them lets go.
    ///
    /// On an error nothing is published, and the manifest of the current
    /// version is written again: a failed store may have renamed the new
    /// manifest into place before it failed (a directory sync), and the
    /// caller, told the change failed, may go on writing as if it never
    /// happened (a bulk load, a keyspace drop), which the next open must
    /// agree with. If that write fails too, the next successful one
    /// settles it.
    pub fn apply(&self, edit: VersionEdit) -> Result<Arc<Version>> {
        let mut flushed = self.flushed_sequence.lock();
        let next = Arc::new(edit.applied_to(&self.current.load()));
        if edit.changes_disk() {
            let last_sequence = (*flushed).max(edit.flushed_sequence.unwrap_or(0));
            let catalog = edit
                .catalog
                .clone()
                .unwrap_or_else(|| (**self.catalog.load()).clone());
            if let Err(e) = self.store_manifest(&next, last_sequence, catalog.clone()) {
                let current = (**self.catalog.load()).clone();
                let _ = self.store_manifest(&self.current.load(), *flushed, current);
                return Err(e);
            }
            *flushed = last_sequence;
            if edit.catalog.is_some() {
                self.catalog.store(Arc::new(catalog));
            }
        }
        self.current.store(Arc::clone(&next));
        for run in &edit.removed {
            run.file.mark_obsolete();
        }
        Ok(next)
    }

    /// Writes the manifest of the current version again (recovery does, once
    /// it has replayed the logs and started a new one).
    pub fn persist(&self, last_sequence: u64) -> Result<()> {
        let mut flushed = self.flushed_sequence.lock();
        let last_sequence = (*flushed).max(last_sequence);
        let catalog = (**self.catalog.load()).clone();
        self.store_manifest(&self.current.load(), last_sequence, catalog)?;
        *flushed = last_sequence;
        Ok(())
    }

    /// A consistent copy of the disk state: the current version, the
    /// manifest describing its run files (every write up to its
    /// `last_sequence` is in them; no log is needed).
    pub fn disk_state(&self) -> (Arc<Version>, Manifest) {
        let flushed = self.flushed_sequence.lock();
        let version = self.current.load_full();
        let next_file = self.next_file.load(Ordering::Relaxed);
        let manifest = Manifest {
            db_id: self.db_id,
            next_file_number: next_file,
            last_sequence: *flushed,
            min_wal_number: next_file,
            levels: version.manifest_levels(),
            catalog: (**self.catalog.load()).clone(),
            ..Manifest::new()
        };
        (version, manifest)
    }

    /// The manifest describing `version`.
    fn store_manifest(
        &self,
        version: &Version,
        last_sequence: u64,
        catalog: Catalog,
    ) -> Result<()> {
        let next_file = self.next_file.load(Ordering::Relaxed);
        let manifest = Manifest {
            db_id: self.db_id,
            next_file_number: next_file,
            last_sequence,
            min_wal_number: version.oldest_log_needed().unwrap_or(next_file),
            levels: version.manifest_levels(),
            catalog,
            ..Manifest::new()
        };
        let written = self.manifest.lock().record(&manifest)?;
        let w = &self.manifest_writes;
        match written {
            Written::Nothing => {}
            Written::Edit(bytes) => {
                w.bytes.fetch_add(bytes, Ordering::Relaxed);
                w.edits.fetch_add(1, Ordering::Relaxed);
            }
            Written::File(bytes) => {
                w.bytes.fetch_add(bytes, Ordering::Relaxed);
                w.files.fetch_add(1, Ordering::Relaxed);
            }
        }
        Ok(())
    }
}
