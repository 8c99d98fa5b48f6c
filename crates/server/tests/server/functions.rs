//! Functions (`FUNCTION`, `FCALL`, `FCALL_RO`): replies byte for byte as
//! redis-server 7.0 gave them to the same requests, payloads moving both
//! ways through `FUNCTION DUMP`/`RESTORE`, libraries that survive a
//! restart and `FLUSHALL`, `FUNCTION KILL`, and calls from many clients
//! while the library is replaced under them.

use crate::common;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{expect_replies, Server};
use redis::{cmd, Value};

/// What redis-server 7.0.15 answered, request by request on one
/// connection, from an empty database. Left out: `FUNCTION LIST` of a
/// library of several functions, whose order is that of Redis's hash
/// table (seeded at random when it starts; here: registration order).
const REDIS_REPLIES: &[(&[&str], &str)] = &[
    (&["function", "load", "#!lua name=mylib\nlocal function f(keys, args) return redis.call('set', keys[1], args[1]) end\nredis.register_function('f', f)\nredis.register_function{function_name='g', callback=function(keys, args) return {keys[1], args[1], #keys} end, flags={'no-writes'}, description='desc g'}"], "$5\r\nmylib\r\n"),
    (&["fcall", "f", "1", "k", "v"], "+OK\r\n"),
    (&["get", "k"], "$1\r\nv\r\n"),
    (&["fcall", "g", "1", "k", "v"], "*3\r\n$1\r\nk\r\n$1\r\nv\r\n:1\r\n"),
    (&["fcall_ro", "g", "1", "a", "b"], "*3\r\n$1\r\na\r\n$1\r\nb\r\n:1\r\n"),
    (&["fcall_ro", "f", "1", "a", "b"], "-ERR Can not execute a script with write flag using *_ro command.\r\n"),
    (&["function", "list", "libraryname", "x*"], "*0\r\n"),
    (&["function", "stats"], "*4\r\n$14\r\nrunning_script\r\n$-1\r\n$7\r\nengines\r\n*2\r\n$3\r\nLUA\r\n*4\r\n$15\r\nlibraries_count\r\n:1\r\n$15\r\nfunctions_count\r\n:2\r\n"),
    (&["function", "load", "#!lua name=mylib\nredis.register_function('h', function() return 1 end)"], "-ERR Library 'mylib' already exists\r\n"),
    (&["function", "load", "#!lua name=lib2\nredis.register_function('f', function() return 1 end)"], "-ERR Function f already exists\r\n"),
    (&["function", "load", "#!lua name=single\n-- one function\nredis.register_function{function_name='s1', callback=function() return 1 end, description='only', flags={'allow-stale', 'no-cluster', 'allow-cross-slot-keys'}}"], "$6\r\nsingle\r\n"),
    (&["function", "list", "withcode", "libraryname", "sing*"], "*1\r\n*8\r\n$12\r\nlibrary_name\r\n$6\r\nsingle\r\n$6\r\nengine\r\n$3\r\nLUA\r\n$9\r\nfunctions\r\n*1\r\n*6\r\n$4\r\nname\r\n$2\r\ns1\r\n$11\r\ndescription\r\n$4\r\nonly\r\n$5\r\nflags\r\n*3\r\n+allow-stale\r\n+no-cluster\r\n+allow-cross-slot-keys\r\n$12\r\nlibrary_code\r\n$193\r\n#!lua name=single\n-- one function\nredis.register_function{function_name='s1', callback=function() return 1 end, description='only', flags={'allow-stale', 'no-cluster', 'allow-cross-slot-keys'}}\r\n"),
    (&["function", "delete", "single"], "+OK\r\n"),
    (&["function", "load", "#!lua name=lib2\nredis.register_function('F', function() return 1 end)"], "-ERR Function F already exists\r\n"),
    (&["function", "load", "no shebang"], "-ERR Missing library metadata\r\n"),
    (&["function", "load", "#!lua name=x foo=bar\n"], "-ERR Invalid metadata value given: foo=bar\r\n"),
    (&["function", "load", "#!lua name=x name=y\n"], "-ERR Invalid metadata value, name argument was given multiple times\r\n"),
    (&["function", "load", "#!lua\n"], "-ERR Library name was not given\r\n"),
    (&["function", "load", "#!lua name=x"], "-ERR Invalid library metadata\r\n"),
    (&["function", "load", "#!lua name=bad-name\n"], "-ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long\r\n"),
    (&["function", "load", "#!python name=p\n"], "-ERR Engine 'python' not found\r\n"),
    (&["function", "load", "#!lua name=e\nreturn 1"], "-ERR No functions registered\r\n"),
    (&["function", "load", "#!lua name=e\nredis.call('ping')"], "-ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'call'\r\n"),
    (&["function", "load", "#!lua name=e\nstring.format('x')"], "-ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'string'\r\n"),
    (&["function", "load", "#!lua name=e\nredis.register_function('f f', function() end)"], "-ERR Error registering functions: ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long\r\n"),
    (&["function", "load", "#!lua name=e\nredis.register_function('a', function() end)\nredis.register_function('a', function() end)"], "-ERR Error registering functions: ERR Function already exists in the library\r\n"),
    (&["function", "load", "#!lua name=e\nredis.register_function{function_name='a'}"], "-ERR Error registering functions: ERR redis.register_function must get a callback argument\r\n"),
    (&["function", "load", "#!lua name=e\nredis.register_function{callback=function() end}"], "-ERR Error registering functions: ERR redis.register_function must get a function name argument\r\n"),
    (&["function", "load", "#!lua name=e\nredis.register_function{function_name='a', callback=function() end, flags={'bad'}}"], "-ERR Error registering functions: ERR unknown flag given\r\n"),
    (&["function", "load", "#!lua name=e\nredis.register_function{function_name='a', callback=function() end, flags='x'}"], "-ERR Error registering functions: ERR flags argument to redis.register_function must be a table representing function flags\r\n"),
    (&["function", "load", "#!lua name=e\nredis.register_function{function_name='a', callback=function() end, extra=1}"], "-ERR Error registering functions: ERR unknown argument given to redis.register_function\r\n"),
    (&["function", "load", "#!lua name=e\nredis.register_function{function_name={}, callback=function() end}"], "-ERR Error registering functions: ERR function_name argument given to redis.register_function must be a string\r\n"),
    (&["function", "load", "#!lua name=e\nredis.register_function{function_name='a', callback=1}"], "-ERR Error registering functions: ERR callback argument given to redis.register_function must be a function\r\n"),
    (&["function", "load", "#!lua name=e\nredis.register_function{function_name='a', callback=function() end, description={}}"], "-ERR Error registering functions: ERR description argument given to redis.register_function must be a string\r\n"),
    (&["function", "load", "#!lua name=e\nredis.register_function(1)"], "-ERR Error registering functions: ERR calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).\r\n"),
    (&["function", "load", "#!lua name=e\nredis.register_function('a')"], "-ERR Error registering functions: ERR calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).\r\n"),
    (&["function", "load", "#!lua name=e\nredis.register_function('a', 'b')"], "-ERR Error registering functions: ERR second argument to redis.register_function must be a function\r\n"),
    (&["function", "load", "#!lua name=e\nredis.register_function({}, function() end)"], "-ERR Error registering functions: ERR first argument to redis.register_function must be a string\r\n"),
    (&["function", "load", "#!lua name=e\nredis.register_function()"], "-ERR Error registering functions: ERR wrong number of arguments to redis.register_function\r\n"),
    (&["function", "load", "#!lua name=e\nredis.register_function(1, 2, 3)"], "-ERR Error registering functions: ERR wrong number of arguments to redis.register_function\r\n"),
    (&["function", "load", "#!lua name=e\nx = 1"], "-ERR Error registering functions: ERR user_function:2: Attempt to modify a readonly table\r\n"),
    (&["function", "load", "#!lua name=e\nredis.x = 1"], "-ERR Error registering functions: ERR user_function:2: Attempt to modify a readonly table\r\n"),
    (&["function", "load", "#!lua name=e\nlocal x = ("], "-ERR Error compiling function: user_function:2: unexpected symbol near '<eof>'\r\n"),
    (&["function", "load", "#!lua name=e\nerror('boom')"], "-ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'error'\r\n"),
    (&["function", "load", "#!lua name=e\nerror({err='MY boom'})"], "-ERR Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'error'\r\n"),
    (&["function", "load", "#!lua name=loop\nwhile true do end"], "-ERR Error registering functions: ERR FUNCTION LOAD timeout\r\n"),
    (&["function", "load", "#!lua name=e\nredis.register_function{function_name=1, callback=function() return 1 end}"], "$1\r\ne\r\n"),
    (&["fcall", "1", "0"], ":1\r\n"),
    (&["function", "load", "#!lua name=e2\nredis.register_function{[true]=1}"], "-ERR Error registering functions: ERR named argument key given to redis.register_function is not a string\r\n"),
    (&["function", "load", "#!lua name=e3\nredis.register_function{function_name='x', callback=function() return 1 end, description=5, flags={'NO-WRITES', 'allow-oom'}}"], "$2\r\ne3\r\n"),
    (&["function", "list", "libraryname", "e3"], "*1\r\n*6\r\n$12\r\nlibrary_name\r\n$2\r\ne3\r\n$6\r\nengine\r\n$3\r\nLUA\r\n$9\r\nfunctions\r\n*1\r\n*6\r\n$4\r\nname\r\n$1\r\nx\r\n$11\r\ndescription\r\n$1\r\n5\r\n$5\r\nflags\r\n*2\r\n+no-writes\r\n+allow-oom\r\n"),
    (&["function", "load", "#!lua name=e4\nredis.log(redis.LOG_WARNING, 'hi') local v = redis.REDIS_VERSION_NUM redis.register_function('v', function() return v end)"], "$2\r\ne4\r\n"),
    (&["function", "load", "#!lua name=e5\nlocal r = redis redis.register_function('v5', function() return r.call('ping') end)"], "$2\r\ne5\r\n"),
    (&["fcall", "v5", "0"], "-ERR user_function:2: Script attempted to access nonexistent global variable 'call' script: v5, on @user_function:2.\r\n"),
    (&["function", "load", "#!lua name=e6\nlocal rf = redis.register_function rf('v6', function() return rf('zz', function() end) end)"], "$2\r\ne6\r\n"),
    (&["fcall", "v6", "0"], "-ERR redis.register_function can only be called on FUNCTION LOAD command script: v6, on @user_function:2.\r\n"),
    (&["function", "load", "replace", "#!lua name=mylib\nlocal function f(keys, args) return redis.call('set', keys[1], args[1]) end\nredis.register_function('f', f)\nredis.register_function('e1', function(keys, args) return redis.call('nosuch') end)\nredis.register_function('e2', function(keys, args) error('boom') end)\nredis.register_function('e3', function(keys, args) return KEYS end)\nredis.register_function('e4', function(keys, args) return redis.error_reply('MY err') end)\nredis.register_function('e5', function(keys, args) return string.format('%d', #args) end)\nredis.register_function('e6', function(keys, args) x = 1 end)\nredis.register_function('e7', function(keys, args) return redis.register_function end)\nredis.register_function('e8', function(keys, args) return redis.call('incr', keys[1]) end)\nredis.register_function{function_name='ro', callback=function(keys, args) return redis.call('set', 'a', 'b') end, flags={'no-writes'}}\nredis.register_function('e9', function(keys, args) return redis.pcall('incr', keys[1]) end)\nredis.register_function('e10', function(keys, args) return {ARGV} end)\nredis.register_function('e11', function(keys, args) return {err='x'} end)"], "$5\r\nmylib\r\n"),
    (&["fcall", "e1", "0", "a", "b"], "-ERR Unknown Redis command called from script script: e1, on @user_function:4.\r\n"),
    (&["fcall", "e2", "0", "a", "b"], "-ERR user_function:5: boom script: e2, on @user_function:5.\r\n"),
    (&["fcall", "e3", "0", "a", "b"], "-ERR user_function:6: Script attempted to access nonexistent global variable 'KEYS' script: e3, on @user_function:6.\r\n"),
    (&["fcall", "e4", "0", "a", "b"], "-MY err\r\n"),
    (&["fcall", "e5", "0", "a", "b"], "$1\r\n2\r\n"),
    (&["fcall", "e6", "0", "a", "b"], "-ERR user_function:9: Attempt to modify a readonly table script: e6, on @user_function:9.\r\n"),
    (&["fcall", "e7", "0", "a", "b"], "$-1\r\n"),
    (&["fcall", "ro", "0", "a", "b"], "-ERR Write commands are not allowed from read-only scripts. script: ro, on @user_function:12.\r\n"),
    (&["fcall_ro", "ro", "0", "a", "b"], "-ERR Write commands are not allowed from read-only scripts. script: ro, on @user_function:12.\r\n"),
    (&["fcall", "e10", "0", "a", "b"], "-ERR user_function:14: Script attempted to access nonexistent global variable 'ARGV' script: e10, on @user_function:14.\r\n"),
    (&["fcall", "e11", "0"], "-x\r\n"),
    (&["set", "s", "notint"], "+OK\r\n"),
    (&["fcall", "e8", "1", "s"], "-ERR value is not an integer or out of range script: e8, on @user_function:11.\r\n"),
    (&["fcall", "e9", "1", "s"], "-ERR value is not an integer or out of range\r\n"),
    (&["fcall", "E5", "0", "x"], "$1\r\n1\r\n"),
    (&["fcall", "nosuch", "0"], "-ERR Function not found\r\n"),
    (&["fcall", "f", "x"], "-ERR Bad number of keys provided\r\n"),
    (&["fcall", "f", "2", "a"], "-ERR Number of keys can't be greater than number of args\r\n"),
    (&["fcall", "f", "-1"], "-ERR Number of keys can't be negative\r\n"),
    (&["fcall", "nosuch", "x"], "-ERR Function not found\r\n"),
    (&["fcall", "f"], "-ERR wrong number of arguments for 'fcall' command\r\n"),
    (&["fcall_ro"], "-ERR wrong number of arguments for 'fcall_ro' command\r\n"),
    (&["function", "delete", "nosuch"], "-ERR Library not found\r\n"),
    (&["function", "delete", "e5"], "+OK\r\n"),
    (&["fcall", "v5", "0"], "-ERR Function not found\r\n"),
    (&["function", "flush", "bad"], "-ERR FUNCTION FLUSH only supports SYNC|ASYNC option\r\n"),
    (&["function", "flush", "a", "b"], "-ERR unknown subcommand or wrong number of arguments for 'flush'. Try FUNCTION HELP.\r\n"),
    (&["function", "restore", "x"], "-ERR DUMP payload version or checksum are wrong\r\n"),
    (&["function", "restore", "x", "bad"], "-ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.\r\n"),
    (&["function", "restore", "a", "b", "c"], "-ERR unknown subcommand or wrong number of arguments for 'restore'. Try FUNCTION HELP.\r\n"),
    (&["function", "kill"], "-NOTBUSY No scripts in execution right now.\r\n"),
    (&["script", "kill"], "-NOTBUSY No scripts in execution right now.\r\n"),
    (&["function"], "-ERR wrong number of arguments for 'function' command\r\n"),
    (&["function", "foo"], "-ERR unknown subcommand 'foo'. Try FUNCTION HELP.\r\n"),
    (&["function", "load"], "-ERR wrong number of arguments for 'function|load' command\r\n"),
    (&["function", "load", "replace"], "-ERR Missing library metadata\r\n"),
    (&["function", "load", "foo", "#!lua name=z"], "-ERR Unknown option given: foo\r\n"),
    (&["function", "list", "bad"], "-ERR Unknown argument bad\r\n"),
    (&["function", "list", "libraryname"], "-ERR library name argument was not given\r\n"),
    (&["function", "list", "libraryname", "a", "libraryname", "b"], "-ERR Unknown argument libraryname\r\n"),
    (&["function", "list", "withcode", "withcode"], "-ERR Unknown argument withcode\r\n"),
    (&["function", "delete"], "-ERR wrong number of arguments for 'function|delete' command\r\n"),
    (&["function", "delete", "a", "b"], "-ERR wrong number of arguments for 'function|delete' command\r\n"),
    (&["function", "stats", "x"], "-ERR wrong number of arguments for 'function|stats' command\r\n"),
    (&["function", "kill", "x"], "-ERR wrong number of arguments for 'function|kill' command\r\n"),
    (&["function", "dump", "x"], "-ERR wrong number of arguments for 'function|dump' command\r\n"),
    (&["function", "help", "x"], "-ERR wrong number of arguments for 'function|help' command\r\n"),
    (&["function", "help"], "*40\r\n+FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+LOAD [REPLACE] <FUNCTION CODE>\r\n+    Create a new library with the given library name and code.\r\n+DELETE <LIBRARY NAME>\r\n+    Delete the given library.\r\n+LIST [LIBRARYNAME PATTERN] [WITHCODE]\r\n+    Return general information on all the libraries:\r\n+    * Library name\r\n+    * The engine used to run the Library\r\n+    * Library description\r\n+    * Functions list\r\n+    * Library code (if WITHCODE is given)\r\n+    It also possible to get only function that matches a pattern using LIBRARYNAME argument.\r\n+STATS\r\n+    Return information about the current function running:\r\n+    * Function name\r\n+    * Command used to run the function\r\n+    * Duration in MS that the function is running\r\n+    If no function is running, return nil\r\n+    In addition, returns a list of available engines.\r\n+KILL\r\n+    Kill the current running function.\r\n+FLUSH [ASYNC|SYNC]\r\n+    Delete all the libraries.\r\n+    When called without the optional mode argument, the behavior is determined by the\r\n+    lazyfree-lazy-user-flush configuration directive. Valid modes are:\r\n+    * ASYNC: Asynchronously flush the libraries.\r\n+    * SYNC: Synchronously flush the libraries.\r\n+DUMP\r\n+    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command\r\n+RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]\r\n+    Restore the libraries represented by the given payload, it is possible to give a restore policy to\r\n+    control how to handle existing libraries (default APPEND):\r\n+    * FLUSH: delete all existing libraries.\r\n+    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.\r\n+    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old\r\n+      libraries with the new libraries (notice that even on this option there is a chance of failure\r\n+      in case of functions name collision with another library).\r\n+HELP\r\n+    Prints this help.\r\n"),
    (&["function", "LOAD", "#!LUA NAME=Up\nredis.register_function('UpF', function() return 1 end)"], "$2\r\nUp\r\n"),
    (&["fcall", "upf", "0"], ":1\r\n"),
    (&["function", "delete", "up"], "-ERR Library not found\r\n"),
    (&["function", "load", "#!lua name=dupfn\nredis.register_function('UPF', function() return 1 end)"], "-ERR Function UPF already exists\r\n"),
    (&["function", "delete", "Up"], "+OK\r\n"),
    (&["function", "delete", "mylib"], "+OK\r\n"),
    (&["function", "delete", "e3"], "+OK\r\n"),
    (&["function", "delete", "e4"], "+OK\r\n"),
    (&["function", "delete", "e6"], "+OK\r\n"),
    (&["function", "delete", "e"], "+OK\r\n"),
    (&["function", "list"], "*0\r\n"),
    (&["function", "stats"], "*4\r\n$14\r\nrunning_script\r\n$-1\r\n$7\r\nengines\r\n*2\r\n$3\r\nLUA\r\n*4\r\n$15\r\nlibraries_count\r\n:0\r\n$15\r\nfunctions_count\r\n:0\r\n"),
    (&["multi"], "+OK\r\n"),
    (&["fcall", "v", "0"], "+QUEUED\r\n"),
    (&["function", "list"], "+QUEUED\r\n"),
    (&["exec"], "*2\r\n-ERR Function not found\r\n*0\r\n"),
    (&["function", "flush"], "+OK\r\n"),
    (&["function", "list"], "*0\r\n"),
];

#[test]
fn functions_answer_as_redis_does() {
    let s = Server::start(None);
    expect_replies(&s, REDIS_REPLIES);
}

/// Library names match `LIBRARYNAME` patterns without regard to case,
/// and `DELETE` with regard to it (redis-server 7.0.15's replies).
#[test]
fn library_patterns_ignore_case() {
    let s = Server::start(None);
    expect_replies(
        &s,
        &[
    (&["function", "load", "#!lua name=CaseLib\nredis.register_function('c1', function() return 1 end)"], "$7\r\nCaseLib\r\n"),
    (&["function", "list", "libraryname", "case*"], "*1\r\n*6\r\n$12\r\nlibrary_name\r\n$7\r\nCaseLib\r\n$6\r\nengine\r\n$3\r\nLUA\r\n$9\r\nfunctions\r\n*1\r\n*6\r\n$4\r\nname\r\n$2\r\nc1\r\n$11\r\ndescription\r\n$-1\r\n$5\r\nflags\r\n*0\r\n"),
    (&["function", "list", "libraryname", "[a-c]ASE?IB"], "*1\r\n*6\r\n$12\r\nlibrary_name\r\n$7\r\nCaseLib\r\n$6\r\nengine\r\n$3\r\nLUA\r\n$9\r\nfunctions\r\n*1\r\n*6\r\n$4\r\nname\r\n$2\r\nc1\r\n$11\r\ndescription\r\n$-1\r\n$5\r\nflags\r\n*0\r\n"),
    (&["function", "delete", "caselib"], "-ERR Library not found\r\n"),
    (&["function", "delete", "CaseLib"], "+OK\r\n"),
        ],
    );
}

/// `FUNCTION DUMP` of redis-server 7.0.15 holding one library (its code
/// LZF-compressed, as Redis writes strings longer than 20 bytes).
const REDIS_DUMP: &[u8] = b"\xf5\xc3\x40\x83\x40\x91\x1f\x23\x21\x6c\x75\x61\x20\x6e\x61\x6d\x65\x3d\x63\x6f\x75\x6e\x74\x65\x72\x0a\x6c\x6f\x63\x61\x6c\x20\x66\x75\x6e\x63\x74\x69\x6f\x1a\x6e\x20\x62\x75\x6d\x70\x28\x6b\x65\x79\x73\x2c\x20\x61\x72\x67\x73\x29\x0a\x20\x20\x72\x65\x74\x75\x72\x6e\x20\x06\x03\x64\x69\x73\x2e\x20\x2c\x0b\x6c\x28\x27\x69\x6e\x63\x72\x62\x79\x27\x2c\x20\x40\x29\x02\x5b\x31\x5d\x80\x2c\x20\x08\x0a\x20\x6f\x72\x20\x31\x29\x0a\x65\x6e\x64\x0a\x80\x2f\x04\x72\x65\x67\x69\x73\x20\x67\x00\x5f\xc0\x61\x01\x28\x27\x40\x62\x20\x3a\x20\x06\x01\x70\x29\x0a\x00\x24\x21\x40\x95\x43\xc5\xd3\x9b";

const COUNTER_CODE: &str = "#!lua name=counter\nlocal function bump(keys, args)\n  return redis.call('incrby', keys[1], args[1] or 1)\nend\nredis.register_function('bump', bump)";

fn restore(
    c: &mut redis::Connection,
    payload: &[u8],
    policy: Option<&str>,
) -> redis::RedisResult<String> {
    let mut command = cmd("FUNCTION");
    command.arg("RESTORE").arg(payload);
    if let Some(p) = policy {
        command.arg(p);
    }
    command.query(c)
}

fn library_code(c: &mut redis::Connection, name: &str) -> Option<Vec<u8>> {
    let listed: Value = cmd("FUNCTION")
        .arg(&["LIST", "LIBRARYNAME", name, "WITHCODE"])
        .query(c)
        .unwrap();
    let Value::Array(libraries) = listed else {
        panic!("{listed:?}")
    };
    let Value::Array(fields) = libraries.first()? else {
        panic!("{libraries:?}")
    };
    match &fields[7] {
        Value::BulkString(code) => Some(code.clone()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn payloads_move_both_ways_with_each_restore_policy() {
    let s = Server::start(None);
    let mut c = s.conn();
    assert_eq!(restore(&mut c, REDIS_DUMP, None).unwrap(), "OK");
    assert_eq!(
        library_code(&mut c, "counter").unwrap(),
        COUNTER_CODE.as_bytes()
    );
    let n: i64 = cmd("FCALL")
        .arg(&["bump", "1", "k", "5"])
        .query(&mut c)
        .unwrap();
    assert_eq!(n, 5);
    // APPEND (the default) refuses a library that is there; REPLACE and
    // FLUSH take it.
    let e = restore(&mut c, REDIS_DUMP, Some("APPEND")).unwrap_err();
    assert!(
        e.to_string().contains("Library counter already exists"),
        "{e}"
    );
    let ours: Vec<u8> = cmd("FUNCTION").arg("DUMP").query(&mut c).unwrap();
    let _: String = cmd("FUNCTION")
        .arg(&[
            "LOAD",
            "#!lua name=other\nredis.register_function('o', function() return 'o' end)",
        ])
        .query(&mut c)
        .unwrap();
    assert_eq!(restore(&mut c, &ours, Some("REPLACE")).unwrap(), "OK");
    let o: String = cmd("FCALL").arg(&["o", "0"]).query(&mut c).unwrap();
    assert_eq!(o, "o", "REPLACE keeps the other libraries");
    assert_eq!(restore(&mut c, &ours, Some("FLUSH")).unwrap(), "OK");
    let gone = cmd("FCALL")
        .arg(&["o", "0"])
        .query::<String>(&mut c)
        .unwrap_err();
    assert!(gone.to_string().contains("Function not found"), "{gone}");
    assert_eq!(
        library_code(&mut c, "counter").unwrap(),
        COUNTER_CODE.as_bytes()
    );
    // Damage anywhere is refused and changes nothing.
    let mut bad = ours.clone();
    bad[5] ^= 1;
    let e = restore(&mut c, &bad, Some("FLUSH")).unwrap_err();
    assert!(
        e.to_string()
            .contains("DUMP payload version or checksum are wrong"),
        "{e}"
    );
    assert!(library_code(&mut c, "counter").is_some());
}

#[test]
fn libraries_survive_a_restart_and_flushall() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    {
        let s = Server::start_at(tempfile::tempdir().unwrap(), db.clone(), |_| {});
        let mut c = s.conn();
        let name: String = cmd("FUNCTION")
            .arg(&["LOAD", COUNTER_CODE])
            .query(&mut c)
            .unwrap();
        assert_eq!(name, "counter");
        let _: String = cmd("FUNCTION")
            .arg(&[
                "LOAD",
                "#!lua name=gone\nredis.register_function('g', function() return 1 end)",
            ])
            .query(&mut c)
            .unwrap();
        let _: String = cmd("FUNCTION")
            .arg(&["DELETE", "gone"])
            .query(&mut c)
            .unwrap();
        let _: String = cmd("FLUSHALL").query(&mut c).unwrap();
        let n: i64 = cmd("FCALL").arg(&["bump", "1", "k"]).query(&mut c).unwrap();
        assert_eq!(n, 1, "FLUSHALL leaves the libraries");
    }
    let s = Server::start_at(tempfile::tempdir().unwrap(), db, |_| {});
    let mut c = s.conn();
    let n: i64 = cmd("FCALL")
        .arg(&["bump", "1", "k", "2"])
        .query(&mut c)
        .unwrap();
    assert_eq!(n, 3);
    let e = cmd("FCALL")
        .arg(&["g", "0"])
        .query::<i64>(&mut c)
        .unwrap_err();
    assert!(e.to_string().contains("Function not found"), "{e}");
    assert_eq!(
        library_code(&mut c, "counter").unwrap(),
        COUNTER_CODE.as_bytes()
    );
}

/// Calls from several clients while another replaces the library: each
/// call runs one whole version (no errors, no mix), every version is one
/// that was loaded, and once the loads are done every call sees the last.
#[test]
fn calls_see_whole_versions_while_the_library_is_replaced() {
    let s = Arc::new(Server::start(None));
    let load = |c: &mut redis::Connection, v: usize| {
        let code = format!("#!lua name=v\nredis.register_function('ver', function(keys) redis.call('incr', keys[1]) return {v} end)");
        let _: String = cmd("FUNCTION")
            .arg("LOAD")
            .arg("REPLACE")
            .arg(code)
            .query(c)
            .unwrap();
    };
    let mut admin = s.conn();
    load(&mut admin, 0);
    let stop = Arc::new(AtomicBool::new(false));
    let callers: Vec<_> = (0..4)
        .map(|_| {
            let (s, stop) = (Arc::clone(&s), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut c = s.conn();
                let mut calls = 0i64;
                let mut last = 0;
                while !stop.load(Ordering::Relaxed) {
                    let v: usize = cmd("FCALL")
                        .arg(&["ver", "1", "calls"])
                        .query(&mut c)
                        .unwrap();
                    assert!(v <= 50, "{v}");
                    last = v;
                    calls += 1;
                }
                (calls, last)
            })
        })
        .collect();
    for v in 1..=50 {
        load(&mut admin, v);
        std::thread::sleep(Duration::from_millis(2));
    }
    stop.store(true, Ordering::Relaxed);
    let results: Vec<(i64, usize)> = callers.into_iter().map(|t| t.join().unwrap()).collect();
    let total: i64 = results.iter().map(|r| r.0).sum();
    let counted: i64 = cmd("GET").arg("calls").query(&mut admin).unwrap();
    assert_eq!(counted, total, "every call's write counted once");
    let v: usize = cmd("FCALL")
        .arg(&["ver", "1", "calls"])
        .query(&mut admin)
        .unwrap();
    assert_eq!(v, 50);
}

/// `FUNCTION KILL` stops a function that never returns and discards what
/// it wrote; `SCRIPT KILL` names the command that would.
#[test]
fn function_kill_stops_a_spinning_function() {
    let s = Arc::new(Server::start(None));
    let mut c = s.conn();
    let _: String = cmd("FUNCTION")
        .arg(&["LOAD", "#!lua name=spin\nredis.register_function('spin', function(keys) redis.call('set', keys[1], 'x') while true do end end)"])
        .query(&mut c)
        .unwrap();
    let runner = {
        let s = Arc::clone(&s);
        std::thread::spawn(move || {
            cmd("FCALL")
                .arg(&["spin", "1", "written"])
                .query::<Value>(&mut s.conn())
                .unwrap_err()
        })
    };
    let mut running = Value::Nil;
    for _ in 0..500 {
        let stats: Value = cmd("FUNCTION").arg("STATS").query(&mut c).unwrap();
        let Value::Array(fields) = stats else {
            panic!("{stats:?}")
        };
        running = fields[1].clone();
        if running != Value::Nil {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let Value::Array(run) = running else {
        panic!("never seen running: {running:?}")
    };
    assert_eq!(run[1], Value::BulkString(b"spin".to_vec()));
    let busy = cmd("SCRIPT")
        .arg("KILL")
        .query::<String>(&mut c)
        .unwrap_err();
    assert!(
        busy.to_string().contains("You can only call FUNCTION KILL"),
        "{busy}"
    );
    let killed: String = cmd("FUNCTION").arg("KILL").query(&mut c).unwrap();
    assert_eq!(killed, "OK");
    let e = runner.join().unwrap();
    assert!(e.to_string().contains("Script killed by user"), "{e}");
    let written: Option<String> = cmd("GET").arg("written").query(&mut c).unwrap();
    assert_eq!(written, None, "a killed function's writes are discarded");
    let none = cmd("FUNCTION")
        .arg("KILL")
        .query::<String>(&mut c)
        .unwrap_err();
    assert!(
        none.to_string().contains("No scripts in execution"),
        "{none}"
    );
}

/// In `MULTI`, a call runs with the transaction's other commands and
/// sees their writes.
#[test]
fn fcall_takes_part_in_transactions() {
    let s = Server::start(None);
    let mut c = s.conn();
    let _: String = cmd("FUNCTION")
        .arg(&["LOAD", COUNTER_CODE])
        .query(&mut c)
        .unwrap();
    let (a, b, v): (String, i64, i64) = redis::pipe()
        .atomic()
        .cmd("SET")
        .arg("k")
        .arg("10")
        .cmd("FCALL")
        .arg(&["bump", "1", "k", "5"])
        .cmd("INCR")
        .arg("k")
        .query(&mut c)
        .unwrap();
    assert_eq!((a.as_str(), b, v), ("OK", 15, 16));
}

/// A library of thousands of functions, and thousands of libraries, load
/// and run (their callbacks live in Lua tables, not in the interpreter's
/// few thousand reference slots).
#[test]
fn thousands_of_functions_and_libraries_load_and_run() {
    let s = Server::start(None);
    let mut c = s.conn();
    let many: String = (0..9_000).fold(String::from("#!lua name=many\n"), |mut code, i| {
        code.push_str(&format!(
            "redis.register_function('m{i}', function() return {i} end)\n"
        ));
        code
    });
    let _: String = cmd("FUNCTION").arg("LOAD").arg(many).query(&mut c).unwrap();
    let last: i64 = cmd("FCALL").arg(&["m8999", "0"]).query(&mut c).unwrap();
    assert_eq!(last, 8_999);
    // Thousands of libraries in one FUNCTION RESTORE payload (framed as
    // Redis frames one: each library's code under opcode 245, then the RDB
    // version and a CRC-64).
    let mut payload = Vec::new();
    for i in 0..9_000 {
        let code =
            format!("#!lua name=l{i}\nredis.register_function('f{i}', function() return {i} end)");
        payload.push(0xf5);
        payload.extend([0x40 | (code.len() >> 8) as u8, code.len() as u8]);
        payload.extend(code.as_bytes());
    }
    payload.extend(9u16.to_le_bytes());
    let crc = crc::Crc::<u64>::new(&crc::CRC_64_REDIS).checksum(&payload);
    payload.extend(crc.to_le_bytes());
    assert_eq!(restore(&mut c, &payload, None).unwrap(), "OK");
    let mut pipe = redis::pipe();
    for i in 0..9_000 {
        pipe.cmd("FCALL").arg(format!("f{i}")).arg(0);
    }
    let all: Vec<i64> = pipe.query(&mut c).unwrap();
    assert_eq!(all, (0..9_000).collect::<Vec<i64>>());
    let info: String = cmd("INFO").arg("memory").query(&mut c).unwrap();
    assert!(info.contains("number_of_functions:18000\r\n"), "{info}");
    assert!(info.contains("number_of_libraries:9001\r\n"), "{info}");
}
