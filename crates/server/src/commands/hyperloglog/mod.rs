//! HyperLogLog commands: PFADD PFCOUNT PFMERGE, as Redis 7.0 answers them.
//! A HyperLogLog is a string (`sketch.rs` has its layout, Redis's), so
//! `GET`, `SET`, `DEL`, expiry and `TYPE` (`string`) treat it as one, and
//! a string copied from Redis counts here as there.
//!
//! As in Redis, `PFCOUNT` of one key stores the count it computed in the
//! string's header, so it writes the key (a `WATCH` on it sees that) when
//! the cached count was stale; `PFADD` and `PFMERGE` keep the key's
//! expiry.

mod sketch;

use super::{fail, Fail, Outcome};
use crate::access::Access;
use crate::collections::wrong_type;
use crate::cursors::Cursors;
use crate::resp::Reply;
use crate::store::{Kind, Value};
use sketch::REGISTERS;

pub fn run(name: &str, a: &[Vec<u8>], acc: &mut dyn Access, _: &Cursors) -> Outcome {
    match name {
        "pfadd" => pfadd(a, acc),
        "pfcount" if a.len() > 2 => {
            let mut max = vec![0u8; REGISTERS];
            merge_keys(acc, &a[1..], &mut max)?;
            Ok(Reply::Int(sketch::count_registers(&max) as i64))
        }
        "pfcount" => pfcount(a, acc),
        _ => pfmerge(a, acc),
    }
}

fn corrupt(_: sketch::Corrupt) -> Fail {
    fail("INVALIDOBJ Corrupted HLL object detected")
}

/// The HyperLogLog at `key`, if any; Redis's errors for a collection or a
/// string that is not one.
fn load(acc: &mut dyn Access, key: &[u8]) -> Result<Option<Value>, Fail> {
    match acc.get(key)? {
        Some(v) if v.kind != Kind::String => Err(wrong_type()),
        Some(v) if !sketch::is_hll(&v.data) => Err(fail(
            "WRONGTYPE Key is not a valid HyperLogLog string value.",
        )),
        v => Ok(v),
    }
}

/// `PFADD key [element ...]`: 1 if the key was created or a register
/// changed.
fn pfadd(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let (mut v, mut updated) = match load(acc, &a[1])? {
        Some(v) => (v, false),
        None => (Value::new(sketch::empty(), 0), true),
    };
    for ele in &a[2..] {
        updated |= sketch::add(&mut v.data, ele).map_err(corrupt)?;
    }
    if updated {
        sketch::invalidate(&mut v.data);
        acc.set(&a[1], &v)?;
        acc.notify(crate::notify::STRING, "pfadd", &a[1]);
    }
    Ok(Reply::Int(updated as i64))
}

/// `PFCOUNT key`: the cached count, or one computed and cached.
fn pfcount(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let Some(mut v) = load(acc, &a[1])? else {
        return Ok(Reply::Int(0));
    };
    if let Some(card) = sketch::cached(&v.data) {
        return Ok(Reply::Int(card as i64));
    }
    let card = sketch::count(&v.data).map_err(corrupt)?;
    sketch::set_cached(&mut v.data, card);
    acc.set(&a[1], &v)?;
    Ok(Reply::Int(card as i64))
}

/// Raises `max` to the registers of each HyperLogLog in `keys` (a missing
/// key counts as empty); whether any of them was dense.
fn merge_keys(acc: &mut dyn Access, keys: &[Vec<u8>], max: &mut [u8]) -> Result<bool, Fail> {
    let mut dense = false;
    for key in keys {
        if let Some(v) = load(acc, key)? {
            dense |= sketch::is_dense(&v.data);
            sketch::merge_into(max, &v.data).map_err(corrupt)?;
        }
    }
    Ok(dense)
}

/// `PFMERGE dest [source ...]`: the union of the sources and `dest` into
/// `dest`, dense if any of them was (else sparse while it fits, as Redis
/// 7.0).
fn pfmerge(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let mut max = vec![0u8; REGISTERS];
    let dense = merge_keys(acc, &a[1..], &mut max)?;
    let mut v = load(acc, &a[1])?.unwrap_or_else(|| Value::new(sketch::empty(), 0));
    if dense {
        sketch::to_dense(&mut v.data).map_err(corrupt)?;
    }
    for (i, m) in max.iter().enumerate() {
        if *m > 0 {
            // Redis ignores a failure here: `dest` was read whole above.
            let _ = sketch::set(&mut v.data, i, *m);
        }
    }
    sketch::invalidate(&mut v.data);
    acc.set(&a[1], &v)?;
    acc.notify(crate::notify::STRING, "pfadd", &a[1]);
    Ok(Reply::ok())
}
