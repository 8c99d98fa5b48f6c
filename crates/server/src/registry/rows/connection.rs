//! The connection's commands (Redis's `connection` group): they run on
//! any node and touch no data.

use super::common::{answer, Class, Row};
use crate::admin;
use crate::registry::arity_error;
use crate::resp::{Reply, Request};
use crate::session::{to_reply, Session, Then};
use crate::shared::Shared;

pub const ROWS: &[Row] = &[
    Row::control("ping", Class::Anywhere, ping),
    Row::control("echo", Class::Anywhere, |_, _, _, r| {
        answer(Reply::Bulk(r[1].clone()))
    }),
    Row::control("hello", Class::Anywhere, |s, session, _, r| {
        answer(to_reply(admin::hello(s, session, r)))
    }),
    Row::control("auth", Class::Anywhere, auth),
    Row::control("quit", Class::Anywhere, |_, _, _, _| {
        (Reply::ok(), Then::Close)
    }),
    Row::control("select", Class::Anywhere, select),
    Row::control("client", Class::Anywhere, |s, session, _, r| {
        answer(to_reply(crate::client_command::command(s, session, r)))
    }),
    Row::control("reset", Class::Anywhere, |s, session, _, _| {
        answer(crate::client_modes::reset(s, session))
    }),
];

fn ping(_: &Shared, session: &mut Session, _: &str, req: &Request) -> (Reply, Then) {
    answer(match req.len() {
        // A subscribed RESP2 client gets its PONG as an array, as a
        // message would come.
        _ if session.proto < 3 && session.subscribed() => Reply::Array(vec![
            Reply::bulk("pong"),
            Reply::Bulk(req.get(1).cloned().unwrap_or_default()),
        ]),
        1 => Reply::Simple("PONG".into()),
        2 => Reply::Bulk(req[1].clone()),
        _ => arity_error("ping"),
    })
}

fn auth(s: &Shared, session: &mut Session, _: &str, req: &Request) -> (Reply, Then) {
    let (user, password) = match req.len() {
        2 => (None, req[1].as_slice()),
        3 => (Some(req[1].as_slice()), req[2].as_slice()),
        _ => return answer(Reply::err("ERR syntax error")),
    };
    answer(to_reply(
        admin::auth(s, session, user, password).map(|_| Reply::ok()),
    ))
}

fn select(_: &Shared, _: &mut Session, _: &str, req: &Request) -> (Reply, Then) {
    answer(crate::compat::select(&req[1]))
}
