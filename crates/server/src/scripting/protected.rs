//! `pcall` and `xpcall` as Lua 5.1's base library has them, less one
//! defect: after the protected call returns, Lua's own versions push the
//! status without making room for it, so a function returning more values
//! than the caller's frame holds (about 20: `pcall(unpack, t)`) overruns
//! the frame. Lua's API check aborts the process on it (debug builds of
//! the interpreter); without the check the push lands in the stack's
//! spare slots. These make room first, and when there is none (thousands
//! of results) answer `false, "too many results"` instead.
//!
//!
//! And what they hand the script as the error is what Redis's hand it: an
//! error raised in Rust (a library function's, `redis.call`'s) reaches Lua
//! as an `mlua` userdata, which a script can neither concatenate nor read
//! a field of; it becomes Redis's value, its text (`"Bad data format in
//! input."`; for a command's error, the error reply's: `"ERR value is not
//! an integer or out of range"`).
//!
//! Owns nothing. Installed into the globals before the sandbox captures
//! them (`sandbox.rs`).

use std::ffi::{c_int, CStr};

use mlua::{ffi, Function, Lua, Value};

use super::failure::{command_failure, lua_message};

/// Registry key set once the running script was killed: from then on a
/// `pcall` or `xpcall` of it passes every error on instead of catching it,
/// so a script that calls `pcall` in a loop still stops (Redis makes its
/// hook fire on every line for the same end).
pub const KILLED_KEY: &str = "slsm.killed";

const TOO_MANY: &CStr = c"too many results to return from a protected call";

/// Replaces the globals `pcall` and `xpcall` with these; returns the
/// `xpcall` that leaves errors as they are raised, for the server's own
/// calls of scripts (`vm.rs` reads `redis.call`'s errors itself).
pub fn install(lua: &Lua) -> mlua::Result<Function> {
    // SAFETY: both functions follow the C function contract (see
    // `finish`); they hold no Rust values across calls that may raise.
    let (pcall, xpcall) = unsafe {
        (
            lua.create_c_function(pcall)?,
            lua.create_c_function(xpcall)?,
        )
    };
    let as_redis = lua.create_function(|lua, v: Value| redis_error(lua, v))?;
    let killed = lua.create_function(|lua, ()| {
        Ok(lua
            .named_registry_value::<Option<bool>>(KILLED_KEY)?
            .unwrap_or(false))
    })?;
    let wrap: Function = lua.load(WRAP).set_name("=pcall").eval()?;
    let raw_xpcall = xpcall.clone();
    let (pcall, xpcall): (Function, Function) = wrap.call((pcall, xpcall, as_redis, killed))?;
    let g = lua.globals();
    g.raw_set("pcall", pcall)?;
    g.raw_set("xpcall", xpcall)?;
    Ok(raw_xpcall)
}

/// `pcall` and `xpcall` whose errors are Redis's values (no Lua stack API
/// is involved past the C functions, so any number of results passes).
const WRAP: &str = r#"
local type, error = type, error
return function(pcall, xpcall, as_redis, killed)
  local function fix(ok, ...)
    if ok then return ok, ... end
    local e = ...
    if killed() then error(e, 0) end
    if type(e) == "userdata" then e = as_redis(e) end
    return false, e
  end
  return function(...) return fix(pcall(...)) end,
    function(f, handler, ...)
      return fix(xpcall(f, function(e)
        if killed() then return e end
        if type(e) == "userdata" then e = as_redis(e) end
        return handler(e)
      end, ...))
    end
end
"#;

/// An error raised in Rust as Redis's scripts see it (see the module's doc).
fn redis_error(lua: &Lua, v: Value) -> mlua::Result<Value> {
    let Value::Error(e) = v else { return Ok(v) };
    let text = command_failure(&e).unwrap_or_else(|| lua_message(&e));
    Ok(Value::String(lua.create_string(text)?))
}

/// `pcall(f, ...)`: `true` and `f`'s results, or `false` and its error.
unsafe extern "C-unwind" fn pcall(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: called by Lua as a C function with a valid state; the stack
    // indices used exist (`luaL_checkany` raised otherwise).
    unsafe {
        ffi::luaL_checkany(state, 1);
        let status = ffi::lua_pcall(state, ffi::lua_gettop(state) - 1, ffi::LUA_MULTRET, 0);
        finish(state, status)
    }
}

/// `xpcall(f, handler)`: as `pcall`, the error passed through `handler`.
unsafe extern "C-unwind" fn xpcall(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: as for `pcall`; after `lua_settop(2)` indices 1 and 2 exist.
    unsafe {
        ffi::luaL_checkany(state, 2);
        ffi::lua_settop(state, 2);
        ffi::lua_insert(state, 1);
        let status = ffi::lua_pcall(state, 0, ffi::LUA_MULTRET, 1);
        ffi::lua_remove(state, 1);
        finish(state, status)
    }
}

/// Puts the status before the results and returns their count.
///
/// # Safety
/// `state` is the state of a running C function whose stack holds only
/// the protected call's results (or its error).
unsafe fn finish(state: *mut ffi::lua_State, status: c_int) -> c_int {
    // SAFETY: `lua_checkstack` makes the slot the push needs; without it
    // the stack is emptied first, leaving room for two values.
    unsafe {
        if ffi::lua_checkstack(state, 1) == 0 {
            ffi::lua_settop(state, 0);
            ffi::lua_pushboolean(state, 0);
            ffi::lua_pushstring(state, TOO_MANY.as_ptr());
            return 2;
        }
        ffi::lua_pushboolean(state, (status == 0) as c_int);
        ffi::lua_insert(state, 1);
        ffi::lua_gettop(state)
    }
}
