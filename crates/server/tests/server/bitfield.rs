//! `BITFIELD` and `BITFIELD_RO` answer as redis-server 7.0 answered the
//! same requests on one connection, byte for byte: signed and unsigned
//! fields of every width at bit and `#` offsets, `SET` and `INCRBY` under
//! each `OVERFLOW` mode, the string grown (or created) even when `FAIL`
//! refuses every write, strings set by `SET`, and the errors in Redis's
//! order (types, offsets, values, the read-only form's refusal of writes,
//! other types).

use crate::common;
use common::{expect_replies, Server};

const REDIS_REPLIES: &[(&[&str], &str)] = &[
    (&["bitfield", "b", "set", "i8", "0", "100", "get", "i8", "0"], "*2\r\n:0\r\n:100\r\n"),
    (&["bitfield", "b", "incrby", "i8", "0", "100"], "*1\r\n:-56\r\n"),
    (&["bitfield", "b", "overflow", "sat", "incrby", "i8", "0", "100"], "*1\r\n:44\r\n"),
    (&["bitfield", "b", "overflow", "fail", "incrby", "i8", "0", "100"], "*1\r\n$-1\r\n"),
    (&["bitfield", "b", "overflow", "wrap", "incrby", "i8", "0", "-300"], "*1\r\n:0\r\n"),
    (&["bitfield", "b", "set", "u4", "#3", "15", "get", "u4", "#3", "get", "u4", "12", "get", "i4", "12"], "*4\r\n:0\r\n:15\r\n:15\r\n:-1\r\n"),
    (&["bitfield", "b", "get", "u63", "0", "get", "i64", "0", "get", "u64", "0"], "-ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.\r\n"),
    (&["bitfield", "b", "get", "i65", "0"], "-ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.\r\n"),
    (&["bitfield", "b", "get", "u0", "0"], "-ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.\r\n"),
    (&["bitfield", "b", "get", "x8", "0"], "-ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.\r\n"),
    (&["bitfield", "b", "get", "i08", "0"], "-ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.\r\n"),
    (&["bitfield", "b", "get", "i8", "-1"], "-ERR bit offset is not an integer or out of range\r\n"),
    (&["bitfield", "b", "get", "i8", "#-1"], "-ERR bit offset is not an integer or out of range\r\n"),
    (&["bitfield", "b", "get", "i8", "4294967296"], "-ERR bit offset is not an integer or out of range\r\n"),
    (&["bitfield", "b", "get", "i8", "4294967295"], "*1\r\n:0\r\n"),
    (&["bitfield", "b", "get", "i8", "x"], "-ERR bit offset is not an integer or out of range\r\n"),
    (&["bitfield", "b", "set", "i8", "0"], "-ERR syntax error\r\n"),
    (&["bitfield", "b", "set", "i8", "0", "x"], "-ERR value is not an integer or out of range\r\n"),
    (&["bitfield", "b", "overflow", "foo", "get", "i8", "0"], "-ERR Invalid OVERFLOW type specified\r\n"),
    (&["bitfield", "b", "overflow"], "-ERR syntax error\r\n"),
    (&["bitfield", "b", "foo"], "-ERR syntax error\r\n"),
    (&["bitfield", "b"], "*0\r\n"),
    (&["bitfield", "nokey", "get", "u8", "0"], "*1\r\n:0\r\n"),
    (&["bitfield", "nokey2", "overflow", "fail", "incrby", "u2", "100", "8"], "*1\r\n$-1\r\n"),
    (&["exists", "nokey2"], ":1\r\n"),
    (&["strlen", "nokey2"], ":13\r\n"),
    (&["bitfield", "b", "set", "u63", "0", "9223372036854775807", "incrby", "u63", "0", "1"], "*2\r\n:2111062325329920\r\n:0\r\n"),
    (&["bitfield", "b", "overflow", "sat", "set", "i64", "0", "-9223372036854775808", "incrby", "i64", "0", "-1"], "*2\r\n:0\r\n:-9223372036854775808\r\n"),
    (&["bitfield", "b", "overflow", "wrap", "incrby", "i64", "0", "-1"], "*1\r\n:9223372036854775807\r\n"),
    (&["bitfield", "b", "overflow", "sat", "incrby", "u8", "100", "-5", "incrby", "u8", "100", "300", "set", "u8", "100", "-1"], "*3\r\n:0\r\n:255\r\n:255\r\n"),
    (&["bitfield", "b", "overflow", "fail", "set", "u8", "100", "256", "set", "u8", "100", "255"], "*2\r\n$-1\r\n:255\r\n"),
    (&["bitfield_ro", "b", "get", "u8", "0", "get", "i16", "3"], "*2\r\n:127\r\n:-1\r\n"),
    (&["bitfield_ro", "b", "set", "u8", "0", "1"], "-ERR BITFIELD_RO only supports the GET subcommand\r\n"),
    (&["bitfield_ro", "nokey", "get", "u8", "0"], "*1\r\n:0\r\n"),
    (&["lpush", "l", "a"], ":1\r\n"),
    (&["bitfield", "l", "get", "u8", "0"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["bitfield_ro", "l", "get", "u8", "0"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["bitfield", "l", "set", "u8", "0", "1"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["bitfield", "l", "foo"], "-ERR syntax error\r\n"),
    (&["set", "s", "hello"], "+OK\r\n"),
    (&["bitfield", "s", "get", "u8", "0", "get", "u16", "#1", "incrby", "i5", "3", "7"], "*3\r\n:104\r\n:27756\r\n:15\r\n"),
    (&["bitfield", "s", "incrby", "u2", "100000", "1"], "*1\r\n:1\r\n"),
    (&["strlen", "s"], ":12501\r\n"),
    (&["bitfield", "s", "get", "u8", "#536870911"], "*1\r\n:0\r\n"),
    (&["bitfield", "s", "get", "u8", "#536870912"], "-ERR bit offset is not an integer or out of range\r\n"),
    (&["bitfield", "s", "get", "i64", "#9223372036854775807"], "-ERR bit offset is not an integer or out of range\r\n"),
    (&["bitfield_ro"], "-ERR wrong number of arguments for 'bitfield_ro' command\r\n"),
];

#[test]
fn bitfield_answers_as_redis_does() {
    let s = Server::start(None);
    expect_replies(&s, REDIS_REPLIES);
}
