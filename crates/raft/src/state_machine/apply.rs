//! Applying a command's ops to the state machine's write batch, the same
//! way on every node, and one `apply` call's batch and bookkeeping
//! ([`Applying`]).

use std::collections::HashMap;

use slsm::{Db, WriteBatch};

use super::{sm_err, Current, APPLIED, CLOCK, MEMBERSHIP, PARTIAL};
use crate::machine::{Machine, Stamp};
use crate::types::{Command, LogId, Op, OpResult, Response, StorageError, StoredMembership};

/// What a command of a batch applied before a restart answers: nobody
/// waits for it any more (its proposer's call ended with the restart).
const APPLIED_BEFORE: &str = "applied before the node restarted";

/// Applies one command's ops to `batch`; `pending` holds what earlier ops
/// of the same `apply` call wrote (the batch is not readable yet).
pub(super) fn apply_command(
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
            // Only alone in its command, and only with a machine
            // (`StateMachine::apply_blocking` takes those).
            Op::App(_) => OpResult::Error("no application applies this command here".into()),
            // Only alone in its entry's command (`Applying::apply_batch`).
            Op::Batch(_) => OpResult::Error("a batch inside a command".into()),
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

/// One `apply` call's progress: the built-in ops' batch, and the
/// bookkeeping not yet committed.
pub(super) struct Applying {
    pub(super) batch: WriteBatch,
    pub(super) pending: HashMap<Vec<u8>, Option<Vec<u8>>>,
    pub(super) last: Option<LogId>,
    pub(super) membership: Option<StoredMembership>,
    pub(super) clock: u64,
    /// The entry being applied, and how many of its batch's commands are
    /// applied, while a batch is applied part by part.
    pub(super) partial: Option<(u64, u64)>,
    /// Entries since the last commit.
    pub(super) dirty: bool,
}

impl Applying {
    pub(super) fn new(clock: u64) -> Applying {
        Applying {
            batch: WriteBatch::new(),
            pending: HashMap::new(),
            last: None,
            membership: None,
            clock,
            partial: None,
            dirty: false,
        }
    }

    /// The rows that record `last` (and a new membership) as applied.
    /// Before the first entry of an `apply` call, `last` is unknown here
    /// and the stored id stays. A batch's progress is stored only while
    /// the batch is applied part by part: left behind, it names an entry
    /// already applied, which is never applied again (`applied_part`
    /// matches the index), so nothing needs to clear it.
    fn stamp_rows(&mut self) -> Result<crate::machine::Rows, StorageError> {
        let mut rows = vec![(CLOCK, self.clock.to_be_bytes().to_vec())];
        if let Some(partial) = self.partial {
            rows.push((PARTIAL, ser(&partial)?));
        }
        if self.last.is_some() {
            rows.push((APPLIED, ser(&self.last)?));
        }
        if let Some(m) = self.membership.take() {
            rows.push((MEMBERSHIP, ser(&m)?));
        }
        Ok(rows)
    }

    /// Commits the batch of the entries since the last commit, with their
    /// stamp.
    pub(super) fn commit(&mut self, cur: &Current) -> Result<(), StorageError> {
        if !self.dirty {
            return Ok(());
        }
        let rows = self.stamp_rows()?;
        let mut batch = std::mem::take(&mut self.batch);
        for (k, v) in rows {
            batch.put_in(&cur.meta, k, v);
        }
        cur.db.write(batch).map_err(|e| sm_err(&e))?;
        self.pending.clear();
        self.dirty = false;
        Ok(())
    }

    /// Has `machine` apply the application's command of the entry `last`,
    /// its effects committed with its stamp (written alone if it wrote
    /// nothing).
    pub(super) fn apply_app(
        &mut self,
        cur: &Current,
        machine: &dyn Machine,
        bytes: &[u8],
    ) -> Result<Response, StorageError> {
        let stamp = Stamp {
            clock: self.clock,
            index: self.last.map_or(0, |id| id.index),
            meta: &cur.meta,
            rows: self.stamp_rows()?,
            written: std::cell::Cell::new(false),
        };
        let answer = machine
            .apply(&cur.db, bytes, &stamp)
            .map_err(|e| sm_err(&e))?;
        if !stamp.written.get() {
            let mut batch = WriteBatch::new();
            stamp.put_in_batch(&mut batch);
            cur.db.write(batch).map_err(|e| sm_err(&e))?;
        }
        Ok(Response {
            results: vec![crate::types::OpResult::App(answer)],
        })
    }

    /// Applies the commands of the batch entry `id`, each as an entry of
    /// its own would be: built-in ops into the pending batch, an
    /// application's command in its own commit whose stamp records how
    /// far the entry got, so a crash in the middle resumes after the last
    /// command committed (the entry counts as applied only with its last).
    pub(super) fn apply_batch(
        &mut self,
        cur: &Current,
        machine: Option<&dyn Machine>,
        id: LogId,
        commands: &[Command],
    ) -> Result<Response, StorageError> {
        let done = applied_part(cur, id.index)?;
        let mut answers = Vec::with_capacity(commands.len());
        let mut last_committed = false;
        for (i, cmd) in commands.iter().enumerate() {
            self.clock = self.clock.max(cmd.at_millis);
            if (i as u64) < done {
                answers.push(Response {
                    results: vec![OpResult::Error(APPLIED_BEFORE.into())],
                });
                continue;
            }
            let whole = i + 1 == commands.len();
            last_committed = false;
            match (cmd.app_bytes(), machine) {
                (Some(bytes), Some(machine)) => {
                    // The built-in ops pending (of earlier entries, and of
                    // this one's commands before `i`) commit first, with
                    // the progress that covers them.
                    self.partial = Some((id.index, i as u64));
                    self.commit(cur)?;
                    if whole {
                        self.last = Some(id);
                        self.partial = None;
                    } else {
                        self.partial = Some((id.index, i as u64 + 1));
                    }
                    answers.push(self.apply_app(cur, machine, bytes)?);
                    self.partial = None;
                    last_committed = true;
                }
                _ => {
                    answers.push(apply_command(
                        &cur.db,
                        &mut self.batch,
                        &mut self.pending,
                        cmd,
                    )?);
                    self.dirty = true;
                }
            }
        }
        self.partial = None;
        if !last_committed {
            self.last = Some(id);
            self.dirty = true;
        }
        Ok(Response {
            results: vec![OpResult::Batch(answers)],
        })
    }
}

/// How many commands of the batch entry `index` were applied before a
/// restart (0 if none, or if the stored progress is of another entry).
fn applied_part(cur: &Current, index: u64) -> Result<u64, StorageError> {
    let Some(bytes) = cur.meta.get(PARTIAL).map_err(|e| sm_err(&e))? else {
        return Ok(0);
    };
    let (i, done): (u64, u64) = bincode::deserialize(&bytes).map_err(|e| sm_err(&*e))?;
    Ok(if i == index { done } else { 0 })
}

fn ser<T: serde::Serialize>(value: &T) -> Result<Vec<u8>, StorageError> {
    bincode::serialize(value).map_err(|e| sm_err(&*e))
}
