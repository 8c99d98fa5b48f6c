//! Applying a command's ops to the state machine's write batch, the same
//! way on every node.

use std::collections::HashMap;

use slsm::{Db, WriteBatch};

use super::sm_err;
use crate::types::{Command, Op, OpResult, Response, StorageError};

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
