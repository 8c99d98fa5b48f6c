//! `HSCAN`, `SSCAN` and `ZSCAN`: a collection's elements a few at a time,
//! in the order of their sub-keys (a hash's fields, a set's members in
//! hash order, a sorted set's `m` elements), each call resuming after the
//! last element the one before returned. Like Redis's, a scan returns
//! every element that is there from its start to its end at least once,
//! and may return others; unlike Redis's for small collections, it honours
//! `COUNT` at every size (Redis answers a small one whole).

use super::Coll;
use crate::access::Access;
use crate::commands::keys::{count_arg, cursor_arg};
use crate::commands::{fail, syntax_error, Outcome};
use crate::cursors::Cursors;
use crate::glob;
use crate::resp::{format_double, Reply};
use crate::store::Kind;

/// The most elements one call reads, whatever its `COUNT`.
const MAX_BATCH: usize = 100_000;

/// Runs `HSCAN`, `SSCAN` or `ZSCAN` (`name`, lowercase).
pub fn run(name: &str, a: &[Vec<u8>], acc: &mut dyn Access, cursors: &Cursors) -> Outcome {
    let kind = match name {
        "hscan" => Kind::Hash,
        "sscan" => Kind::Set,
        _ => Kind::ZSet,
    };
    // Redis's order: the cursor, then the key, then the options.
    let cursor = cursor_arg(&a[2])?;
    let Some(coll) = Coll::load(acc, &a[1], kind)? else {
        return Ok(reply(0, Vec::new()));
    };
    let (pattern, count) = options(&a[3..])?;
    // A cursor of another collection, or of this key's earlier one,
    // starts over.
    let scope = [&coll.key[..], &coll.version.to_be_bytes()].concat();
    let resume = match cursor {
        0 => None,
        id => cursors.resume(id, &scope),
    };
    let (first, end) = bounds(kind);
    let from = match resume {
        Some(last) => [last.as_slice(), &[0]].concat(),
        None => first.to_vec(),
    };
    let limit = count.min(MAX_BATCH);
    let batch = coll.items(acc, &from, end, limit)?;
    let next = match batch.last() {
        Some((last, _)) if batch.len() == limit => cursors.save(&scope, last.clone()),
        _ => 0,
    };
    let mut found = Vec::with_capacity(batch.len() * 2);
    for (sub, value) in batch {
        let (element, extra) = element_of(kind, sub, value)?;
        if pattern.is_none_or(|p| glob::matches(p, &element)) {
            found.push(Reply::Bulk(element));
            found.extend(extra.map(Reply::Bulk));
        }
    }
    Ok(reply(next, found))
}

/// `MATCH pattern` and `COUNT n` (10 by default).
fn options(opts: &[Vec<u8>]) -> Result<(Option<&[u8]>, usize), crate::commands::Fail> {
    let (mut pattern, mut count) = (None, 10);
    for pair in opts.chunks(2) {
        let [option, value] = pair else {
            return Err(syntax_error());
        };
        match option.to_ascii_lowercase().as_slice() {
            b"match" => pattern = Some(value.as_slice()),
            b"count" => count = count_arg(value)?,
            _ => return Err(syntax_error()),
        }
    }
    Ok((pattern, count))
}

/// The sub-keys a scan of `kind` walks: from, and the end (exclusive).
fn bounds(kind: Kind) -> (&'static [u8], Option<&'static [u8]>) {
    match kind {
        Kind::ZSet => (b"m", Some(b"n")),
        _ => (b"", None),
    }
}

/// What a scan returns for one element: its field or member, and for a
/// hash its value, for a sorted set its score (as Redis prints one).
fn element_of(
    kind: Kind,
    mut sub: Vec<u8>,
    value: Vec<u8>,
) -> Result<(Vec<u8>, Option<Vec<u8>>), crate::commands::Fail> {
    Ok(match kind {
        Kind::Hash => (sub, Some(value)),
        Kind::Set => (sub.split_off(8.min(sub.len())), None),
        _ => {
            let bits = <[u8; 8]>::try_from(value.as_slice())
                .map_err(|_| fail("ERR corrupt sorted set: a score is not 8 bytes"))?;
            let score = f64::from_bits(u64::from_be_bytes(bits));
            (sub.split_off(1), Some(format_double(score).into_bytes()))
        }
    })
}

fn reply(next: u64, found: Vec<Reply>) -> Reply {
    Reply::Array(vec![Reply::bulk(next.to_string()), Reply::Array(found)])
}
