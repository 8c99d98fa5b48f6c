//! Values between the server and scripts, as Redis converts them (RESP2
//! conventions: a status is `{ok=...}`, an error `{err=...}`, a missing
//! value `false`; a Lua number becomes an integer, truncated).

use mlua::{Lua, MultiValue, Value};

use crate::resp::{format_double, Reply, Request};

/// Deepest nesting of tables a reply converts (Redis stops at its Lua
/// stack's limit too): a script cannot overflow the server's stack.
const MAX_DEPTH: usize = 256;

pub fn error_table(lua: &Lua, message: &str) -> mlua::Result<Value> {
    let t = lua.create_table()?;
    t.raw_set("err", message)?;
    Ok(Value::Table(t))
}

/// A `redis.call`'s arguments as a request: strings and numbers (as Lua
/// prints them), nothing else. A long call comes packed in one table
/// (`call_gate.rs`), read one argument at a time.
pub fn request_of(args: MultiValue) -> Result<Request, String> {
    if args.is_empty() {
        return Err("ERR Please specify at least one argument for this redis lib call".into());
    }
    if let (2, Some(Value::LightUserData(mark))) = (args.len(), args.front()) {
        if mark.0 == super::call_gate::packed() {
            let Some(Value::Table(t)) = args.back() else {
                return Err("ERR a packed redis.call without its arguments".into());
            };
            let len: i64 = t.raw_get("n").unwrap_or(0);
            return (1..=len)
                .map(|i| argument(t.raw_get(i).unwrap_or(Value::Nil)))
                .collect();
        }
    }
    args.into_iter().map(argument).collect()
}

fn argument(v: Value) -> Result<Vec<u8>, String> {
    match v {
        Value::String(s) => Ok(s.as_bytes().to_vec()),
        // As Redis writes them: C's `%.17g`, not Lua's `%.14g`, which
        // loses digits (9007199254740991 would be 9.007199254741e+15).
        Value::Integer(i) => Ok(i.to_string().into_bytes()),
        Value::Number(n) => Ok(crate::reply::format_double(n).into_bytes()),
        _ => Err("ERR Lua redis lib command arguments must be strings or integers".into()),
    }
}

/// A command's reply as the script sees it (RESP2 conventions).
pub fn to_lua(lua: &Lua, reply: Reply, depth: usize) -> mlua::Result<Value> {
    if depth > MAX_DEPTH {
        return Err(mlua::Error::runtime("reached lua stack limit"));
    }
    let array = |items: Vec<Reply>| -> mlua::Result<Value> {
        let t = lua.create_table_with_capacity(items.len(), 0)?;
        for (i, item) in items.into_iter().enumerate() {
            t.raw_set(i + 1, to_lua(lua, item, depth + 1)?)?;
        }
        Ok(Value::Table(t))
    };
    let flat =
        |pairs: Vec<(Reply, Reply)>| array(pairs.into_iter().flat_map(|(k, v)| [k, v]).collect());
    Ok(match reply {
        Reply::Int(n) => Value::Number(n as f64),
        Reply::Bulk(b) | Reply::Verbatim(b) => Value::String(lua.create_string(&b)?),
        Reply::Null | Reply::NullArray => Value::Boolean(false),
        Reply::Simple(s) => {
            let t = lua.create_table()?;
            t.raw_set("ok", s)?;
            Value::Table(t)
        }
        Reply::Error(e) => error_table(lua, &e)?,
        Reply::Double(d) => Value::String(lua.create_string(format_double(d))?),
        Reply::DoubleText(t) => Value::String(lua.create_string(t)?),
        Reply::Array(items) | Reply::Set(items) | Reply::Push(items) | Reply::Several(items) => {
            array(items)?
        }
        Reply::Map(pairs) | Reply::Pairs(pairs) => flat(pairs)?,
        Reply::Keyed(pairs) => array(
            pairs
                .into_iter()
                .map(|(k, v)| Reply::Array(vec![k, v]))
                .collect(),
        )?,
        Reply::Bulks(b) => array(b.iter().map(|v| Reply::Bulk(v.to_vec())).collect())?,
    })
}

/// A script's return value as a reply, as Redis converts it.
pub fn from_lua(v: Value, depth: usize) -> Result<Reply, String> {
    if depth > MAX_DEPTH {
        // In its place in the reply, as Redis answers when its Lua stack
        // runs out (a table holding itself: `*1` after `*1`, then this).
        return Ok(Reply::Error("ERR reached lua stack limit".into()));
    }
    Ok(match v {
        Value::Nil | Value::Boolean(false) => Reply::Null,
        Value::Boolean(true) => Reply::Int(1),
        Value::Integer(n) => Reply::Int(n),
        Value::Number(f) => Reply::Int(f as i64),
        Value::String(s) => Reply::Bulk(s.as_bytes().to_vec()),
        Value::Table(t) => {
            if let Ok(Value::String(e)) = t.raw_get::<Value>("err") {
                return Ok(Reply::Error(e.to_string_lossy()));
            }
            if let Ok(Value::String(s)) = t.raw_get::<Value>("ok") {
                return Ok(Reply::Simple(s.to_string_lossy()));
            }
            let mut items = Vec::new();
            for i in 1.. {
                match t.raw_get::<Value>(i) {
                    Ok(Value::Nil) | Err(_) => break,
                    Ok(v) => items.push(from_lua(v, depth + 1)?),
                }
            }
            Reply::Array(items)
        }
        _ => Reply::Null,
    })
}
