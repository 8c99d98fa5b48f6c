//! The read-only world scripts share. Every script and function of a
//! thread runs in one interpreter, so anything one script could change in
//! the globals or the libraries (`redis.call = ...`, `string.format =
//! ...`, `setmetatable(_G, ...)`) would change them for every later script
//! of every client. Redis forbids it with a read-only flag it added to its
//! copy of Lua's tables; stock Lua 5.1 (which `mlua` builds) has none, so
//! the same contract is kept here with Lua's own means:
//!
//! - **Locked tables.** The globals and every table reachable from them
//!   (`redis`, `cjson`, `bit`, `string`, `math`, `table`, `coroutine`) are
//!   emptied into a hidden table of their contents; the emptied table reads
//!   through to it (`__index`) and refuses writes (`__newindex`), so a
//!   write of any field, new or existing, fails with Redis's "Attempt to
//!   modify a readonly table". A locked table keeps its identity, so every
//!   reference to it stays valid.
//! - **Hidden metatables.** A locked table's metatable, and the strings'
//!   metatable, answer `getmetatable` with a locked stand-in (`__metatable`),
//!   so they cannot be reached to be changed.
//! - **Guarded raw access.** The functions that go around metamethods
//!   (`rawset`, `setmetatable`, `table.insert`, `table.remove`,
//!   `table.sort`) refuse a locked table; those that read around them
//!   (`rawget`, `next`, `pairs`, `ipairs`, `unpack`, `table.concat`,
//!   `table.getn`, `table.maxn`, `table.foreach`, `table.foreachi`) read
//!   its contents, so iterating `redis` or `_G` works as in Redis. No
//!   function hands out the hidden contents table itself.
//! - **No bytecode.** `loadstring` and `load` refuse binary chunks (Redis's
//!   Lua has no bytecode loader at all: hand-made bytecode can break out of
//!   any sandbox); scripts and libraries are compiled as text only.
//! - `setfenv`, `getfenv` and `newproxy` are gone (Redis 7.0's default,
//!   `lua-enable-deprecated-api no`), as are `loadfile`, `dofile`, `print`,
//!   `module` and `require` (see `vm.rs`'s prelude).
//!
//! Order matters: [`GUARDS`] runs before anything captures the raw
//! functions (the library loader does), [`lock`] last, once the globals are
//! complete.
//!
//! Owns nothing beyond the interpreter's globals it rewrites.
//! Thread-safety: per interpreter, like [`super::vm::Vm`].

use mlua::{Function, Lua, Table};

/// Installs the guarded functions and returns `{lock = ..., seal = ...}`:
/// `lock(t, missing)` locks `t` and what it reaches (`missing`, if given,
/// is called for a field `t` lacks: the globals' "nonexistent global
/// variable" error) and returns `t`'s hidden contents; `seal(t)` marks a
/// table that is read-only by its own metatable (a library's environment)
/// so the raw writers refuse it too.
const GUARDS: &str = r##"
local type, error, tostring, tonumber, select = type, error, tostring, tonumber, select
local floor, find, gsub, pcall_ = math.floor, string.find, string.gsub, pcall
-- `error`'s level for the script that called a guarded function (see
-- `finish`: one level for it, one for the guard's tail call).
local LEVEL = 3
local next_, rawget_, rawset_ = next, rawget, rawset
local setmetatable_, getmetatable_ = setmetatable, getmetatable
local pairs_, ipairs_, unpack_, loadstring_ = pairs, ipairs, unpack, loadstring
local byte, concat_ = string.byte, table.concat
local insert_, remove_, sort_ = table.insert, table.remove, table.sort
local getn_, maxn_, foreach_, foreachi_ = table.getn, table.maxn, table.foreach, table.foreachi
local READONLY = "Attempt to modify a readonly table"

-- Locked table -> its contents (sealed tables map to themselves).
local contents = setmetatable_({}, { __mode = "k" })
local function of(t)
  if t == nil then return t end
  return contents[t] or t
end
local function refuse() error(READONLY, 2) end

-- A guarded function runs the raw one under `pcall` and raises its own
-- errors (those without a position: C functions give none under `pcall`)
-- at the script's line with its name, as a direct call would
-- ("user_script:1: bad argument #1 to 'rawset' ..."); errors of code it
-- called (a `table.sort` comparator) pass through unchanged.
local function finish(name, ok, ...)
  if ok then return ... end
  local e = ...
  if type(e) == "string" and not find(e, "^[^\n]-:%d+: ") then
    error((gsub(e, "to '%?'", "to '" .. name .. "'", 1)), LEVEL)
  end
  error(e, 0)
end
-- `writes`: refuses a locked first argument; otherwise it reads a locked
-- table's contents.
local function guard(name, raw, writes)
  if writes then
    return function(t, ...)
      if t ~= nil and contents[t] then error(READONLY, 2) end
      return finish(name, pcall_(raw, t, ...))
    end
  end
  return function(t, ...) return finish(name, pcall_(raw, of(t), ...)) end
end

rawset = guard("rawset", rawset_, true)
setmetatable = guard("setmetatable", setmetatable_, true)
table.insert = guard("insert", insert_, true)
table.remove = guard("remove", remove_, true)
table.sort = guard("sort", sort_, true)
rawget = guard("rawget", rawget_)
next = guard("next", next_)
ipairs = guard("ipairs", ipairs_)
table.concat = guard("concat", concat_)
table.getn = guard("getn", getn_)
table.maxn = guard("maxn", maxn_)
table.foreach = guard("foreach", foreach_)
table.foreachi = guard("foreachi", foreachi_)
local guarded_next = next
function pairs(t)
  if t ~= nil and contents[t] then return guarded_next, t, nil end
  return finish("pairs", pcall_(pairs_, t))
end

-- Lua 5.1.5's `unpack` counts its results in a C int: a range wider
-- than one overflows and crashes the process (`unpack({}, -2, 2^31 - 1)`;
-- Redis patched its copy). Ranges a C int cannot hold are refused here,
-- with the error Redis's patched `unpack` gives.
local INT_MIN, INT_MAX = -2147483648, 2147483647
local function as_int(x)
  if x >= 0 then return floor(x) end
  return -floor(-x)
end
-- Every error `unpack` could raise is raised here, so the raw one never
-- fails (and needs no `pcall`, which would hold its thousands of results).
-- Lua's `unpack` has 8,000 C stack slots less its arguments for its
-- results (7,999 for `unpack(t)`, as in Redis): the raw one is called
-- with the arguments given, so it has room for what is allowed here.
local C_STACK = 8000
local function bad(n, want, v)
  error("bad argument #" .. n .. " to 'unpack' (" .. want .. " expected, got " .. v .. ")", 3)
end
function unpack(...)
  local t, i, j = ...
  local given = select("#", ...)
  local u = of(t)
  if type(u) ~= "table" then bad(1, "table", select("#", ...) == 0 and "no value" or type(u)) end
  if i ~= nil and tonumber(i) == nil then bad(2, "number", type(i)) end
  if j ~= nil and tonumber(j) == nil then bad(3, "number", type(j)) end
  local first, last = as_int(tonumber(i) or 1), as_int(tonumber(j) or getn_(u))
  local outside = first < INT_MIN or first > INT_MAX or last < INT_MIN or last > INT_MAX
  if outside or (first <= last and last - first >= C_STACK - given) then
    error("too many results to unpack", 2)
  end
  if given == 1 then return unpack_(u) end
  if given == 2 then return unpack_(u, i) end
  return unpack_(u, i, j)
end

local BYTECODE = "loading precompiled chunks is not allowed"
function loadstring(s, name)
  if type(s) == "string" and byte(s, 1) == 27 then return nil, BYTECODE end
  return finish("loadstring", pcall_(loadstring_, s, name))
end
local text_loadstring = loadstring
function load(reader, name)
  if type(reader) ~= "function" then
    error("bad argument #1 to 'load' (function expected, got " .. type(reader) .. ")", 2)
  end
  local parts = {}
  while true do
    local part = reader()
    if part == nil or part == "" then break end
    if type(part) ~= "string" then return nil, "reader function must return a string" end
    parts[#parts + 1] = part
  end
  return text_loadstring(concat_(parts), name or "=(load)")
end

-- What `getmetatable` answers for a locked table: a locked, empty table.
local stand_in = {}
contents[stand_in] = {}
setmetatable_(stand_in, { __index = contents[stand_in], __newindex = refuse, __metatable = stand_in })

local function lock(t, missing)
  if contents[t] then return contents[t] end
  local inside, keys = {}, {}
  for k in next_, t do keys[#keys + 1] = k end
  for i = 1, #keys do
    local k = keys[i]
    inside[k] = rawget_(t, k)
    rawset_(t, k, nil)
  end
  contents[t] = inside
  for _, v in next_, inside do
    if type(v) == "table" then lock(v) end
  end
  if missing then setmetatable_(inside, { __index = missing }) end
  setmetatable_(t, { __index = inside, __newindex = refuse, __metatable = stand_in })
  return inside
end

local function seal(t)
  contents[t] = contents[t] or t
  return t
end

-- Strings share one metatable (`("x"):upper()` goes through it): it
-- answers `getmetatable` with a locked copy of itself, whose `__index`
-- is the (locked) string library, as Redis's read-only one would.
local strings = getmetatable_("")
local copy = {}
for k, v in next_, strings do copy[k] = v end
lock(copy)
rawset_(strings, "__metatable", copy)

setfenv, getfenv, newproxy = nil, nil, nil
return { lock = lock, seal = seal }
"##;

/// The globals' error for a name nobody defined.
const MISSING_GLOBAL: &str = r#"
local error, tostring = error, tostring
return function(_, k)
  error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
end
"#;

/// The sandbox's two operations (see [`GUARDS`]).
#[derive(Clone)]
pub struct Sandbox {
    lock: Function,
    seal: Function,
}

impl Sandbox {
    /// Installs the guarded functions into `lua`'s globals.
    pub fn install(lua: &Lua) -> mlua::Result<Sandbox> {
        let ops: Table = lua.load(GUARDS).set_name("=sandbox").eval()?;
        Ok(Sandbox {
            lock: ops.raw_get("lock")?,
            seal: ops.raw_get("seal")?,
        })
    }

    /// Marks `t` read-only for the raw writers (its own metatable already
    /// refuses ordinary writes).
    pub fn seal(&self, t: &Table) -> mlua::Result<()> {
        self.seal.call::<Table>(t).map(drop)
    }

    /// Locks `t` and every table it reaches; a field `t` lacks is the
    /// "nonexistent global variable" error. Returns `t`'s hidden contents
    /// (for the globals, where the server sets `KEYS` and `ARGV`).
    pub fn lock(&self, lua: &Lua, t: &Table) -> mlua::Result<Table> {
        let missing: Function = lua.load(MISSING_GLOBAL).set_name("=sandbox").eval()?;
        self.lock.call((t, missing))
    }
}
