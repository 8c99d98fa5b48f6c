//! `redis.call` and `redis.pcall` as C functions in front of the Rust
//! ones each run installs.
//!
//! Why a gate: mlua turns each argument of a Rust function into a handle
//! that takes one slot of its reference stack, which holds about 8,000;
//! past that it panics. A script may pass that many (`redis.call('rpush',
//! k, unpack(ARGV))`, up to the 7,999 values `unpack` returns, as in
//! Redis), so past [`PACK_ABOVE`] arguments the gate hands them over in
//! one table, behind the [`PACKED`] mark, which the Rust side reads one
//! at a time. Being C functions (not Lua wrappers), the gates also keep
//! the script's frame on the stack when called as `return
//! redis.call(...)`, so an error still names the script's line.
//!
//! Owns nothing: the Rust functions of the run under way are registry
//! values ([`CALL_KEY`], [`PCALL_KEY`]) set by `vm.rs`.

use std::ffi::{c_int, c_void};

use mlua::{ffi, Lua, Table};

/// Registry keys of the running script's `redis.call` and `redis.pcall`.
pub const CALL_KEY: &str = "slsm.redis.call";
pub const PCALL_KEY: &str = "slsm.redis.pcall";

/// Calls with more arguments than this get them in one table: few enough
/// handles for mlua with what a run holds besides, and more than any
/// written-out call has (Lua 5.1 compiles at most 250 registers a
/// function), so only an `unpack`ed call pays for the table.
pub const PACK_ABOVE: c_int = 200;

/// The first argument of a packed call (a light userdata no script can
/// make): the second is the table of the call's arguments, with their
/// count at `n`.
static PACKED_MARK: u8 = 0;

/// [`PACKED_MARK`]'s address, as the Rust side compares it.
pub fn packed() -> *mut c_void {
    std::ptr::addr_of!(PACKED_MARK) as *mut c_void
}

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
    unsafe { forward(state, CALL_KEY) }
}

unsafe extern "C-unwind" fn pcall_gate(state: *mut ffi::lua_State) -> c_int {
    // SAFETY: as above.
    unsafe { forward(state, PCALL_KEY) }
}

/// Calls the registry's function `key` with this call's arguments (past
/// [`PACK_ABOVE`], the mark and a table of them) and returns what it
/// returns.
///
/// # Safety
/// `state` is the state Lua called a C function with. The function holds
/// no Rust value that needs dropping, so a Lua error (a `longjmp`) may
/// leave it at any point; it pushes at most 3 values beyond its
/// arguments, and Lua guarantees `LUA_MINSTACK` (20) free slots.
unsafe fn forward(state: *mut ffi::lua_State, key: &str) -> c_int {
    // SAFETY: the stack operations below stay within the guaranteed free
    // slots and refer to indices that exist (see the function's contract).
    unsafe {
        let mut n = ffi::lua_gettop(state);
        if n > PACK_ABOVE {
            ffi::lua_createtable(state, n, 0);
            for i in 1..=n {
                ffi::lua_pushvalue(state, i);
                ffi::lua_rawseti(state, -2, i.into());
            }
            // Its count, as arguments may be nil.
            ffi::lua_pushinteger(state, n as ffi::lua_Integer);
            ffi::lua_setfield(state, -2, c"n".as_ptr());
            // [args..., table] -> [mark, table]
            ffi::lua_replace(state, 1);
            ffi::lua_settop(state, 1);
            ffi::lua_pushlightuserdata(state, packed());
            ffi::lua_insert(state, 1);
            n = 2;
        }
        ffi::lua_pushlstring(state, key.as_ptr().cast(), key.len());
        ffi::lua_rawget(state, ffi::LUA_REGISTRYINDEX);
        ffi::lua_insert(state, 1);
        ffi::lua_call(state, n, ffi::LUA_MULTRET);
        ffi::lua_gettop(state)
    }
}
