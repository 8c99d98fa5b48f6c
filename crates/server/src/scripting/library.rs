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

use std::time::{Duration, Instant};

use mlua::{ChunkMode, Function, HookTriggers, MultiValue, Table, Value, VmState};

use super::failure::lua_message;
use super::loader::{error_text, library_env, Registering};
use super::registration::Registered;
use super::vm::Vm;

/// How long a library's code may run at load (Redis's `LOAD_TIMEOUT_MS`).
const LOAD_TIMEOUT: Duration = Duration::from_millis(500);

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
