//! The pops from the first non-empty of several keys: LMPOP and ZMPOP,
//! and one attempt of their blocking forms BLMPOP and BZMPOP (whose
//! waiting is `crate::blocked`'s, as for the other blocking pops).
//!
//! `LMPOP numkeys key... LEFT|RIGHT [COUNT n]`, `ZMPOP numkeys key...
//! MIN|MAX [COUNT n]`: up to `n` (default 1) elements from the first key
//! holding a collection, as `[key, [element...]]` (a sorted set's
//! elements as `[member, score]` pairs), or a null array if every key is
//! missing; a key of another type met first is `WRONGTYPE`. Arguments are
//! checked in Redis 7.0's order, before any key is read.

use super::wrong_type;
use crate::access::Access;
use crate::commands::{fail, int_arg, syntax_error, Fail, Outcome};
use crate::cursors::Cursors;
use crate::resp::Reply;
use crate::store::Kind;

/// A parsed request: the keys, and the plain pop that takes the
/// elements (`lpop`, `rpop`, `zpopmin` or `zpopmax`) with its count.
pub struct Pops<'a> {
    pub keys: &'a [Vec<u8>],
    pop: &'static str,
    count: i64,
}

/// Parses the request whose key count is at `a[at]` (`at` is 1, or 2 in
/// the blocking forms, after the timeout).
pub fn parse<'a>(name: &str, a: &'a [Vec<u8>], at: usize) -> Result<Pops<'a>, Fail> {
    let numkeys = positive(&a[at], "ERR numkeys should be greater than 0")?;
    let where_at = match usize::try_from(numkeys)
        .ok()
        .and_then(|n| n.checked_add(at + 1))
    {
        Some(i) if i < a.len() => i,
        _ => return Err(syntax_error()),
    };
    let lists = name.ends_with("lmpop");
    let pop = match (lists, a[where_at].to_ascii_lowercase().as_slice()) {
        (true, b"left") => "lpop",
        (true, b"right") => "rpop",
        (false, b"min") => "zpopmin",
        (false, b"max") => "zpopmax",
        _ => return Err(syntax_error()),
    };
    let mut count = None;
    let mut i = where_at + 1;
    while i < a.len() {
        match a.get(i + 1) {
            Some(n) if count.is_none() && a[i].eq_ignore_ascii_case(b"count") => {
                count = Some(positive(n, "ERR count should be greater than 0")?);
                i += 2;
            }
            _ => return Err(syntax_error()),
        }
    }
    Ok(Pops {
        keys: &a[at + 1..where_at],
        pop,
        count: count.unwrap_or(1),
    })
}

/// A whole number of at least 1, else Redis's `message`.
fn positive(arg: &[u8], message: &str) -> Result<i64, Fail> {
    match int_arg(arg) {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(fail(message)),
    }
}

pub fn run(name: &str, a: &[Vec<u8>], acc: &mut dyn Access, _: &Cursors) -> Outcome {
    pop_first(acc, &parse(name, a, 1)?)
}

/// The pop from the first of `p.keys` that holds a collection.
pub fn pop_first(acc: &mut dyn Access, p: &Pops<'_>) -> Outcome {
    let kind = match p.pop {
        "lpop" | "rpop" => Kind::List,
        _ => Kind::ZSet,
    };
    for key in p.keys {
        let Some(value) = acc.get(key)? else {
            continue;
        };
        if value.kind != kind {
            return Err(wrong_type());
        }
        let req = [
            p.pop.as_bytes().to_vec(),
            key.clone(),
            p.count.to_string().into_bytes(),
        ];
        let elements = match crate::registry::run_data(p.pop, &req, acc, &Default::default())? {
            // A sorted set's members with their scores: one array each,
            // in RESP2 too.
            Reply::Pairs(pairs) => pairs
                .into_iter()
                .map(|(m, s)| Reply::Array(vec![m, s]))
                .collect(),
            Reply::Array(items) => items,
            one => vec![one],
        };
        return Ok(Reply::Array(vec![
            Reply::Bulk(key.clone()),
            Reply::Array(elements),
        ]));
    }
    Ok(Reply::NullArray)
}
