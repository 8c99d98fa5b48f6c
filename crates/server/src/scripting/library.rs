//! Function libraries inside a thread's interpreter, as Redis 7.0 loads
//! them (`function_lua.c`): a library's code runs once, at `FUNCTION LOAD`,
//! where it sees nothing but `redis.register_function`, `redis.log`, the
//! log levels and the version; the callbacks it registers run at `FCALL`
//! with the globals every script sees (less `KEYS` and `ARGV`: a function
//! gets its keys and arguments as parameters).
//!
//! Each library gets an environment of its own, a read-only table whose
//! lookups go to the load-time API while it loads and to the globals
//! afterwards, so the callbacks it created see the full API when called.
//!
//! Owns: the callbacks of the libraries this thread has loaded, by
//! library name and load id (see `functions.rs`). Thread-safety: part of
//! the thread's [`Vm`].

use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use mlua::{Function, HookTriggers, Lua, MultiValue, Table, Value, VmState};

use super::failure::lua_message;
use super::vm::Vm;

/// How long a library's code may run at load (Redis's `LOAD_TIMEOUT_MS`).
const LOAD_TIMEOUT: Duration = Duration::from_millis(500);

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

/// A function a library registered.
pub struct Registered {
    pub name: String,
    pub description: Option<Vec<u8>>,
    pub flags: u8,
    pub callback: Function,
}

/// Builds a library's environment (see the module's doc); returns it and
/// the function that ends its load.
const MAKE_ENV: &str = r#"
local G, rawget, setmetatable, error, tostring = _G, rawget, setmetatable, error, tostring
local function missing(k)
  error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 3)
end
return function(api)
  local loading = true
  local env = setmetatable({}, {
    __index = function(_, k)
      local v
      if loading then
        v = rawget(api, k)
      elseif k ~= "KEYS" and k ~= "ARGV" then
        if k == "loadstring" then return nil end
        v = rawget(G, k)
      end
      if v == nil then missing(k) end
      return v
    end,
    __newindex = function() error("Attempt to modify a readonly table", 2) end,
  })
  return env, function() loading = false end
end
"#;

/// The `redis` table a library sees while it loads: fields it lacks are
/// errors, as globals are.
const LOAD_API: &str = r#"
local setmetatable, error, tostring = setmetatable, error, tostring
return function(register)
  local redis = {
    register_function = register,
    log = function() end,
    LOG_DEBUG = 0, LOG_VERBOSE = 1, LOG_NOTICE = 2, LOG_WARNING = 3,
  }
  return setmetatable(redis, {
    __index = function(_, k)
      error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
    end,
    __newindex = function() error("Attempt to modify a readonly table", 2) end,
  })
end
"#;

/// What a thread keeps to load libraries (made once per interpreter,
/// before the globals are locked).
pub struct Loader {
    make_env: Function,
    /// Lua's `pcall`: a library's error reaches the reply as Lua raised
    /// it (a call from Rust would add a traceback to its text).
    pcall: Function,
    load_redis: Table,
    /// The functions registered by the load under way; `None` outside a
    /// load, when `redis.register_function` is an error.
    registering: Rc<RefCell<Option<Vec<Registered>>>>,
}

/// A library this thread has loaded: its load id and its callbacks.
pub struct Loaded {
    id: u64,
    callbacks: Vec<(String, Function)>,
}

impl Loader {
    pub fn new(lua: &Lua) -> mlua::Result<Loader> {
        let registering: Rc<RefCell<Option<Vec<Registered>>>> = Rc::default();
        let slot = Rc::clone(&registering);
        let register = lua.create_function(move |lua, args: MultiValue| {
            let mut slot = slot.borrow_mut();
            let Some(registered) = slot.as_mut() else {
                return Err(mlua::Error::runtime(
                    "redis.register_function can only be called on FUNCTION LOAD command",
                ));
            };
            let function = read_registration(lua, args).map_err(mlua::Error::runtime)?;
            check_name(&function.name).map_err(mlua::Error::runtime)?;
            if registered.iter().any(|r| r.name == function.name) {
                return Err(mlua::Error::runtime(
                    "Function already exists in the library",
                ));
            }
            registered.push(function);
            Ok(())
        })?;
        let make_api: Function = lua.load(LOAD_API).set_name("=library").eval()?;
        let load_redis: Table = make_api.call(register)?;
        let g = lua.globals();
        let redis: Table = g.raw_get("redis")?;
        load_redis.raw_set("REDIS_VERSION", redis.raw_get::<Value>("REDIS_VERSION")?)?;
        load_redis.raw_set(
            "REDIS_VERSION_NUM",
            redis.raw_get::<Value>("REDIS_VERSION_NUM")?,
        )?;
        Ok(Loader {
            make_env: lua.load(MAKE_ENV).set_name("=library").eval()?,
            pcall: g.raw_get("pcall")?,
            load_redis,
            registering,
        })
    }
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
fn read_registration(lua: &Lua, args: MultiValue) -> Result<Registered, String> {
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
                Some(Value::Function(callback)) => Ok(Registered {
                    name,
                    description: None,
                    flags: 0,
                    callback,
                }),
                _ => Err("second argument to redis.register_function must be a function".into()),
            }
        }
        _ => Err("wrong number of arguments to redis.register_function".into()),
    }
}

fn read_named(lua: &Lua, t: Table) -> Result<Registered, String> {
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
    Ok(Registered {
        name,
        description,
        flags,
        callback,
    })
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

/// The text of an error value a library raised.
fn error_text(e: Value) -> String {
    match e {
        Value::String(s) => s.to_string_lossy(),
        Value::Error(e) => lua_message(&e),
        Value::Table(t) => t
            .raw_get::<mlua::String>("err")
            .map_or_else(|_| "unknown error".into(), |s| s.to_string_lossy()),
        other => other.to_string().unwrap_or_default(),
    }
}

/// A new library's environment and the function that ends its load.
fn library_env(lua: &Lua, loader: &Loader) -> mlua::Result<(Table, Function)> {
    let api = lua.create_table()?;
    api.raw_set("redis", loader.load_redis.clone())?;
    loader.make_env.call(api)
}

impl Vm {
    /// Runs library code `code` (after its `#!` line) as `FUNCTION LOAD`
    /// does: the functions it registered, or Redis's error text (without
    /// the `ERR ` the reply adds).
    pub fn load_library(&self, code: &[u8]) -> Result<Vec<Registered>, String> {
        let lua = self.lua();
        let loader = self.loader();
        let (env, loaded) = library_env(lua, loader).map_err(|e| lua_message(&e))?;
        let chunk = lua
            .load(code)
            .set_name("@user_function")
            .set_environment(env)
            .into_function()
            .map_err(|e| format!("Error compiling function: {}", lua_message(&e)))?;
        *loader.registering.borrow_mut() = Some(Vec::new());
        let started = Instant::now();
        lua.set_hook(
            HookTriggers::new().every_nth_instruction(100_000),
            move |_, _| match started.elapsed() > LOAD_TIMEOUT {
                true => Err(mlua::Error::runtime("FUNCTION LOAD timeout")),
                false => Ok(VmState::Continue),
            },
        );
        let ran = loader.pcall.call::<MultiValue>(chunk);
        lua.remove_hook();
        let registered = loader.registering.borrow_mut().take().unwrap_or_default();
        let _ = loaded.call::<()>(());
        let mut ran = ran.map_err(|e| lua_message(&e))?.into_iter();
        match ran.next() {
            Some(Value::Boolean(true)) => Ok(registered),
            _ => Err(format!(
                "Error registering functions: ERR {}",
                error_text(ran.next().unwrap_or(Value::Nil))
            )),
        }
    }

    /// The callback of function `name` of library `library` (load id
    /// `id`, code `code`), loading the library into this thread first if
    /// it has not got that load of it.
    pub fn library_function(
        &mut self,
        library: &str,
        id: u64,
        code: &[u8],
        name: &str,
    ) -> Result<Function, String> {
        let current = self.libraries().get(library).is_some_and(|l| l.id == id);
        if !current {
            let callbacks = self
                .load_library(code)?
                .into_iter()
                .map(|r| (r.name, r.callback))
                .collect();
            self.libraries_mut()
                .insert(library.to_string(), Loaded { id, callbacks });
        }
        self.libraries()
            .get(library)
            .and_then(|l| l.callbacks.iter().find(|(n, _)| n == name))
            .map(|(_, f)| f.clone())
            .ok_or_else(|| "ERR Function not found".to_string())
    }

    /// Forgets the libraries `keep` says are gone or reloaded, as of the
    /// registry's `generation`.
    pub fn prune_libraries(&mut self, generation: u64, keep: impl Fn(&str, u64) -> bool) {
        self.libraries_mut().retain(|name, l| keep(name, l.id));
        self.set_libraries_generation(generation);
    }
}
