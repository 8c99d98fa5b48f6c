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

use mlua::{ChunkMode, Function, HookTriggers, Lua, MultiValue, Table, Value, VmState};

use super::failure::lua_message;
pub use super::registration::check_name;
use super::registration::read_registration;
use super::sandbox::Sandbox;
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

/// A function a library registered (its callback is in the load's
/// table of callbacks, see [`Loader`]).
pub struct Registered {
    pub name: String,
    pub description: Option<Vec<u8>>,
    pub flags: u8,
}

/// What a load under way has registered. The callbacks are kept in a Lua
/// table, not as Rust handles: each handle takes one of mlua's ~8,000
/// reference slots, which a library of thousands of functions would
/// exhaust (mlua then panics).
struct Registering {
    functions: Vec<Registered>,
    callbacks: Table,
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
    pcall: Function,
    load_redis: Table,
    /// The functions registered by the load under way; `None` outside a
    /// load, when `redis.register_function` is an error.
    registering: Rc<RefCell<Option<Registering>>>,
    /// Seals each library's environment against raw writes.
    sandbox: Sandbox,
}

/// The libraries this thread has loaded: each one's load id, and its
/// callbacks in a Lua table (library name to a table of function name to
/// callback), one reference slot for them all however many there are.
pub struct Loaded {
    ids: std::collections::HashMap<String, u64>,
    callbacks: Table,
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
    let (env, loaded): (Table, Function) = loader.make_env.call(api)?;
    loader.sandbox.seal(&env)?;
    Ok((env, loaded))
}

impl Vm {
    /// Runs library code `code` (after its `#!` line) as `FUNCTION LOAD`
    /// does: the functions it registered, or Redis's error text (without
    /// the `ERR ` the reply adds).
    pub fn load_library(&self, code: &[u8]) -> Result<(Vec<Registered>, Table), String> {
        let lua = self.lua();
        let loader = self.loader();
        let (env, loaded) = library_env(lua, loader).map_err(|e| lua_message(&e))?;
        let chunk = lua
            .load(code)
            .set_name("@user_function")
            .set_mode(ChunkMode::Text)
            .set_environment(env)
            .into_function()
            .map_err(|e| format!("Error compiling function: {}", lua_message(&e)))?;
        *loader.registering.borrow_mut() = Some(Registering {
            functions: Vec::new(),
            callbacks: lua.create_table().map_err(|e| lua_message(&e))?,
        });
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
        let registered = loader.registering.borrow_mut().take();
        let _ = loaded.call::<()>(());
        let mut ran = ran.map_err(|e| lua_message(&e))?.into_iter();
        match (ran.next(), registered) {
            (Some(Value::Boolean(true)), Some(r)) => Ok((r.functions, r.callbacks)),
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
        let internal = |e: mlua::Error| format!("ERR {}", lua_message(&e));
        if self.libraries().ids.get(library) != Some(&id) {
            let (_, callbacks) = self.load_library(code)?;
            let loaded = self.libraries_mut();
            loaded
                .callbacks
                .raw_set(library, callbacks)
                .map_err(internal)?;
            loaded.ids.insert(library.to_string(), id);
        }
        let callbacks: Table = self
            .libraries()
            .callbacks
            .raw_get(library)
            .map_err(internal)?;
        match callbacks.raw_get::<Value>(name).map_err(internal)? {
            Value::Function(f) => Ok(f),
            _ => Err("ERR Function not found".to_string()),
        }
    }

    /// Forgets the libraries `keep` says are gone or reloaded, as of the
    /// registry's `generation`.
    pub fn prune_libraries(&mut self, generation: u64, keep: impl Fn(&str, u64) -> bool) {
        let loaded = self.libraries_mut();
        let gone: Vec<String> = loaded
            .ids
            .iter()
            .filter(|(name, id)| !keep(name, **id))
            .map(|(name, _)| name.clone())
            .collect();
        for name in gone {
            loaded.ids.remove(&name);
            let _ = loaded.callbacks.raw_set(name, Value::Nil);
        }
        self.set_libraries_generation(generation);
    }
}
