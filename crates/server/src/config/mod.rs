//! `CONFIG GET|SET|RESETSTAT|REWRITE|HELP` over the table of parameters in
//! [`params`].
//!
//! `CONFIG SET` of several parameters is one change, as in Redis 7: every
//! pair is checked first (known, not given twice, settable, a valid
//! value), and nothing is applied unless all are; live parameters are then
//! applied in order.
//!
//! Owns: the values of the stored parameters (`params::Set::Stored`).
//! Thread-safety: one mutex; a `CONFIG SET` holds it while it checks and
//! applies, so two of them never interleave.

mod params;
pub mod values;

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use crate::commands::{fail, Fail, Outcome};
use crate::glob;
use crate::resp::Reply;
use crate::shared::Shared;
use params::{Get, Param, Set, PARAMS};
pub use values::{Replicas, Values};

/// The current value of `p`.
fn value_of(s: &Shared, stored: &HashMap<&'static str, String>, p: &Param) -> String {
    match p.get {
        Get::Read(read) => read(s),
        Get::Default(default) => stored
            .get(p.name)
            .cloned()
            .unwrap_or_else(|| default.into()),
    }
}

const HELP: &[&str] = &[
    "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GET <pattern>",
    "    Return parameters matching the glob-like <pattern> and their values.",
    "SET <directive> <value>",
    "    Set the configuration <directive> to <value>.",
    "RESETSTAT",
    "    Reset statistics reported by the INFO command.",
    "REWRITE",
    "    Rewrite the configuration file.",
    "HELP",
    "    Prints this help.",
];

pub fn config(s: &Shared, a: &[Vec<u8>]) -> Outcome {
    let sub = a.get(1).map(|s| s.to_ascii_lowercase()).unwrap_or_default();
    match sub.as_slice() {
        b"get" if a.len() >= 3 => Ok(get(s, &a[2..])),
        b"set" if a.len() >= 4 && a.len().is_multiple_of(2) => set(s, &a[2..]),
        b"resetstat" if a.len() == 2 => {
            for counter in [&s.commands, &s.connections, &s.rejected] {
                counter.store(0, Ordering::Relaxed);
            }
            s.cmdstats.reset();
            Ok(Reply::ok())
        }
        b"rewrite" if a.len() == 2 => Err(fail("ERR The server is running without a config file")),
        b"help" if a.len() == 2 => Ok(Reply::Array(
            HELP.iter().map(|l| Reply::Simple((*l).into())).collect(),
        )),
        _ => Err(crate::registry::subcommand_refusal("config", a)),
    }
}

/// `CONFIG GET pattern...`: every name or alias matching a pattern, once.
fn get(s: &Shared, patterns: &[Vec<u8>]) -> Reply {
    let patterns: Vec<Vec<u8>> = patterns.iter().map(|p| p.to_ascii_lowercase()).collect();
    let matches = |name: &str| patterns.iter().any(|p| glob::matches(p, name.as_bytes()));
    let stored = s.config.lock();
    let mut out = Vec::new();
    for p in PARAMS {
        for name in std::iter::once(p.name).chain(p.alias) {
            if matches(name) {
                out.push((Reply::bulk(name), Reply::bulk(value_of(s, &stored, p))));
            }
        }
    }
    Reply::Map(out)
}

fn set_failed(name: &str, why: &str) -> Fail {
    fail(&format!(
        "ERR CONFIG SET failed (possibly related to argument '{name}') - {why}"
    ))
}

/// `CONFIG SET name value [name value ...]`: all or nothing. As in
/// Redis, the names are checked first (known, settable, not given twice),
/// then the values.
fn set(s: &Shared, pairs: &[Vec<u8>]) -> Outcome {
    let mut stored = s.config.lock();
    let mut named: Vec<(&Param, String, &[u8])> = Vec::new();
    for pair in pairs.chunks_exact(2) {
        let name = String::from_utf8_lossy(&pair[0]).to_ascii_lowercase();
        let Some(p) = PARAMS.iter().find(|p| p.is(&name)) else {
            return Err(fail(&format!(
                "ERR Unknown option or number of arguments for CONFIG SET - '{name}'"
            )));
        };
        if let Set::Immutable = p.set {
            return Err(set_failed(&name, "can't set immutable config"));
        }
        if named.iter().any(|(q, ..)| std::ptr::eq(*q, p)) {
            return Err(set_failed(&name, "duplicate parameter"));
        }
        named.push((p, name, &pair[1]));
    }
    let mut changes: Vec<(&Param, String)> = Vec::new();
    for (p, name, value) in named {
        let value = p.check(value).map_err(|why| set_failed(&name, &why))?;
        if matches!(p.set, Set::Startup) && value != value_of(s, &stored, p) {
            return Err(set_failed(
                &name,
                "slsm sets it when the server starts (slsm serve --help)",
            ));
        }
        changes.push((p, value));
    }
    // The live ones first: one that cannot be applied undoes those before
    // it, and then nothing is stored either.
    let mut applied: Vec<(&Param, String)> = Vec::new();
    for (p, value) in &changes {
        let Set::Live(apply) = p.set else { continue };
        let before = value_of(s, &stored, p);
        if let Err(why) = apply(s, value) {
            for (q, old) in applied.into_iter().rev() {
                if let Set::Live(undo) = q.set {
                    let _ = undo(s, &old);
                }
            }
            return Err(set_failed(p.name, &why));
        }
        applied.push((p, before));
    }
    for (p, value) in changes {
        if let Set::Stored = p.set {
            stored.insert(p.name, value);
        }
    }
    Ok(Reply::ok())
}
