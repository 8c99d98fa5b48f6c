//! The pub/sub commands (Redis's `pubsub` group): on the leader in a
//! cluster, never through the log; handlers in `crate::pubsub`.

use super::common::{answer, Class, Row};
use crate::pubsub::{commands as pubsub, Space};
use crate::registry::Run;
use crate::resp::{Reply, Request};
use crate::session::{to_reply, Session, Then};
use crate::shared::Shared;

pub const ROWS: &[Row] = &[
    Row::control("subscribe", Class::Leader, |s, se, _, r| {
        sub(s, se, r, Space::Channels, true)
    }),
    Row::control("psubscribe", Class::Leader, |s, se, _, r| {
        sub(s, se, r, Space::Patterns, true)
    }),
    Row::control("ssubscribe", Class::Leader, |s, se, _, r| {
        sub(s, se, r, Space::Shards, true)
    }),
    Row::control("unsubscribe", Class::Leader, |s, se, _, r| {
        sub(s, se, r, Space::Channels, false)
    }),
    Row::control("punsubscribe", Class::Leader, |s, se, _, r| {
        sub(s, se, r, Space::Patterns, false)
    }),
    Row::control("sunsubscribe", Class::Leader, |s, se, _, r| {
        sub(s, se, r, Space::Shards, false)
    }),
    Row::new(
        "publish",
        Run::Publish {
            handler: |s, _, _, r| answer(pubsub::publish(s, false, r)),
        },
    ),
    Row::new(
        "spublish",
        Run::Publish {
            handler: |s, _, _, r| answer(pubsub::publish(s, true, r)),
        },
    ),
    Row::control("pubsub", Class::Leader, |s, _, _, r| {
        answer(to_reply(pubsub::introspect(s, r)))
    }),
];

fn sub(s: &Shared, session: &mut Session, req: &Request, space: Space, on: bool) -> (Reply, Then) {
    answer(pubsub::run(s, session, space, on, &req[1..]))
}
