//! Batch entries (`Command::batch`, what `Node::write` proposes when
//! writes queue up): each command answered in order, and a crash in the
//! middle of a batch of application commands resumes after the last one
//! committed, never applying one twice.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use openraft::storage::RaftStateMachine;
use openraft::{CommittedLeaderId, EntryPayload, LogId};
use slsm::{Db, WriteBatch};
use slsm_raft::types::Entry;
use slsm_raft::{Command, Machine, Op, OpResult, Stamp, StateMachine};

fn log_id(index: u64) -> LogId<u64> {
    LogId::new(CommittedLeaderId::new(1, 1), index)
}

fn entry(index: u64, cmd: Command) -> Entry {
    Entry {
        log_id: log_id(index),
        payload: EntryPayload::Normal(cmd),
    }
}

/// Adds one to the counter key `bytes` names, committed with the stamp;
/// fails (before committing) the call numbered `fail_at`.
struct Counter {
    calls: AtomicU64,
    fail_at: u64,
}

impl Machine for Counter {
    fn attach(&self, _db: &Arc<Db>, _clock: u64) -> slsm::Result<()> {
        Ok(())
    }

    fn apply(&self, db: &Db, bytes: &[u8], stamp: &Stamp<'_>) -> slsm::Result<Vec<u8>> {
        let call = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if call == self.fail_at {
            return Err(slsm::Error::InvalidArgument("the node dies here".into()));
        }
        let now: u64 = db
            .get(bytes)?
            .and_then(|v| std::str::from_utf8(&v).ok()?.parse().ok())
            .unwrap_or(0);
        let mut batch = WriteBatch::new();
        batch.put(bytes, (now + 1).to_string());
        stamp.put_in_batch(&mut batch);
        db.write(batch)?;
        Ok(format!("{}", now + 1).into_bytes())
    }
}

fn counter(fail_at: u64) -> Arc<dyn Machine> {
    Arc::new(Counter {
        calls: AtomicU64::new(0),
        fail_at,
    })
}

fn app(key: &str) -> Command {
    Command::app(5, key.as_bytes().to_vec())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_answers_each_command_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let mut sm = StateMachine::open(dir.path()).unwrap();
    let put = Command {
        at_millis: 1,
        ops: vec![Op::Put {
            key: b"n".to_vec(),
            value: b"41".to_vec(),
        }],
    };
    let incr = Command {
        at_millis: 2,
        ops: vec![Op::Incr {
            key: b"n".to_vec(),
            by: 1,
        }],
    };
    let out = sm
        .apply([entry(1, Command::batch(vec![put, incr.clone(), incr]))])
        .await
        .unwrap();
    let [r] = out.as_slice() else {
        panic!("{out:?}")
    };
    let Some(OpResult::Batch(each)) = r.results.first() else {
        panic!("{r:?}")
    };
    let got: Vec<&OpResult> = each.iter().flat_map(|r| &r.results).collect();
    assert_eq!(
        got,
        [&OpResult::Done, &OpResult::Value(42), &OpResult::Value(43)]
    );
    assert_eq!(sm.applied_state().await.unwrap().0, Some(log_id(1)));
    assert_eq!(sm.clock(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_cut_short_by_a_crash_resumes_after_its_last_commit() {
    let dir = tempfile::tempdir().unwrap();
    let batch = Command::batch(vec![app("a"), app("b"), app("a"), app("c")]);
    {
        // Entry 1 whole; entry 2 dies at its last command (call 5).
        let mut sm = StateMachine::open_with(dir.path(), Some(counter(5))).unwrap();
        sm.apply([entry(1, app("a"))]).await.unwrap();
        let err = sm.apply([entry(2, batch.clone())]).await;
        assert!(err.is_err());
        assert_eq!(
            sm.applied_state().await.unwrap().0,
            Some(log_id(1)),
            "a batch cut short is not applied"
        );
    }
    // Reopened (as after the crash), openraft applies entry 2 again.
    let mut sm = StateMachine::open_with(dir.path(), Some(counter(0))).unwrap();
    assert_eq!(sm.applied_state().await.unwrap().0, Some(log_id(1)));
    sm.apply([entry(2, batch)]).await.unwrap();
    assert_eq!(sm.applied_state().await.unwrap().0, Some(log_id(2)));
    let value = |k: &str| {
        sm.get(k.as_bytes())
            .unwrap()
            .map(|v| String::from_utf8(v).unwrap())
    };
    assert_eq!(
        value("a").as_deref(),
        Some("3"),
        "once for entry 1, twice in the batch"
    );
    assert_eq!(value("b").as_deref(), Some("1"));
    assert_eq!(value("c").as_deref(), Some("1"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn built_in_ops_before_a_failed_command_are_not_applied_twice() {
    let dir = tempfile::tempdir().unwrap();
    let incr = Command {
        at_millis: 1,
        ops: vec![Op::Incr {
            key: b"n".to_vec(),
            by: 1,
        }],
    };
    let batch = Command::batch(vec![incr, app("a")]);
    {
        // The built-in increment is pending when the application's
        // command fails (call 1).
        let mut sm = StateMachine::open_with(dir.path(), Some(counter(1))).unwrap();
        assert!(sm.apply([entry(1, batch.clone())]).await.is_err());
    }
    let mut sm = StateMachine::open_with(dir.path(), Some(counter(0))).unwrap();
    sm.apply([entry(1, batch)]).await.unwrap();
    assert_eq!(
        sm.get(b"n").unwrap().as_deref(),
        Some(&b"1"[..]),
        "incremented once"
    );
    assert_eq!(sm.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(sm.applied_state().await.unwrap().0, Some(log_id(1)));
}
