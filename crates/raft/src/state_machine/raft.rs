//! openraft's state-machine traits over [`StateMachine`]: each call runs
//! its blocking storage work on tokio's blocking pool.

use std::io;
use std::sync::atomic::Ordering;

use openraft::storage::{RaftStateMachine, Snapshot};
use openraft::RaftSnapshotBuilder;
use tokio::io::AsyncSeekExt;

use super::{sm_err, snap_err, StateMachine};
use crate::snapshot;
use crate::types::{
    Entry, LogId, Response, SnapshotMeta, StorageError, StoredMembership, TypeConfig,
};

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
