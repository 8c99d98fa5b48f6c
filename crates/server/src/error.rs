//! What every command shares to fail with: [`Fail`] (a reply to send, or
//! an engine error), Redis's common error replies, and the integer
//! parsing Redis's commands share. A leaf: it uses only the reply type.

use crate::resp::Reply;

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

/// Redis 7's error for a subcommand's arguments a container's handler
/// cannot take.
pub fn subcommand_error(container: &str, a: &[Vec<u8>]) -> Fail {
    fail(&format!(
        "ERR unknown subcommand or wrong number of arguments for '{}'. Try {container} HELP.",
        String::from_utf8_lossy(&a[1])
    ))
}

/// Redis's error for a command given the wrong number of arguments.
pub fn arity_error(name: &str) -> Reply {
    Reply::err(format!(
        "ERR wrong number of arguments for '{name}' command"
    ))
}
