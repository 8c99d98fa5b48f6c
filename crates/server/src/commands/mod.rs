//! The commands on data: strings, keys and (in `crate::collections`)
//! lists, hashes, sets and sorted sets. Each runs against an [`Access`]
//! (straight, or inside a transaction) and returns its reply; the
//! connection decides which (see [`needs_transaction`]).

mod bitfield;
mod bits;
mod hyperloglog;
mod keys;
mod lcs;
mod strings;

pub(crate) use keys::{count_arg, cursor_arg};

use crate::resp::Reply;
use crate::store::Access;

/// Why a command failed: a reply to send (Redis's error text) or an engine
/// error (reported as `-ERR` with its message).
pub enum Fail {
    Reply(Reply),
    Engine(slsm::Error),
}

impl From<slsm::Error> for Fail {
    fn from(e: slsm::Error) -> Fail {
        Fail::Engine(e)
    }
}

pub type Outcome = Result<Reply, Fail>;

pub fn fail(msg: &str) -> Fail {
    Fail::Reply(Reply::err(msg))
}

pub fn syntax_error() -> Fail {
    fail("ERR syntax error")
}

pub fn not_an_integer() -> Fail {
    fail("ERR value is not an integer or out of range")
}

/// Redis accepts no `+` sign and no leading zeros.
fn is_canonical_integer(s: &str) -> bool {
    let leading_nonzero = |d: &str| d.starts_with(|c: char| c.is_ascii_digit() && c != '0');
    match s.strip_prefix('-') {
        // Redis's string2ll refuses "-0" along with "+1", "01" and " 1".
        Some(digits) => leading_nonzero(digits),
        None => s == "0" || leading_nonzero(s),
    }
}

/// `arg` as the integer Redis's `string2ll` reads in it, if it is one (no
/// sign on zero, no leading zeros, no spaces, in range).
pub fn canonical_int(arg: &[u8]) -> Option<i64> {
    std::str::from_utf8(arg)
        .ok()
        .filter(|s| is_canonical_integer(s))
        .and_then(|s| s.parse().ok())
}

/// A decimal integer argument, as Redis parses them.
pub fn int_arg(arg: &[u8]) -> Result<i64, Fail> {
    canonical_int(arg).ok_or_else(not_an_integer)
}

/// The arity of a data command (Redis's: negative means "at least"), or
/// `None` if it is not one.
pub fn arity(name: &str) -> Option<i32> {
    Some(match name {
        "get" | "strlen" | "incr" | "decr" | "getdel" | "ttl" | "pttl" | "persist" | "type"
        | "keys" => 2,
        "expiretime" | "pexpiretime" => 2,
        "randomkey" => 1,
        "setnx" | "append" | "incrby" | "decrby" | "incrbyfloat" | "rename" | "renamenx"
        | "getset" => 3,
        "setex" | "psetex" | "getrange" | "substr" | "setrange" => 4,
        "lcs" => -3,
        "getex" | "mget" | "del" | "unlink" | "exists" | "touch" | "scan" => -2,
        "set" | "mset" | "msetnx" | "expire" | "pexpire" | "expireat" | "pexpireat" | "copy" => -3,
        _ => {
            return bits::arity(name)
                .or_else(|| hyperloglog::arity(name))
                .or_else(|| crate::collections::arity(name))
        }
    })
}

/// True for commands that read before they write (or write several keys):
/// outside `MULTI` they run in a transaction of their own, retried on a
/// conflict, so they are atomic under concurrent clients.
pub fn needs_transaction(name: &str, args: &[Vec<u8>]) -> bool {
    match name {
        "getbit" | "bitcount" | "bitpos" | "bitfield_ro" => false,
        "get" | "mget" | "strlen" | "getrange" | "substr" | "lcs" | "ttl" | "pttl"
        | "expiretime" | "pexpiretime" | "type" | "exists" | "touch" | "keys" | "scan"
        | "randomkey" | "setex" | "psetex" => false,
        // A plain SET (with at most EX/PX/EXAT/PXAT) writes blindly.
        "set" => args[3..].iter().any(|a| {
            let a = a.to_ascii_lowercase();
            a == b"nx" || a == b"xx" || a == b"get" || a == b"keepttl"
        }),
        _ => true,
    }
}

/// Runs data command `name` (lowercase; arity already checked).
pub fn run(
    name: &str,
    args: &[Vec<u8>],
    acc: &mut dyn Access,
    scan: &crate::cursors::Cursors,
) -> Outcome {
    match name {
        "keys" | "scan" | "del" | "unlink" | "exists" | "touch" | "type" | "rename"
        | "renamenx" | "copy" | "expire" | "pexpire" | "expireat" | "pexpireat" | "ttl"
        | "pttl" | "expiretime" | "pexpiretime" | "persist" | "randomkey" => {
            keys::run(name, args, acc, scan)
        }
        "hscan" | "sscan" | "zscan" => crate::collections::scan::run(name, args, acc, scan),
        _ if bits::arity(name).is_some() => bits::run(name, args, acc),
        _ if hyperloglog::arity(name).is_some() => hyperloglog::run(name, args, acc),
        _ if crate::collections::arity(name).is_some() => crate::collections::run(name, args, acc),
        _ => strings::run(name, args, acc),
    }
}
