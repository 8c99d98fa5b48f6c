use std::collections::HashSet;
use std::sync::Arc;

use super::*;
use crate::access::Direct;
use crate::cursors::Cursors;
use crate::resp::{Reply, Request};
use crate::store::Store;

fn req(words: &[&str]) -> Request {
    words.iter().map(|w| w.as_bytes().to_vec()).collect()
}

/// Every row is one of Redis's commands (or says its own facts), once;
/// every command Redis's table describes is served by a row.
#[test]
fn every_row_is_described_and_every_description_served() {
    let mut names = HashSet::new();
    for row in rows::ALL.iter().flat_map(|g| g.iter()) {
        assert!(names.insert(row.name), "{} has two rows", row.name);
        let described = crate::command_docs::lookup(row.name.as_bytes()).is_some();
        assert!(
            described || row.own.is_some(),
            "{} is not described",
            row.name
        );
    }
    for (name, _) in crate::command_docs::top_level() {
        assert!(names.contains(name), "{name} is described but not served");
    }
    assert_eq!(commands().len(), names.len());
}

#[test]
fn facts_are_redis_and_the_rows_differences_are_added() {
    let get = find("get").unwrap();
    assert_eq!(get.arity, 2);
    assert!(get.flags.has(READONLY | FAST) && !get.flags.has(WRITE));
    assert!(matches!(
        get.run,
        Run::Data {
            mode: Mode::Direct,
            ..
        }
    ));
    assert!(find("set").unwrap().flags.has(WRITE | DENYOOM));
    assert!(find("blpop").unwrap().flags.has(BLOCKING));
    assert!(find("auth").unwrap().flags.has(NO_AUTH | ALLOW_BUSY));
    // Redis queues FLUSHALL in MULTI; slsm refuses it (rows/server.rs).
    assert!(find("flushall").unwrap().flags.has(NO_MULTI));
    assert!(find("shutdown").unwrap().flags.has(NO_MULTI));
    let raft = find("raft").unwrap();
    assert_eq!((raft.arity, raft.flags.has(ADMIN)), (-2, true));
    let config = find("config").unwrap();
    let get = config.subcommand(b"GET").unwrap();
    assert_eq!((get.name, get.arity), ("get", -3));
    assert!(config.subcommand(b"nope").is_none());
    assert!(find("nope").is_none());
}

#[test]
fn modes_say_how_a_command_reaches_the_engine() {
    let mode = |words: &[&str]| match find(words[0]).unwrap().run {
        Run::Data { mode, .. } => match mode.of(&req(words)) {
            Mode::Direct => "direct",
            Mode::Transaction => "transaction",
            Mode::Snapshot => "snapshot",
            Mode::ByArgs(_) => "undecided",
        },
        _ => "not data",
    };
    assert_eq!(mode(&["set", "k", "v"]), "direct");
    assert_eq!(mode(&["set", "k", "v", "EX", "10"]), "direct");
    assert_eq!(mode(&["set", "k", "v", "nx"]), "transaction");
    assert_eq!(mode(&["set", "k", "v", "GET"]), "transaction");
    assert_eq!(mode(&["incr", "k"]), "transaction");
    assert_eq!(mode(&["lrange", "k", "0", "1"]), "snapshot");
    assert_eq!(mode(&["hscan", "k", "0"]), "snapshot");
    assert_eq!(mode(&["ping"]), "not data");
}

#[test]
fn a_containers_flags_are_its_subcommands() {
    let function = find("function").unwrap();
    assert!(function.may_replicate(&req(&["function", "load", "x"])));
    assert!(!function.may_replicate(&req(&["function", "list"])));
    assert!(find("publish")
        .unwrap()
        .may_replicate(&req(&["publish", "c", "m"])));
    assert!(!find("get").unwrap().may_replicate(&req(&["get", "k"])));
    let script = find("script").unwrap();
    assert!(script.flags_of(&req(&["script", "kill"])).has(ALLOW_BUSY));
    assert!(!script.flags_of(&req(&["script", "flush"])).has(ALLOW_BUSY));
}

#[test]
fn shapes_are_refused_with_redis_errors() {
    let refusal = |words: &[&str]| match refused(words[0], &req(words)) {
        Some(Reply::Error(e)) => e,
        other => format!("{other:?}"),
    };
    assert_eq!(
        refusal(&["nope", "a"]),
        "ERR unknown command 'nope', with args beginning with: 'a' "
    );
    assert_eq!(
        refusal(&["get"]),
        "ERR wrong number of arguments for 'get' command"
    );
    assert_eq!(
        refusal(&["config", "nope"]),
        "ERR unknown subcommand 'nope'. Try CONFIG HELP."
    );
    assert_eq!(
        refusal(&["config", "get"]),
        "ERR wrong number of arguments for 'config|get' command"
    );
    assert_eq!(refusal(&["config", "get", "x"]), "None");
    assert_eq!(refusal(&["command"]), "None");
    assert_eq!(refusal(&["ping", "a"]), "None");
}

/// Each data row's handler is the one for its command: a well-formed
/// request of every data command runs against an empty database without
/// reaching a family's "unknown command".
#[test]
fn every_data_row_reaches_its_handler() {
    let dir = tempfile::tempdir().unwrap();
    let db = slsm::Db::open(dir.path().join("db"), slsm::Options::default()).unwrap();
    let store = Store::new(Arc::new(db), Default::default()).unwrap();
    let sp = store.spaces();
    let opts = slsm::WriteOptions::default();
    let cursors = Cursors::default();
    for cmd in commands() {
        let Some(handler) = cmd.data() else {
            continue;
        };
        let mut args = vec![cmd.name.as_bytes().to_vec()];
        while !fits(cmd.arity, args.len()) {
            args.push(b"1".to_vec());
        }
        if let Some(sub) = cmd.subcommands.first() {
            args.truncate(1);
            args.push(sub.name.as_bytes().to_vec());
            while !fits(sub.arity, args.len()) {
                args.push(b"1".to_vec());
            }
        }
        let mut direct = Direct::new(&sp, &opts);
        let reply = crate::session::to_reply(handler(cmd.name, &args, &mut direct, &cursors));
        assert_ne!(reply, Reply::err("ERR unknown command"), "{}", cmd.name);
    }
}

/// What `MONITOR` is not shown, as Redis decides it (`call()`): by the
/// command's or the subcommand's `admin`/`skip_monitor` flags, scripts
/// showing themselves.
#[test]
fn monitors_are_kept_from_admin_commands_by_their_flags() {
    let hidden = |words: &[&str]| hidden_from_monitors(words[0], &req(words));
    // A user's password must not reach a monitor.
    assert!(hidden(&["acl", "setuser", "u", ">secret"]));
    assert!(!hidden(&["acl", "whoami"]));
    assert!(hidden(&["config", "set", "maxmemory", "1"]));
    assert!(!hidden(&["config", "help"]));
    assert!(hidden(&["client", "kill", "id", "1"]));
    assert!(!hidden(&["client", "setname", "x"]));
    assert!(hidden(&["monitor"]) && hidden(&["debug", "sleep", "0"]));
    assert!(!hidden(&["lastsave"]) && !hidden(&["get", "k"]));
    assert!(!hidden(&["eval", "return 1", "0"]) && !hidden(&["fcall", "f", "0"]));
}
