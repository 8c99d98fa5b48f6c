//! String commands: GET SET GETSET SETNX SETEX PSETEX GETDEL GETEX MGET
//! MSET MSETNX APPEND STRLEN GETRANGE SETRANGE INCR INCRBY DECR DECRBY
//! INCRBYFLOAT.

use super::{fail, int_arg, not_an_integer, syntax_error, Fail, Outcome};
use crate::access::Access;
use crate::collections::{drop_items_of, wrong_type};
use crate::cursors::Cursors;
use crate::incrbyfloat::IncrError;
use crate::notify::{GENERIC, STRING};
use crate::registry::Mode;
use crate::resp::{Reply, MAX_BULK};
use crate::store::{now_ms, Kind, Value};

/// The string at `key`; `WRONGTYPE` if it holds a collection.
fn string(acc: &mut dyn Access, key: &[u8]) -> Result<Option<Value>, Fail> {
    match acc.get(key)? {
        Some(v) if v.kind != Kind::String => Err(wrong_type()),
        v => Ok(v),
    }
}

/// How `SET` reaches the engine: a plain one (with at most EX, PX, EXAT
/// or PXAT) writes blindly; NX, XX, GET and KEEPTTL read first.
pub fn mode(args: &[Vec<u8>]) -> Mode {
    let reads = args[3..].iter().any(|a| {
        let a = a.to_ascii_lowercase();
        a == b"nx" || a == b"xx" || a == b"get" || a == b"keepttl"
    });
    match reads {
        true => Mode::Transaction,
        false => Mode::Direct,
    }
}

pub fn run(name: &str, a: &[Vec<u8>], acc: &mut dyn Access, _: &Cursors) -> Outcome {
    match name {
        "get" => Ok(bulk_or_null(string(acc, &a[1])?)),
        "set" => set(a, acc),
        // SET key value GET: the old value, and no expiry kept.
        "getset" => {
            let old = string(acc, &a[1])?;
            acc.set(&a[1], &Value::new(a[2].clone(), 0))?;
            acc.notify(STRING, "set", &a[1]);
            Ok(bulk_or_null(old))
        }
        "setnx" => match acc.get(&a[1])? {
            Some(_) => Ok(Reply::Int(0)),
            None => {
                acc.set(&a[1], &Value::new(a[2].clone(), 0))?;
                acc.notify(STRING, "set", &a[1]);
                Ok(Reply::Int(1))
            }
        },
        "setex" | "psetex" => {
            let n = int_arg(&a[2])?;
            let ms = if name == "setex" {
                n.checked_mul(1000)
            } else {
                Some(n)
            };
            // Like Redis, a time whose deadline overflows is invalid.
            let at = ms
                .filter(|&ms| ms > 0)
                .and_then(|ms| ms.checked_add(now_ms() as i64));
            match at {
                Some(at) => {
                    acc.set(&a[1], &Value::new(a[3].clone(), at as u64))?;
                    acc.notify(STRING, "set", &a[1]);
                    acc.notify(GENERIC, "expire", &a[1]);
                    Ok(Reply::ok())
                }
                _ => Err(fail(&format!(
                    "ERR invalid expire time in '{name}' command"
                ))),
            }
        }
        "getdel" => {
            let v = string(acc, &a[1])?;
            if v.is_some() {
                acc.del(&a[1])?;
                acc.notify(GENERIC, "del", &a[1]);
            }
            Ok(bulk_or_null(v))
        }
        "getex" => getex(a, acc),
        "mget" => {
            let mut out = Vec::with_capacity(a.len() - 1);
            for k in &a[1..] {
                // MGET answers nil for a key of another kind.
                let v = acc.get(k)?.filter(|v| v.kind == Kind::String);
                out.push(bulk_or_null(v));
            }
            Ok(Reply::Array(out))
        }
        "mset" | "msetnx" => mset(name, a, acc),
        "append" => {
            let mut v = string(acc, &a[1])?.unwrap_or(Value::new(Vec::new(), 0));
            check_size(v.data.len() + a[2].len())?;
            v.data.extend_from_slice(&a[2]);
            acc.set(&a[1], &v)?;
            acc.notify(STRING, "append", &a[1]);
            Ok(Reply::Int(v.data.len() as i64))
        }
        "strlen" => Ok(Reply::Int(
            string(acc, &a[1])?.map_or(0, |v| v.data.len() as i64),
        )),
        "getrange" | "substr" => getrange(a, acc),
        "lcs" => super::lcs::lcs(a, acc),
        "setrange" => setrange(a, acc),
        "incr" => incr_by(acc, &a[1], 1),
        "decr" => incr_by(acc, &a[1], -1),
        "incrby" => incr_by(acc, &a[1], int_arg(&a[2])?),
        "decrby" => {
            let by = int_arg(&a[2])?
                .checked_neg()
                .ok_or_else(|| fail("ERR decrement would overflow"))?;
            incr_by(acc, &a[1], by)
        }
        "incrbyfloat" => incr_by_float(acc, &a[1], &a[2]),
        _ => Err(fail("ERR unknown command")),
    }
}

fn bulk_or_null(v: Option<Value>) -> Reply {
    v.map_or(Reply::Null, |v| Reply::Bulk(v.data))
}

fn check_size(len: usize) -> Result<(), Fail> {
    match len > MAX_BULK {
        true => Err(fail(
            "ERR string exceeds maximum allowed size (proto-max-bulk-len)",
        )),
        false => Ok(()),
    }
}

/// An expiry option's time as an absolute millisecond, from its unit.
fn expiry_at(option: &[u8], arg: &[u8], cmd: &str) -> Result<u64, Fail> {
    let n = int_arg(arg)?;
    let bad = || fail(&format!("ERR invalid expire time in '{cmd}' command"));
    if n <= 0 {
        return Err(bad());
    }
    let now = now_ms() as i64;
    let at = match option {
        b"ex" => n.checked_mul(1000).and_then(|ms| ms.checked_add(now)),
        b"px" => n.checked_add(now),
        b"exat" => n.checked_mul(1000),
        b"pxat" => Some(n),
        _ => return Err(syntax_error()),
    };
    at.map(|t| t as u64).ok_or_else(bad)
}

fn set(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let (mut nx, mut xx, mut get, mut keep_ttl) = (false, false, false, false);
    // The time is checked after every option parses, as Redis does.
    let mut expiry: Option<(Vec<u8>, &[u8])> = None;
    let mut i = 3;
    while i < a.len() {
        let opt = a[i].to_ascii_lowercase();
        match opt.as_slice() {
            b"nx" if !xx => nx = true,
            b"xx" if !nx => xx = true,
            b"get" => get = true,
            b"keepttl" if expiry.is_none() => keep_ttl = true,
            b"ex" | b"px" | b"exat" | b"pxat" if expiry.is_none() && !keep_ttl => {
                let arg = a.get(i + 1).ok_or_else(syntax_error)?;
                expiry = Some((opt, arg));
                i += 1;
            }
            _ => return Err(syntax_error()),
        }
        i += 1;
    }
    let expires = match expiry {
        Some((opt, arg)) => Some(expiry_at(&opt, arg, "set")?),
        None => None,
    };
    let old = match nx || xx || get || keep_ttl {
        true => acc.get(&a[1])?,
        false => None,
    };
    if get && old.as_ref().is_some_and(|v| v.kind != Kind::String) {
        return Err(wrong_type());
    }
    let reply_old = |old: Option<Value>| bulk_or_null(old);
    if (nx && old.is_some()) || (xx && old.is_none()) {
        return Ok(if get { reply_old(old) } else { Reply::Null });
    }
    let ttl = match (keep_ttl, &old) {
        (true, Some(v)) => v.expires_at,
        _ => expires.unwrap_or(0),
    };
    if let Some(old) = &old {
        drop_items_of(acc, &a[1], old)?;
    }
    acc.set(&a[1], &Value::new(a[2].clone(), ttl))?;
    acc.notify(STRING, "set", &a[1]);
    if expires.is_some() {
        acc.notify(GENERIC, "expire", &a[1]);
    }
    Ok(if get { reply_old(old) } else { Reply::ok() })
}

/// `GETEX key [EX s | PX ms | EXAT t | PXAT t | PERSIST]`. As in Redis, a
/// malformed option is an error before the key is looked up, but the time
/// is checked only if the key exists (a missing key answers nil).
fn getex(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let option = a.get(2).map(|o| o.to_ascii_lowercase());
    match (option.as_deref(), a.len()) {
        (None, 2) | (Some(b"persist"), 3) => {}
        (Some(b"ex" | b"px" | b"exat" | b"pxat"), 4) => {}
        _ => return Err(syntax_error()),
    }
    let Some(mut v) = string(acc, &a[1])? else {
        return Ok(Reply::Null);
    };
    let new_ttl = match (option.as_deref(), a.get(3)) {
        // Redis writes (and so touches watched keys) only to remove a TTL.
        (Some(b"persist"), _) if v.expires_at == 0 => None,
        (Some(b"persist"), _) => Some(0),
        (Some(opt), Some(time)) => Some(expiry_at(opt, time, "getex")?),
        _ => None,
    };
    if let Some(at) = new_ttl {
        v.expires_at = at;
        acc.set(&a[1], &v)?;
        acc.notify(GENERIC, if at == 0 { "persist" } else { "expire" }, &a[1]);
    }
    Ok(Reply::Bulk(v.data))
}

fn mset(name: &str, a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    if a.len().is_multiple_of(2) {
        return Err(fail(&format!(
            "ERR wrong number of arguments for '{name}' command"
        )));
    }
    if name == "msetnx" {
        for pair in a[1..].chunks(2) {
            if acc.get(&pair[0])?.is_some() {
                return Ok(Reply::Int(0));
            }
        }
    }
    for pair in a[1..].chunks(2) {
        acc.set(&pair[0], &Value::new(pair[1].clone(), 0))?;
        acc.notify(STRING, "set", &pair[0]);
    }
    Ok(match name {
        "msetnx" => Reply::Int(1),
        _ => Reply::ok(),
    })
}

/// Redis's index rules: negative counts from the end, clamped.
fn getrange(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let (start, end) = (int_arg(&a[2])?, int_arg(&a[3])?);
    let data = string(acc, &a[1])?.map(|v| v.data).unwrap_or_default();
    let len = data.len() as i64;
    let fix = |i: i64| if i < 0 { (len + i).max(0) } else { i };
    let (s, e) = (fix(start), fix(end).min(len - 1));
    if len == 0 || s > e || (start < 0 && end < 0 && start > end) {
        return Ok(Reply::Bulk(Vec::new()));
    }
    Ok(Reply::Bulk(data[s as usize..=e as usize].to_vec()))
}

fn setrange(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let offset = int_arg(&a[2])?;
    if offset < 0 {
        return Err(fail("ERR offset is out of range"));
    }
    let offset = offset as usize;
    let mut v = string(acc, &a[1])?.unwrap_or(Value::new(Vec::new(), 0));
    if a[3].is_empty() {
        return Ok(Reply::Int(v.data.len() as i64));
    }
    check_size(offset + a[3].len())?;
    if v.data.len() < offset + a[3].len() {
        v.data.resize(offset + a[3].len(), 0);
    }
    v.data[offset..offset + a[3].len()].copy_from_slice(&a[3]);
    acc.set(&a[1], &v)?;
    acc.notify(STRING, "setrange", &a[1]);
    Ok(Reply::Int(v.data.len() as i64))
}

fn incr_by(acc: &mut dyn Access, key: &[u8], by: i64) -> Outcome {
    let v = string(acc, key)?;
    let (current, expires) = match &v {
        Some(v) => (
            int_arg(&v.data).map_err(|_| not_an_integer())?,
            v.expires_at,
        ),
        None => (0, 0),
    };
    let next = current
        .checked_add(by)
        .ok_or_else(|| fail("ERR increment or decrement would overflow"))?;
    acc.set(key, &Value::new(next.to_string().into_bytes(), expires))?;
    acc.notify(STRING, "incrby", key);
    Ok(Reply::Int(next))
}

fn incr_by_float(acc: &mut dyn Access, key: &[u8], by: &[u8]) -> Outcome {
    let v = string(acc, key)?;
    let text = crate::incrbyfloat::incr_by_float(v.as_ref().map(|v| &v.data[..]), by).map_err(
        |e| match e {
            IncrError::NotAFloat => fail("ERR value is not a valid float"),
            IncrError::NotFinite => fail("ERR increment would produce NaN or Infinity"),
        },
    )?;
    let expires = v.map_or(0, |v| v.expires_at);
    acc.set(key, &Value::new(text.clone(), expires))?;
    acc.notify(STRING, "incrbyfloat", key);
    Ok(Reply::Bulk(text))
}
