-- The globals scripts see before the sandbox locks them (vm.rs runs
-- this once per interpreter; sandbox.rs then locks every table).
redis = {
  LOG_DEBUG = 0, LOG_VERBOSE = 1, LOG_NOTICE = 2, LOG_WARNING = 3,
  REPL_NONE = 0, REPL_AOF = 1, REPL_SLAVE = 2, REPL_REPLICA = 2, REPL_ALL = 3,
}
do
  -- Redis's luaPushErrorBuff: "-CODE msg" keeps its code, anything else
  -- gets ERR; the message loses CR and LF at its ends.
  local type, select, find, sub, gsub = type, select, string.find, string.sub, string.gsub
  local function error_table(e)
    local code, msg = "ERR", sub(e, 2)
    local space = find(e, " ", 1, true)
    if space then code, msg = sub(e, 2, space - 1), sub(e, space + 1) end
    msg = gsub((gsub(msg, "^[\r\n]+", "")), "[\r\n]+$", "")
    return { err = code .. " " .. msg }
  end
  function redis.error_reply(...)
    local e = ...
    if select('#', ...) ~= 1 or type(e) ~= 'string' then
      return { err = "ERR wrong number or type of arguments" }
    end
    if sub(e, 1, 1) ~= "-" then e = "-" .. e end
    return error_table(e)
  end
end
function redis.status_reply(s) return { ok = s } end
function redis.log() end
function redis.setresp() end
function redis.set_repl() end
function redis.replicate_commands() return true end
function redis.breakpoint() return false end
function redis.debug() end
loadfile, dofile, print, module, require = nil
