//! The thread's spare batch: a spent one kept for its next one-key write,
//! so that the common `put` allocates nothing (a leaf of `commit/`).

use std::cell::Cell;

use crate::batch::WriteBatch;

/// Largest spent batch a thread keeps for its next `put` or `delete`.
const SPARE_BATCH_MAX: usize = 4096;

thread_local! {
    static SPARE_BATCH: Cell<Option<WriteBatch>> = const { Cell::new(None) };
}

/// An empty batch: the thread's spare one if it has it. (`try_with`: a
/// write from another thread-local's destructor still works.)
pub(crate) fn take_batch() -> WriteBatch {
    SPARE_BATCH
        .try_with(Cell::take)
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// Keeps a spent batch for the thread's next write, unless it is large.
pub(super) fn recycle_batch(mut batch: WriteBatch) {
    if batch.capacity() <= SPARE_BATCH_MAX {
        batch.clear();
        let _ = SPARE_BATCH.try_with(|spare| spare.set(Some(batch)));
    }
}
