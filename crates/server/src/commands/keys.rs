//! Key commands: DEL UNLINK EXISTS TOUCH TYPE RENAME RENAMENX COPY KEYS SCAN
//! RANDOMKEY EXPIRE PEXPIRE EXPIREAT PEXPIREAT TTL PTTL EXPIRETIME
//! PEXPIRETIME PERSIST.

use super::{fail, int_arg, syntax_error, Outcome};
use crate::access::Access;
use crate::collections::{copy_value, delete_key, drop_items_of, move_value};
use crate::cursors::Cursors;
use crate::glob;
use crate::notify::GENERIC;
use crate::resp::Reply;
use crate::store::now_ms;

/// Keys a SCAN or KEYS reads from the engine per step.
const STEP: usize = 1024;

pub fn run(name: &str, a: &[Vec<u8>], acc: &mut dyn Access, cursors: &Cursors) -> Outcome {
    match name {
        "del" | "unlink" => {
            let mut n = 0;
            for k in &a[1..] {
                if delete_key(acc, k)? {
                    acc.notify(GENERIC, "del", k);
                    n += 1;
                }
            }
            Ok(Reply::Int(n))
        }
        // TOUCH counts as EXISTS does: there is no access time to update.
        "exists" | "touch" => {
            let mut n = 0;
            for k in &a[1..] {
                n += acc.get(k)?.is_some() as i64;
            }
            Ok(Reply::Int(n))
        }
        "type" => Ok(Reply::Simple(
            acc.get(&a[1])?.map_or("none", |v| v.kind.name()).into(),
        )),
        "rename" => {
            let Some(v) = acc.get(&a[1])? else {
                return Err(fail("ERR no such key"));
            };
            if a[1] != a[2] {
                delete_key(acc, &a[2])?;
                move_value(acc, &a[1], &a[2], &v)?;
                acc.notify(GENERIC, "rename_from", &a[1]);
                acc.notify(GENERIC, "rename_to", &a[2]);
            }
            Ok(Reply::ok())
        }
        "renamenx" => {
            let Some(v) = acc.get(&a[1])? else {
                return Err(fail("ERR no such key"));
            };
            if acc.get(&a[2])?.is_some() {
                return Ok(Reply::Int(0));
            }
            move_value(acc, &a[1], &a[2], &v)?;
            acc.notify(GENERIC, "rename_from", &a[1]);
            acc.notify(GENERIC, "rename_to", &a[2]);
            Ok(Reply::Int(1))
        }
        "copy" => copy(a, acc),
        "randomkey" => Ok(random_key(acc)?.map_or(Reply::Null, Reply::Bulk)),
        "expiretime" | "pexpiretime" => Ok(Reply::Int(match acc.get(&a[1])? {
            None => -2,
            Some(v) if v.expires_at == 0 => -1,
            // Rounded as Redis does, without overflow at the latest time.
            Some(v) if name == "expiretime" => ((u128::from(v.expires_at) + 500) / 1000) as i64,
            Some(v) => v.expires_at as i64,
        })),
        "keys" => {
            let mut out = Vec::new();
            let mut after: Option<Vec<u8>> = None;
            loop {
                let batch = acc.keys_after(after.as_deref(), STEP)?;
                let done = batch.len() < STEP;
                after = batch.last().cloned();
                out.extend(
                    batch
                        .into_iter()
                        .filter(|k| glob::matches(&a[1], k))
                        .map(Reply::Bulk),
                );
                if done {
                    return Ok(Reply::Array(out));
                }
            }
        }
        "scan" => scan(a, acc, cursors),
        "expire" | "pexpire" | "expireat" | "pexpireat" => expire(name, a, acc),
        "ttl" | "pttl" => Ok(Reply::Int(match acc.get(&a[1])? {
            None => -2,
            Some(v) if v.expires_at == 0 => -1,
            Some(v) => {
                let left = v.expires_at.saturating_sub(now_ms()) as i64;
                match name {
                    // Redis rounds to the nearest second.
                    "ttl" => (left + 500) / 1000,
                    _ => left,
                }
            }
        })),
        "persist" => match acc.get(&a[1])? {
            Some(mut v) if v.expires_at != 0 => {
                v.expires_at = 0;
                acc.set(&a[1], &v)?;
                acc.notify(GENERIC, "persist", &a[1]);
                Ok(Reply::Int(1))
            }
            _ => Ok(Reply::Int(0)),
        },
        _ => Err(fail("ERR unknown command")),
    }
}

fn scan(a: &[Vec<u8>], acc: &mut dyn Access, cursors: &Cursors) -> Outcome {
    let cursor = cursor_arg(&a[1])?;
    let (mut pattern, mut count): (Option<&[u8]>, usize) = (None, 10);
    let mut kind: Option<Vec<u8>> = None;
    let mut i = 2;
    while i < a.len() {
        let value = a.get(i + 1).ok_or_else(syntax_error)?;
        match a[i].to_ascii_lowercase().as_slice() {
            b"match" => pattern = Some(value),
            b"count" => count = count_arg(value)?,
            b"type" => kind = Some(value.to_ascii_lowercase()),
            _ => return Err(syntax_error()),
        }
        i += 2;
    }
    let after = match cursor {
        0 => None,
        id => cursors.resume(id, b""),
    };
    // One call reads at most 100,000 keys, whatever its COUNT.
    let limit = count.min(100_000);
    let batch = acc.keys_after(after.as_deref(), limit)?;
    let next = match batch.len() < limit {
        true => 0,
        false => batch.last().map_or(0, |k| cursors.save(b"", k.clone())),
    };
    let mut keys = Vec::new();
    for k in batch {
        if !pattern.is_none_or(|p| glob::matches(p, &k)) {
            continue;
        }
        if let Some(kind) = &kind {
            match acc.get(&k)? {
                Some(v) if v.kind.name().as_bytes() == kind.as_slice() => {}
                _ => continue,
            }
        }
        keys.push(Reply::Bulk(k));
    }
    Ok(Reply::Array(vec![
        Reply::bulk(next.to_string()),
        Reply::Array(keys),
    ]))
}

/// A scan's cursor argument, read as Redis reads one (C's `strtoul`):
/// an optional sign, then digits; "" is 0 and "-n" wraps around.
pub(crate) fn cursor_arg(arg: &[u8]) -> Result<u64, crate::commands::Fail> {
    let invalid = || fail("ERR invalid cursor");
    if arg.is_empty() {
        return Ok(0);
    }
    let (negative, digits) = match arg[0] {
        b'-' => (true, &arg[1..]),
        b'+' => (false, &arg[1..]),
        _ => (false, arg),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(invalid());
    }
    let n = std::str::from_utf8(digits)
        .ok()
        .and_then(|d| d.parse::<u64>().ok())
        .ok_or_else(invalid)?;
    Ok(if negative { n.wrapping_neg() } else { n })
}

/// A scan's `COUNT` (at least 1).
pub(crate) fn count_arg(arg: &[u8]) -> Result<usize, crate::commands::Fail> {
    usize::try_from(int_arg(arg)?)
        .ok()
        .filter(|&c| c >= 1)
        .ok_or_else(syntax_error)
}

fn expire(name: &str, a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    // The options are checked before the time, as Redis does.
    let (mut nx, mut xx, mut gt, mut lt) = (false, false, false, false);
    for opt in &a[3..] {
        match opt.to_ascii_lowercase().as_slice() {
            b"nx" => nx = true,
            b"xx" => xx = true,
            b"gt" => gt = true,
            b"lt" => lt = true,
            _ => {
                return Err(fail(&format!(
                    "ERR Unsupported option {}",
                    String::from_utf8_lossy(opt)
                )))
            }
        }
    }
    if nx && (xx || gt || lt) {
        return Err(fail(
            "ERR NX and XX, GT or LT options at the same time are not compatible",
        ));
    }
    if gt && lt {
        return Err(fail(
            "ERR GT and LT options at the same time are not compatible",
        ));
    }
    let n = int_arg(&a[2])?;
    let now = now_ms() as i64;
    let at = match name {
        "expire" => n.checked_mul(1000).and_then(|ms| ms.checked_add(now)),
        "pexpire" => n.checked_add(now),
        "expireat" => n.checked_mul(1000),
        _ => Some(n),
    }
    .ok_or_else(|| fail(&format!("ERR invalid expire time in '{name}' command")))?;
    let Some(mut v) = acc.get(&a[1])? else {
        return Ok(Reply::Int(0));
    };
    let current = v.expires_at;
    let skip = (nx && current != 0)
        || (xx && current == 0)
        || (gt && (current == 0 || at as u64 <= current))
        || (lt && current != 0 && at as u64 >= current);
    if skip {
        return Ok(Reply::Int(0));
    }
    if at <= now {
        // An expiry in the past deletes the key, as in Redis.
        drop_items_of(acc, &a[1], &v)?;
        acc.del(&a[1])?;
        acc.notify(GENERIC, "del", &a[1]);
    } else {
        v.expires_at = at as u64;
        acc.set(&a[1], &v)?;
        acc.notify(GENERIC, "expire", &a[1]);
    }
    Ok(Reply::Int(1))
}

/// `COPY source destination [DB 0] [REPLACE]`, in Redis 7.0's order of
/// checks: 1 if copied (with its expiry), 0 if the source is missing or
/// the destination exists without `REPLACE`. There is one database, so
/// `DB` other than 0 is refused as `SELECT` refuses it.
fn copy(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let mut replace = false;
    let mut i = 3;
    while i < a.len() {
        if a[i].eq_ignore_ascii_case(b"replace") {
            replace = true;
            i += 1;
        } else if a[i].eq_ignore_ascii_case(b"db") && i + 1 < a.len() {
            if int_arg(&a[i + 1])? != 0 {
                return Err(fail("ERR DB index is out of range"));
            }
            i += 2;
        } else {
            return Err(syntax_error());
        }
    }
    if a[1] == a[2] {
        return Err(fail("ERR source and destination objects are the same"));
    }
    let Some(v) = acc.get(&a[1])? else {
        return Ok(Reply::Int(0));
    };
    if acc.get(&a[2])?.is_some() {
        if !replace {
            return Ok(Reply::Int(0));
        }
        delete_key(acc, &a[2])?;
    }
    copy_value(acc, &a[1], &a[2], &v)?;
    acc.notify(GENERIC, "copy_to", &a[2]);
    Ok(Reply::Int(1))
}

/// Databases up to this many keys are read whole for `RANDOMKEY`, whose
/// pick is then uniform.
const RANDOM_FROM_WHOLE: usize = 1024;
/// How many keys after a random point a larger database's pick is made
/// among.
const RANDOM_WINDOW: usize = 16;

/// `RANDOMKEY`'s key: uniform among the keys of a small database; in a
/// larger one, a key among those just after a random point between the
/// first and the last key, the point drawn uniformly over the first eight
/// bytes of the keys (so keys in sparse stretches of that byte order come
/// up more often: Redis picks from its hash table, uniformly; slsm keeps
/// keys in order and no count by position).
fn random_key(acc: &mut dyn Access) -> Result<Option<Vec<u8>>, super::Fail> {
    KeySample::new(acc)?.pick(acc)
}

/// Random picks of keys, `RANDOMKEY`'s (its doc says how they are drawn);
/// the first and last keys are found once for any number of picks.
pub(crate) struct KeySample {
    /// The first keys, all of them in a small database.
    first: Vec<Vec<u8>>,
    /// The span of the keys' first eight bytes, in a larger one.
    span: Option<(u64, u64)>,
}

impl KeySample {
    pub fn new(acc: &mut dyn Access) -> Result<KeySample, super::Fail> {
        let first = acc.keys_after(None, RANDOM_FROM_WHOLE)?;
        let span = match first.len() < RANDOM_FROM_WHOLE {
            true => None,
            false => {
                let high = prefix_number(&last_key_prefix(acc, &first[0])?);
                Some((prefix_number(&first[0]), high))
            }
        };
        Ok(KeySample { first, span })
    }

    /// Every key, if the database is small enough to have been read whole.
    pub fn whole(&self) -> Option<&[Vec<u8>]> {
        match self.span {
            None => Some(&self.first),
            Some(_) => None,
        }
    }

    /// One key drawn at random; `None` in an empty database.
    pub fn pick(&self, acc: &mut dyn Access) -> Result<Option<Vec<u8>>, super::Fail> {
        use crate::collections::random_u64;
        let Some((low, high)) = self.span else {
            return Ok(match self.first.is_empty() {
                true => None,
                false => {
                    Some(self.first[(random_u64() % self.first.len() as u64) as usize].clone())
                }
            });
        };
        let point = low + random_u64() % (high.saturating_sub(low) + 1);
        let mut window = acc.keys_after(Some(&point.to_be_bytes()), RANDOM_WINDOW)?;
        if window.is_empty() {
            window = self.first.iter().take(RANDOM_WINDOW).cloned().collect();
        }
        Ok(Some(window.swap_remove(
            (random_u64() % window.len() as u64) as usize,
        )))
    }
}

/// A key's first eight bytes as a big-endian number (short keys padded
/// with zeros).
fn prefix_number(key: &[u8]) -> u64 {
    let mut bytes = [0u8; 8];
    let n = key.len().min(8);
    bytes[..n].copy_from_slice(&key[..n]);
    u64::from_be_bytes(bytes)
}

/// The first eight bytes of the last key (at or above `first`), found a
/// byte at a time by binary search over seeks: at most 8 x 8 seeks.
fn last_key_prefix(acc: &mut dyn Access, first: &[u8]) -> Result<Vec<u8>, super::Fail> {
    let mut prefix: Vec<u8> = Vec::new();
    for _ in 0..8 {
        // The highest byte `b` with a key at or after `prefix + b`.
        let (mut lo, mut hi) = (0u16, 255u16);
        let exists = |acc: &mut dyn Access, b: u16, prefix: &[u8]| -> Result<bool, super::Fail> {
            let mut probe = prefix.to_vec();
            probe.push(b as u8);
            // Keys after `probe` exclusive: `probe` itself is a key too.
            Ok(!acc.keys_after(Some(&probe), 1)?.is_empty() || acc.get(&probe)?.is_some())
        };
        if !exists(acc, 0, &prefix)? {
            break;
        }
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            match exists(acc, mid, &prefix)? {
                true => lo = mid,
                false => hi = mid - 1,
            }
        }
        prefix.push(lo as u8);
    }
    Ok(match prefix.as_slice() < first {
        true => first.to_vec(),
        false => prefix,
    })
}
