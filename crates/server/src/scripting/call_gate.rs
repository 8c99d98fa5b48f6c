//! `redis.call` and `redis.pcall` as C functions in front of the Rust
//! ones each run installs.
//!
//! Why a gate: mlua turns each argument of a Rust function into a handle
//! that takes one slot of its reference stack, which holds about 8,000;
//! past that it panics. A script may pass that many (`redis.call('rpush',
//! k, unpack(ARGV))`), so the count is checked here, on the Lua stack,
//! before mlua sees the arguments. Being C functions (not Lua wrappers),
//! they also keep the script's frame on the stack when called as `return
//! redis.call(...)`, so an error still names the script's line.
//!
//! Owns nothing: the Rust functions of the run under way are registry
//! values ([`CALL_KEY`], [`PCALL_KEY`]) set by `vm.rs`.

use std::ffi::{c_int, CStr};

use mlua::{ffi, Lua, Table};

/// Registry keys of the running script's `redis.call` and `redis.pcall`.
pub const CALL_KEY: &str = "slsm.redis.call";
pub const PCALL_KEY: &str = "slsm.redis.pcall";

/// Most arguments one `redis.call` may take: well inside mlua's reference
/// stack with what a run holds besides. (Redis's own limit is near: Lua
/// 5.1's `unpack` stops at 8,000 values.)
pub const MAX_ARGS: c_int = 7_800;

/// The error, raised (the reply adds `ERR `) or returned.
const TOO_MANY: &CStr = c"too many arguments for a redis.call or redis.pcall (at most 7800)";
const TOO_MANY_REPLY: &CStr =
    c"ERR too many arguments for a redis.call or redis.pcall (at most 7800)";

/// Makes `redis.call` and `redis.pcall` of `redis` the gates.
pub fn install(lua: &Lua, redis: &Table) -> mlua::Result<()> {
    // SAFETY: `call_gate` and `pcall_gate` follow the C function contract
    // (see `forward`).
    let (call, pcall) = unsafe {
        (
            lua.create_c_function(call_gate)?,
            lua.create_c_function(pcall_gate)?,
        )
    };
    redis.raw_set("call", call)?;
    redis.raw_set("pcall", pcall)
}

unsafe extern "C-unwind" fn call_gate(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: called by Lua as a C function, with a valid state.
    unsafe { forward(state, CALL_KEY, true) }
}

unsafe extern "C-unwind" fn pcall_gate(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: as above.
    unsafe { forward(state, PCALL_KEY, false) }
}

/// Calls the registry's function `key` with this call's arguments and
/// returns what it returns; with too many arguments, raises Redis's kind
/// of error (`raise`) or returns it as an `{err=...}` table.
///
/// # Safety
/// `state` is the state Lua called a C function with. The function holds
/// no Rust value that needs dropping, so a Lua error (a `longjmp`) may
/// leave it at any point; it pushes at most 3 values beyond its
/// arguments, and Lua guarantees `LUA_MINSTACK` (20) free slots.
unsafe fn forward(state: *mut ffi::lua_State, key: &str, raise: bool) -> c_int {
    // SAFETY: the stack operations below stay within the guaranteed free
    // slots and refer to indices that exist (see the function's contract).
    unsafe {
        let n = ffi::lua_gettop(state);
        if n > MAX_ARGS {
            ffi::lua_settop(state, 0);
            if raise {
                ffi::lua_pushstring(state, TOO_MANY.as_ptr());
                ffi::lua_error(state);
            }
            ffi::lua_createtable(state, 0, 1);
            ffi::lua_pushstring(state, TOO_MANY_REPLY.as_ptr());
            ffi::lua_setfield(state, -2, c"err".as_ptr());
            return 1;
        }
        ffi::lua_pushlstring(state, key.as_ptr().cast(), key.len());
        ffi::lua_rawget(state, ffi::LUA_REGISTRYINDEX);
        ffi::lua_insert(state, 1);
        ffi::lua_call(state, n, ffi::LUA_MULTRET);
        ffi::lua_gettop(state)
    }
}
