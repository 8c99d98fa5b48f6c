//! Hash commands: HSET HMSET HSETNX HGET HMGET HDEL HLEN HEXISTS HSTRLEN
//! HGETALL HKEYS HVALS HINCRBY HINCRBYFLOAT (HRANDFIELD in `random.rs`). A field is one element, its
//! sub-key the field's bytes.

use super::Coll;
use crate::access::Access;
use crate::commands::{fail, int_arg, Fail, Outcome};
use crate::cursors::Cursors;
use crate::incrbyfloat::{incr_by_float, IncrError};
use crate::notify::HASH;
use crate::resp::Reply;
use crate::store::Kind;

pub fn run(name: &str, a: &[Vec<u8>], acc: &mut dyn Access, _: &Cursors) -> Outcome {
    match name {
        "hset" | "hmset" => hset(name, a, acc),
        "hrandfield" => super::random::hrandfield(a, acc),
        "hsetnx" => {
            let mut hash = Coll::load_or_new(acc, &a[1], Kind::Hash)?;
            if field(acc, &hash, &a[2])?.is_some() {
                return Ok(Reply::Int(0));
            }
            put_field(acc, &mut hash, &a[2], &a[3], true)?;
            hash.save_and_tell(acc, HASH, "hset")?;
            Ok(Reply::Int(1))
        }
        "hget" => Ok(match Coll::load(acc, &a[1], Kind::Hash)? {
            Some(hash) => field(acc, &hash, &a[2])?.map_or(Reply::Null, Reply::Bulk),
            None => Reply::Null,
        }),
        "hmget" => {
            let hash = Coll::load(acc, &a[1], Kind::Hash)?;
            let mut out = Vec::with_capacity(a.len() - 2);
            for f in &a[2..] {
                out.push(match &hash {
                    Some(hash) => field(acc, hash, f)?.map_or(Reply::Null, Reply::Bulk),
                    None => Reply::Null,
                });
            }
            Ok(Reply::Array(out))
        }
        "hdel" => hdel(a, acc),
        "hlen" => Ok(Reply::Int(
            Coll::load(acc, &a[1], Kind::Hash)?.map_or(0, |h| h.count()),
        )),
        "hexists" => Ok(Reply::Int(match Coll::load(acc, &a[1], Kind::Hash)? {
            Some(hash) => field(acc, &hash, &a[2])?.is_some() as i64,
            None => 0,
        })),
        "hstrlen" => Ok(Reply::Int(match Coll::load(acc, &a[1], Kind::Hash)? {
            Some(hash) => field(acc, &hash, &a[2])?.map_or(0, |v| v.len() as i64),
            None => 0,
        })),
        "hgetall" | "hkeys" | "hvals" => listing(name, a, acc),
        "hincrby" => hincrby(a, acc),
        "hincrbyfloat" => hincrbyfloat(a, acc),
        _ => Err(fail("ERR unknown command")),
    }
}

/// Field `name` of the hash at `key` (`None` if either is missing).
pub(super) fn field_of(
    acc: &mut dyn Access,
    key: &[u8],
    name: &[u8],
) -> Result<Option<Vec<u8>>, Fail> {
    match Coll::load(acc, key, Kind::Hash)? {
        Some(hash) => field(acc, &hash, name),
        None => Ok(None),
    }
}

fn field(acc: &mut dyn Access, hash: &Coll, name: &[u8]) -> Result<Option<Vec<u8>>, Fail> {
    Ok(acc.item(&hash.item_key(name))?)
}

/// Sets a field, `new` if the hash did not have it.
fn put_field(
    acc: &mut dyn Access,
    hash: &mut Coll,
    name: &[u8],
    value: &[u8],
    new: bool,
) -> Result<(), Fail> {
    acc.put_item(&hash.item_key(name), value)?;
    hash.len += new as i64;
    Ok(())
}

fn hset(name: &str, a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    if !a.len().is_multiple_of(2) {
        return Err(fail(&format!(
            "ERR wrong number of arguments for '{name}' command"
        )));
    }
    let mut hash = Coll::load_or_new(acc, &a[1], Kind::Hash)?;
    let mut added = 0;
    for pair in a[2..].chunks_exact(2) {
        let new = field(acc, &hash, &pair[0])?.is_none();
        put_field(acc, &mut hash, &pair[0], &pair[1], new)?;
        added += new as i64;
    }
    hash.save_and_tell(acc, HASH, "hset")?;
    Ok(match name {
        "hmset" => Reply::ok(),
        _ => Reply::Int(added),
    })
}

fn hdel(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let Some(mut hash) = Coll::load(acc, &a[1], Kind::Hash)? else {
        return Ok(Reply::Int(0));
    };
    let mut removed = 0;
    for f in &a[2..] {
        let key = hash.item_key(f);
        if acc.item(&key)?.is_some() {
            acc.del_item(&key)?;
            removed += 1;
        }
    }
    if removed > 0 {
        hash.len -= removed;
        hash.save_and_tell(acc, HASH, "hdel")?;
    }
    Ok(Reply::Int(removed))
}

fn listing(name: &str, a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let Some(hash) = Coll::load(acc, &a[1], Kind::Hash)? else {
        return Ok(match name {
            "hgetall" => Reply::Map(Vec::new()),
            _ => Reply::Array(Vec::new()),
        });
    };
    let mut pairs = Vec::new();
    hash.for_each(acc, |f, v| {
        pairs.push((f.to_vec(), v.to_vec()));
        true
    })?;
    Ok(match name {
        "hgetall" => Reply::Map(
            pairs
                .into_iter()
                .map(|(f, v)| (Reply::Bulk(f), Reply::Bulk(v)))
                .collect(),
        ),
        "hkeys" => Reply::Array(pairs.into_iter().map(|(f, _)| Reply::Bulk(f)).collect()),
        _ => Reply::Array(pairs.into_iter().map(|(_, v)| Reply::Bulk(v)).collect()),
    })
}

fn hincrby(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let by = int_arg(&a[3])?;
    let mut hash = Coll::load_or_new(acc, &a[1], Kind::Hash)?;
    let old = field(acc, &hash, &a[2])?;
    let current = match &old {
        Some(v) => int_arg(v).map_err(|_| fail("ERR hash value is not an integer"))?,
        None => 0,
    };
    let next = current
        .checked_add(by)
        .ok_or_else(|| fail("ERR increment or decrement would overflow"))?;
    put_field(
        acc,
        &mut hash,
        &a[2],
        next.to_string().as_bytes(),
        old.is_none(),
    )?;
    hash.save_and_tell(acc, HASH, "hincrby")?;
    Ok(Reply::Int(next))
}

fn hincrbyfloat(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    match incr_by_float(None, &a[3]) {
        Err(IncrError::NotAFloat) => return Err(fail("ERR value is not a valid float")),
        Err(IncrError::NotFinite) => return Err(fail("ERR value is NaN or Infinity")),
        Ok(_) => {}
    }
    let mut hash = Coll::load_or_new(acc, &a[1], Kind::Hash)?;
    let current = field(acc, &hash, &a[2])?;
    let text = incr_by_float(current.as_deref(), &a[3]).map_err(|e| match e {
        IncrError::NotAFloat => fail("ERR hash value is not a float"),
        IncrError::NotFinite => fail("ERR increment would produce NaN or Infinity"),
    })?;
    put_field(acc, &mut hash, &a[2], &text, current.is_none())?;
    hash.save_and_tell(acc, HASH, "hincrbyfloat")?;
    Ok(Reply::Bulk(text))
}
