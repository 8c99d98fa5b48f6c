//! `COMMAND INFO`, `COMMAND DOCS` and `COMMAND LIST` answer as
//! redis-server 7.0 answers, byte for byte, in RESP2 and RESP3
//! (`tests/data/redis7_command/`, written by its `make.py`): flags, ACL
//! categories, tips, key specs and the legacy key range derived from them,
//! arguments and history, for commands of every kind of key spec;
//! `COMMAND GETKEYS`/`GETKEYSANDFLAGS` by every route Redis takes (key
//! specs, its own code for `SORT`, `SET`, `BITFIELD`, `XREAD`, ...); and
//! the errors and help of `COMMAND` itself.

use crate::common;
use common::{Raw, Server};

fn check_fixture(s: &Server, proto: &str, fixture: &[u8]) -> usize {
    let mut raw = Raw::new(s);
    if proto == "3" {
        raw.reply_to(&["HELLO", "3"]);
    }
    let text = String::from_utf8(fixture.to_vec()).unwrap();
    let mut checked = 0;
    for record in text.split("\n<<END>>\n").filter(|r| !r.is_empty()) {
        let (request, want) = record.split_once('\n').unwrap();
        let args: Vec<&str> = request.strip_prefix("> ").unwrap().split(' ').collect();
        let got = String::from_utf8(raw.reply_to(&args)).unwrap();
        assert_eq!(got, want, "RESP{proto}: {request}");
        checked += 1;
    }
    checked
}

#[test]
fn command_info_and_docs_answer_as_redis() {
    let s = Server::start(None);
    let resp2 = include_bytes!("../data/redis7_command/replies2.resp");
    let resp3 = include_bytes!("../data/redis7_command/replies3.resp");
    assert_eq!(check_fixture(&s, "2", resp2), 135);
    assert_eq!(check_fixture(&s, "3", resp3), 135);
}

fn listed(raw: &mut Raw, args: &[&str]) -> Vec<String> {
    let reply = String::from_utf8(raw.reply_to(args)).unwrap();
    let mut names: Vec<String> = common::replies(reply.as_bytes())
        .into_iter()
        .skip(1)
        .collect();
    names.sort();
    names
}

#[test]
fn command_list_names_every_command_and_subcommand() {
    let s = Server::start(None);
    let mut raw = Raw::new(&s);
    // As redis-server 7.0 lists them (in its own order).
    let xinfo = listed(
        &mut raw,
        &["COMMAND", "LIST", "FILTERBY", "PATTERN", "XINFO*"],
    );
    assert_eq!(
        xinfo,
        [
            "xinfo",
            "xinfo|consumers",
            "xinfo|groups",
            "xinfo|help",
            "xinfo|stream"
        ]
    );
    let all = listed(&mut raw, &["COMMAND", "LIST"]);
    let count = String::from_utf8(raw.reply_to(&["COMMAND", "COUNT"])).unwrap();
    let top = all.iter().filter(|n| !n.contains('|')).count();
    assert_eq!(count, format!(":{top}\r\n"));
    for name in [
        "get",
        "config|get",
        "client|setinfo",
        "xgroup|createconsumer",
        "cluster|info",
    ] {
        assert!(all.contains(&name.to_string()), "{name}");
    }
    // Every command listed is described, by INFO and by DOCS.
    for name in &all {
        let info = String::from_utf8(raw.reply_to(&["COMMAND", "INFO", name])).unwrap();
        assert!(info.starts_with("*1\r\n*10\r\n"), "{name}: {info}");
        let docs = String::from_utf8(raw.reply_to(&["COMMAND", "DOCS", name])).unwrap();
        assert!(docs.starts_with("*2\r\n"), "{name}: {docs}");
    }
    // Read commands by ACL category, as Redis derives it from the flags.
    let read = listed(&mut raw, &["COMMAND", "LIST", "FILTERBY", "ACLCAT", "read"]);
    assert!(read.contains(&"get".to_string()) && !read.contains(&"set".to_string()));
    assert!(
        !read.contains(&"eval_ro".to_string()),
        "scripting is not @read"
    );
}
