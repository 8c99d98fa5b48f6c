//! The parts of a thread's interpreter that load libraries: the Lua
//! helpers that build each library's environment, and what a load under
//! way has registered (`library.rs` runs a load with them).
//!
//! * **Owns**: the loader's Lua functions and the registrations of the
//!   load under way. **Thread safety**: part of the thread's `Vm`.

use std::cell::RefCell;
use std::rc::Rc;

use mlua::{Function, Lua, MultiValue, Table, Value};

use super::failure::lua_message;
use super::registration::{check_name, read_registration, Registered};
use super::sandbox::Sandbox;

/// What a load under way has registered. The callbacks are kept in a Lua
/// table, not as Rust handles: each handle takes one of mlua's ~8,000
/// reference slots, which a library of thousands of functions would
/// exhaust (mlua then panics).
pub(super) struct Registering {
    pub(super) functions: Vec<Registered>,
    pub(super) callbacks: Table,
}

/// Builds a library's environment (see the module's doc); returns it and
/// the function that ends its load.
const MAKE_ENV: &str = r#"
-- `rawget` is the sandbox's, which reads a locked table's contents.
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
        v = rawget(G, k)
      end
      if v == nil then missing(k) end
      return v
    end,
    __newindex = function() error("Attempt to modify a readonly table", 2) end,
    __metatable = false,
  })
  return env, function() loading = false end
end
"#;

/// The `redis` table a library sees while it loads (locked by the
/// sandbox: fields it lacks are errors, as globals are).
const LOAD_API: &str = r#"
return function(register)
  return {
    register_function = register,
    log = function() end,
    LOG_DEBUG = 0, LOG_VERBOSE = 1, LOG_NOTICE = 2, LOG_WARNING = 3,
  }
end
"#;

/// What a thread keeps to load libraries (made once per interpreter,
/// before the globals are locked).
pub struct Loader {
    make_env: Function,
    /// Lua's `pcall`: a library's error reaches the reply as Lua raised
    /// it (a call from Rust would add a traceback to its text).
    pub(super) pcall: Function,
    load_redis: Table,
    /// The functions registered by the load under way; `None` outside a
    /// load, when `redis.register_function` is an error.
    pub(super) registering: Rc<RefCell<Option<Registering>>>,
    /// Seals each library's environment against raw writes.
    sandbox: Sandbox,
}

/// The libraries this thread has loaded: each one's load id, and its
/// callbacks in a Lua table (library name to a table of function name to
/// callback), one reference slot for them all however many there are.
pub struct Loaded {
    pub(super) ids: std::collections::HashMap<String, u64>,
    pub(super) callbacks: Table,
}

impl Loaded {
    pub fn new(lua: &Lua) -> mlua::Result<Loaded> {
        Ok(Loaded {
            ids: Default::default(),
            callbacks: lua.create_table()?,
        })
    }
}

impl Loader {
    pub fn new(lua: &Lua, sandbox: &Sandbox) -> mlua::Result<Loader> {
        let registering: Rc<RefCell<Option<Registering>>> = Rc::default();
        let slot = Rc::clone(&registering);
        let register = lua.create_function(move |lua, args: MultiValue| {
            let mut slot = slot.borrow_mut();
            let Some(registering) = slot.as_mut() else {
                return Err(mlua::Error::runtime(
                    "redis.register_function can only be called on FUNCTION LOAD command",
                ));
            };
            let (function, callback) =
                read_registration(lua, args).map_err(mlua::Error::runtime)?;
            check_name(&function.name).map_err(mlua::Error::runtime)?;
            if registering
                .functions
                .iter()
                .any(|r| r.name == function.name)
            {
                return Err(mlua::Error::runtime(
                    "Function already exists in the library",
                ));
            }
            registering
                .callbacks
                .raw_set(function.name.as_str(), callback)?;
            registering.functions.push(function);
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
        sandbox.lock(lua, &load_redis)?;
        Ok(Loader {
            make_env: lua.load(MAKE_ENV).set_name("=library").eval()?,
            pcall: g.raw_get("pcall")?,
            load_redis,
            registering,
            sandbox: sandbox.clone(),
        })
    }
}

/// The text of an error value a library raised.
pub(super) fn error_text(e: Value) -> String {
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
pub(super) fn library_env(lua: &Lua, loader: &Loader) -> mlua::Result<(Table, Function)> {
    let api = lua.create_table()?;
    api.raw_set("redis", loader.load_redis.clone())?;
    let (env, loaded): (Table, Function) = loader.make_env.call(api)?;
    loader.sandbox.seal(&env)?;
    Ok((env, loaded))
}
