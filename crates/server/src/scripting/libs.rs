//! The libraries Redis gives scripts beyond Lua's own: `bit` (LuaBitOp's
//! operations on 32-bit integers) and `cjson` (JSON as lua-cjson encodes
//! and decodes it), written here on `serde_json` since no crate provides
//! them for `mlua`; `cmsgpack` is in `msgpack.rs`. Not provided: `struct`.

use std::cell::Cell;
use std::rc::Rc;

use mlua::{Lua, MultiValue, Table, Value, Variadic};

/// Adds `bit`, `cjson` and `cmsgpack` to the globals of `lua`, and
/// Redis's `math.random` (`random.rs`).
pub fn install(lua: &Lua) -> mlua::Result<()> {
    let g = lua.globals();
    g.raw_set("bit", bit(lua)?)?;
    g.raw_set("cjson", cjson(lua)?)?;
    g.raw_set("cmsgpack", super::msgpack::table(lua)?)?;
    super::random::install(lua, &g.raw_get::<Table>("math")?)?;
    Ok(())
}

/// `redis.acl_check_cmd(command, args...)`: whether the script's caller
/// may run that command line (Redis's `luaRedisAclCheckCmdPermissionsCommand`).
pub(super) fn acl_check_cmd(lua: &Lua, args: MultiValue) -> mlua::Result<bool> {
    if args.is_empty() {
        return Err(mlua::Error::runtime(
            "ERR Please specify at least one argument for this redis lib call",
        ));
    }
    let mut argv = Vec::with_capacity(args.len());
    for v in args {
        match lua.coerce_string(v)? {
            Some(s) => argv.push(s.as_bytes().to_vec()),
            None => {
                return Err(mlua::Error::runtime(
                    "ERR Lua redis lib command arguments must be strings or integers",
                ))
            }
        }
    }
    if crate::command_docs::lookup(&argv[0]).is_none() {
        return Err(mlua::Error::runtime(
            "ERR Invalid command passed to redis.acl_check_cmd()",
        ));
    }
    Ok(crate::acl::caller::may_run(&argv))
}

/// A Lua number as LuaBitOp normalizes it: rounded, then its low 32 bits
/// as a signed integer.
fn tobit(x: f64) -> i32 {
    let rounded = x.round_ties_even();
    (rounded.rem_euclid(4294967296.0) as u64 as u32) as i32
}

fn bit(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    let unary = |f: fn(i32) -> i32| lua.create_function(move |_, x: f64| Ok(f(tobit(x)) as f64));
    let fold = |f: fn(i32, i32) -> i32| {
        lua.create_function(move |_, (x, rest): (f64, Variadic<f64>)| {
            Ok(rest.iter().fold(tobit(x), |acc, &y| f(acc, tobit(y))) as f64)
        })
    };
    let shift = |f: fn(i32, u32) -> i32| {
        lua.create_function(move |_, (x, n): (f64, f64)| {
            Ok(f(tobit(x), (tobit(n) & 31) as u32) as f64)
        })
    };
    t.raw_set("tobit", unary(|x| x)?)?;
    t.raw_set("bnot", unary(|x| !x)?)?;
    t.raw_set("bswap", unary(i32::swap_bytes)?)?;
    t.raw_set("band", fold(|a, b| a & b)?)?;
    t.raw_set("bor", fold(|a, b| a | b)?)?;
    t.raw_set("bxor", fold(|a, b| a ^ b)?)?;
    t.raw_set("lshift", shift(|x, n| ((x as u32) << n) as i32)?)?;
    t.raw_set("rshift", shift(|x, n| ((x as u32) >> n) as i32)?)?;
    t.raw_set("arshift", shift(|x, n| x >> n)?)?;
    t.raw_set("rol", shift(|x, n| (x as u32).rotate_left(n) as i32)?)?;
    t.raw_set("ror", shift(|x, n| (x as u32).rotate_right(n) as i32)?)?;
    let tohex = lua.create_function(|_, (x, n): (f64, Option<f64>)| {
        let n = n.map_or(8, tobit);
        let digits = n.unsigned_abs().min(8) as usize;
        let v = tobit(x) as u32 as u64;
        let hex = match n < 0 {
            true => format!("{v:08X}"),
            false => format!("{v:08x}"),
        };
        Ok(hex[8 - digits..].to_string())
    })?;
    t.raw_set("tohex", tohex)?;
    Ok(t)
}

/// lua-cjson's settings a script may change (`cjson.encode_max_depth(n)`
/// and the like). Redis has one interpreter, so a change lasts for every
/// later script; here each server thread has its own interpreter, and a
/// change lasts for the later scripts of that thread.
struct Settings {
    encode_max_depth: Cell<usize>,
    decode_max_depth: Cell<usize>,
    /// `cjson.encode_invalid_numbers`: refused (`false`), written as Lua
    /// prints them (`true`), or as `null` (`"null"`).
    invalid_numbers: Cell<InvalidNumbers>,
}

#[derive(Clone, Copy, PartialEq)]
enum InvalidNumbers {
    Refused,
    Written,
    Null,
}

/// lua-cjson's default nesting limit, both ways.
const DEFAULT_MAX_DEPTH: usize = 1000;

fn cjson(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("null", Value::NULL)?;
    let settings = Rc::new(Settings {
        encode_max_depth: Cell::new(DEFAULT_MAX_DEPTH),
        decode_max_depth: Cell::new(DEFAULT_MAX_DEPTH),
        invalid_numbers: Cell::new(InvalidNumbers::Refused),
    });
    // lua-cjson's switch for reusing its encode buffer between calls: a
    // matter of speed only, which this encoder does not have.
    t.raw_set(
        "encode_keep_buffer",
        lua.create_function(|_, keep: Option<bool>| Ok(keep.unwrap_or(true)))?,
    )?;
    for (name, decode_side) in [("encode_max_depth", false), ("decode_max_depth", true)] {
        let settings = Rc::clone(&settings);
        let f = lua.create_function(move |_, n: Option<i64>| {
            let cell = match decode_side {
                true => &settings.decode_max_depth,
                false => &settings.encode_max_depth,
            };
            if let Some(n) = n {
                if !(1..=i32::MAX as i64).contains(&n) {
                    return Err(mlua::Error::runtime(format!(
                        "bad argument #1 to '{name}' (expected integer between 1 and 2147483647)"
                    )));
                }
                cell.set(n as usize);
            }
            Ok(cell.get() as i64)
        })?;
        t.raw_set(name, f)?;
    }
    let numbers = Rc::clone(&settings);
    t.raw_set(
        "encode_invalid_numbers",
        lua.create_function(move |lua, v: Value| {
            let setting = match v {
                Value::Nil => numbers.invalid_numbers.get(),
                Value::Boolean(true) => InvalidNumbers::Written,
                Value::Boolean(false) => InvalidNumbers::Refused,
                Value::String(s) if s.as_bytes() == b"on" => InvalidNumbers::Written,
                Value::String(s) if s.as_bytes() == b"off" => InvalidNumbers::Refused,
                Value::String(s) if s.as_bytes() == b"null" => InvalidNumbers::Null,
                _ => {
                    return Err(mlua::Error::runtime(
                        "bad argument #1 to 'encode_invalid_numbers' (invalid option)",
                    ))
                }
            };
            numbers.invalid_numbers.set(setting);
            Ok(match setting {
                InvalidNumbers::Refused => Value::Boolean(false),
                InvalidNumbers::Written => Value::Boolean(true),
                InvalidNumbers::Null => Value::String(lua.create_string("null")?),
            })
        })?,
    )?;
    let encoding = Rc::clone(&settings);
    t.raw_set(
        "encode",
        lua.create_function(move |lua, v: Value| {
            let mut out = String::new();
            encode(lua, &encoding, &v, &mut out, 0)?;
            Ok(out)
        })?,
    )?;
    let decoding = Rc::clone(&settings);
    t.raw_set(
        "decode",
        lua.create_function(move |lua, s: mlua::String| {
            too_deep(&s.as_bytes(), decoding.decode_max_depth.get())?;
            let json: serde_json::Value = serde_json::from_slice(&s.as_bytes()).map_err(|e| {
                mlua::Error::runtime(format!("Expected value but found invalid token: {e}"))
            })?;
            decode(lua, json)
        })?,
    )?;
    Ok(t)
}

fn encode(
    lua: &Lua,
    cfg: &Settings,
    v: &Value,
    out: &mut String,
    depth: usize,
) -> mlua::Result<()> {
    match v {
        Value::Nil => out.push_str("null"),
        Value::LightUserData(p) if p.0.is_null() => out.push_str("null"),
        Value::Boolean(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Integer(_) | Value::Number(_) => {
            let text = lua.coerce_string(v.clone())?.map(|s| s.to_string_lossy());
            match (text.as_deref(), cfg.invalid_numbers.get()) {
                (Some("inf" | "-inf" | "nan" | "-nan"), InvalidNumbers::Null) => {
                    out.push_str("null")
                }
                (Some(t @ ("inf" | "-inf" | "nan" | "-nan")), InvalidNumbers::Written) => {
                    out.push_str(t)
                }
                (Some("inf" | "-inf" | "nan" | "-nan"), InvalidNumbers::Refused) | (None, _) => {
                    return Err(mlua::Error::runtime(
                        "Cannot serialise number: must not be NaN or Inf",
                    ))
                }
                (Some(t), _) => out.push_str(t),
            }
        }
        Value::String(s) => encode_string(&s.as_bytes(), out),
        // A table `depth` values deep is lua-cjson's nesting `depth + 1`.
        Value::Table(_) if depth >= cfg.encode_max_depth.get() => {
            return Err(mlua::Error::runtime(format!(
                "Cannot serialise, excessive nesting ({})",
                depth + 1
            )))
        }
        Value::Table(t) => encode_table(lua, cfg, t, out, depth)?,
        other => {
            return Err(mlua::Error::runtime(format!(
                "Cannot serialise {}: type not supported",
                other.type_name()
            )))
        }
    }
    Ok(())
}

fn encode_table(
    lua: &Lua,
    cfg: &Settings,
    t: &Table,
    out: &mut String,
    depth: usize,
) -> mlua::Result<()> {
    let index = |k: &Value| match k {
        Value::Integer(i) if *i >= 1 => Some(*i as usize),
        Value::Number(f) if *f >= 1.0 && f.fract() == 0.0 => Some(*f as usize),
        _ => None,
    };
    // Walked twice (to tell an array, then to write): holding every pair at
    // once would take a reference slot of `mlua`'s bounded stack for each.
    let (mut count, mut max) = (0usize, Some(0usize));
    for pair in t.clone().pairs::<Value, Value>() {
        let (k, _) = pair?;
        count += 1;
        max = max.zip(index(&k)).map(|(m, i)| m.max(i));
    }
    match max {
        Some(max) if max > 0 => {
            if max > count * 2 && max > 10 {
                return Err(mlua::Error::runtime(
                    "Cannot serialise table: excessively sparse array",
                ));
            }
            out.push('[');
            for i in 1..=max {
                if i > 1 {
                    out.push(',');
                }
                encode(lua, cfg, &t.raw_get::<Value>(i)?, out, depth + 1)?;
            }
            out.push(']');
        }
        _ => {
            out.push('{');
            for (n, pair) in t.clone().pairs::<Value, Value>().enumerate() {
                let (k, v) = pair?;
                if n > 0 {
                    out.push(',');
                }
                let key = match &k {
                    Value::String(s) => s.as_bytes().to_vec(),
                    Value::Integer(_) | Value::Number(_) => lua
                        .coerce_string(k.clone())?
                        .map(|s| s.as_bytes().to_vec())
                        .unwrap_or_default(),
                    _ => {
                        return Err(mlua::Error::runtime(
                            "Cannot serialise table: table key must be a number or string",
                        ))
                    }
                };
                encode_string(&key, out);
                out.push(':');
                encode(lua, cfg, &v, out, depth + 1)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

/// A JSON string as lua-cjson writes it (it escapes `/` too).
fn encode_string(bytes: &[u8], out: &mut String) {
    out.push('"');
    for ch in String::from_utf8_lossy(bytes).chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '/' => out.push_str("\\/"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// lua-cjson's error for JSON text nesting deeper than `max`, naming the
/// (1-based) character where it does.
fn too_deep(text: &[u8], max: usize) -> mlua::Result<()> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (i, &b) in text.iter().enumerate() {
        match (in_string, b) {
            (true, _) if escaped => escaped = false,
            (true, b'\\') => escaped = true,
            (true, b'"') | (false, b'"') => in_string = !in_string,
            (false, b'[' | b'{') => {
                depth += 1;
                if depth > max {
                    return Err(mlua::Error::runtime(format!(
                        "Found too many nested data structures ({depth}) at character {}",
                        i + 1
                    )));
                }
            }
            (false, b']' | b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// A parsed JSON value as a Lua value (its depth checked by [`too_deep`]).
fn decode(lua: &Lua, json: serde_json::Value) -> mlua::Result<Value> {
    use serde_json::Value as J;
    Ok(match json {
        J::Null => Value::NULL,
        J::Bool(b) => Value::Boolean(b),
        J::Number(n) => Value::Number(n.as_f64().unwrap_or(0.0)),
        J::String(s) => Value::String(lua.create_string(&s)?),
        J::Array(items) => {
            let t = lua.create_table_with_capacity(items.len(), 0)?;
            for (i, item) in items.into_iter().enumerate() {
                t.raw_set(i + 1, decode(lua, item)?)?;
            }
            Value::Table(t)
        }
        J::Object(map) => {
            let t = lua.create_table_with_capacity(0, map.len())?;
            for (k, v) in map {
                t.raw_set(k, decode(lua, v)?)?;
            }
            Value::Table(t)
        }
    })
}
