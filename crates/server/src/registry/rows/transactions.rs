//! `MULTI`, `EXEC`, `DISCARD`, `WATCH`, `UNWATCH` (Redis's
//! `transactions` group); what `EXEC` and `WATCH` do is in
//! `crate::transaction`.

use super::common::{answer, Class, Row};
use crate::resp::{Reply, Request};
use crate::session::{to_reply, Session, Then};
use crate::shared::Shared;
use crate::transaction::{self, queue::Queue};

pub const ROWS: &[Row] = &[
    Row::control("multi", Class::Anywhere, multi),
    Row::control("exec", Class::Write, exec),
    Row::control("discard", Class::Anywhere, discard),
    Row::control("watch", Class::Leader, |s, session, _, r| {
        answer(match session.queued {
            Some(_) => Reply::err("ERR WATCH inside MULTI is not allowed"),
            None => to_reply(transaction::watch(s, session, &r[1..])),
        })
    }),
    Row::control("unwatch", Class::Anywhere, |_, session, _, _| {
        session.watch = None;
        session.watched.clear();
        answer(Reply::ok())
    }),
];

fn multi(s: &Shared, session: &mut Session, _: &str, _: &Request) -> (Reply, Then) {
    answer(match session.queued {
        Some(_) => Reply::err("ERR MULTI calls can not be nested"),
        None => {
            session.queued = Some(Queue::new(std::sync::Arc::clone(&s.pending_input)));
            session.queue_failed = false;
            Reply::ok()
        }
    })
}

fn discard(_: &Shared, session: &mut Session, _: &str, _: &Request) -> (Reply, Then) {
    answer(match session.queued.take() {
        None => Reply::err("ERR DISCARD without MULTI"),
        Some(_) => {
            session.watch = None;
            Reply::ok()
        }
    })
}

/// Runs the queued commands; monitors see them, then `EXEC` (Redis 7.0's
/// order).
fn exec(s: &Shared, session: &mut Session, name: &str, req: &Request) -> (Reply, Then) {
    session.in_exec = true;
    let reply = transaction::exec(s, session);
    session.in_exec = false;
    s.monitors
        .feed(name, req, Some(&session.client.addr), || false);
    answer(reply)
}
