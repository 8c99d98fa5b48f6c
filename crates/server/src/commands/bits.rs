//! Bit commands on strings: SETBIT GETBIT BITCOUNT BITPOS BITOP (BITFIELD
//! and BITFIELD_RO in `bitfield.rs`), as Redis
//! 7.0's `bitops.c` answers them (bit 0 is the most significant bit of
//! the first byte; ranges in bytes, or in bits with `BIT`; negative ends
//! count from the end of the string).

use super::{fail, int_arg, syntax_error, Fail, Outcome};
use crate::access::Access;
use crate::collections::{drop_items_of, wrong_type};
use crate::cursors::Cursors;
use crate::resp::{Reply, MAX_BULK};
use crate::store::{Kind, Value};

pub fn run(name: &str, a: &[Vec<u8>], acc: &mut dyn Access, _: &Cursors) -> Outcome {
    match name {
        "setbit" => setbit(a, acc),
        "getbit" => {
            let offset = bit_offset(&a[2])?;
            let v = string(acc, &a[1])?;
            Ok(Reply::Int(v.map_or(0, |v| bit_at(&v.data, offset)) as i64))
        }
        "bitcount" => bitcount(a, acc),
        "bitpos" => bitpos(a, acc),
        "bitop" => bitop(a, acc),
        "bitfield" => super::bitfield::bitfield(a, acc, false),
        "bitfield_ro" => super::bitfield::bitfield(a, acc, true),
        _ => Err(fail("ERR unknown command")),
    }
}

/// The string at `key`; `WRONGTYPE` if it holds a collection.
fn string(acc: &mut dyn Access, key: &[u8]) -> Result<Option<Value>, Fail> {
    match acc.get(key)? {
        Some(v) if v.kind != Kind::String => Err(wrong_type()),
        v => Ok(v),
    }
}

/// A bit offset: 0 up to the last bit of a string of the largest size.
fn bit_offset(arg: &[u8]) -> Result<u64, Fail> {
    match int_arg(arg) {
        Ok(n) if n >= 0 && ((n as u64) >> 3) < MAX_BULK as u64 => Ok(n as u64),
        _ => Err(fail("ERR bit offset is not an integer or out of range")),
    }
}

fn bit_at(data: &[u8], offset: u64) -> u8 {
    let byte = (offset >> 3) as usize;
    data.get(byte)
        .map_or(0, |b| (b >> (7 - (offset & 7) as u32)) & 1)
}

fn setbit(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let offset = bit_offset(&a[2])?;
    let on = match int_arg(&a[3]) {
        Ok(b @ (0 | 1)) => b as u8,
        _ => return Err(fail("ERR bit is not an integer or out of range")),
    };
    // The key keeps its expiry: the string is changed in place.
    let found = string(acc, &a[1])?;
    let mut dirty = found.is_none();
    let mut v = found.unwrap_or(Value::new(Vec::new(), 0));
    let byte = (offset >> 3) as usize;
    if v.data.len() <= byte {
        v.data.resize(byte + 1, 0);
        dirty = true;
    }
    let shift = 7 - (offset & 7) as u32;
    let old = (v.data[byte] >> shift) & 1;
    // As Redis 7.0: a bit set to what it was is no write (a WATCH on the
    // key does not see it).
    if dirty || old != on {
        v.data[byte] = (v.data[byte] & !(1 << shift)) | (on << shift);
        acc.set(&a[1], &v)?;
        acc.notify(crate::notify::STRING, "setbit", &a[1]);
    }
    Ok(Reply::Int(old as i64))
}

/// A range of bits, first and last inclusive.
struct Range {
    first: u64,
    last: u64,
}

/// Whether a range is in bits: `BIT`, `BYTE` (the default), or a syntax
/// error.
fn unit(arg: Option<&Vec<u8>>) -> Result<bool, Fail> {
    match arg.map(|a| a.to_ascii_lowercase()).as_deref() {
        None | Some(b"byte") => Ok(false),
        Some(b"bit") => Ok(true),
        Some(_) => Err(syntax_error()),
    }
}

/// `start` and `end` (negative: from the end) over a string of `len`
/// bytes, in bits if `bits`: the bits covered, `None` if none.
fn range(start: i64, end: i64, bits: bool, len: usize) -> Option<Range> {
    let total = if bits { len as i64 * 8 } else { len as i64 };
    let clamp = |i: i64| if i < 0 { (total + i).max(0) } else { i };
    let (start, end) = (clamp(start), clamp(end).min(total - 1));
    if start > end {
        return None;
    }
    Some(match bits {
        true => Range {
            first: start as u64,
            last: end as u64,
        },
        false => Range {
            first: start as u64 * 8,
            last: end as u64 * 8 + 7,
        },
    })
}

/// The bytes a bit range covers, each with the mask of its bits in the
/// range (bit 0 of the range's first byte is its most significant).
fn bytes_of(r: &Range) -> impl Iterator<Item = (usize, u8)> + '_ {
    (r.first / 8..=r.last / 8).map(move |j| {
        let lo = r.first.max(j * 8) - j * 8;
        let hi = r.last.min(j * 8 + 7) - j * 8;
        let mask = (0xffu8 >> lo) & (0xffu8 << (7 - hi));
        (j as usize, mask)
    })
}

fn bitcount(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    // Redis 7.0's order: the key (0 if missing), the ends, a pair of
    // negative ends in the wrong order (0), then the unit.
    let Some(v) = string(acc, &a[1])? else {
        return Ok(Reply::Int(0));
    };
    let (start, end, bits) = match a.len() {
        2 => (0, -1, false),
        4 | 5 => {
            let (start, end) = (int_arg(&a[2])?, int_arg(&a[3])?);
            if start < 0 && end < 0 && start > end {
                return Ok(Reply::Int(0));
            }
            (start, end, unit(a.get(4))?)
        }
        _ => return Err(syntax_error()),
    };
    let Some(r) = range(start, end, bits, v.data.len()) else {
        return Ok(Reply::Int(0));
    };
    let count: u32 = bytes_of(&r)
        .map(|(i, mask)| (v.data[i] & mask).count_ones())
        .sum();
    Ok(Reply::Int(count as i64))
}

fn bitpos(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let bit = match int_arg(&a[2])? {
        b @ (0 | 1) => b as u8,
        _ => return Err(fail("ERR The bit argument must be 1 or 0.")),
    };
    let Some(v) = string(acc, &a[1])? else {
        return Ok(Reply::Int(if bit == 1 { -1 } else { 0 }));
    };
    // Redis 7.0's order: the start, the unit, then the end.
    let (start, end, bits) = match a.len() {
        3 => (0, -1, false),
        4..=6 => {
            let start = int_arg(&a[3])?;
            let bits = unit(a.get(5))?;
            let end = match a.get(4) {
                Some(end) => int_arg(end)?,
                None => -1,
            };
            (start, end, bits)
        }
        _ => return Err(syntax_error()),
    };
    let end_given = a.len() >= 5;
    let Some(r) = range(start, end, bits, v.data.len()) else {
        return Ok(Reply::Int(-1));
    };
    let flip = if bit == 1 { 0 } else { 0xff };
    let found = bytes_of(&r).find_map(|(i, mask)| {
        // The bits of interest set where they equal `bit`.
        let hits = (v.data[i] ^ flip) & mask;
        (hits != 0).then(|| i as u64 * 8 + hits.leading_zeros() as u64)
    });
    match found {
        Some(i) => Ok(Reply::Int(i as i64)),
        // Without an end, a search for a clear bit sees the string as
        // followed by zeros, as Redis does.
        None if bit == 0 && !end_given => Ok(Reply::Int(v.data.len() as i64 * 8)),
        None => Ok(Reply::Int(-1)),
    }
}

fn bitop(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let op = a[1].to_ascii_lowercase();
    if !matches!(op.as_slice(), b"and" | b"or" | b"xor" | b"not") {
        return Err(syntax_error());
    }
    let sources = &a[3..];
    if op == b"not" && sources.len() != 1 {
        return Err(fail(
            "ERR BITOP NOT must be called with a single source key.",
        ));
    }
    let mut values = Vec::with_capacity(sources.len());
    for key in sources {
        values.push(string(acc, key)?.map(|v| v.data).unwrap_or_default());
    }
    let len = values.iter().map(Vec::len).max().unwrap_or(0);
    let byte = |v: &Vec<u8>, i: usize| v.get(i).copied().unwrap_or(0);
    let out: Vec<u8> = (0..len)
        .map(|i| {
            let mut bytes = values.iter().map(|v| byte(v, i));
            let first = bytes.next().unwrap_or(0);
            match op.as_slice() {
                b"and" => bytes.fold(first, |x, y| x & y),
                b"or" => bytes.fold(first, |x, y| x | y),
                b"xor" => bytes.fold(first, |x, y| x ^ y),
                _ => !first,
            }
        })
        .collect();
    let dest = &a[2];
    if let Some(old) = acc.get(dest)? {
        drop_items_of(acc, dest, &old)?;
        if out.is_empty() {
            acc.del(dest)?;
            acc.notify(crate::notify::GENERIC, "del", dest);
        }
    }
    if !out.is_empty() {
        acc.set(dest, &Value::new(out, 0))?;
        acc.notify(crate::notify::STRING, "set", dest);
    }
    Ok(Reply::Int(len as i64))
}
