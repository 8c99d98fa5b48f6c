//! Every command the server knows, as `COMMAND`, `COMMAND INFO` and
//! `COMMAND DOCS` describe them to clients: redis-cli builds its hints
//! from DOCS, and cluster-aware clients find keys with INFO's key
//! positions, so these follow Redis 7.2's own table.

use crate::resp::Reply;

/// One command's description.
pub struct Spec {
    pub name: &'static str,
    /// Redis's command group (`COMMAND DOCS`).
    pub group: &'static str,
    pub summary: &'static str,
    pub flags: &'static [&'static str],
    /// First key, last key (-1: the last argument), step; 0 0 0: no keys.
    pub keys: (i64, i64, i64),
}

const fn spec(
    name: &'static str,
    group: &'static str,
    summary: &'static str,
    flags: &'static [&'static str],
    keys: (i64, i64, i64),
) -> Spec {
    Spec {
        name,
        group,
        summary,
        flags,
        keys,
    }
}

const NONE: (i64, i64, i64) = (0, 0, 0);
const ONE: (i64, i64, i64) = (1, 1, 1);
const ALL: (i64, i64, i64) = (1, -1, 1);
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
    spec("ping", "connection", "Returns the server's liveliness response.", C, NONE),
    spec("echo", "connection", "Returns the given string.", C, NONE),
    spec("time", "server", "Returns the server time.", &["loading", "stale", "fast"], NONE),
    spec("hello", "connection", "Handshakes with the Redis server.", C, NONE),
    spec("auth", "connection", "Authenticates the connection.", C, NONE),
    spec("quit", "connection", "Closes the connection.", C, NONE),
    spec("select", "connection", "Changes the selected database (only 0 exists).", C, NONE),
    spec("client", "connection", "A container for client connection commands.", C, NONE),
    spec("command", "server", "Returns detailed information about all commands.", &["loading", "stale"], NONE),
    spec("config", "server", "A container for server configuration commands.", &["admin", "loading", "stale"], NONE),
    spec("info", "server", "Returns information and statistics about the server.", &["loading", "stale"], NONE),
    spec("dbsize", "server", "Returns the number of keys in the database.", R, NONE),
    spec("flushdb", "server", "Removes all keys from the current database.", &["write"], NONE),
    spec("flushall", "server", "Removes all keys from all databases.", &["write"], NONE),
    spec("shutdown", "server", "Flushes and closes the database, then stops the server.", &["admin", "loading", "stale"], NONE),
    spec("save", "server", "Flushes the memory runs to run files and syncs (every write is in the log already).", &["admin", "noscript"], NONE),
    spec("bgsave", "server", "Saves as SAVE does, in the background.", &["admin", "noscript"], NONE),
    spec("lastsave", "server", "Returns the Unix time of the last successful save.", &["loading", "stale", "fast"], NONE),
    spec("reset", "connection", "Resets the connection.", &["noscript", "loading", "stale", "fast", "no_auth"], NONE),
    spec("multi", "transactions", "Starts a transaction.", C, NONE),
    spec("exec", "transactions", "Executes all commands in a transaction.", &["loading", "stale"], NONE),
    spec("discard", "transactions", "Discards a transaction.", C, NONE),
    spec("watch", "transactions", "Monitors changes to keys to determine the execution of a transaction.", C, ALL),
    spec("unwatch", "transactions", "Forgets about watched keys of a transaction.", C, NONE),
    spec("get", "string", "Returns the string value of a key.", R, ONE),
    spec("set", "string", "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.", WS, ONE),
    spec("getset", "string", "Returns the previous string value of a key after setting it to a new value.", W, ONE),
    spec("setnx", "string", "Set the string value of a key only when the key doesn't exist.", W, ONE),
    spec("setex", "string", "Sets the string value and expiration time of a key. Creates the key if it doesn't exist.", WS, ONE),
    spec("psetex", "string", "Sets both string value and expiration time in milliseconds of a key. The key is created if it doesn't exist.", WS, ONE),
    spec("getdel", "string", "Returns the string value of a key after deleting the key.", D, ONE),
    spec("getex", "string", "Returns the string value of a key after setting its expiration time.", D, ONE),
    spec("mget", "string", "Atomically returns the string values of one or more keys.", R, ALL),
    spec("mset", "string", "Atomically creates or modifies the string values of one or more keys.", WS, (1, -1, 2)),
    spec("msetnx", "string", "Atomically modifies the string values of one or more keys only when all keys don't exist.", WS, (1, -1, 2)),
    spec("append", "string", "Appends a string to the value of a key. Creates the key if it doesn't exist.", W, ONE),
    spec("strlen", "string", "Returns the length of a string value.", R, ONE),
    spec("getrange", "string", "Returns a substring of the string stored at a key.", &["readonly"], ONE),
    spec("substr", "string", "Returns a substring from a string value.", &["readonly"], ONE),
    spec("lcs", "string", "Finds the longest common substring.", &["readonly"], (1, 2, 1)),
    spec("setrange", "string", "Overwrites a part of a string value with another by an offset. Creates the key if it doesn't exist.", WS, ONE),
    spec("incr", "string", "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", W, ONE),
    spec("incrby", "string", "Increments the integer value of a key by a number. Uses 0 as initial value if the key doesn't exist.", W, ONE),
    spec("decr", "string", "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.", W, ONE),
    spec("decrby", "string", "Decrements a number from the integer value of a key. Uses 0 as initial value if the key doesn't exist.", W, ONE),
    spec("incrbyfloat", "string", "Increment the floating point value of a key by a number. Uses 0 as initial value if the key doesn't exist.", W, ONE),
    spec("del", "generic", "Deletes one or more keys.", &["write"], ALL),
    spec("unlink", "generic", "Asynchronously deletes one or more keys.", D, ALL),
    spec("exists", "generic", "Determines whether one or more keys exist.", R, ALL),
    spec("touch", "generic", "Returns the number of existing keys out of those specified after updating the time they were last accessed.", R, ALL),
    spec("type", "generic", "Determines the type of value stored at a key.", R, ONE),
    spec("rename", "generic", "Renames a key and overwrites the destination.", &["write"], (1, 2, 1)),
    spec("renamenx", "generic", "Renames a key only when the target key name doesn't exist.", W, (1, 2, 1)),
    spec("copy", "generic", "Copies the value of a key to a new key.", WS, (1, 2, 1)),
    spec("keys", "generic", "Returns all key names that match a pattern.", &["readonly"], NONE),
    spec("scan", "generic", "Iterates over the key names in the database.", &["readonly"], NONE),
    spec("expire", "generic", "Sets the expiration time of a key in seconds.", D, ONE),
    spec("pexpire", "generic", "Sets the expiration time of a key in milliseconds.", D, ONE),
    spec("expireat", "generic", "Sets the expiration time of a key to a Unix timestamp.", D, ONE),
    spec("pexpireat", "generic", "Sets the expiration time of a key to a Unix milliseconds timestamp.", D, ONE),
    spec("ttl", "generic", "Returns the expiration time in seconds of a key.", R, ONE),
    spec("pttl", "generic", "Returns the expiration time in milliseconds of a key.", R, ONE),
    spec("expiretime", "generic", "Returns the expiration time of a key as a Unix timestamp.", R, ONE),
    spec("pexpiretime", "generic", "Returns the expiration time of a key as a Unix milliseconds timestamp.", R, ONE),
    spec("persist", "generic", "Removes the expiration time of a key.", D, ONE),
    spec("lpush", "list", "Prepends one or more elements to a list. Creates the key if it doesn't exist.", W, ONE),
    spec("rpush", "list", "Appends one or more elements to a list. Creates the key if it doesn't exist.", W, ONE),
    spec("lpushx", "list", "Prepends one or more elements to a list only when the list exists.", W, ONE),
    spec("rpushx", "list", "Appends an element to a list only when the list exists.", W, ONE),
    spec("lpop", "list", "Returns the first elements in a list after removing it. Deletes the list if the last element was popped.", D, ONE),
    spec("rpop", "list", "Returns and removes the last elements of a list. Deletes the list if the last element was popped.", D, ONE),
    spec("llen", "list", "Returns the length of a list.", R, ONE),
    spec("lrange", "list", "Returns a range of elements from a list.", &["readonly"], ONE),
    spec("lindex", "list", "Returns an element from a list by its index.", &["readonly"], ONE),
    spec("lset", "list", "Sets the value of an element in a list by its index.", &["write", "denyoom"], ONE),
    spec("ltrim", "list", "Removes elements from both ends a list. Deletes the list if all elements were trimmed.", &["write"], ONE),
    spec("lrem", "list", "Removes elements from a list. Deletes the list if the last element was removed.", &["write"], ONE),
    spec("linsert", "list", "Inserts an element before or after another element in a list.", WS, ONE),
    spec("rpoplpush", "list", "Returns the last element of a list after removing and pushing it to another list.", WS, (1, 2, 1)),
    spec("lmove", "list", "Returns an element after popping it from one list and pushing it to another.", WS, (1, 2, 1)),
    spec("lmpop", "list", "Returns multiple elements from a list after removing them. Deletes the list if the last element was popped.", &["write", "movablekeys"], NONE),
    spec("blmpop", "list", "Pops the first element from one of multiple lists. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", &["write", "blocking", "movablekeys"], NONE),
    spec("blpop", "list", "Removes and returns the first element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", BLOCKING, (1, -2, 1)),
    spec("brpop", "list", "Removes and returns the last element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", BLOCKING, (1, -2, 1)),
    spec("blmove", "list", "Pops an element from a list, pushes it to another list and returns it. Blocks until an element is available otherwise. Deletes the list if the last element was moved.", &["write", "denyoom", "noscript", "blocking"], (1, 2, 1)),
    spec("brpoplpush", "list", "Pops an element from a list, pushes it to another list and returns it. Block until an element is available otherwise. Deletes the list if the last element was popped.", &["write", "denyoom", "noscript", "blocking"], (1, 2, 1)),
    spec("hset", "hash", "Creates or modifies the value of a field in a hash.", W, ONE),
    spec("hmset", "hash", "Sets the values of multiple fields.", W, ONE),
    spec("hsetnx", "hash", "Sets the value of a field in a hash only when the field doesn't exist.", W, ONE),
    spec("hget", "hash", "Returns the value of a field in a hash.", R, ONE),
    spec("hmget", "hash", "Returns the values of all fields in a hash.", R, ONE),
    spec("hdel", "hash", "Deletes one or more fields and their values from a hash. Deletes the hash if no fields remain.", D, ONE),
    spec("hlen", "hash", "Returns the number of fields in a hash.", R, ONE),
    spec("hexists", "hash", "Determines whether a field exists in a hash.", R, ONE),
    spec("hstrlen", "hash", "Returns the length of the value of a field.", R, ONE),
    spec("hgetall", "hash", "Returns all fields and values in a hash.", &["readonly"], ONE),
    spec("hkeys", "hash", "Returns all fields in a hash.", &["readonly"], ONE),
    spec("hvals", "hash", "Returns all values in a hash.", &["readonly"], ONE),
    spec("hscan", "hash", "Iterates over fields and values of a hash.", &["readonly"], ONE),
    spec("hincrby", "hash", "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if the field doesn't exist.", W, ONE),
    spec("hincrbyfloat", "hash", "Increments the floating point value of a field by a number. Uses 0 as initial value if the field doesn't exist.", W, ONE),
    spec("sadd", "set", "Adds one or more members to a set. Creates the key if it doesn't exist.", W, ONE),
    spec("srem", "set", "Removes one or more members from a set. Deletes the set if the last member was removed.", D, ONE),
    spec("sismember", "set", "Determines whether a member belongs to a set.", R, ONE),
    spec("smismember", "set", "Determines whether multiple members belong to a set.", R, ONE),
    spec("smembers", "set", "Returns all members of a set.", &["readonly"], ONE),
    spec("sscan", "set", "Iterates over members of a set.", &["readonly"], ONE),
    spec("scard", "set", "Returns the number of members in a set.", R, ONE),
    spec("spop", "set", "Returns one or more random members from a set after removing them. Deletes the set if the last member was popped.", D, ONE),
    spec("srandmember", "set", "Get one or multiple random members from a set", &["readonly"], ONE),
    spec("smove", "set", "Moves a member from one set to another.", D, (1, 2, 1)),
    spec("sinter", "set", "Returns the intersect of multiple sets.", &["readonly"], ALL),
    spec("sunion", "set", "Returns the union of multiple sets.", &["readonly"], ALL),
    spec("sdiff", "set", "Returns the difference of multiple sets.", &["readonly"], ALL),
    spec("sinterstore", "set", "Stores the intersect of multiple sets in a key.", WS, ALL),
    spec("sunionstore", "set", "Stores the union of multiple sets in a key.", WS, ALL),
    spec("sdiffstore", "set", "Stores the difference of multiple sets in a key.", WS, ALL),
    spec("sintercard", "set", "Returns the number of members of the intersect of multiple sets.", &["readonly"], NONE),
    spec("hrandfield", "hash", "Returns one or more random fields from a hash.", &["readonly"], ONE),
    spec("lpos", "list", "Returns the index of matching elements in a list.", &["readonly"], ONE),
    spec("zadd", "sorted-set", "Adds one or more members to a sorted set, or updates their scores. Creates the key if it doesn't exist.", W, ONE),
    spec("zincrby", "sorted-set", "Increments the score of a member in a sorted set.", W, ONE),
    spec("zscore", "sorted-set", "Returns the score of a member in a sorted set.", R, ONE),
    spec("zmscore", "sorted-set", "Returns the score of one or more members in a sorted set.", R, ONE),
    spec("zcard", "sorted-set", "Returns the number of members in a sorted set.", R, ONE),
    spec("zrem", "sorted-set", "Removes one or more members from a sorted set. Deletes the sorted set if all members were removed.", D, ONE),
    spec("zcount", "sorted-set", "Returns the count of members in a sorted set that have scores within a range.", R, ONE),
    spec("zrank", "sorted-set", "Returns the index of a member in a sorted set ordered by ascending scores.", R, ONE),
    spec("zrevrank", "sorted-set", "Returns the index of a member in a sorted set ordered by descending scores.", R, ONE),
    spec("zrange", "sorted-set", "Returns members in a sorted set within a range of indexes.", &["readonly"], ONE),
    spec("zrevrange", "sorted-set", "Returns members in a sorted set within a range of indexes in reverse order.", &["readonly"], ONE),
    spec("zrangebyscore", "sorted-set", "Returns members in a sorted set within a range of scores.", &["readonly"], ONE),
    spec("zrevrangebyscore", "sorted-set", "Returns members in a sorted set within a range of scores in reverse order.", &["readonly"], ONE),
    spec("zpopmin", "sorted-set", "Returns the lowest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", D, ONE),
    spec("zpopmax", "sorted-set", "Returns the highest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", D, ONE),
    spec("bzpopmin", "sorted-set", "Removes and returns the member with the lowest score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", BLOCKING, (1, -2, 1)),
    spec("bzpopmax", "sorted-set", "Removes and returns the member with the highest score from one or more sorted sets. Blocks until a member available otherwise.  Deletes the sorted set if the last element was popped.", BLOCKING, (1, -2, 1)),
    spec("zremrangebyrank", "sorted-set", "Removes members in a sorted set within a range of indexes. Deletes the sorted set if all members were removed.", &["write"], ONE),
    spec("zremrangebyscore", "sorted-set", "Removes members in a sorted set within a range of scores. Deletes the sorted set if all members were removed.", &["write"], ONE),
    spec("zmpop", "sorted-set", "Returns the highest- or lowest-scoring members from one or more sorted sets after removing them. Deletes the sorted set if the last member was popped.", &["write", "movablekeys"], NONE),
    spec("bzmpop", "sorted-set", "Removes and returns a member by score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", &["write", "blocking", "movablekeys"], NONE),
    spec("zrandmember", "sorted-set", "Returns one or more random members from a sorted set.", &["readonly"], ONE),
    spec("zscan", "sorted-set", "Iterates over members and scores of a sorted set.", &["readonly"], ONE),
    spec("zrangestore", "sorted-set", "Stores a range of members from sorted set in a key.", WS, (1, 2, 1)),
    spec("zrangebylex", "sorted-set", "Returns members in a sorted set within a lexicographical range.", &["readonly"], ONE),
    spec("zrevrangebylex", "sorted-set", "Returns members in a sorted set within a lexicographical range in reverse order.", &["readonly"], ONE),
    spec("zlexcount", "sorted-set", "Returns the number of members in a sorted set within a lexicographical range.", R, ONE),
    spec("zremrangebylex", "sorted-set", "Removes members in a sorted set within a lexicographical range. Deletes the sorted set if all members were removed.", &["write"], ONE),
    spec("zunion", "sorted-set", "Returns the union of multiple sorted sets.", &["readonly", "movablekeys"], NONE),
    spec("zinter", "sorted-set", "Returns the intersect of multiple sorted sets.", &["readonly", "movablekeys"], NONE),
    spec("zdiff", "sorted-set", "Returns the difference between multiple sorted sets.", &["readonly", "movablekeys"], NONE),
    spec("zunionstore", "sorted-set", "Stores the union of multiple sorted sets in a key.", &["write", "denyoom", "movablekeys"], ONE),
    spec("zinterstore", "sorted-set", "Stores the intersect of multiple sorted sets in a key.", &["write", "denyoom", "movablekeys"], ONE),
    spec("zdiffstore", "sorted-set", "Stores the difference of multiple sorted sets in a key.", &["write", "denyoom", "movablekeys"], ONE),
    spec("zintercard", "sorted-set", "Returns the number of members of the intersect of multiple sorted sets.", &["readonly", "movablekeys"], NONE),
    spec("dump", "generic", "Returns a serialized representation of the value stored at a key.", &["readonly"], ONE),
    spec("restore", "generic", "Creates a key from the serialized representation of a value.", WS, ONE),
    spec("wait", "generic", "Blocks until the asynchronous replication of all preceding write commands sent by the connection is completed.", &["noscript"], NONE),
    spec("monitor", "server", "Listens for all requests received by the server in real-time.", &["admin", "noscript", "loading", "stale"], NONE),
    spec("role", "server", "Returns the replication role.", &["noscript", "loading", "stale", "fast"], NONE),
    spec("replicaof", "server", "Configures a server as replica of another, or promotes it to a master.", &["admin", "noscript", "stale"], NONE),
    spec("slaveof", "server", "Sets a Redis server as a replica of another, or promotes it to being a master.", &["admin", "noscript", "stale"], NONE),
    spec("module", "server", "A container for module commands.", &[], NONE),
    spec("acl", "server", "A container for Access List Control commands.", &[], NONE),
    spec("debug", "server", "A container for debugging commands.", &["admin", "noscript", "loading", "stale"], NONE),
    spec("cluster", "cluster", "A container for Redis Cluster commands.", &[], NONE),
    spec("readonly", "cluster", "Enables read-only queries for a connection to a Redis Cluster replica node.", &["loading", "stale", "fast"], NONE),
    spec("readwrite", "cluster", "Enables read-write queries for a connection to a Reids Cluster replica node.", &["loading", "stale", "fast"], NONE),
    spec("asking", "cluster", "Signals that a cluster client is following an -ASK redirect.", &["fast"], NONE),
    spec("swapdb", "server", "Swaps two Redis databases.", &["write", "fast"], NONE),
    spec("move", "generic", "Moves a key to another database.", &["write", "fast"], ONE),
    spec("latency", "server", "A container for latency diagnostics commands.", &[], NONE),
    spec("slowlog", "server", "A container for slow log commands.", &[], NONE),
    spec("object", "generic", "A container for object introspection commands.", &[], NONE),
    spec("memory", "server", "A container for memory diagnostics commands.", &[], NONE),
    spec("sort", "generic", "Sorts the elements in a list, a set, or a sorted set, optionally storing the result.", &["write", "denyoom", "movablekeys"], ONE),
    spec("sort_ro", "generic", "Returns the sorted elements of a list, a set, or a sorted set.", &["readonly", "movablekeys"], ONE),
    spec("xadd", "stream", "Appends a new message to a stream. Creates the key if it doesn't exist.", W, ONE),
    spec("xlen", "stream", "Return the number of messages in a stream.", R, ONE),
    spec("xdel", "stream", "Returns the number of messages after removing them from a stream.", D, ONE),
    spec("xtrim", "stream", "Deletes messages from the beginning of a stream.", &["write"], ONE),
    spec("xrange", "stream", "Returns the messages from a stream within a range of IDs.", &["readonly"], ONE),
    spec("xrevrange", "stream", "Returns the messages from a stream within a range of IDs in reverse order.", &["readonly"], ONE),
    spec("xreadgroup", "stream", "Returns new or historical messages from a stream for a consumer in a group. Blocks until a message is available otherwise.", &["write", "blocking", "movablekeys"], NONE),
    spec("xgroup", "stream", "A container for consumer groups commands.", &[], NONE),
    spec("xinfo", "stream", "A container for stream introspection commands.", &[], NONE),
    spec("xsetid", "stream", "An internal command for replicating stream values.", &["write", "denyoom", "fast"], ONE),
    spec("xack", "stream", "Returns the number of messages that were successfully acknowledged by the consumer group member of a stream.", D, ONE),
    spec("xpending", "stream", "Returns the information and entries from a stream consumer group's pending entries list.", &["readonly"], ONE),
    spec("xclaim", "stream", "Changes, or acquires, ownership of a message in a consumer group, as if the message was delivered a consumer group member.", D, ONE),
    spec("xautoclaim", "stream", "Changes, or acquires, ownership of messages in a consumer group, as if the messages were delivered to as consumer group member.", D, ONE),
    spec("xread", "stream", "Returns messages from multiple streams with IDs greater than the ones requested. Blocks until a message is available otherwise.", &["readonly", "blocking", "movablekeys"], NONE),
    spec("setbit", "bitmap", "Sets or clears the bit at offset of the string value. Creates the key if it doesn't exist.", W, ONE),
    spec("getbit", "bitmap", "Returns a bit value by offset.", R, ONE),
    spec("bitcount", "bitmap", "Counts the number of set bits (population counting) in a string.", &["readonly"], ONE),
    spec("bitpos", "bitmap", "Finds the first set (1) or clear (0) bit in a string.", &["readonly"], ONE),
    spec("bitfield", "bitmap", "Performs arbitrary bitfield integer operations on strings.", WS, ONE),
    spec("bitfield_ro", "bitmap", "Performs arbitrary read-only bitfield integer operations on strings.", R, ONE),
    spec("bitop", "bitmap", "Performs bitwise operations on multiple strings, and stores the result.", WS, (2, -1, 1)),
    spec("pfadd", "hyperloglog", "Adds elements to a HyperLogLog key. Creates the key if it doesn't exist.", W, ONE),
    spec("pfcount", "hyperloglog", "Returns the approximated cardinality of the set(s) observed by the HyperLogLog key(s).", &["readonly", "may_replicate"], ALL),
    spec("pfmerge", "hyperloglog", "Merges one or more HyperLogLog values into a single key.", WS, ALL),
    spec("geoadd", "geo", "Adds one or more members to a geospatial index. The key is created if it doesn't exist.", WS, ONE),
    spec("geodist", "geo", "Returns the distance between two members of a geospatial index.", &["readonly"], ONE),
    spec("geohash", "geo", "Returns members from a geospatial index as geohash strings.", &["readonly"], ONE),
    spec("geopos", "geo", "Returns the longitude and latitude of members from a geospatial index.", &["readonly"], ONE),
    spec("georadius", "geo", "Queries a geospatial index for members within a distance from a coordinate, optionally stores the result.", &["write", "denyoom", "movablekeys"], ONE),
    spec("georadius_ro", "geo", "Returns members from a geospatial index that are within a distance from a coordinate.", &["readonly"], ONE),
    spec("georadiusbymember", "geo", "Queries a geospatial index for members within a distance from a member, optionally stores the result.", &["write", "denyoom", "movablekeys"], ONE),
    spec("georadiusbymember_ro", "geo", "Returns members from a geospatial index that are within a distance from a member.", &["readonly"], ONE),
    spec("geosearch", "geo", "Queries a geospatial index for members inside an area of a box or a circle.", &["readonly"], ONE),
    spec("geosearchstore", "geo", "Queries a geospatial index for members inside an area of a box or a circle, optionally stores the result.", WS, (1, 2, 1)),
    spec("subscribe", "pubsub", "Listens for messages published to channels.", PUBSUB, NONE),
    spec("unsubscribe", "pubsub", "Stops listening to messages posted to channels.", PUBSUB, NONE),
    spec("psubscribe", "pubsub", "Listens for messages published to channels that match one or more patterns.", PUBSUB, NONE),
    spec("punsubscribe", "pubsub", "Stops listening to messages published to channels that match one or more patterns.", PUBSUB, NONE),
    spec("ssubscribe", "pubsub", "Listens for messages published to shard channels.", PUBSUB, ALL),
    spec("sunsubscribe", "pubsub", "Stops listening to messages posted to shard channels.", PUBSUB, ALL),
    spec("publish", "pubsub", "Posts a message to a channel.", PUBLISH, NONE),
    spec("spublish", "pubsub", "Post a message to a shard channel", PUBLISH, ONE),
    spec("pubsub", "pubsub", "A container for Pub/Sub commands.", &[], NONE),
    spec("eval", "scripting", "Executes a server-side Lua script.", EVAL, NONE),
    spec("evalsha", "scripting", "Executes a server-side Lua script by SHA1 digest.", EVAL, NONE),
    spec("eval_ro", "scripting", "Executes a read-only server-side Lua script.", EVAL_RO, NONE),
    spec("evalsha_ro", "scripting", "Executes a read-only server-side Lua script by SHA1 digest.", EVAL_RO, NONE),
    spec("script", "scripting", "A container for Lua scripts management commands.", &[], NONE),
    spec("fcall", "scripting", "Invokes a function.", EVAL, NONE),
    spec("fcall_ro", "scripting", "Invokes a read-only function.", EVAL_RO, NONE),
    spec("function", "scripting", "A container for function commands.", &[], NONE),
];

/// The description of `name` (lowercase).
pub fn find(name: &str) -> Option<&'static Spec> {
    COMMANDS.iter().find(|s| s.name == name)
}

/// `COMMAND INFO`'s entry: name, arity, flags, first key, last key, step,
/// ACL categories, tips, key specs, subcommands.
pub fn info_reply(spec: &Spec) -> Reply {
    let arity = crate::shape::arity_of(spec.name).unwrap_or(-1);
    let (first, last, step) = spec.keys;
    Reply::Array(vec![
        Reply::bulk(spec.name),
        Reply::Int(arity as i64),
        Reply::Set(
            spec.flags
                .iter()
                .map(|f| Reply::Simple((*f).into()))
                .collect(),
        ),
        Reply::Int(first),
        Reply::Int(last),
        Reply::Int(step),
        Reply::Set(vec![Reply::Simple(format!("@{}", spec.group))]),
        Reply::Array(Vec::new()),
        Reply::Array(Vec::new()),
        Reply::Array(Vec::new()),
    ])
}

/// `COMMAND DOCS`'s entry: the command's summary and group.
pub fn docs_reply(spec: &Spec) -> Reply {
    Reply::Map(vec![
        (Reply::bulk("summary"), Reply::bulk(spec.summary)),
        (Reply::bulk("group"), Reply::bulk(spec.group)),
    ])
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
