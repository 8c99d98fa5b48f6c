//! The libraries scripts get beyond Lua's own, against what redis-server
//! 7.0.15 answered to the same script: `cmsgpack`'s encodings byte for
//! byte (integer and float widths, strings, arrays and maps, a circular
//! table cut at depth 16), its decoding functions and errors, the error
//! values `pcall` and `xpcall` hand a script when a library function or
//! `redis.call` fails, and `cjson`'s settings (nesting limits, invalid
//! numbers).

use crate::common;
use common::Server;

const SCRIPT: &str = r##"local function hex(e) local h = "" for i = 1, #e do h = h .. string.format("%02x", string.byte(e, i)) end return h end
local t = {}
for _, v in ipairs({0.1, -1099511627776, 1, 127, 128, 255, 256, 65535, 65536, 2^32, 2^40, -1, -32, -33, -128, -129, -32768, -32769, 2^31, -2^31, -2^31-1, 1.5, 1e300, true, false, "", string.rep("x", 31), string.rep("x", 32), string.rep("x", 256)}) do t[#t+1] = hex(cmsgpack.pack(v)):sub(1, 40) end
t[#t+1] = hex(cmsgpack.pack({}, {1,2,3}, {a=1}, {[1]=1,[3]=3}))
local a = {x=nil,y=5} local b = {x=a} a['x'] = b
t[#t+1] = hex(cmsgpack.pack(a))
local o, v = cmsgpack.unpack_one(cmsgpack.pack(1, "two"), 0) t[#t+1] = tostring(o) .. ":" .. tostring(v)
local o2, v2 = cmsgpack.unpack_limit(cmsgpack.pack(1, "two"), 1, o) t[#t+1] = tostring(o2) .. ":" .. tostring(v2)
local x, y, z = cmsgpack.unpack(cmsgpack.pack(1, {5, 6}, {k = "v"})) t[#t+1] = x .. y[2] .. z.k
t[#t+1] = tostring(pcall(cmsgpack.unpack, "\205\1"))
t[#t+1] = select(2, pcall(cmsgpack.unpack, "\193"))
t[#t+1] = select(2, pcall(cmsgpack.pack))

local ok, e = pcall(redis.call, 'incr', 'k') t[#t+1] = type(e) .. ":" .. e
t[#t+1] = select(2, xpcall(function() return cjson.decode('{') end, function(e) return type(e) end))
return t"##;

/// redis-server 7.0.15's reply to [`SCRIPT`] (with `k` holding `notint`).
const REDIS_ANSWERED: &[&str] = &[
    "cb3fb999999999999a",
    "d3ffffff0000000000",
    "01",
    "7f",
    "cc80",
    "ccff",
    "cd0100",
    "cdffff",
    "ce00010000",
    "cf0000000100000000",
    "cf0000010000000000",
    "ff",
    "e0",
    "d0df",
    "d080",
    "d1ff7f",
    "d18000",
    "d2ffff7fff",
    "ce80000000",
    "d280000000",
    "d3ffffffff7fffffff",
    "ca3fc00000",
    "cb7e37e43c8800759c",
    "c3",
    "c2",
    "a0",
    "bf78787878787878787878787878787878787878",
    "d920787878787878787878787878787878787878",
    "da01007878787878787878787878787878787878",
    "909301020381a161018201010303",
    "82a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a17882a17905a17881a178c0",
    "1:1",
    "-1:two",
    "16v",
    "false",
    "Bad data format in input.",
    "bad argument #0 to '?' (MessagePack pack needs input.)",
    "string:ERR value is not an integer or out of range",
    "string",
];

#[test]
fn cmsgpack_and_protected_calls_answer_as_redis_does() {
    let s = Server::start(None);
    let mut c = s.conn();
    let _: String = redis::cmd("SET")
        .arg("k")
        .arg("notint")
        .query(&mut c)
        .unwrap();
    let got: Vec<String> = redis::cmd("EVAL").arg(SCRIPT).arg(0).query(&mut c).unwrap();
    assert_eq!(got, REDIS_ANSWERED);
}

const CJSON_SETTINGS: &str = r##"local t = {}
local function try(f, ...) local ok, r = pcall(f, ...) t[#t+1] = tostring(ok) .. " " .. tostring(r) end
t[#t+1] = tostring(cjson.encode_max_depth())
cjson.encode_max_depth(1)
try(cjson.encode, {a = 1})
try(cjson.encode, {a = {}})
try(cjson.encode, 5)
cjson.encode_max_depth(2)
try(cjson.encode, {a = {}})
try(cjson.encode, {a = {b = {}}})
cjson.decode_max_depth(1)
try(cjson.decode, '{"a": 1}')
try(cjson.decode, '{"a": {}}')
try(cjson.decode, '[1, [2]]')
try(cjson.encode, {n = 0/0})
t[#t+1] = tostring(cjson.encode_invalid_numbers(true))
try(cjson.encode, {1/0})
t[#t+1] = tostring(cjson.encode_invalid_numbers("null"))
try(cjson.encode, {1/0})
cjson.encode_invalid_numbers(false) cjson.decode_max_depth(1000) cjson.encode_max_depth(1000)
return t"##;

/// redis-server 7.0.15's reply to [`CJSON_SETTINGS`] (tables' addresses
/// left out).
const CJSON_ANSWERED: &[&str] = &[
    "1000",
    "true {\"a\":1}",
    "false Cannot serialise, excessive nesting (2)",
    "true 5",
    "true {\"a\":{}}",
    "false Cannot serialise, excessive nesting (3)",
    "false Found too many nested data structures (2) at character 7",
    "false Found too many nested data structures (2) at character 5",
    "false Cannot serialise number: must not be NaN or Inf",
    "true",
    "true [inf]",
    "null",
    "true [null]",
];

#[test]
fn cjson_settings_answer_as_redis_does() {
    let s = Server::start(None);
    let mut c = s.conn();
    let got: Vec<String> = redis::cmd("EVAL")
        .arg(CJSON_SETTINGS)
        .arg(0)
        .query(&mut c)
        .unwrap();
    let got: Vec<&String> = got.iter().filter(|l| !l.contains("table: 0x")).collect();
    assert_eq!(got, CJSON_ANSWERED);
}
