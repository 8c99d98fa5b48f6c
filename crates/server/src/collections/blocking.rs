//! The blocking pops: BLPOP BRPOP BLMOVE BRPOPLPUSH BZPOPMIN BZPOPMAX
//! BLMPOP BZMPOP.
//!
//! Here is one attempt: the first non-empty key's pop, or nothing (the
//! reply a command gives inside `MULTI`, where Redis never blocks). Waiting
//! for a push, the timeout and the wake-ups are the connection's
//! (`crate::blocked`): it runs the attempt again whenever a command that
//! can add elements commits, until one succeeds or the timeout passes.

use std::time::Duration;

use crate::access::Access;
use crate::commands::{fail, Fail, Outcome};
use crate::cursors::Cursors;
use crate::resp::Reply;
use crate::store::Kind;
use crate::waiters::Wake;

/// True for a command that always blocks until it finds something (the
/// blocking pops: Redis's `blocking` flag but for the stream reads, which
/// block only with `BLOCK`).
pub fn is_blocking(name: &str) -> bool {
    let flagged =
        crate::registry::find(name).is_some_and(|c| c.flags.has(crate::registry::BLOCKING));
    flagged && !matches!(name, "xread" | "xreadgroup")
}

/// The waiters a commit of request `a` (command `name`, lowercase) may
/// serve: the keys it adds elements to, with how many (see `Wake`).
pub fn wakes(name: &str, a: &[Vec<u8>]) -> Wake {
    let key = |i: usize, n: usize| a.get(i).map(|k| (k.clone(), n)).into_iter().collect();
    match name {
        "lpush" | "rpush" | "lpushx" | "rpushx" => key(1, a.len().saturating_sub(2)),
        "linsert" | "zincrby" => key(1, 1),
        "zadd" => key(1, a.len().saturating_sub(2) / 2),
        "lmove" | "rpoplpush" | "blmove" | "brpoplpush" => key(2, 1),
        "rename" | "renamenx" => [1, 2].iter().flat_map(|&i| key(i, usize::MAX)).collect(),
        "copy" => key(2, usize::MAX),
        "restore" => key(1, usize::MAX),
        // Every reader of a stream gets its new entries.
        "xadd" => key(1, usize::MAX),
        "zunionstore" | "zinterstore" | "zdiffstore" | "zrangestore" => key(1, usize::MAX),
        "geoadd" => key(1, a.len().saturating_sub(2) / 3),
        "georadius" | "georadiusbymember" | "geosearchstore" => {
            super::zsets::geo_store_key(name, a)
                .map(|k| (k.to_vec(), usize::MAX))
                .into_iter()
                .collect()
        }
        _ => Vec::new(),
    }
}

/// The waiters a commit of request `a` may answer by taking their key
/// away: a key deleted or replaced tells its stream group readers so
/// (`blocked::retry`), and `XGROUP DESTROY` answers its readers `NOGROUP`;
/// others, finding nothing, wait on. Asked for only while some client is
/// blocked (these are the most common writes, and the list would be made
/// for nothing otherwise): a reader that blocks during the write is
/// answered at its next check instead (`waiters::RECHECK`).
pub fn replaced(name: &str, a: &[Vec<u8>]) -> Wake {
    let key = |i: usize| a.get(i).map(|k| (k.clone(), usize::MAX));
    match name {
        "del" | "unlink" => (1..a.len()).filter_map(key).collect(),
        "mset" | "msetnx" => (1..a.len()).step_by(2).filter_map(key).collect(),
        "xgroup" => key(2).into_iter().collect(),
        "set" | "setnx" | "setex" | "psetex" | "getset" | "getdel" | "sadd" | "hset" | "hsetnx"
        | "hmset" | "move" => key(1).into_iter().collect(),
        _ => Vec::new(),
    }
}

/// [`wakes`] and [`replaced`] of every request of a transaction (`EXEC`).
pub fn wakes_of_all(requests: &[Vec<Vec<u8>>]) -> Wake {
    requests
        .iter()
        .flat_map(|r| {
            let name = String::from_utf8_lossy(&r[0]).to_ascii_lowercase();
            let mut wake = wakes(&name, r);
            wake.extend(replaced(&name, r));
            wake
        })
        .collect()
}

/// The keys blocking request `a` (command `name`) pops from.
pub fn keys_of(name: &str, a: &[Vec<u8>]) -> Vec<Vec<u8>> {
    match name {
        "blmove" | "brpoplpush" => a[1..2].to_vec(),
        "blmpop" | "bzmpop" => {
            super::mpop::parse(name, a, 2).map_or(Vec::new(), |p| p.keys.to_vec())
        }
        "xread" | "xreadgroup" => match a.iter().position(|x| x.eq_ignore_ascii_case(b"streams")) {
            Some(at) => a[at + 1..at + 1 + (a.len() - at - 1) / 2].to_vec(),
            None => Vec::new(),
        },
        _ => a[1..a.len() - 1].to_vec(),
    }
}

/// How long blocking request `a` (command `name`) may wait (`None`: for
/// ever): the first argument of BLMPOP and BZMPOP, the last of the other
/// pops (seconds), XREAD's `BLOCK` (milliseconds).
pub fn timeout(name: &str, a: &[Vec<u8>]) -> Result<Option<Duration>, Fail> {
    match name {
        "blmpop" | "bzmpop" => timeout_arg(&a[1]),
        "xread" | "xreadgroup" => super::streams::read::wait_of(a),
        _ => timeout_arg(&a[a.len() - 1]),
    }
}

/// True if request `a` (command `name`) may wait: the blocking pops, and
/// `XREAD` with `BLOCK`.
pub fn may_block(name: &str, a: &[Vec<u8>]) -> bool {
    is_blocking(name)
        || ((name == "xread" || name == "xreadgroup") && super::streams::read::blocks(a))
}

/// One attempt of blocking command `name` (arity already checked).
pub fn run(name: &str, a: &[Vec<u8>], acc: &mut dyn Access, _: &Cursors) -> Outcome {
    if name == "blmpop" || name == "bzmpop" {
        // Redis reads the timeout after the other arguments.
        let pops = super::mpop::parse(name, a, 2)?;
        timeout_arg(&a[1])?;
        return super::mpop::pop_first(acc, &pops);
    }
    let last = a.len() - 1;
    if name == "blmove" {
        // Redis reads the ends before the timeout.
        for end in &a[3..5] {
            if !end.eq_ignore_ascii_case(b"left") && !end.eq_ignore_ascii_case(b"right") {
                return Err(crate::commands::syntax_error());
            }
        }
    }
    timeout_arg(&a[last])?;
    match name {
        "blpop" => pop_first(acc, &a[1..last], Kind::List, "lpop"),
        "brpop" => pop_first(acc, &a[1..last], Kind::List, "rpop"),
        "bzpopmin" => pop_first(acc, &a[1..last], Kind::ZSet, "zpopmin"),
        "bzpopmax" => pop_first(acc, &a[1..last], Kind::ZSet, "zpopmax"),
        "brpoplpush" => move_one(acc, [&a[1], &a[2], b"right", b"left"]),
        _ => move_one(acc, [&a[1], &a[2], &a[3], &a[4]]),
    }
}

/// How long a blocking command may wait, as Redis reads its last argument
/// (seconds, fractions allowed): `None` for 0, which waits for ever.
pub fn timeout_arg(arg: &[u8]) -> Result<Option<Duration>, Fail> {
    let seconds = std::str::from_utf8(arg)
        .ok()
        .filter(|s| !s.starts_with(|c: char| c.is_ascii_whitespace()))
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| !s.is_nan())
        .ok_or_else(|| fail("ERR timeout is not a float or out of range"))?;
    let ms = (seconds * 1000.0).ceil();
    // Redis 7.0 converts to a 64-bit integer unchecked: on x86 anything
    // past its range (infinity included) comes out negative.
    if !(0.0..9.223_372_036_854_775e18).contains(&ms) {
        return Err(fail("ERR timeout is negative"));
    }
    Ok((ms > 0.0).then(|| Duration::from_millis(ms as u64)))
}

/// The pop (`pop`: the plain command's name) from the first of `keys`
/// holding a collection of `kind`: `[key, element...]`, or a null array if
/// every key is missing. A key of another type is `WRONGTYPE`, as soon as
/// the walk over the keys meets it.
fn pop_first(acc: &mut dyn Access, keys: &[Vec<u8>], kind: Kind, pop: &str) -> Outcome {
    for key in keys {
        let Some(value) = acc.get(key)? else {
            continue;
        };
        if value.kind != kind {
            return Err(super::wrong_type());
        }
        // Collections are never empty: the last pop deletes the key.
        let req = [pop.as_bytes().to_vec(), key.clone()];
        let popped = crate::registry::run_data(pop, &req, acc, &Default::default())?;
        let mut reply = vec![Reply::Bulk(key.clone())];
        match popped {
            Reply::Array(items) => reply.extend(items),
            one => reply.push(one),
        }
        return Ok(Reply::Array(reply));
    }
    Ok(Reply::NullArray)
}

/// `LMOVE source destination from to` once: the element moved, or a null
/// if the source is missing.
fn move_one(acc: &mut dyn Access, args: [&[u8]; 4]) -> Outcome {
    let mut req = vec![b"lmove".to_vec()];
    req.extend(args.iter().map(|a| a.to_vec()));
    crate::registry::run_data("lmove", &req, acc, &Default::default())
}
