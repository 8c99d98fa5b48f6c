//! What every group's rows share: the routing types, the three modes by
//! short names, and [`answer`].

pub(super) use crate::registry::{Class, Mode, Place, Row};
use crate::resp::Reply;
use crate::session::Then;

pub(super) const TX: Mode = Mode::Transaction;
pub(super) const SNAPSHOT: Mode = Mode::Snapshot;
pub(super) const DIRECT: Mode = Mode::Direct;

/// A reply after which the connection goes on.
pub(super) fn answer(reply: Reply) -> (Reply, Then) {
    (reply, Then::Continue)
}
