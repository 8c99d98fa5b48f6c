//! The cluster's commands (Redis's `cluster` group, and slsm's own
//! `RAFT`). On a single node they answer as `compat.rs` says; in a
//! cluster `cluster::run::clustered` serves them.

use super::common::{answer, Class, Row};
use crate::registry::{ADMIN, NOSCRIPT};
use crate::resp::{Reply, Request};
use crate::session::{to_reply, Session, Then};
use crate::shared::Shared;

pub const ROWS: &[Row] = &[
    Row::control("cluster", Class::Anywhere, compat),
    Row::control("readonly", Class::Anywhere, compat),
    Row::control("readwrite", Class::Anywhere, compat),
    Row::control("asking", Class::Anywhere, compat),
    // `RAFT ADD|REMOVE|STATUS ...`: membership and state of the cluster.
    Row::control("raft", Class::Anywhere, compat).own(-2, ADMIN.with(NOSCRIPT)),
];

fn compat(_: &Shared, _: &mut Session, name: &str, req: &Request) -> (Reply, Then) {
    answer(to_reply(crate::compat::run(name, req)))
}
