//! `XINFO` and `XSETID` answer as redis-server 7.0 answered the same
//! requests on one connection, byte for byte: the stream's summary and
//! `FULL` form, the groups with their read counters and lag (known,
//! then unknown after a deletion ahead of a group, known again once it
//! reads past it), `XSETID` with its checks, an emptied stream's last ID
//! set back with an entry added below the old one, and the errors in
//! Redis's order (subcommands and their arities before `MULTI` queues
//! them). Then what a table cannot show: the consumers' idle times and
//! pending entries, and the counters across a restart.

use redis::{cmd, Value};

use crate::common;
use common::{expect_replies, Server};

const REDIS_REPLIES: &[(&[&str], &str)] = &[
    (&["xinfo"], "-ERR wrong number of arguments for 'xinfo' command\r\n"),
    (&["xinfo", "foo"], "-ERR unknown subcommand 'foo'. Try XINFO HELP.\r\n"),
    (&["xinfo", "help"], "*9\r\n+XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+CONSUMERS <key> <groupname>\r\n+    Show consumers of <groupname>.\r\n+GROUPS <key>\r\n+    Show the stream consumer groups.\r\n+STREAM <key> [FULL [COUNT <count>]\r\n+    Show information about the stream.\r\n+HELP\r\n+    Prints this help.\r\n"),
    (&["xinfo", "help", "x"], "-ERR wrong number of arguments for 'xinfo|help' command\r\n"),
    (&["xinfo", "stream"], "-ERR wrong number of arguments for 'xinfo|stream' command\r\n"),
    (&["xinfo", "groups"], "-ERR wrong number of arguments for 'xinfo|groups' command\r\n"),
    (&["xinfo", "consumers", "s"], "-ERR wrong number of arguments for 'xinfo|consumers' command\r\n"),
    (&["xinfo", "stream", "nokey"], "-ERR no such key\r\n"),
    (&["xinfo", "groups", "nokey"], "-ERR no such key\r\n"),
    (&["set", "str", "v"], "+OK\r\n"),
    (&["xinfo", "stream", "str"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["xinfo", "groups", "str"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["xsetid", "str", "5-0"], "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"),
    (&["xsetid", "nokey", "5-0"], "-ERR no such key\r\n"),
    (&["xadd", "s", "1-1", "a", "1"], "$3\r\n1-1\r\n"),
    (&["xadd", "s", "2-1", "b", "2", "c", "3"], "$3\r\n2-1\r\n"),
    (&["xadd", "s", "3-0", "d", "4"], "$3\r\n3-0\r\n"),
    (&["xinfo", "stream", "s"], "*20\r\n$6\r\nlength\r\n:3\r\n$15\r\nradix-tree-keys\r\n:1\r\n$16\r\nradix-tree-nodes\r\n:2\r\n$17\r\nlast-generated-id\r\n$3\r\n3-0\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n0-0\r\n$13\r\nentries-added\r\n:3\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n1-1\r\n$6\r\ngroups\r\n:0\r\n$11\r\nfirst-entry\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n$10\r\nlast-entry\r\n*2\r\n$3\r\n3-0\r\n*2\r\n$1\r\nd\r\n$1\r\n4\r\n"),
    (&["xinfo", "stream", "s", "full"], "*18\r\n$6\r\nlength\r\n:3\r\n$15\r\nradix-tree-keys\r\n:1\r\n$16\r\nradix-tree-nodes\r\n:2\r\n$17\r\nlast-generated-id\r\n$3\r\n3-0\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n0-0\r\n$13\r\nentries-added\r\n:3\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n1-1\r\n$7\r\nentries\r\n*3\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n2-1\r\n*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n*2\r\n$3\r\n3-0\r\n*2\r\n$1\r\nd\r\n$1\r\n4\r\n$6\r\ngroups\r\n*0\r\n"),
    (&["xinfo", "stream", "s", "full", "count", "1"], "*18\r\n$6\r\nlength\r\n:3\r\n$15\r\nradix-tree-keys\r\n:1\r\n$16\r\nradix-tree-nodes\r\n:2\r\n$17\r\nlast-generated-id\r\n$3\r\n3-0\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n0-0\r\n$13\r\nentries-added\r\n:3\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n1-1\r\n$7\r\nentries\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n$6\r\ngroups\r\n*0\r\n"),
    (&["xinfo", "stream", "s", "full", "count", "0"], "*18\r\n$6\r\nlength\r\n:3\r\n$15\r\nradix-tree-keys\r\n:1\r\n$16\r\nradix-tree-nodes\r\n:2\r\n$17\r\nlast-generated-id\r\n$3\r\n3-0\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n0-0\r\n$13\r\nentries-added\r\n:3\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n1-1\r\n$7\r\nentries\r\n*3\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n2-1\r\n*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n*2\r\n$3\r\n3-0\r\n*2\r\n$1\r\nd\r\n$1\r\n4\r\n$6\r\ngroups\r\n*0\r\n"),
    (&["xinfo", "stream", "s", "full", "count", "-5"], "*18\r\n$6\r\nlength\r\n:3\r\n$15\r\nradix-tree-keys\r\n:1\r\n$16\r\nradix-tree-nodes\r\n:2\r\n$17\r\nlast-generated-id\r\n$3\r\n3-0\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n0-0\r\n$13\r\nentries-added\r\n:3\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n1-1\r\n$7\r\nentries\r\n*3\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n2-1\r\n*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n*2\r\n$3\r\n3-0\r\n*2\r\n$1\r\nd\r\n$1\r\n4\r\n$6\r\ngroups\r\n*0\r\n"),
    (&["xinfo", "stream", "s", "full", "count", "x"], "-ERR value is not an integer or out of range\r\n"),
    (&["xinfo", "stream", "s", "full", "cnt", "1"], "-ERR unknown subcommand or wrong number of arguments for 'stream'. Try XINFO HELP.\r\n"),
    (&["xinfo", "stream", "s", "fullx"], "-ERR unknown subcommand or wrong number of arguments for 'stream'. Try XINFO HELP.\r\n"),
    (&["xinfo", "stream", "s", "full", "count"], "-ERR unknown subcommand or wrong number of arguments for 'stream'. Try XINFO HELP.\r\n"),
    (&["xinfo", "groups", "s"], "*0\r\n"),
    (&["xgroup", "create", "s", "g1", "0"], "+OK\r\n"),
    (&["xgroup", "create", "s", "g2", "$"], "+OK\r\n"),
    (&["xgroup", "create", "s", "g3", "0", "entriesread", "1"], "+OK\r\n"),
    (&["xinfo", "groups", "s"], "*3\r\n*12\r\n$4\r\nname\r\n$2\r\ng1\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n$17\r\nlast-delivered-id\r\n$3\r\n0-0\r\n$12\r\nentries-read\r\n$-1\r\n$3\r\nlag\r\n:3\r\n*12\r\n$4\r\nname\r\n$2\r\ng2\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n$17\r\nlast-delivered-id\r\n$3\r\n3-0\r\n$12\r\nentries-read\r\n$-1\r\n$3\r\nlag\r\n:0\r\n*12\r\n$4\r\nname\r\n$2\r\ng3\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n$17\r\nlast-delivered-id\r\n$3\r\n0-0\r\n$12\r\nentries-read\r\n:1\r\n$3\r\nlag\r\n:2\r\n"),
    (&["xinfo", "consumers", "s", "g1"], "*0\r\n"),
    (&["xinfo", "consumers", "s", "nog"], "-NOGROUP No such consumer group 'nog' for key name 's'\r\n"),
    (&["xreadgroup", "group", "g1", "c1", "count", "1", "streams", "s", ">"], "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"),
    (&["xinfo", "groups", "s"], "*3\r\n*12\r\n$4\r\nname\r\n$2\r\ng1\r\n$9\r\nconsumers\r\n:1\r\n$7\r\npending\r\n:1\r\n$17\r\nlast-delivered-id\r\n$3\r\n1-1\r\n$12\r\nentries-read\r\n:1\r\n$3\r\nlag\r\n:2\r\n*12\r\n$4\r\nname\r\n$2\r\ng2\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n$17\r\nlast-delivered-id\r\n$3\r\n3-0\r\n$12\r\nentries-read\r\n$-1\r\n$3\r\nlag\r\n:0\r\n*12\r\n$4\r\nname\r\n$2\r\ng3\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n$17\r\nlast-delivered-id\r\n$3\r\n0-0\r\n$12\r\nentries-read\r\n:1\r\n$3\r\nlag\r\n:2\r\n"),
    (&["xreadgroup", "group", "g1", "c1", "noack", "count", "1", "streams", "s", ">"], "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n2-1\r\n*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n"),
    (&["xinfo", "groups", "s"], "*3\r\n*12\r\n$4\r\nname\r\n$2\r\ng1\r\n$9\r\nconsumers\r\n:1\r\n$7\r\npending\r\n:1\r\n$17\r\nlast-delivered-id\r\n$3\r\n2-1\r\n$12\r\nentries-read\r\n:2\r\n$3\r\nlag\r\n:1\r\n*12\r\n$4\r\nname\r\n$2\r\ng2\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n$17\r\nlast-delivered-id\r\n$3\r\n3-0\r\n$12\r\nentries-read\r\n$-1\r\n$3\r\nlag\r\n:0\r\n*12\r\n$4\r\nname\r\n$2\r\ng3\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n$17\r\nlast-delivered-id\r\n$3\r\n0-0\r\n$12\r\nentries-read\r\n:1\r\n$3\r\nlag\r\n:2\r\n"),
    (&["xdel", "s", "3-0"], ":1\r\n"),
    (&["xinfo", "groups", "s"], "*3\r\n*12\r\n$4\r\nname\r\n$2\r\ng1\r\n$9\r\nconsumers\r\n:1\r\n$7\r\npending\r\n:1\r\n$17\r\nlast-delivered-id\r\n$3\r\n2-1\r\n$12\r\nentries-read\r\n:2\r\n$3\r\nlag\r\n$-1\r\n*12\r\n$4\r\nname\r\n$2\r\ng2\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n$17\r\nlast-delivered-id\r\n$3\r\n3-0\r\n$12\r\nentries-read\r\n$-1\r\n$3\r\nlag\r\n:0\r\n*12\r\n$4\r\nname\r\n$2\r\ng3\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n$17\r\nlast-delivered-id\r\n$3\r\n0-0\r\n$12\r\nentries-read\r\n:1\r\n$3\r\nlag\r\n$-1\r\n"),
    (&["xinfo", "stream", "s"], "*20\r\n$6\r\nlength\r\n:2\r\n$15\r\nradix-tree-keys\r\n:1\r\n$16\r\nradix-tree-nodes\r\n:2\r\n$17\r\nlast-generated-id\r\n$3\r\n3-0\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n3-0\r\n$13\r\nentries-added\r\n:3\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n1-1\r\n$6\r\ngroups\r\n:3\r\n$11\r\nfirst-entry\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n$10\r\nlast-entry\r\n*2\r\n$3\r\n2-1\r\n*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n"),
    (&["xadd", "s", "4-0", "e", "5"], "$3\r\n4-0\r\n"),
    (&["xinfo", "groups", "s"], "*3\r\n*12\r\n$4\r\nname\r\n$2\r\ng1\r\n$9\r\nconsumers\r\n:1\r\n$7\r\npending\r\n:1\r\n$17\r\nlast-delivered-id\r\n$3\r\n2-1\r\n$12\r\nentries-read\r\n:2\r\n$3\r\nlag\r\n$-1\r\n*12\r\n$4\r\nname\r\n$2\r\ng2\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n$17\r\nlast-delivered-id\r\n$3\r\n3-0\r\n$12\r\nentries-read\r\n$-1\r\n$3\r\nlag\r\n$-1\r\n*12\r\n$4\r\nname\r\n$2\r\ng3\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n$17\r\nlast-delivered-id\r\n$3\r\n0-0\r\n$12\r\nentries-read\r\n:1\r\n$3\r\nlag\r\n$-1\r\n"),
    (&["xreadgroup", "group", "g1", "c2", "streams", "s", ">"], "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n4-0\r\n*2\r\n$1\r\ne\r\n$1\r\n5\r\n"),
    (&["xinfo", "groups", "s"], "*3\r\n*12\r\n$4\r\nname\r\n$2\r\ng1\r\n$9\r\nconsumers\r\n:2\r\n$7\r\npending\r\n:2\r\n$17\r\nlast-delivered-id\r\n$3\r\n4-0\r\n$12\r\nentries-read\r\n:3\r\n$3\r\nlag\r\n:1\r\n*12\r\n$4\r\nname\r\n$2\r\ng2\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n$17\r\nlast-delivered-id\r\n$3\r\n3-0\r\n$12\r\nentries-read\r\n$-1\r\n$3\r\nlag\r\n$-1\r\n*12\r\n$4\r\nname\r\n$2\r\ng3\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n$17\r\nlast-delivered-id\r\n$3\r\n0-0\r\n$12\r\nentries-read\r\n:1\r\n$3\r\nlag\r\n$-1\r\n"),
    (&["xreadgroup", "group", "g3", "c2", "streams", "s", ">"], "*1\r\n*2\r\n$1\r\ns\r\n*3\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n*2\r\n$3\r\n2-1\r\n*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n*2\r\n$3\r\n4-0\r\n*2\r\n$1\r\ne\r\n$1\r\n5\r\n"),
    (&["xinfo", "groups", "s"], "*3\r\n*12\r\n$4\r\nname\r\n$2\r\ng1\r\n$9\r\nconsumers\r\n:2\r\n$7\r\npending\r\n:2\r\n$17\r\nlast-delivered-id\r\n$3\r\n4-0\r\n$12\r\nentries-read\r\n:3\r\n$3\r\nlag\r\n:1\r\n*12\r\n$4\r\nname\r\n$2\r\ng2\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n$17\r\nlast-delivered-id\r\n$3\r\n3-0\r\n$12\r\nentries-read\r\n$-1\r\n$3\r\nlag\r\n$-1\r\n*12\r\n$4\r\nname\r\n$2\r\ng3\r\n$9\r\nconsumers\r\n:1\r\n$7\r\npending\r\n:3\r\n$17\r\nlast-delivered-id\r\n$3\r\n4-0\r\n$12\r\nentries-read\r\n:4\r\n$3\r\nlag\r\n:0\r\n"),
    (&["xgroup", "setid", "s", "g2", "0"], "+OK\r\n"),
    (&["xinfo", "groups", "s"], "*3\r\n*12\r\n$4\r\nname\r\n$2\r\ng1\r\n$9\r\nconsumers\r\n:2\r\n$7\r\npending\r\n:2\r\n$17\r\nlast-delivered-id\r\n$3\r\n4-0\r\n$12\r\nentries-read\r\n:3\r\n$3\r\nlag\r\n:1\r\n*12\r\n$4\r\nname\r\n$2\r\ng2\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n$17\r\nlast-delivered-id\r\n$3\r\n0-0\r\n$12\r\nentries-read\r\n$-1\r\n$3\r\nlag\r\n$-1\r\n*12\r\n$4\r\nname\r\n$2\r\ng3\r\n$9\r\nconsumers\r\n:1\r\n$7\r\npending\r\n:3\r\n$17\r\nlast-delivered-id\r\n$3\r\n4-0\r\n$12\r\nentries-read\r\n:4\r\n$3\r\nlag\r\n:0\r\n"),
    (&["xgroup", "setid", "s", "g2", "0", "entriesread", "0"], "+OK\r\n"),
    (&["xinfo", "groups", "s"], "*3\r\n*12\r\n$4\r\nname\r\n$2\r\ng1\r\n$9\r\nconsumers\r\n:2\r\n$7\r\npending\r\n:2\r\n$17\r\nlast-delivered-id\r\n$3\r\n4-0\r\n$12\r\nentries-read\r\n:3\r\n$3\r\nlag\r\n:1\r\n*12\r\n$4\r\nname\r\n$2\r\ng2\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n$17\r\nlast-delivered-id\r\n$3\r\n0-0\r\n$12\r\nentries-read\r\n:0\r\n$3\r\nlag\r\n$-1\r\n*12\r\n$4\r\nname\r\n$2\r\ng3\r\n$9\r\nconsumers\r\n:1\r\n$7\r\npending\r\n:3\r\n$17\r\nlast-delivered-id\r\n$3\r\n4-0\r\n$12\r\nentries-read\r\n:4\r\n$3\r\nlag\r\n:0\r\n"),
    (&["xgroup", "setid", "s", "g2", "$", "entriesread", "10"], "+OK\r\n"),
    (&["xinfo", "groups", "s"], "*3\r\n*12\r\n$4\r\nname\r\n$2\r\ng1\r\n$9\r\nconsumers\r\n:2\r\n$7\r\npending\r\n:2\r\n$17\r\nlast-delivered-id\r\n$3\r\n4-0\r\n$12\r\nentries-read\r\n:3\r\n$3\r\nlag\r\n:1\r\n*12\r\n$4\r\nname\r\n$2\r\ng2\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n$17\r\nlast-delivered-id\r\n$3\r\n4-0\r\n$12\r\nentries-read\r\n:10\r\n$3\r\nlag\r\n:-6\r\n*12\r\n$4\r\nname\r\n$2\r\ng3\r\n$9\r\nconsumers\r\n:1\r\n$7\r\npending\r\n:3\r\n$17\r\nlast-delivered-id\r\n$3\r\n4-0\r\n$12\r\nentries-read\r\n:4\r\n$3\r\nlag\r\n:0\r\n"),
    (&["xdel", "s", "1-1"], ":1\r\n"),
    (&["xinfo", "groups", "s"], "*3\r\n*12\r\n$4\r\nname\r\n$2\r\ng1\r\n$9\r\nconsumers\r\n:2\r\n$7\r\npending\r\n:2\r\n$17\r\nlast-delivered-id\r\n$3\r\n4-0\r\n$12\r\nentries-read\r\n:3\r\n$3\r\nlag\r\n:1\r\n*12\r\n$4\r\nname\r\n$2\r\ng2\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n$17\r\nlast-delivered-id\r\n$3\r\n4-0\r\n$12\r\nentries-read\r\n:10\r\n$3\r\nlag\r\n:-6\r\n*12\r\n$4\r\nname\r\n$2\r\ng3\r\n$9\r\nconsumers\r\n:1\r\n$7\r\npending\r\n:3\r\n$17\r\nlast-delivered-id\r\n$3\r\n4-0\r\n$12\r\nentries-read\r\n:4\r\n$3\r\nlag\r\n:0\r\n"),
    (&["xinfo", "stream", "s"], "*20\r\n$6\r\nlength\r\n:2\r\n$15\r\nradix-tree-keys\r\n:1\r\n$16\r\nradix-tree-nodes\r\n:2\r\n$17\r\nlast-generated-id\r\n$3\r\n4-0\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n3-0\r\n$13\r\nentries-added\r\n:4\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n2-1\r\n$6\r\ngroups\r\n:3\r\n$11\r\nfirst-entry\r\n*2\r\n$3\r\n2-1\r\n*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n$10\r\nlast-entry\r\n*2\r\n$3\r\n4-0\r\n*2\r\n$1\r\ne\r\n$1\r\n5\r\n"),
    (&["xsetid", "s", "3-0"], "-ERR The ID specified in XSETID is smaller than the target stream top item\r\n"),
    (&["xsetid", "s", "4-0", "entriesadded", "1"], "-ERR The entries_added specified in XSETID is smaller than the target stream length\r\n"),
    (&["xsetid", "s", "5-0", "entriesadded", "10", "maxdeletedid", "6-0"], "-ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id\r\n"),
    (&["xsetid", "s", "5-0", "entriesadded", "-1"], "-ERR entries_added must be positive\r\n"),
    (&["xsetid", "s", "5-0", "entriesadded", "x"], "-ERR value is not an integer or out of range\r\n"),
    (&["xsetid", "s", "5-0", "bogus", "1"], "-ERR syntax error\r\n"),
    (&["xsetid", "s", "5-0", "entriesadded"], "-ERR syntax error\r\n"),
    (&["xsetid", "s", "foo"], "-ERR Invalid stream ID specified as stream command argument\r\n"),
    (&["xsetid", "s", "5-0", "maxdeletedid", "foo"], "-ERR Invalid stream ID specified as stream command argument\r\n"),
    (&["xsetid", "s", "9-0", "entriesadded", "10", "maxdeletedid", "6-0"], "+OK\r\n"),
    (&["xinfo", "stream", "s"], "*20\r\n$6\r\nlength\r\n:2\r\n$15\r\nradix-tree-keys\r\n:1\r\n$16\r\nradix-tree-nodes\r\n:2\r\n$17\r\nlast-generated-id\r\n$3\r\n9-0\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n6-0\r\n$13\r\nentries-added\r\n:10\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n2-1\r\n$6\r\ngroups\r\n:3\r\n$11\r\nfirst-entry\r\n*2\r\n$3\r\n2-1\r\n*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n$10\r\nlast-entry\r\n*2\r\n$3\r\n4-0\r\n*2\r\n$1\r\ne\r\n$1\r\n5\r\n"),
    (&["xinfo", "groups", "s"], "*3\r\n*12\r\n$4\r\nname\r\n$2\r\ng1\r\n$9\r\nconsumers\r\n:2\r\n$7\r\npending\r\n:2\r\n$17\r\nlast-delivered-id\r\n$3\r\n4-0\r\n$12\r\nentries-read\r\n:3\r\n$3\r\nlag\r\n$-1\r\n*12\r\n$4\r\nname\r\n$2\r\ng2\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n$17\r\nlast-delivered-id\r\n$3\r\n4-0\r\n$12\r\nentries-read\r\n:10\r\n$3\r\nlag\r\n$-1\r\n*12\r\n$4\r\nname\r\n$2\r\ng3\r\n$9\r\nconsumers\r\n:1\r\n$7\r\npending\r\n:3\r\n$17\r\nlast-delivered-id\r\n$3\r\n4-0\r\n$12\r\nentries-read\r\n:4\r\n$3\r\nlag\r\n$-1\r\n"),
    (&["xadd", "s", "9-0", "x", "1"], "-ERR The ID specified in XADD is equal or smaller than the target stream top item\r\n"),
    (&["xadd", "s", "9-1", "x", "1"], "$3\r\n9-1\r\n"),
    (&["xinfo", "stream", "s"], "*20\r\n$6\r\nlength\r\n:3\r\n$15\r\nradix-tree-keys\r\n:1\r\n$16\r\nradix-tree-nodes\r\n:2\r\n$17\r\nlast-generated-id\r\n$3\r\n9-1\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n6-0\r\n$13\r\nentries-added\r\n:11\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n2-1\r\n$6\r\ngroups\r\n:3\r\n$11\r\nfirst-entry\r\n*2\r\n$3\r\n2-1\r\n*4\r\n$1\r\nb\r\n$1\r\n2\r\n$1\r\nc\r\n$1\r\n3\r\n$10\r\nlast-entry\r\n*2\r\n$3\r\n9-1\r\n*2\r\n$1\r\nx\r\n$1\r\n1\r\n"),
    (&["xinfo", "groups", "s"], "*3\r\n*12\r\n$4\r\nname\r\n$2\r\ng1\r\n$9\r\nconsumers\r\n:2\r\n$7\r\npending\r\n:2\r\n$17\r\nlast-delivered-id\r\n$3\r\n4-0\r\n$12\r\nentries-read\r\n:3\r\n$3\r\nlag\r\n$-1\r\n*12\r\n$4\r\nname\r\n$2\r\ng2\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n$17\r\nlast-delivered-id\r\n$3\r\n4-0\r\n$12\r\nentries-read\r\n:10\r\n$3\r\nlag\r\n$-1\r\n*12\r\n$4\r\nname\r\n$2\r\ng3\r\n$9\r\nconsumers\r\n:1\r\n$7\r\npending\r\n:3\r\n$17\r\nlast-delivered-id\r\n$3\r\n4-0\r\n$12\r\nentries-read\r\n:4\r\n$3\r\nlag\r\n$-1\r\n"),
    (&["xadd", "e", "1-0", "a", "1"], "$3\r\n1-0\r\n"),
    (&["xdel", "e", "1-0"], ":1\r\n"),
    (&["xinfo", "stream", "e"], "*20\r\n$6\r\nlength\r\n:0\r\n$15\r\nradix-tree-keys\r\n:0\r\n$16\r\nradix-tree-nodes\r\n:1\r\n$17\r\nlast-generated-id\r\n$3\r\n1-0\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n1-0\r\n$13\r\nentries-added\r\n:1\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n0-0\r\n$6\r\ngroups\r\n:0\r\n$11\r\nfirst-entry\r\n$-1\r\n$10\r\nlast-entry\r\n$-1\r\n"),
    (&["xsetid", "e", "0-5"], "+OK\r\n"),
    (&["xinfo", "stream", "e"], "*20\r\n$6\r\nlength\r\n:0\r\n$15\r\nradix-tree-keys\r\n:0\r\n$16\r\nradix-tree-nodes\r\n:1\r\n$17\r\nlast-generated-id\r\n$3\r\n0-5\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n1-0\r\n$13\r\nentries-added\r\n:1\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n0-0\r\n$6\r\ngroups\r\n:0\r\n$11\r\nfirst-entry\r\n$-1\r\n$10\r\nlast-entry\r\n$-1\r\n"),
    (&["xadd", "e", "0-6", "a", "1"], "$3\r\n0-6\r\n"),
    (&["xrange", "e", "-", "+"], "*1\r\n*2\r\n$3\r\n0-6\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"),
    (&["xinfo", "stream", "e"], "*20\r\n$6\r\nlength\r\n:1\r\n$15\r\nradix-tree-keys\r\n:1\r\n$16\r\nradix-tree-nodes\r\n:2\r\n$17\r\nlast-generated-id\r\n$3\r\n0-6\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n1-0\r\n$13\r\nentries-added\r\n:2\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n0-6\r\n$6\r\ngroups\r\n:0\r\n$11\r\nfirst-entry\r\n*2\r\n$3\r\n0-6\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n$10\r\nlast-entry\r\n*2\r\n$3\r\n0-6\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n"),
    (&["xinfo", "stream", "e", "full"], "*18\r\n$6\r\nlength\r\n:1\r\n$15\r\nradix-tree-keys\r\n:1\r\n$16\r\nradix-tree-nodes\r\n:2\r\n$17\r\nlast-generated-id\r\n$3\r\n0-6\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n1-0\r\n$13\r\nentries-added\r\n:2\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n0-6\r\n$7\r\nentries\r\n*1\r\n*2\r\n$3\r\n0-6\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n$6\r\ngroups\r\n*0\r\n"),
    (&["xgroup", "create", "mk", "g", "$", "mkstream"], "+OK\r\n"),
    (&["xinfo", "stream", "mk"], "*20\r\n$6\r\nlength\r\n:0\r\n$15\r\nradix-tree-keys\r\n:0\r\n$16\r\nradix-tree-nodes\r\n:1\r\n$17\r\nlast-generated-id\r\n$3\r\n0-0\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n0-0\r\n$13\r\nentries-added\r\n:0\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n0-0\r\n$6\r\ngroups\r\n:1\r\n$11\r\nfirst-entry\r\n$-1\r\n$10\r\nlast-entry\r\n$-1\r\n"),
    (&["xinfo", "groups", "mk"], "*1\r\n*12\r\n$4\r\nname\r\n$1\r\ng\r\n$9\r\nconsumers\r\n:0\r\n$7\r\npending\r\n:0\r\n$17\r\nlast-delivered-id\r\n$3\r\n0-0\r\n$12\r\nentries-read\r\n$-1\r\n$3\r\nlag\r\n:0\r\n"),
    (&["xinfo", "stream", "mk", "full"], "*18\r\n$6\r\nlength\r\n:0\r\n$15\r\nradix-tree-keys\r\n:0\r\n$16\r\nradix-tree-nodes\r\n:1\r\n$17\r\nlast-generated-id\r\n$3\r\n0-0\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n0-0\r\n$13\r\nentries-added\r\n:0\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n0-0\r\n$7\r\nentries\r\n*0\r\n$6\r\ngroups\r\n*1\r\n*14\r\n$4\r\nname\r\n$1\r\ng\r\n$17\r\nlast-delivered-id\r\n$3\r\n0-0\r\n$12\r\nentries-read\r\n$-1\r\n$3\r\nlag\r\n:0\r\n$9\r\npel-count\r\n:0\r\n$7\r\npending\r\n*0\r\n$9\r\nconsumers\r\n*0\r\n"),
    (&["xsetid", "mk", "0-0"], "+OK\r\n"),
    (&["xinfo", "stream", "mk"], "*20\r\n$6\r\nlength\r\n:0\r\n$15\r\nradix-tree-keys\r\n:0\r\n$16\r\nradix-tree-nodes\r\n:1\r\n$17\r\nlast-generated-id\r\n$3\r\n0-0\r\n$20\r\nmax-deleted-entry-id\r\n$3\r\n0-0\r\n$13\r\nentries-added\r\n:0\r\n$23\r\nrecorded-first-entry-id\r\n$3\r\n0-0\r\n$6\r\ngroups\r\n:1\r\n$11\r\nfirst-entry\r\n$-1\r\n$10\r\nlast-entry\r\n$-1\r\n"),
    (&["multi"], "+OK\r\n"),
    (&["xinfo", "foo"], "-ERR unknown subcommand 'foo'. Try XINFO HELP.\r\n"),
    (&["xinfo", "stream"], "-ERR wrong number of arguments for 'xinfo|stream' command\r\n"),
    (&["exec"], "-EXECABORT Transaction discarded because of previous errors.\r\n"),
];

#[test]
fn xinfo_and_xsetid_answer_as_redis_does() {
    let s = Server::start(None);
    expect_replies(&s, REDIS_REPLIES);
}

/// A map's value under `name` (the redis crate reads RESP2's flat pairs
/// as a bulk array).
fn lookup<'a>(map: &'a [Value], name: &str) -> &'a Value {
    let at = map
        .chunks(2)
        .position(|pair| pair[0] == Value::BulkString(name.as_bytes().to_vec()))
        .unwrap_or_else(|| panic!("no field {name} in {map:?}"));
    &map[at * 2 + 1]
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(n) => *n,
        other => panic!("not an integer: {other:?}"),
    }
}

fn fields(v: Value) -> Vec<Value> {
    match v {
        Value::Array(items) => items,
        other => panic!("not an array: {other:?}"),
    }
}

/// Each consumer's pending count and idle time; `FULL` lists each
/// consumer's pending entries with their delivery times and counts.
#[test]
fn consumers_report_their_pending_entries_and_idle_time() {
    let s = Server::start(None);
    let mut c = s.conn();
    for id in ["1-0", "2-0", "3-0"] {
        let _: String = cmd("XADD").arg(&["s", id, "f", "v"]).query(&mut c).unwrap();
    }
    let _: () = cmd("XGROUP")
        .arg(&["CREATE", "s", "g", "0"])
        .query(&mut c)
        .unwrap();
    for (consumer, count) in [("alice", "2"), ("bob", "1")] {
        let _: Value = cmd("XREADGROUP")
            .arg(&["GROUP", "g", consumer, "COUNT", count, "STREAMS", "s", ">"])
            .query(&mut c)
            .unwrap();
    }
    std::thread::sleep(std::time::Duration::from_millis(120));
    let consumers = fields(
        cmd("XINFO")
            .arg(&["CONSUMERS", "s", "g"])
            .query(&mut c)
            .unwrap(),
    );
    assert_eq!(consumers.len(), 2);
    let alice = fields(consumers[0].clone());
    let bob = fields(consumers[1].clone());
    assert_eq!(
        lookup(&alice, "name"),
        &Value::BulkString(b"alice".to_vec())
    );
    assert_eq!(int(lookup(&alice, "pending")), 2);
    assert_eq!(int(lookup(&bob, "pending")), 1);
    for consumer in [&alice, &bob] {
        let idle = int(lookup(consumer, "idle"));
        assert!((100..10_000).contains(&idle), "idle {idle}");
    }
    let full = fields(
        cmd("XINFO")
            .arg(&["STREAM", "s", "FULL"])
            .query(&mut c)
            .unwrap(),
    );
    let groups = fields(lookup(&full, "groups").clone());
    let g = fields(groups[0].clone());
    assert_eq!(int(lookup(&g, "pel-count")), 3);
    assert_eq!(int(lookup(&g, "entries-read")), 3);
    assert_eq!(int(lookup(&g, "lag")), 0);
    let consumers = fields(lookup(&g, "consumers").clone());
    let alice = fields(consumers[0].clone());
    let pending = fields(lookup(&alice, "pending").clone());
    let ids: Vec<Value> = pending.into_iter().map(|p| fields(p)[0].clone()).collect();
    assert_eq!(
        ids,
        vec![
            Value::BulkString(b"1-0".to_vec()),
            Value::BulkString(b"2-0".to_vec())
        ]
    );
}

/// A group's read counter and the stream's counters set by `XSETID`
/// survive a restart.
#[test]
fn counters_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    {
        let s = Server::start_at(tempfile::tempdir().unwrap(), db.clone(), |_| {});
        let mut c = s.conn();
        for id in ["1-0", "2-0", "3-0", "4-0"] {
            let _: String = cmd("XADD").arg(&["s", id, "f", "v"]).query(&mut c).unwrap();
        }
        let _: () = cmd("XGROUP")
            .arg(&["CREATE", "s", "g", "0"])
            .query(&mut c)
            .unwrap();
        let _: Value = cmd("XREADGROUP")
            .arg(&["GROUP", "g", "a", "COUNT", "3", "STREAMS", "s", ">"])
            .query(&mut c)
            .unwrap();
        let _: () = cmd("XSETID")
            .arg(&["s", "9-0", "ENTRIESADDED", "40", "MAXDELETEDID", "0-1"])
            .query(&mut c)
            .unwrap();
    }
    let s = Server::start_at(tempfile::tempdir().unwrap(), db, |_| {});
    let mut c = s.conn();
    let groups = fields(cmd("XINFO").arg(&["GROUPS", "s"]).query(&mut c).unwrap());
    let g = fields(groups[0].clone());
    assert_eq!(int(lookup(&g, "entries-read")), 3);
    assert_eq!(int(lookup(&g, "lag")), 37);
    let info = fields(cmd("XINFO").arg(&["STREAM", "s"]).query(&mut c).unwrap());
    assert_eq!(int(lookup(&info, "entries-added")), 40);
    assert_eq!(
        lookup(&info, "last-generated-id"),
        &Value::BulkString(b"9-0".to_vec())
    );
    assert_eq!(
        lookup(&info, "max-deleted-entry-id"),
        &Value::BulkString(b"0-1".to_vec())
    );
}
