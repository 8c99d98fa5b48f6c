//! `COMMAND DOCS`' entries (`addReplyCommandDocs`): summary, since,
//! group, complexity, doc flags, deprecation, history, arguments and
//! subcommands, each only when Redis's table has it.

use serde_json::Value;

use super::info::{has, pair, simple_set};
use super::table::subcommands;
use crate::resp::Reply;

/// `COMMAND DOCS`' entry for `full` (`addReplyCommandDocs`).
pub fn docs(full: &str, d: &Value) -> Reply {
    let mut map = Vec::new();
    field_of(&mut map, d, "summary");
    field_of(&mut map, d, "since");
    let group = d.get("group").and_then(Value::as_str).unwrap_or("generic");
    map.push(pair("group", Reply::bulk(group.replace('_', "-"))));
    field_of(&mut map, d, "complexity");
    let doc_flags: Vec<String> = ["deprecated", "syscmd"]
        .iter()
        .filter(|f| has(d, "doc_flags", &f.to_ascii_uppercase()))
        .map(|f| f.to_string())
        .collect();
    if !doc_flags.is_empty() {
        map.push(pair("doc_flags", simple_set(doc_flags)));
    }
    field_of(&mut map, d, "deprecated_since");
    field_of(&mut map, d, "replaced_by");
    // No history is no field at all, as in Redis's generated table.
    let history = d.get("history").and_then(Value::as_array);
    if let Some(history) = history.filter(|h| !h.is_empty()) {
        let entries = history
            .iter()
            .map(|h| Reply::Array(strings_of(h).into_iter().map(Reply::bulk).collect()));
        map.push(pair("history", Reply::Set(entries.collect())));
    }
    if let Some(args) = d.get("arguments").and_then(Value::as_array) {
        map.push(pair("arguments", arguments(args)));
    }
    let subs = subcommands(full);
    if !subs.is_empty() {
        let entries = subs.iter().map(|(n, s)| (Reply::bulk(*n), docs(n, s)));
        map.push(pair("subcommands", Reply::Map(entries.collect())));
    }
    Reply::Map(map)
}

fn field_of(map: &mut Vec<(Reply, Reply)>, d: &Value, name: &str) {
    if let Some(t) = d
        .get(name)
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
    {
        map.push(pair(name, Reply::bulk(t)));
    }
}

fn strings_of(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

/// An argument list (`addReplyCommandArgList`).
fn arguments(args: &[Value]) -> Reply {
    Reply::Array(
        args.iter()
            .map(|a| {
                let name = a.get("name").and_then(Value::as_str).unwrap_or("");
                let kind = a.get("type").and_then(Value::as_str).unwrap_or("string");
                let mut map = vec![
                    pair("name", Reply::bulk(name.to_ascii_lowercase())),
                    pair("type", Reply::bulk(kind)),
                ];
                if let Some(i) = a.get("key_spec_index").and_then(Value::as_i64) {
                    map.push(pair("key_spec_index", Reply::Int(i)));
                }
                if let Some(t) = a
                    .get("token")
                    .and_then(Value::as_str)
                    .filter(|t| !t.is_empty())
                {
                    map.push(pair("token", Reply::bulk(t.to_ascii_uppercase())));
                }
                field_of(&mut map, a, "summary");
                field_of(&mut map, a, "since");
                field_of(&mut map, a, "deprecated_since");
                let flags: Vec<String> = ["optional", "multiple", "multiple_token"]
                    .iter()
                    .filter(|f| a.get(**f).and_then(Value::as_bool).unwrap_or(false))
                    .map(|f| f.to_string())
                    .collect();
                if !flags.is_empty() {
                    map.push(pair("flags", simple_set(flags)));
                }
                if matches!(kind, "oneof" | "block") {
                    let subs = a.get("arguments").and_then(Value::as_array);
                    map.push(pair("arguments", arguments(subs.map_or(&[], |s| s))));
                }
                Reply::Map(map)
            })
            .collect(),
    )
}
