//! [`run_with`]: how one data command runs outside `MULTI`, by its
//! registry row's mode: proposed to the log in a cluster when it writes;
//! at a snapshot when it reads a collection and writes nothing; in an
//! engine transaction when it reads before it writes; straight otherwise.
//!
//! * **Owns**: nothing; the store's access modes are in `crate::store`.
//! * **Called by**: `dispatch` and `blocked` (a blocking command
//!   retried).

use crate::access::snapshot::AtSnapshot;
use crate::access::{atomically, Direct};
use crate::commands::{self, Fail};
use crate::registry::{Class, DataFn, Mode};
use crate::resp::{Reply, Request};
use crate::shared::Shared;

/// Data command `name` (its row's `mode` and `handler`) outside MULTI.
pub(crate) fn run_with(
    s: &Shared,
    name: &str,
    mode: Mode,
    handler: DataFn,
    req: &Request,
) -> commands::Outcome {
    if let Some(c) = &s.cluster {
        if crate::cluster::route::class(name, req) == Class::Write {
            return Ok(crate::cluster::run::propose_one(s, c, req.clone()));
        }
    }
    let sp = s.store.spaces();
    let opts = s.write_options();
    match mode.of(req) {
        Mode::Snapshot => {
            let snap = s.store.db().snapshot();
            let mut at = AtSnapshot {
                snap: &snap,
                sp: &sp,
            };
            handler(name, req, &mut at, &s.cursors)
        }
        Mode::Transaction => {
            let mut failure = None;
            let (out, notices) = atomically(&s.store.db(), &sp, &opts, |acc| {
                match handler(name, req, acc, &s.cursors) {
                    Ok(r) => Ok(Some(r)),
                    Err(Fail::Engine(e)) => Err(e),
                    Err(Fail::Reply(r)) => {
                        failure = Some(r);
                        Ok(None)
                    }
                }
            })?;
            notices.publish(&s.pubsub, &s.expiries, &s.tracking);
            match (out, failure) {
                (Some(r), _) => Ok(r),
                (None, Some(r)) => Err(Fail::Reply(r)),
                (None, None) => Ok(Reply::Null),
            }
        }
        _ => {
            let mut direct = Direct::new(&sp, &opts);
            let out = handler(name, req, &mut direct, &s.cursors);
            direct.notices.publish(&s.pubsub, &s.expiries, &s.tracking);
            out
        }
    }
}

/// Data command `name` outside MULTI, as its row says.
pub(crate) fn run_data(s: &Shared, name: &str, req: &Request) -> commands::Outcome {
    match crate::registry::find(name).map(|c| c.run) {
        Some(crate::registry::Run::Data { mode, handler }) => run_with(s, name, mode, handler, req),
        _ => Err(commands::fail("ERR unknown command")),
    }
}
