//! Every command the server serves, with the flags the server itself
//! decides by: whether a command writes (a script's `redis.call` under
//! `EVAL_RO`, `CLIENT PAUSE WRITE`) or only reads. The flags are Redis's.
//! What `COMMAND` tells clients about each (summary, arguments, key specs)
//! is Redis's own description, in `command_docs.rs`.

/// One served command.
pub struct Spec {
    pub name: &'static str,
    pub flags: &'static [&'static str],
}

const fn spec(name: &'static str, flags: &'static [&'static str]) -> Spec {
    Spec { name, flags }
}

const R: &[&str] = &["readonly", "fast"];
const W: &[&str] = &["write", "denyoom", "fast"];
const WS: &[&str] = &["write", "denyoom"];
const D: &[&str] = &["write", "fast"];
const C: &[&str] = &["fast", "loading", "stale"];
const BLOCKING: &[&str] = &["write", "noscript", "blocking"];
const PUBSUB: &[&str] = &["pubsub", "noscript", "loading", "stale"];
const PUBLISH: &[&str] = &["pubsub", "loading", "stale", "fast"];
const EVAL: &[&str] = &[
    "noscript",
    "stale",
    "skip_monitor",
    "no_mandatory_keys",
    "movablekeys",
];
const EVAL_RO: &[&str] = &[
    "readonly",
    "noscript",
    "stale",
    "skip_monitor",
    "no_mandatory_keys",
    "movablekeys",
];

#[rustfmt::skip]
pub const COMMANDS: &[Spec] = &[
    spec("ping", C),
    spec("echo", C),
    spec("time", &["loading", "stale", "fast"]),
    spec("hello", C),
    spec("auth", C),
    spec("quit", C),
    spec("select", C),
    spec("client", C),
    spec("command", &["loading", "stale"]),
    spec("config", &["admin", "loading", "stale"]),
    spec("info", &["loading", "stale"]),
    spec("dbsize", R),
    spec("flushdb", &["write"]),
    spec("flushall", &["write"]),
    spec("shutdown", &["admin", "loading", "stale"]),
    spec("save", &["admin", "noscript"]),
    spec("bgsave", &["admin", "noscript"]),
    spec("lastsave", &["loading", "stale", "fast"]),
    spec("reset", &["noscript", "loading", "stale", "fast", "no_auth"]),
    spec("multi", C),
    spec("exec", &["loading", "stale"]),
    spec("discard", C),
    spec("watch", C),
    spec("unwatch", C),
    spec("get", R),
    spec("set", WS),
    spec("getset", W),
    spec("setnx", W),
    spec("setex", WS),
    spec("psetex", WS),
    spec("getdel", D),
    spec("getex", D),
    spec("mget", R),
    spec("mset", WS),
    spec("msetnx", WS),
    spec("append", W),
    spec("strlen", R),
    spec("getrange", &["readonly"]),
    spec("substr", &["readonly"]),
    spec("lcs", &["readonly"]),
    spec("setrange", WS),
    spec("incr", W),
    spec("incrby", W),
    spec("decr", W),
    spec("decrby", W),
    spec("incrbyfloat", W),
    spec("del", &["write"]),
    spec("unlink", D),
    spec("exists", R),
    spec("touch", R),
    spec("randomkey", &["readonly"]),
    spec("type", R),
    spec("rename", &["write"]),
    spec("renamenx", W),
    spec("copy", WS),
    spec("keys", &["readonly"]),
    spec("scan", &["readonly"]),
    spec("expire", D),
    spec("pexpire", D),
    spec("expireat", D),
    spec("pexpireat", D),
    spec("ttl", R),
    spec("pttl", R),
    spec("expiretime", R),
    spec("pexpiretime", R),
    spec("persist", D),
    spec("lpush", W),
    spec("rpush", W),
    spec("lpushx", W),
    spec("rpushx", W),
    spec("lpop", D),
    spec("rpop", D),
    spec("llen", R),
    spec("lrange", &["readonly"]),
    spec("lindex", &["readonly"]),
    spec("lset", &["write", "denyoom"]),
    spec("ltrim", &["write"]),
    spec("lrem", &["write"]),
    spec("linsert", WS),
    spec("rpoplpush", WS),
    spec("lmove", WS),
    spec("lmpop", &["write", "movablekeys"]),
    spec("blmpop", &["write", "blocking", "movablekeys"]),
    spec("blpop", BLOCKING),
    spec("brpop", BLOCKING),
    spec("blmove", &["write", "denyoom", "noscript", "blocking"]),
    spec("brpoplpush", &["write", "denyoom", "noscript", "blocking"]),
    spec("hset", W),
    spec("hmset", W),
    spec("hsetnx", W),
    spec("hget", R),
    spec("hmget", R),
    spec("hdel", D),
    spec("hlen", R),
    spec("hexists", R),
    spec("hstrlen", R),
    spec("hgetall", &["readonly"]),
    spec("hkeys", &["readonly"]),
    spec("hvals", &["readonly"]),
    spec("hscan", &["readonly"]),
    spec("hincrby", W),
    spec("hincrbyfloat", W),
    spec("sadd", W),
    spec("srem", D),
    spec("sismember", R),
    spec("smismember", R),
    spec("smembers", &["readonly"]),
    spec("sscan", &["readonly"]),
    spec("scard", R),
    spec("spop", D),
    spec("srandmember", &["readonly"]),
    spec("smove", D),
    spec("sinter", &["readonly"]),
    spec("sunion", &["readonly"]),
    spec("sdiff", &["readonly"]),
    spec("sinterstore", WS),
    spec("sunionstore", WS),
    spec("sdiffstore", WS),
    spec("sintercard", &["readonly"]),
    spec("hrandfield", &["readonly"]),
    spec("lpos", &["readonly"]),
    spec("zadd", W),
    spec("zincrby", W),
    spec("zscore", R),
    spec("zmscore", R),
    spec("zcard", R),
    spec("zrem", D),
    spec("zcount", R),
    spec("zrank", R),
    spec("zrevrank", R),
    spec("zrange", &["readonly"]),
    spec("zrevrange", &["readonly"]),
    spec("zrangebyscore", &["readonly"]),
    spec("zrevrangebyscore", &["readonly"]),
    spec("zpopmin", D),
    spec("zpopmax", D),
    spec("bzpopmin", BLOCKING),
    spec("bzpopmax", BLOCKING),
    spec("zremrangebyrank", &["write"]),
    spec("zremrangebyscore", &["write"]),
    spec("zmpop", &["write", "movablekeys"]),
    spec("bzmpop", &["write", "blocking", "movablekeys"]),
    spec("zrandmember", &["readonly"]),
    spec("zscan", &["readonly"]),
    spec("zrangestore", WS),
    spec("zrangebylex", &["readonly"]),
    spec("zrevrangebylex", &["readonly"]),
    spec("zlexcount", R),
    spec("zremrangebylex", &["write"]),
    spec("zunion", &["readonly", "movablekeys"]),
    spec("zinter", &["readonly", "movablekeys"]),
    spec("zdiff", &["readonly", "movablekeys"]),
    spec("zunionstore", &["write", "denyoom", "movablekeys"]),
    spec("zinterstore", &["write", "denyoom", "movablekeys"]),
    spec("zdiffstore", &["write", "denyoom", "movablekeys"]),
    spec("zintercard", &["readonly", "movablekeys"]),
    spec("dump", &["readonly"]),
    spec("restore", WS),
    spec("wait", &["noscript"]),
    spec("monitor", &["admin", "noscript", "loading", "stale"]),
    spec("role", &["noscript", "loading", "stale", "fast"]),
    spec("replicaof", &["admin", "noscript", "stale"]),
    spec("slaveof", &["admin", "noscript", "stale"]),
    spec("module", &[]),
    spec("acl", &[]),
    spec("debug", &["admin", "noscript", "loading", "stale"]),
    spec("cluster", &[]),
    spec("readonly", &["loading", "stale", "fast"]),
    spec("readwrite", &["loading", "stale", "fast"]),
    spec("asking", &["fast"]),
    spec("swapdb", &["write", "fast"]),
    spec("move", &["write", "fast"]),
    spec("latency", &[]),
    spec("slowlog", &[]),
    spec("object", &[]),
    spec("memory", &[]),
    spec("sort", &["write", "denyoom", "movablekeys"]),
    spec("sort_ro", &["readonly", "movablekeys"]),
    spec("xadd", W),
    spec("xlen", R),
    spec("xdel", D),
    spec("xtrim", &["write"]),
    spec("xrange", &["readonly"]),
    spec("xrevrange", &["readonly"]),
    spec("xreadgroup", &["write", "blocking", "movablekeys"]),
    spec("xgroup", &[]),
    spec("xinfo", &[]),
    spec("xsetid", &["write", "denyoom", "fast"]),
    spec("xack", D),
    spec("xpending", &["readonly"]),
    spec("xclaim", D),
    spec("xautoclaim", D),
    spec("xread", &["readonly", "blocking", "movablekeys"]),
    spec("setbit", W),
    spec("getbit", R),
    spec("bitcount", &["readonly"]),
    spec("bitpos", &["readonly"]),
    spec("bitfield", WS),
    spec("bitfield_ro", R),
    spec("bitop", WS),
    spec("pfadd", W),
    spec("pfcount", &["readonly", "may_replicate"]),
    spec("pfmerge", WS),
    spec("geoadd", WS),
    spec("geodist", &["readonly"]),
    spec("geohash", &["readonly"]),
    spec("geopos", &["readonly"]),
    spec("georadius", &["write", "denyoom", "movablekeys"]),
    spec("georadius_ro", &["readonly"]),
    spec("georadiusbymember", &["write", "denyoom", "movablekeys"]),
    spec("georadiusbymember_ro", &["readonly"]),
    spec("geosearch", &["readonly"]),
    spec("geosearchstore", WS),
    spec("subscribe", PUBSUB),
    spec("unsubscribe", PUBSUB),
    spec("psubscribe", PUBSUB),
    spec("punsubscribe", PUBSUB),
    spec("ssubscribe", PUBSUB),
    spec("sunsubscribe", PUBSUB),
    spec("publish", PUBLISH),
    spec("spublish", PUBLISH),
    spec("pubsub", &[]),
    spec("eval", EVAL),
    spec("evalsha", EVAL),
    spec("eval_ro", EVAL_RO),
    spec("evalsha_ro", EVAL_RO),
    spec("script", &[]),
    spec("fcall", EVAL),
    spec("fcall_ro", EVAL_RO),
    spec("function", &[]),
];

/// The description of `name` (lowercase).
pub fn find(name: &str) -> Option<&'static Spec> {
    COMMANDS.iter().find(|s| s.name == name)
}

/// True for a command flagged `write`.
pub fn is_write(name: &str) -> bool {
    find(name).is_some_and(|spec| spec.flags.contains(&"write"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_has_an_arity_and_one_entry() {
        for (i, spec) in COMMANDS.iter().enumerate() {
            assert!(
                crate::shape::arity_of(spec.name).is_some(),
                "{} has no arity",
                spec.name
            );
            assert!(
                COMMANDS[..i].iter().all(|s| s.name != spec.name),
                "{} twice",
                spec.name
            );
        }
        // Every data command the server runs is described.
        for name in crate::collections::names() {
            assert!(find(name).is_some(), "{name} is not in the table");
        }
    }
}
