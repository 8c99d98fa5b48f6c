//! `cmsgpack`: MessagePack for scripts, as Redis's `lua_cmsgpack.c`
//! (lua-cmsgpack 0.4) encodes and decodes it, byte for byte: `pack(...)`,
//! `unpack(s)`, `unpack_one(s [, offset])`, `unpack_limit(s, limit [,
//! offset])`. Written here, on the MessagePack format itself, because its
//! choices are lua-cmsgpack's (which numbers are integers, when a double
//! fits a float, that a table of keys 1..n is an array, that tables nest
//! 16 deep at most, which is how circular tables encode), and a general
//! MessagePack crate would make others.
//!
//! Owns nothing. Thread-safety: per interpreter.

use mlua::{Lua, MultiValue, Table, Value, Variadic};

/// Tables deeper than this encode as nil (so a circular table encodes).
const MAX_NESTING: usize = 16;
/// Nesting a decoded value may have (the encoder never makes more than
/// 16; a hostile input must not exhaust the stack).
const MAX_DECODE_DEPTH: usize = 512;
/// Values one `unpack` may return: each is a handle of `mlua`'s bounded
/// reference stack (see `call_gate.rs`).
const MAX_RESULTS: usize = 7_000;

pub fn table(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set(
        "pack",
        lua.create_function(|lua, args: Variadic<Value>| {
            if args.is_empty() {
                return Err(mlua::Error::runtime(
                    "bad argument #0 to '?' (MessagePack pack needs input.)",
                ));
            }
            let mut out = Vec::new();
            for v in args.iter() {
                encode(v, &mut out, 0)?;
            }
            lua.create_string(&out)
        })?,
    )?;
    t.raw_set(
        "unpack",
        lua.create_function(|lua, s: mlua::String| {
            unpack(lua, &s.as_bytes(), usize::MAX, 0, true)
        })?,
    )?;
    t.raw_set(
        "unpack_one",
        lua.create_function(|lua, (s, offset): (mlua::String, Option<i64>)| {
            unpack(lua, &s.as_bytes(), 1, offset.unwrap_or(0), false)
        })?,
    )?;
    t.raw_set(
        "unpack_limit",
        lua.create_function(
            |lua, (s, limit, offset): (mlua::String, i64, Option<i64>)| {
                let limit = usize::try_from(limit).map_err(|_| {
                    mlua::Error::runtime(format!(
                        "Invalid request to unpack with offset of {} and limit of {limit}.",
                        offset.unwrap_or(0)
                    ))
                })?;
                unpack(lua, &s.as_bytes(), limit, offset.unwrap_or(0), false)
            },
        )?,
    )?;
    Ok(t)
}

fn encode(v: &Value, out: &mut Vec<u8>, level: usize) -> mlua::Result<()> {
    match v {
        Value::String(s) => encode_bytes(&s.as_bytes(), out),
        Value::Boolean(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
        Value::Integer(i) => encode_int(*i, out),
        Value::Number(n) => encode_number(*n, out),
        Value::Table(t) if level < MAX_NESTING => encode_table(t, out, level)?,
        _ => out.push(0xc0),
    }
    Ok(())
}

fn encode_number(n: f64, out: &mut Vec<u8>) {
    // lua-cmsgpack's IS_INT64_EQUIVALENT: finite and unchanged as an int64.
    if n.is_finite() && (n as i64) as f64 == n {
        return encode_int(n as i64, out);
    }
    let f = n as f32;
    if f as f64 == n {
        out.push(0xca);
        out.extend_from_slice(&f.to_be_bytes());
    } else {
        out.push(0xcb);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn encode_int(n: i64, out: &mut Vec<u8>) {
    match n {
        0..=127 => out.push(n as u8),
        128..=0xff => out.extend_from_slice(&[0xcc, n as u8]),
        0x100..=0xffff => {
            out.push(0xcd);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        }
        0x1_0000..=0xffff_ffff => {
            out.push(0xce);
            out.extend_from_slice(&(n as u32).to_be_bytes());
        }
        n if n > 0 => {
            out.push(0xcf);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
        -32..=-1 => out.push(n as i8 as u8),
        -128..=-33 => out.extend_from_slice(&[0xd0, n as i8 as u8]),
        -32768..=-129 => {
            out.push(0xd1);
            out.extend_from_slice(&(n as i16).to_be_bytes());
        }
        -2_147_483_648..=-32769 => {
            out.push(0xd2);
            out.extend_from_slice(&(n as i32).to_be_bytes());
        }
        _ => {
            out.push(0xd3);
            out.extend_from_slice(&n.to_be_bytes());
        }
    }
}

/// A length header: the fix form under `fix_max` (`fix | len`), else the
/// 8-bit form (if any), the 16-bit, or the 32-bit.
fn header(len: usize, fix: u8, fix_max: usize, forms: [Option<u8>; 3], out: &mut Vec<u8>) {
    match (len, forms) {
        (l, _) if l < fix_max => out.push(fix | l as u8),
        (l, [Some(b8), _, _]) if l <= 0xff => out.extend_from_slice(&[b8, l as u8]),
        (l, [_, Some(b16), _]) if l <= 0xffff => {
            out.push(b16);
            out.extend_from_slice(&(l as u16).to_be_bytes());
        }
        (l, [_, _, Some(b32)]) => {
            out.push(b32);
            out.extend_from_slice(&(l as u32).to_be_bytes());
        }
        _ => {}
    }
}

fn encode_bytes(b: &[u8], out: &mut Vec<u8>) {
    header(b.len(), 0xa0, 32, [Some(0xd9), Some(0xda), Some(0xdb)], out);
    out.extend_from_slice(b);
}

/// lua-cmsgpack's `table_is_an_array`: every key a positive integer, the
/// largest equal to their count (so they are 1..n).
fn is_array(t: &Table) -> mlua::Result<bool> {
    let (mut count, mut max) = (0i64, 0i64);
    for pair in t.clone().pairs::<Value, Value>() {
        let (k, _) = pair?;
        let n = match k {
            Value::Integer(i) => i as f64,
            Value::Number(n) => n,
            _ => return Ok(false),
        };
        if n <= 0.0 || (n as i32) as f64 != n {
            return Ok(false);
        }
        max = max.max(n as i64);
        count += 1;
    }
    Ok(max == count)
}

fn encode_table(t: &Table, out: &mut Vec<u8>, level: usize) -> mlua::Result<()> {
    if is_array(t)? {
        let len = t.raw_len();
        header(len, 0x90, 16, [None, Some(0xdc), Some(0xdd)], out);
        for i in 1..=len {
            encode(&t.raw_get::<Value>(i)?, out, level + 1)?;
        }
        return Ok(());
    }
    // Counted, then walked again: holding every pair at once would take a
    // reference slot of `mlua`'s bounded stack for each.
    let mut count = 0;
    for pair in t.clone().pairs::<Value, Value>() {
        pair?;
        count += 1;
    }
    header(count, 0x80, 16, [None, Some(0xde), Some(0xdf)], out);
    for pair in t.clone().pairs::<Value, Value>() {
        let (k, v) = pair?;
        encode(&k, out, level + 1)?;
        encode(&v, out, level + 1)?;
    }
    Ok(())
}

enum DecodeError {
    Eof,
    BadFormat,
    Lua(mlua::Error),
}

impl From<mlua::Error> for DecodeError {
    fn from(e: mlua::Error) -> DecodeError {
        DecodeError::Lua(e)
    }
}

struct Cursor<'a> {
    data: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], DecodeError> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.data.len());
        let end = end.ok_or(DecodeError::Eof)?;
        let bytes = &self.data[self.at..end];
        self.at = end;
        Ok(bytes)
    }

    fn uint(&mut self, n: usize) -> Result<u64, DecodeError> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |acc, &b| acc << 8 | b as u64))
    }
}

fn decode(lua: &Lua, c: &mut Cursor<'_>, depth: usize) -> Result<Value, DecodeError> {
    if depth > MAX_DECODE_DEPTH {
        return Err(DecodeError::BadFormat);
    }
    let tag = c.take(1)?[0];
    let int = |v: i64| Value::Number(v as f64);
    Ok(match tag {
        0x00..=0x7f => int(tag as i64),
        0xe0..=0xff => int(tag as i8 as i64),
        0x80..=0x8f => decode_map(lua, c, (tag & 0x0f) as usize, depth)?,
        0x90..=0x9f => decode_array(lua, c, (tag & 0x0f) as usize, depth)?,
        0xa0..=0xbf => Value::String(lua.create_string(c.take((tag & 0x1f) as usize)?)?),
        0xc0 => Value::Nil,
        0xc2 => Value::Boolean(false),
        0xc3 => Value::Boolean(true),
        0xca => Value::Number(f32::from_bits(c.uint(4)? as u32) as f64),
        0xcb => Value::Number(f64::from_bits(c.uint(8)?)),
        0xcc => int(c.uint(1)? as i64),
        0xcd => int(c.uint(2)? as i64),
        0xce => int(c.uint(4)? as i64),
        0xcf => Value::Number(c.uint(8)? as f64),
        0xd0 => int(c.uint(1)? as u8 as i8 as i64),
        0xd1 => int(c.uint(2)? as u16 as i16 as i64),
        0xd2 => int(c.uint(4)? as u32 as i32 as i64),
        0xd3 => int(c.uint(8)? as i64),
        // Lengths of 1, 2 or 4 bytes: binaries and strings, then arrays
        // and maps of 2 or 4.
        0xc4..=0xc6 | 0xd9..=0xdb => {
            let n = c.uint(length_bytes(tag))? as usize;
            Value::String(lua.create_string(c.take(n)?)?)
        }
        0xdc | 0xdd => {
            let n = c.uint(length_bytes(tag))? as usize;
            decode_array(lua, c, n, depth)?
        }
        0xde | 0xdf => {
            let n = c.uint(length_bytes(tag))? as usize;
            decode_map(lua, c, n, depth)?
        }
        _ => return Err(DecodeError::BadFormat),
    })
}

/// How many bytes the length after a sized tag takes.
fn length_bytes(tag: u8) -> usize {
    match tag {
        0xc4 | 0xd9 => 1,
        0xc5 | 0xda | 0xdc | 0xde => 2,
        _ => 4,
    }
}

fn decode_array(
    lua: &Lua,
    c: &mut Cursor<'_>,
    n: usize,
    depth: usize,
) -> Result<Value, DecodeError> {
    // Each element takes a byte at least: a count past the input is short.
    if n > c.data.len() - c.at {
        return Err(DecodeError::Eof);
    }
    let t = lua.create_table_with_capacity(n, 0)?;
    for i in 1..=n {
        t.raw_set(i, decode(lua, c, depth + 1)?)?;
    }
    Ok(Value::Table(t))
}

fn decode_map(lua: &Lua, c: &mut Cursor<'_>, n: usize, depth: usize) -> Result<Value, DecodeError> {
    if n > (c.data.len() - c.at) / 2 {
        return Err(DecodeError::Eof);
    }
    let t = lua.create_table_with_capacity(0, n)?;
    for _ in 0..n {
        let k = decode(lua, c, depth + 1)?;
        let v = decode(lua, c, depth + 1)?;
        // A nil key cannot be a table's (lua_settable would raise).
        if !k.is_nil() {
            t.raw_set(k, v)?;
        }
    }
    Ok(Value::Table(t))
}

/// Up to `limit` values from `offset` on; unless `all`, the offset of the
/// next value (-1 at the end) first.
fn unpack(lua: &Lua, s: &[u8], limit: usize, offset: i64, all: bool) -> mlua::Result<MultiValue> {
    let start = usize::try_from(offset).map_err(|_| {
        mlua::Error::runtime(format!(
            "Invalid request to unpack with offset of {offset} and limit of {}.",
            s.len()
        ))
    })?;
    if start > s.len() {
        return Err(mlua::Error::runtime(format!(
            "Start offset {start} greater than input length {}.",
            s.len()
        )));
    }
    let mut c = Cursor { data: s, at: start };
    let mut values = Vec::new();
    while c.at < s.len() && values.len() < limit {
        if values.len() >= MAX_RESULTS {
            return Err(mlua::Error::runtime("too many values to unpack"));
        }
        match decode(lua, &mut c, 0) {
            Ok(v) => values.push(v),
            Err(DecodeError::Eof) => return Err(mlua::Error::runtime("Missing bytes in input.")),
            Err(DecodeError::BadFormat) => {
                return Err(mlua::Error::runtime("Bad data format in input."))
            }
            Err(DecodeError::Lua(e)) => return Err(e),
        }
    }
    if !all {
        let next = if c.at == s.len() { -1 } else { c.at as i64 };
        values.insert(0, Value::Integer(next));
    }
    Ok(MultiValue::from_iter(values))
}
