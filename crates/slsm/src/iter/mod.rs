//! Iteration: cursors over every source of internal keys (memory runs, run
//! files), a heap-based merge of them, and the user-facing [`Iter`].

pub(crate) mod internal;
pub(crate) mod merging;
pub(crate) mod user;

pub(crate) use internal::{run_cursor_sequential, InternalIter};
pub(crate) use merging::MergingIter;
pub use user::Iter;
