//! [`LogStore`]: openraft's log on an slsm database of its own.
//!
//! Entries are keyed `e` + the index as 8 big-endian bytes (so the log's
//! order is the keys' order, and truncating or purging is one range
//! delete); the vote, the committed id and the last purged id are kept
//! under `m/`.
//!
//! Why a database of its own, not a keyspace beside the state machine's
//! data: every append and vote must be synced before it is acknowledged,
//! while the state machine's writes need not be (it is rebuilt from the log
//! and its snapshots), and a shared write-ahead log would sync both; the
//! log is written at its tail and dropped at its head, which its own small
//! tree does without touching the data's merges.
//!
//! * **Owns**: the log's database.
//! * **Durability**: [`append`](RaftLogStorage::append) makes the entries
//!   readable at once and reports them flushed from the syncer thread
//!   once a sync of the log covers them (appends queued meanwhile share
//!   one sync); the vote, truncations and purges are synced before they
//!   return.
//! * **Thread safety**: clones share the database; openraft calls the
//!   store from its own tasks.

use std::ops::{Bound, RangeBounds};
use std::path::Path;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use openraft::storage::{LogFlushed, LogState, RaftLogStorage};
use openraft::{AnyError, RaftLogReader, StorageIOError};
use slsm::{Db, Options, WriteBatch, WriteOptions};

use crate::types::{Entry, LogId, StorageError, TypeConfig, Vote};

const VOTE: &[u8] = b"m/vote";
const COMMITTED: &[u8] = b"m/committed";
const PURGED: &[u8] = b"m/purged";

/// The key of the entry at `index`.
fn entry_key(index: u64) -> [u8; 9] {
    let mut k = [0u8; 9];
    k[0] = b'e';
    k[1..].copy_from_slice(&index.to_be_bytes());
    k
}

/// Past every entry key.
const ENTRIES_END: &[u8] = b"f";

/// The log of one node. See the [module docs](self).
#[derive(Clone)]
pub struct LogStore {
    db: Arc<Db>,
    syncer: Arc<Syncer>,
}

impl LogStore {
    /// Opens (or creates) the log in the directory `dir`.
    pub fn open(dir: &Path) -> Result<LogStore, StorageError> {
        // Entries are read back soon after they are written (replication)
        // or never (purged behind a snapshot): runs big enough that a
        // pipelined load flushes rarely (16 MiB in 4 runs gave 512 KiB
        // runs, a flush every few batch entries and merges behind them),
        // nothing compressed (the bytes are the state machine's to keep),
        // a small filter (lookups are by order, not by key), little cache.
        let opts = Options {
            memory_budget: 64 << 20,
            memory_runs: 4,
            block_cache_size: Some(8 << 20),
            compression: slsm::Compression::none(),
            bloom_fp_rate: 0.1,
            ..Options::default()
        };
        let db = Arc::new(Db::open(dir, opts).map_err(|e| read_err(&e))?);
        let syncer = Arc::new(Syncer::start(Arc::clone(&db)).map_err(|e| write_err(&e))?);
        Ok(LogStore { db, syncer })
    }

    fn get_meta<T: serde::de::DeserializeOwned>(
        &self,
        key: &[u8],
    ) -> Result<Option<T>, StorageError> {
        match self.db.get(key).map_err(|e| read_err(&e))? {
            None => Ok(None),
            Some(v) => bincode::deserialize(&v)
                .map(Some)
                .map_err(|e| read_err(&*e)),
        }
    }

    fn put_meta_synced<T: serde::Serialize>(
        &self,
        key: &[u8],
        value: &T,
    ) -> Result<(), StorageError> {
        let bytes = bincode::serialize(value).map_err(|e| write_err(&*e))?;
        self.db
            .put_opt(
                key,
                bytes,
                &WriteOptions {
                    sync: true,
                    ..WriteOptions::default()
                },
            )
            .map_err(|e| write_err(&e))
    }

    fn write_synced(&self, batch: WriteBatch) -> Result<(), StorageError> {
        self.db
            .write_opt(
                batch,
                &WriteOptions {
                    sync: true,
                    ..WriteOptions::default()
                },
            )
            .map_err(|e| write_err(&e))
    }

    /// The entries with indexes in `range`, in order.
    fn entries(&self, range: impl RangeBounds<u64>) -> Result<Vec<Entry>, StorageError> {
        let start = match range.start_bound() {
            Bound::Included(&i) => i,
            Bound::Excluded(&i) => i.saturating_add(1),
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&i) => i.checked_add(1),
            Bound::Excluded(&i) => Some(i),
            Bound::Unbounded => None,
        };
        if end.is_some_and(|e| e <= start) {
            return Ok(Vec::new());
        }
        let end_key = end.map_or(ENTRIES_END.to_vec(), |e| entry_key(e).to_vec());
        let mut out = Vec::new();
        for item in self.db.range(entry_key(start).to_vec()..end_key) {
            let (_, v) = item.map_err(|e| read_err(&e))?;
            out.push(bincode::deserialize(&v).map_err(|e| read_err(&*e))?);
        }
        Ok(out)
    }

    /// The id of the last entry in the log, if any.
    fn last_entry_id(&self) -> Result<Option<LogId>, StorageError> {
        let last = self
            .db
            .range(entry_key(0).to_vec()..ENTRIES_END.to_vec())
            .next_back();
        match last {
            None => Ok(None),
            Some(item) => {
                let (_, v) = item.map_err(|e| read_err(&e))?;
                let entry: Entry = bincode::deserialize(&v).map_err(|e| read_err(&*e))?;
                Ok(Some(entry.log_id))
            }
        }
    }
}

fn read_err(e: &(impl std::error::Error + 'static)) -> StorageError {
    StorageIOError::read_logs(AnyError::new(e)).into()
}

fn write_err(e: &(impl std::error::Error + 'static)) -> StorageError {
    StorageIOError::write_logs(AnyError::new(e)).into()
}

impl RaftLogReader<TypeConfig> for LogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + std::fmt::Debug + Send>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry>, StorageError> {
        self.entries(range)
    }
}

impl RaftLogStorage<TypeConfig> for LogStore {
    type LogReader = LogStore;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, StorageError> {
        let last_purged_log_id: Option<LogId> = self.get_meta(PURGED)?;
        let last_log_id = self.last_entry_id()?.or(last_purged_log_id);
        Ok(LogState {
            last_purged_log_id,
            last_log_id,
        })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &Vote) -> Result<(), StorageError> {
        self.put_meta_synced(VOTE, vote)
    }

    async fn read_vote(&mut self) -> Result<Option<Vote>, StorageError> {
        self.get_meta(VOTE)
    }

    async fn save_committed(&mut self, committed: Option<LogId>) -> Result<(), StorageError> {
        // Not synced: a committed id lost in a crash only means entries are
        // applied again from the log once they are committed again.
        let bytes = bincode::serialize(&committed).map_err(|e| write_err(&*e))?;
        self.db.put(COMMITTED, bytes).map_err(|e| write_err(&e))
    }

    async fn read_committed(&mut self) -> Result<Option<LogId>, StorageError> {
        Ok(self.get_meta::<Option<LogId>>(COMMITTED)?.flatten())
    }

    async fn append<I>(
        &mut self,
        entries: I,
        callback: LogFlushed<TypeConfig>,
    ) -> Result<(), StorageError>
    where
        I: IntoIterator<Item = Entry> + Send,
        I::IntoIter: Send,
    {
        let mut batch = WriteBatch::new();
        for entry in entries {
            let bytes = bincode::serialize(&entry).map_err(|e| write_err(&*e))?;
            batch.put(entry_key(entry.log_id.index), bytes);
        }
        if batch.is_empty() {
            // Nothing to make durable (a heartbeat's empty append).
            callback.log_io_completed(Ok(()));
            return Ok(());
        }
        // Readable now; flushed once the syncer's next sync covers it.
        self.db.write(batch).map_err(|e| write_err(&e))?;
        self.syncer.after_next_sync(callback);
        Ok(())
    }

    async fn truncate(&mut self, log_id: LogId) -> Result<(), StorageError> {
        let mut batch = WriteBatch::new();
        batch.delete_range(entry_key(log_id.index), ENTRIES_END);
        self.write_synced(batch)
    }

    async fn purge(&mut self, log_id: LogId) -> Result<(), StorageError> {
        // The purged id first: a crash between the two leaves entries that
        // are known purged, never a log that forgot where it starts.
        self.put_meta_synced(PURGED, &log_id)?;
        let mut batch = WriteBatch::new();
        batch.delete_range(entry_key(0), entry_key(log_id.index.saturating_add(1)));
        self.write_synced(batch)
    }
}

/// Syncs the log for appends: each sync covers every append written before
/// it, so appends queued while one runs share the next (group sync).
/// A thread, not a task: a sync blocks.
struct Syncer {
    queue: Mutex<Option<mpsc::Sender<LogFlushed<TypeConfig>>>>,
    thread: Option<JoinHandle<()>>,
}

impl Syncer {
    fn start(db: Arc<Db>) -> std::io::Result<Syncer> {
        let (tx, rx) = mpsc::channel::<LogFlushed<TypeConfig>>();
        let thread = std::thread::Builder::new()
            .name("slsm-raft-sync".into())
            .spawn(move || {
                while let Ok(first) = rx.recv() {
                    let mut waiting = vec![first];
                    waiting.extend(rx.try_iter());
                    let synced = db.sync().map_err(std::io::Error::other);
                    for callback in waiting {
                        let result = match &synced {
                            Ok(()) => Ok(()),
                            Err(e) => Err(std::io::Error::new(e.kind(), e.to_string())),
                        };
                        callback.log_io_completed(result);
                    }
                }
            })?;
        Ok(Syncer {
            queue: Mutex::new(Some(tx)),
            thread: Some(thread),
        })
    }

    fn after_next_sync(&self, callback: LogFlushed<TypeConfig>) {
        if let Ok(queue) = self.queue.lock() {
            if let Some(tx) = queue.as_ref() {
                if let Err(mpsc::SendError(callback)) = tx.send(callback) {
                    callback.log_io_completed(Err(std::io::Error::other("the log is closed")));
                }
            }
        }
    }
}

impl Drop for Syncer {
    fn drop(&mut self) {
        if let Ok(mut queue) = self.queue.lock() {
            queue.take();
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
