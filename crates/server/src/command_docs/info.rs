//! `COMMAND INFO`'s entry for a command, built from its description as
//! Redis's `addReplyCommandInfo` builds it (flags, the legacy first, last
//! and step from the key specs, ACL categories with those the flags
//! imply, tips, key specs, subcommands), and the JSON readers the other
//! `COMMAND` replies share.

use serde_json::Value;

use super::table::subcommands;
use crate::resp::Reply;

fn strings<'a>(d: &'a Value, field: &str) -> impl Iterator<Item = &'a str> {
    d.get(field)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

pub(super) fn has(d: &Value, field: &str, item: &str) -> bool {
    strings(d, field).any(|s| s == item)
}

pub(super) fn int(v: Option<&Value>) -> i64 {
    v.and_then(Value::as_i64).unwrap_or(0)
}

/// Redis's command flags, in the order `addReplyFlagsForCommand` lists
/// them (the JSON's name, the reply's).
const FLAGS: &[(&str, &str)] = &[
    ("WRITE", "write"),
    ("READONLY", "readonly"),
    ("DENYOOM", "denyoom"),
    ("MODULE", "module"),
    ("ADMIN", "admin"),
    ("PUBSUB", "pubsub"),
    ("NOSCRIPT", "noscript"),
    ("BLOCKING", "blocking"),
    ("LOADING", "loading"),
    ("STALE", "stale"),
    ("SKIP_MONITOR", "skip_monitor"),
    ("SKIP_SLOWLOG", "skip_slowlog"),
    ("ASKING", "asking"),
    ("FAST", "fast"),
    ("NO_AUTH", "no_auth"),
    ("NO_MANDATORY_KEYS", "no_mandatory_keys"),
    ("NO_ASYNC_LOADING", "no_async_loading"),
    ("NO_MULTI", "no_multi"),
    ("MOVABLE_KEYS", "movablekeys"),
    ("ALLOW_BUSY", "allow_busy"),
];

/// ACL categories in `ACLCommandCategories`' order.
pub const CATEGORIES: &[&str] = &[
    "keyspace",
    "read",
    "write",
    "set",
    "sortedset",
    "list",
    "hash",
    "string",
    "bitmap",
    "hyperloglog",
    "geo",
    "stream",
    "pubsub",
    "admin",
    "fast",
    "slow",
    "blocking",
    "dangerous",
    "connection",
    "transaction",
    "scripting",
];

/// Key spec flags in `addReplyFlagsForKeyArgs`' order.
const KEY_FLAGS: &[(&str, &str)] = &[
    ("RO", "RO"),
    ("RW", "RW"),
    ("OW", "OW"),
    ("RM", "RM"),
    ("ACCESS", "access"),
    ("UPDATE", "update"),
    ("INSERT", "insert"),
    ("DELETE", "delete"),
    ("NOT_KEY", "not_key"),
    ("INCOMPLETE", "incomplete"),
    ("VARIABLE_FLAGS", "variable_flags"),
];

/// The command's ACL categories: its own and those Redis derives from its
/// flags (`setImplicitACLCategories`).
pub fn categories(d: &Value) -> Vec<&'static str> {
    let flag = |f: &str| has(d, "command_flags", f);
    let own = |c: &str| has(d, "acl_categories", &c.to_ascii_uppercase());
    let fast = flag("FAST") || own("fast");
    CATEGORIES
        .iter()
        .copied()
        .filter(|&c| {
            own(c)
                || match c {
                    "write" => flag("WRITE"),
                    "read" => flag("READONLY") && !own("scripting"),
                    "admin" | "dangerous" => flag("ADMIN"),
                    "pubsub" => flag("PUBSUB"),
                    "fast" => flag("FAST"),
                    "blocking" => flag("BLOCKING"),
                    "slow" => !fast,
                    _ => false,
                }
        })
        .collect()
}

/// A key spec's begin search position, if it is by index, and its
/// range, if it finds keys by one: (pos, lastkey, keystep, incomplete).
fn index_range(spec: &Value) -> Option<(i64, i64, i64, bool)> {
    let pos = spec.get("begin_search")?.get("index")?.get("pos")?;
    let range = spec.get("find_keys")?.get("range")?;
    Some((
        int(Some(pos)),
        int(range.get("lastkey")),
        int(range.get("step")),
        has(spec, "flags", "INCOMPLETE"),
    ))
}

/// The legacy (first key, last key, step) and whether the keys are
/// movable, from the key specs (`populateCommandLegacyRangeSpec`).
fn legacy_range(d: &Value) -> ((i64, i64, i64), bool) {
    let specs = specs_of(d);
    if specs.is_empty() {
        return ((0, 0, 0), false);
    }
    if let [only] = specs.as_slice() {
        if let Some((pos, last, step, incomplete)) = index_range(only) {
            let last = if last >= 0 { last + pos } else { last };
            return ((pos, last, step), incomplete);
        }
    }
    let (mut first, mut last, mut prev_last, mut movable) = (i64::MAX, 0i64, 0i64, false);
    for spec in specs {
        let Some((pos, spec_last, step, incomplete)) = index_range(spec) else {
            movable = true;
            continue;
        };
        if step != 1 || (prev_last != 0 && prev_last != pos - 1) {
            movable = true;
            continue;
        }
        movable |= incomplete;
        first = first.min(pos);
        let abs = if spec_last >= 0 {
            spec_last + pos
        } else {
            spec_last
        };
        // Redis compares these as unsigned: a negative (from the end) wins.
        last = if (abs as u32) > (last as u32) {
            abs
        } else {
            last
        };
        prev_last = last;
    }
    if first == i64::MAX {
        return ((0, 0, 0), true);
    }
    ((first, last, 1), movable)
}

pub(super) fn simple_set(items: impl IntoIterator<Item = String>) -> Reply {
    Reply::Set(items.into_iter().map(Reply::Simple).collect())
}

pub(super) fn pair(name: &str, value: Reply) -> (Reply, Reply) {
    (Reply::bulk(name), value)
}

/// `COMMAND INFO`'s entry for `full` (`addReplyCommandInfo`).
pub fn info(full: &str, d: &Value) -> Reply {
    let ((first, last, step), movable) = legacy_range(d);
    let flags = FLAGS
        .iter()
        .filter(|(json, _)| has(d, "command_flags", json) || (*json == "MOVABLE_KEYS" && movable));
    let subs = subcommands(full);
    Reply::Array(vec![
        Reply::bulk(full),
        Reply::Int(int(d.get("arity"))),
        simple_set(flags.map(|(_, name)| name.to_string())),
        Reply::Int(first),
        Reply::Int(last),
        Reply::Int(step),
        simple_set(categories(d).into_iter().map(|c| format!("@{c}"))),
        Reply::Set(
            strings(d, "command_tips")
                .map(|t| Reply::bulk(t.to_ascii_lowercase()))
                .collect(),
        ),
        Reply::Set(key_specs(d)),
        match subs.is_empty() {
            true => Reply::Set(Vec::new()),
            false => Reply::Array(subs.iter().map(|(n, s)| info(n, s)).collect()),
        },
    ])
}

/// A command's key specs.
pub(super) fn specs_of(d: &Value) -> Vec<&Value> {
    d.get("key_specs")
        .and_then(Value::as_array)
        .map(|s| s.iter().collect())
        .unwrap_or_default()
}

/// A key spec's flags (the JSON's names), in `KEY_FLAGS`' order.
pub(super) fn spec_flags(spec: &Value) -> Vec<&'static str> {
    KEY_FLAGS
        .iter()
        .map(|(json, _)| *json)
        .filter(|json| has(spec, "flags", json))
        .collect()
}

/// Key spec flags as Redis replies with them (`addReplyFlagsForKeyArgs`).
pub(super) fn key_flag_set(flags: &[&str]) -> Reply {
    let names = KEY_FLAGS
        .iter()
        .filter(|(json, _)| flags.contains(json))
        .map(|(_, name)| name.to_string());
    simple_set(names)
}

fn key_specs(d: &Value) -> Vec<Reply> {
    specs_of(d)
        .into_iter()
        .map(|spec| {
            let mut map = Vec::new();
            if let Some(notes) = spec.get("notes").and_then(Value::as_str) {
                map.push(pair("notes", Reply::bulk(notes)));
            }
            map.push(pair("flags", key_flag_set(&spec_flags(spec))));
            map.push(pair("begin_search", begin_search(spec.get("begin_search"))));
            map.push(pair("find_keys", find_keys(spec.get("find_keys"))));
            Reply::Map(map)
        })
        .collect()
}

fn typed(kind: &str, spec: Vec<(Reply, Reply)>) -> Reply {
    Reply::Map(vec![
        pair("type", Reply::bulk(kind)),
        pair("spec", Reply::Map(spec)),
    ])
}

fn begin_search(v: Option<&Value>) -> Reply {
    let v = v.unwrap_or(&Value::Null);
    if let Some(index) = v.get("index") {
        return typed(
            "index",
            vec![pair("index", Reply::Int(int(index.get("pos"))))],
        );
    }
    if let Some(k) = v.get("keyword") {
        let keyword = k.get("keyword").and_then(Value::as_str).unwrap_or("");
        return typed(
            "keyword",
            vec![
                pair("keyword", Reply::bulk(keyword)),
                pair("startfrom", Reply::Int(int(k.get("startfrom")))),
            ],
        );
    }
    typed("unknown", Vec::new())
}

fn find_keys(v: Option<&Value>) -> Reply {
    let v = v.unwrap_or(&Value::Null);
    if let Some(r) = v.get("range") {
        return typed(
            "range",
            vec![
                pair("lastkey", Reply::Int(int(r.get("lastkey")))),
                pair("keystep", Reply::Int(int(r.get("step")))),
                pair("limit", Reply::Int(int(r.get("limit")))),
            ],
        );
    }
    if let Some(k) = v.get("keynum") {
        return typed(
            "keynum",
            vec![
                pair("keynumidx", Reply::Int(int(k.get("keynumidx")))),
                pair("firstkey", Reply::Int(int(k.get("firstkey")))),
                pair("keystep", Reply::Int(int(k.get("step")))),
            ],
        );
    }
    typed("unknown", Vec::new())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command_docs::table::lookup;

    #[test]
    fn subcommands_are_found_by_their_full_name() {
        assert!(subcommands("config")
            .iter()
            .any(|(n, _)| *n == "config|get"));
        assert!(lookup(b"Config|Get").is_some());
    }

    /// Redis 7.0's first key, last key and step, and movable keys, as
    /// its `COMMAND INFO` gives them.
    #[test]
    fn legacy_key_ranges_follow_redis() {
        for (name, range, movable) in [
            ("get", (1, 1, 1), false),
            ("mset", (1, -1, 2), false),
            ("rpoplpush", (1, 2, 1), false),
            ("xread", (0, 0, 0), true),
            ("zunionstore", (1, 1, 1), true),
            ("blpop", (1, -2, 1), false),
            ("eval", (0, 0, 0), true),
            ("sort", (1, 1, 1), true),
            ("lmpop", (0, 0, 0), true),
            ("georadius", (1, 1, 1), true),
            ("geosearchstore", (1, 2, 1), false),
            ("del", (1, -1, 1), false),
            ("ping", (0, 0, 0), false),
        ] {
            let (_, d) = lookup(name.as_bytes()).unwrap();
            assert_eq!(legacy_range(d), (range, movable), "{name}");
        }
    }

    #[test]
    fn categories_include_those_the_flags_imply() {
        let of = |n: &str| categories(lookup(n.as_bytes()).unwrap().1);
        assert_eq!(of("get"), ["read", "string", "fast"]);
        assert_eq!(of("set"), ["write", "string", "slow"]);
        // Scripting commands are not @read even when read-only.
        assert!(!of("eval_ro").contains(&"read"));
        assert!(of("flushall").contains(&"dangerous"));
    }
}
