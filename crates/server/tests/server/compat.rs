//! Server commands for what this server does not have answer as
//! redis-server 7.0 without it answers (`REDIS_REPLIES`, from a
//! redis-server started with `--databases 1`): `ROLE` (a master, no
//! replicas), `REPLICAOF NO ONE`, `MODULE LIST` (empty) and its refusals,
//! `ACL WHOAMI`/`USERS`, `DEBUG`'s refusal, `SWAPDB` and `MOVE` with one
//! database, `CLUSTER`, `READONLY`, `READWRITE` and `ASKING` with cluster
//! support disabled. What would need the missing part is refused with a message.

use crate::common;
use common::{expect_replies, Server};

const REDIS_REPLIES: &[(&[&str], &str)] = &[
    (&["set", "a", "1"], "+OK\r\n"),
    (&["role"], "*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n"),
    (&["role", "x"], "-ERR wrong number of arguments for 'role' command\r\n"),
    (&["module", "list"], "*0\r\n"),
    (&["module", "list", "x"], "-ERR wrong number of arguments for 'module|list' command\r\n"),
    (&["module", "help"], "*11\r\n+MODULE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+LIST\r\n+    Return a list of loaded modules.\r\n+LOAD <path> [<arg> ...]\r\n+    Load a module library from <path>, passing to it any optional arguments.\r\n+LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]\r\n+    Load a module library from <path>, while passing it module configurations and optional arguments.\r\n+UNLOAD <name>\r\n+    Unload a module.\r\n+HELP\r\n+    Prints this help.\r\n"),
    (&["module", "foo"], "-ERR unknown subcommand 'foo'. Try MODULE HELP.\r\n"),
    (&["module", "load", "/x.so"], "-ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.\r\n"),
    (&["module", "unload", "x"], "-ERR MODULE command not allowed. If the enable-module-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.\r\n"),
    (&["module"], "-ERR wrong number of arguments for 'module' command\r\n"),
    (&["acl", "whoami"], "$7\r\ndefault\r\n"),
    (&["acl", "whoami", "x"], "-ERR wrong number of arguments for 'acl|whoami' command\r\n"),
    (&["acl", "users"], "*1\r\n$7\r\ndefault\r\n"),
    (&["acl", "help"], "*29\r\n+ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+CAT [<category>]\r\n+    List all commands that belong to <category>, or all command categories\r\n+    when no category is specified.\r\n+DELUSER <username> [<username> ...]\r\n+    Delete a list of users.\r\n+DRYRUN <username> <command> [<arg> ...]\r\n+    Returns whether the user can execute the given command without executing the command.\r\n+GETUSER <username>\r\n+    Get the user's details.\r\n+GENPASS [<bits>]\r\n+    Generate a secure 256-bit user password. The optional `bits` argument can\r\n+    be used to specify a different size.\r\n+LIST\r\n+    Show users details in config file format.\r\n+LOAD\r\n+    Reload users from the ACL file.\r\n+LOG [<count> | RESET]\r\n+    Show the ACL log entries.\r\n+SAVE\r\n+    Save the current config to the ACL file.\r\n+SETUSER <username> <attribute> [<attribute> ...]\r\n+    Create or modify a user with the specified attributes.\r\n+USERS\r\n+    List all the registered usernames.\r\n+WHOAMI\r\n+    Return the current connection username.\r\n+HELP\r\n+    Prints this help.\r\n"),
    (&["acl", "foo"], "-ERR unknown subcommand 'foo'. Try ACL HELP.\r\n"),
    (&["acl"], "-ERR wrong number of arguments for 'acl' command\r\n"),
    (&["debug", "sleep", "0"], "-ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.\r\n"),
    (&["debug"], "-ERR wrong number of arguments for 'debug' command\r\n"),
    (&["replicaof", "no", "one"], "+OK\r\n"),
    (&["slaveof", "no", "one"], "+OK\r\n"),
    (&["replicaof", "no"], "-ERR wrong number of arguments for 'replicaof' command\r\n"),
    (&["swapdb", "0", "0"], "+OK\r\n"),
    (&["swapdb", "0", "1"], "-ERR DB index is out of range\r\n"),
    (&["swapdb", "x", "0"], "-ERR invalid first DB index\r\n"),
    (&["swapdb", "0", "x"], "-ERR invalid second DB index\r\n"),
    (&["swapdb", "-1", "0"], "-ERR DB index is out of range\r\n"),
    (&["move", "a", "0"], "-ERR source and destination objects are the same\r\n"),
    (&["move", "a", "1"], "-ERR DB index is out of range\r\n"),
    (&["move", "a", "x"], "-ERR value is not an integer or out of range\r\n"),
    (&["move", "nokey", "0"], "-ERR source and destination objects are the same\r\n"),
    (&["move", "a", "-1"], "-ERR DB index is out of range\r\n"),
    (&["cluster", "info"], "-ERR This instance has cluster support disabled\r\n"),
    (&["cluster", "help"], "-ERR This instance has cluster support disabled\r\n"),
    (&["CLUSTER", "keyslot", "x"], "-ERR This instance has cluster support disabled\r\n"),
    (&["cluster", "slots"], "-ERR This instance has cluster support disabled\r\n"),
    (&["cluster", "info", "x"], "-ERR wrong number of arguments for 'cluster|info' command\r\n"),
    (&["cluster", "keyslot"], "-ERR wrong number of arguments for 'cluster|keyslot' command\r\n"),
    (&["cluster", "FOO"], "-ERR unknown subcommand 'FOO'. Try CLUSTER HELP.\r\n"),
    (&["cluster"], "-ERR wrong number of arguments for 'cluster' command\r\n"),
    (&["readonly"], "-ERR This instance has cluster support disabled\r\n"),
    (&["readwrite"], "-ERR This instance has cluster support disabled\r\n"),
    (&["asking"], "-ERR This instance has cluster support disabled\r\n"),
    (&["readonly", "x"], "-ERR wrong number of arguments for 'readonly' command\r\n"),
];

#[test]
fn compat_commands_answer_as_redis_does() {
    let s = Server::start(None);
    expect_replies(&s, REDIS_REPLIES);
}

#[test]
fn what_needs_replication_is_refused_with_a_message() {
    let s = Server::start(None);
    let mut c = s.conn();
    let err = redis::cmd("REPLICAOF")
        .arg("127.0.0.1")
        .arg("6380")
        .query::<()>(&mut c)
        .unwrap_err();
    assert!(err.to_string().contains("slsm serve"), "{err}");
}
