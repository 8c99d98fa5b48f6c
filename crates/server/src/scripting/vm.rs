//! The Lua 5.1 interpreter scripts run in (the `mlua` crate, Lua built
//! from its sources), one per server thread, set up as Redis 7.0 sets up
//! its own: the base, table, string and math libraries; the `redis` table;
//! globals and libraries that a script can read but not change (reading a
//! global that does not exist is an error, as in Redis; see `sandbox.rs`);
//! and each script compiled once per thread, from text only, as a
//! function of its SHA1.
//!
//! A script's `redis.call` and `redis.pcall` reach the server through the
//! `command` closure [`Vm::run`] is given, which runs the command inside
//! the script's engine transaction (see `scripting/mod.rs`); replies and
//! Lua values convert as in `scripting/convert.rs`.
//!
//! Owns: the interpreter and its compiled scripts. Thread-safety: one per
//! thread (`thread_local!`); never shared.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use mlua::{
    ChunkMode, Function, HookTriggers, Lua, LuaOptions, MultiValue, StdLib, Table, Value, VmState,
};

use super::call_gate::{CALL_KEY, PCALL_KEY};
use super::convert::{error_table, from_lua, request_of, to_lua};
pub use super::failure::Failure;
use super::failure::{failure_of, lua_message, CommandFailed};
use super::loader::{Loaded, Loader};
use super::sandbox::Sandbox;
use crate::resp::{Reply, Request};

/// Most memory one thread's interpreter may hold.
const MEMORY_LIMIT: usize = 1 << 30;
/// Compiled scripts a thread keeps.
const MAX_COMPILED: usize = 10_000;
/// How often (in Lua instructions) a running script checks whether it is
/// past its time or was killed.
const CHECK_EVERY: u32 = 10_000;

/// Sets up the globals scripts see; run once per interpreter, before the
/// sandbox locks them (`sandbox.rs`).
/// (`redis.call` and `redis.pcall` are C functions, see `call_gate.rs`.)
const PRELUDE: &str = include_str!("prelude.lua");

/// What stops a running script: `SCRIPT KILL`'s switch. There is no time
/// limit: a long script holds one thread, not the server (Redis's
/// `lua-time-limit` only starts answering `BUSY` to other clients, which
/// here keep being served; see [`leave_the_scheduler`]).
pub struct Limits {
    pub killed: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

/// How long a script runs on a tokio worker before it hands the worker to
/// another thread; it tries again after twice as long, up to
/// [`SHARE_TRIES`] times.
const SHARE_AFTER: Duration = Duration::from_millis(2);
const SHARE_TRIES: u32 = 4;

/// Hands this tokio worker (its queue of connections, and its turn at
/// polling the sockets) to another thread while the script goes on here.
/// Without this, a script that runs long can leave the server's sockets
/// unpolled: with two workers, one running the script and the other
/// asleep waiting to be told of work, nobody reads the client sending
/// `SCRIPT KILL` (seen in `tests/server/scripting.rs`, one run in two).
///
/// `block_in_place` starts a thread that takes the worker, and takes it
/// back when its closure returns if that thread has not taken it yet;
/// the closure waits a millisecond so that it has (a thread starts in
/// tens of microseconds). Only scripts running past [`SHARE_AFTER`] pay
/// that millisecond: handing over before every script cost a third of
/// `EVALSHA`'s throughput.
fn leave_the_scheduler() {
    use tokio::runtime::{Handle, RuntimeFlavor};
    if let Ok(RuntimeFlavor::MultiThread) = Handle::try_current().map(|h| h.runtime_flavor()) {
        tokio::task::block_in_place(|| std::thread::sleep(Duration::from_millis(1)));
    }
}

pub struct Vm {
    lua: Lua,
    /// The locked globals' contents (`sandbox.rs`): where `EVAL` sets
    /// `KEYS` and `ARGV`, which scripts read but cannot assign.
    globals: Table,
    /// Compiled scripts by SHA1, in a Lua table: each function a Rust
    /// handle held would take one of mlua's ~8,000 reference slots, and
    /// running out of them panics.
    compiled: Table,
    compiled_count: usize,
    /// The `SCRIPT FLUSH` count `compiled` is up to date with.
    flushes: u64,
    xpcall: Function,
    /// `xpcall` of a function with its keys and arguments.
    xpcall_with: Function,
    on_error: Function,
    loader: Loader,
    /// Function libraries loaded in this thread (`library.rs`), as of
    /// the registry's generation `libraries_generation`.
    libraries: Loaded,
    libraries_generation: u64,
}

/// What a run calls: a script (`EVAL`: `KEYS` and `ARGV` are globals) or
/// a library's function (`FCALL`: they are its parameters).
pub enum Call<'a> {
    Script {
        keys: &'a [Vec<u8>],
        argv: &'a [Vec<u8>],
    },
    Function {
        keys: &'a [Vec<u8>],
        args: &'a [Vec<u8>],
    },
}

/// Calls a script (no arguments) or a function (its keys and arguments)
/// under `xpcall`, keeping only its first result as Redis does (a script
/// returning thousands of values would otherwise hand mlua as many
/// handles; see `call_gate.rs`).
const XPCALL_SCRIPT: &str = r#"
local xpcall = ...
return function(f, handler)
  return xpcall(function() return (f()) end, handler)
end
"#;
const XPCALL_WITH: &str = r#"
local xpcall = ...
return function(f, handler, keys, args)
  return xpcall(function() return (f(keys, args)) end, handler)
end
"#;

thread_local! {
    static VM: RefCell<Option<Vm>> = const { RefCell::new(None) };
}

/// Runs `f` with this thread's interpreter (created on first use).
pub fn with_vm<R>(f: impl FnOnce(&mut Vm) -> R) -> Result<R, String> {
    VM.with(|cell| {
        let mut slot = cell
            .try_borrow_mut()
            .map_err(|_| "ERR scripts cannot nest".to_string())?;
        let vm = match slot.as_mut() {
            Some(vm) => vm,
            None => slot.insert(Vm::new().map_err(|e| format!("ERR cannot start Lua: {e}"))?),
        };
        Ok(f(vm))
    })
}

impl Vm {
    fn new() -> mlua::Result<Vm> {
        let libs = StdLib::TABLE | StdLib::STRING | StdLib::MATH;
        let lua = Lua::new_with(libs, LuaOptions::new())?;
        lua.set_memory_limit(MEMORY_LIMIT)?;
        let g = lua.globals();
        lua.load(PRELUDE).set_name("=prelude").exec()?;
        let raw_xpcall = super::protected::install(&lua)?;
        let sandbox = Sandbox::install(&lua)?;
        super::libs::install(&lua)?;
        let redis: Table = g.raw_get("redis")?;
        redis.raw_set("REDIS_VERSION", crate::version::REDIS_VERSION)?;
        redis.raw_set("REDIS_VERSION_NUM", redis_version_num())?;
        // Redis's own check of its argument count, and its error; the
        // argument as Lua's `tostring` has it (a table: nothing).
        let sha1hex = lua.create_function(|lua, mut args: MultiValue| {
            let (1, Some(v)) = (args.len(), args.pop_front()) else {
                return Err(mlua::Error::runtime("wrong number of arguments"));
            };
            let text = lua.coerce_string(v)?;
            Ok(super::cache::sha1_hex(
                &text.map(|t| t.as_bytes().to_vec()).unwrap_or_default(),
            ))
        })?;
        redis.raw_set("sha1hex", sha1hex)?;
        redis.raw_set(
            "acl_check_cmd",
            lua.create_function(super::libs::acl_check_cmd)?,
        )?;
        let xpcall: Function = lua
            .load(XPCALL_SCRIPT)
            .set_name("=call")
            .call(raw_xpcall.clone())?;
        super::call_gate::install(&lua, &redis)?;
        let on_error = lua.create_function(|lua, e: Value| {
            let line = user_line(lua);
            let t = lua.create_table()?;
            t.raw_set(1, e)?;
            t.raw_set(2, line)?;
            Ok(t)
        })?;
        let xpcall_with = lua.load(XPCALL_WITH).set_name("=call").call(raw_xpcall)?;
        let loader = Loader::new(&lua, &sandbox)?;
        let compiled = lua.create_table()?;
        let libraries = Loaded::new(&lua)?;
        let globals = sandbox.lock(&lua, &lua.globals())?;
        Ok(Vm {
            lua,
            globals,
            compiled,
            compiled_count: 0,
            flushes: 0,
            xpcall,
            xpcall_with,
            on_error,
            loader,
            libraries,
            libraries_generation: 0,
        })
    }

    pub(super) fn lua(&self) -> &Lua {
        &self.lua
    }

    pub(super) fn loader(&self) -> &Loader {
        &self.loader
    }

    pub(super) fn libraries(&self) -> &Loaded {
        &self.libraries
    }

    pub(super) fn libraries_mut(&mut self) -> &mut Loaded {
        &mut self.libraries
    }

    pub fn libraries_generation(&self) -> u64 {
        self.libraries_generation
    }

    pub(super) fn set_libraries_generation(&mut self, generation: u64) {
        self.libraries_generation = generation;
    }

    /// The function of script `body` (SHA1 `sha`), compiled on first use;
    /// Redis's compile error text if it does not compile.
    pub fn function(&mut self, sha: &str, body: &[u8]) -> Result<Function, String> {
        let internal = |e: mlua::Error| format!("ERR {}", lua_message(&e));
        if let Value::Function(f) = self.compiled.raw_get::<Value>(sha).map_err(internal)? {
            return Ok(f);
        }
        if self.compiled_count >= MAX_COMPILED {
            // Scripts built with their values inside them would otherwise
            // grow this without end.
            self.compiled = self.lua.create_table().map_err(internal)?;
            self.compiled_count = 0;
        }
        let f = self
            .lua
            .load(body)
            .set_name("@user_script")
            .set_mode(ChunkMode::Text)
            .into_function()
            .map_err(|e| {
                format!(
                    "ERR Error compiling script (new function): {}",
                    lua_message(&e)
                )
            })?;
        self.compiled.raw_set(sha, &f).map_err(internal)?;
        self.compiled_count += 1;
        Ok(f)
    }

    /// How many `SCRIPT FLUSH`es the compiled scripts reflect.
    pub fn flushes_seen(&self) -> u64 {
        self.flushes
    }

    /// Forgets every compiled script (after `SCRIPT FLUSH` number
    /// `flushes`).
    pub fn forget(&mut self, flushes: u64) {
        if let Ok(fresh) = self.lua.create_table() {
            self.compiled = fresh;
            self.compiled_count = 0;
        }
        self.flushes = flushes;
    }

    /// Runs `f` as `call` says, each `redis.call` going to `command`; the
    /// script's reply, or why it failed.
    pub fn run(
        &self,
        f: &Function,
        call: Call<'_>,
        limits: Limits,
        command: &mut dyn FnMut(Request) -> Reply,
    ) -> Result<Reply, Failure> {
        let internal = |e: mlua::Error| Failure {
            message: format!("ERR {}", lua_message(&e)),
            line: 0,
        };
        let lua = &self.lua;
        if let Call::Script { keys, argv } = call {
            let g = &self.globals;
            g.raw_set("KEYS", self.strings(keys).map_err(internal)?)
                .map_err(internal)?;
            g.raw_set("ARGV", self.strings(argv).map_err(internal)?)
                .map_err(internal)?;
        }
        let killed = limits.killed;
        let started = Instant::now();
        let tries = std::cell::Cell::new(0u32);
        lua.set_hook(
            HookTriggers::new().every_nth_instruction(CHECK_EVERY),
            move |lua, _| {
                if killed.load(std::sync::atomic::Ordering::Relaxed) {
                    // Remembered, so that no `pcall` of the script can
                    // swallow the kill (`protected.rs`).
                    lua.set_named_registry_value(super::protected::KILLED_KEY, true)?;
                    return Err(mlua::Error::runtime(
                        "Script killed by user with SCRIPT KILL...",
                    ));
                }
                let n = tries.get();
                if n < SHARE_TRIES && started.elapsed() >= SHARE_AFTER * (1 << n) {
                    tries.set(n + 1);
                    leave_the_scheduler();
                }
                Ok(VmState::Continue)
            },
        );
        let command = RefCell::new(command);
        // One command of the script: its reply, or (for `redis.call`) the
        // error raised as the script's error.
        let one = |lua: &Lua, args: MultiValue, raise: bool| -> mlua::Result<Value> {
            let reply = match request_of(args) {
                Ok(req) => (command.borrow_mut())(req),
                Err(message) => Reply::Error(message),
            };
            match reply {
                Reply::Error(e) if raise => Err(mlua::Error::external(CommandFailed(e))),
                Reply::Error(e) => error_table(lua, &e),
                r => to_lua(lua, r, 0),
            }
        };
        let outcome = lua.scope(|scope| {
            let call_fn = scope.create_function(|lua, args| one(lua, args, true))?;
            let pcall = scope.create_function(|lua, args| one(lua, args, false))?;
            lua.set_named_registry_value(CALL_KEY, call_fn)?;
            lua.set_named_registry_value(PCALL_KEY, pcall)?;
            match call {
                Call::Script { .. } => self
                    .xpcall
                    .call::<MultiValue>((f.clone(), self.on_error.clone())),
                Call::Function { keys, args } => self.xpcall_with.call::<MultiValue>((
                    f.clone(),
                    self.on_error.clone(),
                    self.strings(keys)?,
                    self.strings(args)?,
                )),
            }
        });
        lua.remove_hook();
        let _ = lua.set_named_registry_value(super::protected::KILLED_KEY, Value::Nil);
        // A script may stop the collector (`collectgarbage("stop")`, which
        // Redis allows); it must not stay stopped for the scripts after it.
        lua.gc_restart();
        let _ = lua.set_named_registry_value(CALL_KEY, Value::Nil);
        let _ = lua.set_named_registry_value(PCALL_KEY, Value::Nil);
        let mut out = outcome.map_err(internal)?.into_iter();
        match out.next() {
            Some(Value::Boolean(true)) => from_lua(out.next().unwrap_or(Value::Nil), 0)
                .map_err(|message| Failure { message, line: 0 }),
            _ => Err(failure_of(out.next().unwrap_or(Value::Nil))),
        }
    }

    fn strings(&self, items: &[Vec<u8>]) -> mlua::Result<Table> {
        let t = self.lua.create_table_with_capacity(items.len(), 0)?;
        for (i, item) in items.iter().enumerate() {
            t.raw_set(i + 1, self.lua.create_string(item)?)?;
        }
        Ok(t)
    }
}

/// The line of the innermost frame of the user's script on the stack.
fn user_line(lua: &Lua) -> i64 {
    (0..64)
        .map_while(|level| lua.inspect_stack(level))
        .find(|d| {
            matches!(
                d.source().source.as_deref(),
                Some("@user_script" | "@user_function")
            )
        })
        .map_or(0, |d| d.curr_line() as i64)
}

/// `redis.REDIS_VERSION_NUM`: 7.2.0 as 0x070200.
fn redis_version_num() -> i64 {
    crate::version::REDIS_VERSION
        .split('.')
        .take(3)
        .fold(0, |n, part| n * 256 + part.parse::<i64>().unwrap_or(0))
}
