//! The arguments of `redis.register_function`, read and checked as Redis
//! 7.0 reads them (`function_lua.c`): `(name, callback)` or one table of
//! named arguments, with Redis's error texts.

use mlua::{Function, Lua, MultiValue, Table, Value};

use super::failure::lua_message;

/// The flags a function may declare, in Redis's order (`FUNCTION LIST`
/// lists them so); bit `i` of [`Registered::flags`] is `FLAGS[i]`.
pub const FLAGS: [&str; 5] = [
    "no-writes",
    "allow-oom",
    "allow-stale",
    "no-cluster",
    "allow-cross-slot-keys",
];
/// [`FLAGS`]' `no-writes`.
pub const NO_WRITES: u8 = 1;
/// [`FLAGS`]' `allow-oom`.
pub const ALLOW_OOM: u8 = 1 << 1;

/// A function a library registered (its callback is in the load's
/// table of callbacks, see [`Loader`]).
pub struct Registered {
    pub name: String,
    pub description: Option<Vec<u8>>,
    pub flags: u8,
}

/// The name rule of libraries and functions (`functionsVerifyName`).
pub fn check_name(name: &str) -> Result<(), String> {
    match !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        true => Ok(()),
        false => Err("Library names can only contain letters, numbers, or underscores(_) and must be at least one character long".into()),
    }
}

/// A `redis.register_function` call's arguments: `(name, callback)` or
/// one table of named arguments, checked as Redis checks them.
pub(super) fn read_registration(
    lua: &Lua,
    args: MultiValue,
) -> Result<(Registered, Function), String> {
    match args.len() {
        1 => match args.into_iter().next() {
            Some(Value::Table(t)) => read_named(lua, t),
            _ => Err("calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).".into()),
        },
        2 => {
            let mut args = args.into_iter();
            let name = args
                .next()
                .and_then(|v| lua_string(lua, &v))
                .ok_or("first argument to redis.register_function must be a string")?;
            match args.next() {
                Some(Value::Function(callback)) => Ok((
                    Registered {
                        name,
                        description: None,
                        flags: 0,
                    },
                    callback,
                )),
                _ => Err("second argument to redis.register_function must be a function".into()),
            }
        }
        _ => Err("wrong number of arguments to redis.register_function".into()),
    }
}

fn read_named(lua: &Lua, t: Table) -> Result<(Registered, Function), String> {
    let (mut name, mut description, mut flags, mut callback) = (None, None, 0, None);
    for pair in t.pairs::<Value, Value>() {
        let (key, value) = pair.map_err(|e| lua_message(&e))?;
        let key = lua_string(lua, &key)
            .ok_or("named argument key given to redis.register_function is not a string")?;
        match key.to_ascii_lowercase().as_str() {
            "function_name" => {
                name = Some(lua_string(lua, &value).ok_or(
                    "function_name argument given to redis.register_function must be a string",
                )?)
            }
            "description" => {
                description = Some(lua_bytes(lua, &value).ok_or(
                    "description argument given to redis.register_function must be a string",
                )?)
            }
            "callback" => match value {
                Value::Function(f) => callback = Some(f),
                _ => {
                    return Err(
                        "callback argument given to redis.register_function must be a function"
                            .into(),
                    )
                }
            },
            "flags" => match value {
                Value::Table(list) => flags = read_flags(lua, list).ok_or("unknown flag given")?,
                _ => return Err("flags argument to redis.register_function must be a table representing function flags".into()),
            },
            _ => return Err("unknown argument given to redis.register_function".into()),
        }
    }
    let name = name.ok_or("redis.register_function must get a function name argument")?;
    let callback = callback.ok_or("redis.register_function must get a callback argument")?;
    Ok((
        Registered {
            name,
            description,
            flags,
        },
        callback,
    ))
}

/// The flags of a `flags` table (its entries 1, 2, ... up to the first
/// nil), `None` if one is not a known flag.
fn read_flags(lua: &Lua, list: Table) -> Option<u8> {
    let mut flags = 0;
    for i in 1.. {
        match list.raw_get::<Value>(i).ok()? {
            Value::Nil => break,
            v => {
                let flag = lua_string(lua, &v)?;
                let bit = FLAGS.iter().position(|f| f.eq_ignore_ascii_case(&flag))?;
                flags |= 1 << bit;
            }
        }
    }
    Some(flags)
}

/// A string or a number as Lua's `lua_tostring` gives it.
fn lua_bytes(lua: &Lua, v: &Value) -> Option<Vec<u8>> {
    match v {
        Value::String(s) => Some(s.as_bytes().to_vec()),
        Value::Integer(_) | Value::Number(_) => lua
            .coerce_string(v.clone())
            .ok()
            .flatten()
            .map(|s| s.as_bytes().to_vec()),
        _ => None,
    }
}

fn lua_string(lua: &Lua, v: &Value) -> Option<String> {
    lua_bytes(lua, v).map(|b| String::from_utf8_lossy(&b).into_owned())
}
