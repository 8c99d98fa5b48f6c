//! openraft's own storage test suite over slsm's log and state machine,
//! each case on fresh directories.

use openraft::testing::{StoreBuilder, Suite};
use slsm_raft::types::StorageError;
use slsm_raft::{LogStore, StateMachine, TypeConfig};

struct Builder;

impl StoreBuilder<TypeConfig, LogStore, StateMachine, tempfile::TempDir> for Builder {
    async fn build(&self) -> Result<(tempfile::TempDir, LogStore, StateMachine), StorageError> {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = LogStore::open(&dir.path().join("log"))?;
        let sm = StateMachine::open(&dir.path().join("sm"))?;
        Ok((dir, log, sm))
    }
}

#[test]
fn openraft_storage_suite() {
    if let Err(e) = Suite::test_all(Builder) {
        panic!("openraft's storage suite failed: {e}");
    }
}
