//! `#!lua flags=...` on the first line of an `EVAL` script, as Redis 7.0
//! reads it (`evalExtractShebangFlags`): a script with one runs by its
//! flags, as a function does (`no-writes`, `no-cluster`, ...); one
//! without keeps the old behaviour (writes checked one by one).
//!
//! Owns nothing; called by `scripting/mod.rs` before a script runs.

use super::registration::{ALLOW_OOM, FLAGS, NO_WRITES};
use crate::resp::Reply;
use crate::shared::Shared;

/// [`FLAGS`]' `no-cluster`.
const NO_CLUSTER: u8 = 1 << 3;

/// What a script's first line says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shebang {
    /// [`FLAGS`]' bits.
    pub flags: u8,
    /// Where the code starts: at the shebang line's end, its line feed
    /// kept so that line numbers stay the user's.
    pub code_at: usize,
}

/// The shebang of `body` (`None`: it has none, the old behaviour), or
/// Redis's error for a malformed one.
pub fn parse(body: &[u8]) -> Result<Option<Shebang>, String> {
    if !body.starts_with(b"#!") {
        return Ok(None);
    }
    let Some(end) = body.iter().position(|&b| b == b'\n') else {
        return Err("ERR Invalid script shebang".into());
    };
    let line = String::from_utf8_lossy(&body[..end]);
    let Ok(parts) = crate::inline::split_args(line.as_bytes()) else {
        return Err("ERR Invalid engine in script shebang".into());
    };
    let mut parts = parts
        .into_iter()
        .map(|p| String::from_utf8_lossy(&p).into_owned());
    match parts.next() {
        None => return Err("ERR Invalid engine in script shebang".into()),
        Some(engine) if engine != "#!lua" => {
            return Err(format!("ERR Unexpected engine in script shebang: {engine}"));
        }
        Some(_) => {}
    }
    let mut flags = 0;
    for part in parts {
        let Some(list) = part.strip_prefix("flags=") else {
            return Err(format!("ERR Unknown lua shebang option: {part}"));
        };
        // `flags=` alone is no flags (Redis splits it into nothing).
        for flag in list.split(',').filter(|_| !list.is_empty()) {
            let Some(bit) = FLAGS.iter().position(|f| *f == flag) else {
                return Err(format!("ERR Unexpected flag in script shebang: {flag}"));
            };
            flags |= 1 << bit;
        }
    }
    Ok(Some(Shebang {
        flags,
        code_at: end,
    }))
}

/// How a script's calls are checked ([`check_flags`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gate {
    /// Its writes are refused.
    pub read_only: bool,
    /// `maxmemory`'s stop does not refuse its writes (`allow-oom`).
    pub allow_oom: bool,
}

/// Redis's checks before a script or function runs (`scriptPrepareForRun`)
/// with `flags` (`None`: a script without a shebang) under an `_RO`
/// command or not (`ro`): how its calls are checked, or why it may not
/// run at all.
pub fn check_flags(s: &Shared, flags: Option<u8>, ro: bool) -> Result<Gate, Reply> {
    let Some(flags) = flags else {
        return Ok(Gate {
            read_only: ro,
            allow_oom: false,
        });
    };
    let allow_oom = flags & ALLOW_OOM != 0;
    if flags & NO_CLUSTER != 0 && s.cluster.is_some() {
        return Err(Reply::err(
            "ERR Can not run script on cluster, 'no-cluster' flag is set.",
        ));
    }
    if flags & NO_WRITES != 0 {
        return Ok(Gate {
            read_only: true,
            allow_oom,
        });
    }
    if ro {
        return Err(Reply::err(
            "ERR Can not execute a script with write flag using *_ro command.",
        ));
    }
    if s.replicas_short() {
        return Err(Reply::err(crate::session::NO_REPLICAS));
    }
    if !allow_oom && s.maxmemory.over(&s.store.db()) {
        return Err(Reply::err(crate::maxmemory::OOM));
    }
    Ok(Gate {
        read_only: false,
        allow_oom,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shebangs_read_as_redis_reads_them() {
        assert_eq!(parse(b"return 1"), Ok(None));
        assert_eq!(
            parse(b"#!lua\nreturn 1"),
            Ok(Some(Shebang {
                flags: 0,
                code_at: 5
            }))
        );
        let s = parse(b"#!lua flags=no-writes,no-cluster\nreturn 1")
            .unwrap()
            .unwrap();
        assert_eq!(s.flags, 1 | 8);
        assert_eq!(
            parse(b"#!lua flags=\nx"),
            Ok(Some(Shebang {
                flags: 0,
                code_at: 12
            }))
        );
        for (body, error) in [
            (&b"#!lua"[..], "ERR Invalid script shebang"),
            (
                b"#!python\n",
                "ERR Unexpected engine in script shebang: #!python",
            ),
            (
                b"#!lua foo=bar\n",
                "ERR Unknown lua shebang option: foo=bar",
            ),
            (
                b"#!lua flags=allow-oom,what?\n",
                "ERR Unexpected flag in script shebang: what?",
            ),
        ] {
            assert_eq!(parse(body), Err(error.to_string()));
        }
    }
}
