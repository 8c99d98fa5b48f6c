//! [`run_data`]: how one data command runs outside `MULTI`, by what it
//! does: proposed to the log in a cluster when it writes; at a snapshot
//! when it reads a collection and writes nothing; in an engine transaction
//! when it reads before it writes; straight otherwise.
//!
//! * **Owns**: nothing; the store's access modes are in `crate::store`.
//! * **Called by**: `session::control` and `blocked` (a blocking command
//!   retried).

use crate::commands::{self, Fail};
use crate::resp::{Reply, Request};
use crate::store::{atomically, AtSnapshot, Direct};
use crate::Shared;

/// A data command outside MULTI: straight, atomically when it reads
/// before it writes, or at a snapshot when it reads a collection and
/// writes nothing.
pub(crate) fn run_data(s: &Shared, name: &str, req: &Request) -> commands::Outcome {
    if let Some(c) = &s.cluster {
        if crate::cluster::route::class(name, req) == crate::cluster::route::Class::Write {
            return Ok(crate::cluster::run::propose_one(s, c, req.clone()));
        }
    }
    let sp = s.store.spaces();
    let opts = s.write_options();
    if crate::collections::reads_only(name) {
        let snap = s.store.db().snapshot();
        return commands::run(
            name,
            req,
            &mut AtSnapshot {
                snap: &snap,
                sp: &sp,
            },
            &s.cursors,
        );
    }
    if commands::needs_transaction(name, req) {
        let mut failure = None;
        let (out, notices) = atomically(&s.store.db(), &sp, &opts, |acc| {
            match commands::run(name, req, acc, &s.cursors) {
                Ok(r) => Ok(Some(r)),
                Err(Fail::Engine(e)) => Err(e),
                Err(Fail::Reply(r)) => {
                    failure = Some(r);
                    Ok(None)
                }
            }
        })?;
        notices.publish(s);
        return match (out, failure) {
            (Some(r), _) => Ok(r),
            (None, Some(r)) => Err(Fail::Reply(r)),
            (None, None) => Ok(Reply::Null),
        };
    }
    let mut direct = Direct::new(&sp, &opts);
    let out = commands::run(name, req, &mut direct, &s.cursors);
    direct.notices.publish(s);
    out
}
