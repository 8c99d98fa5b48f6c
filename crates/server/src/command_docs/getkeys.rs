//! `COMMAND GETKEYS` and `COMMAND GETKEYSANDFLAGS`: the keys of a full
//! command line, found as Redis 7.0 finds them (`db.c`'s
//! `getKeysFromCommandWithSpecs`): from the command's key specs when they
//! are all usable and their flags fixed; else with the code Redis keeps for
//! the command (`sortGetKeys`, `setGetKeys`, `genericGetKeys`, ...), which
//! the same errors and edge cases follow here.

use serde_json::Value;

use super::info::{has, int, key_flag_set, spec_flags, specs_of};
use super::table::lookup_command;
use crate::commands::{fail, Outcome};
use crate::resp::Reply;

/// A key's position in the command line and its key spec flags (the
/// JSON's names).
type Key = (usize, Vec<&'static str>);

/// `COMMAND GETKEYS cmd args...` (`with_flags`: `GETKEYSANDFLAGS`).
pub fn getkeys(a: &[Vec<u8>], with_flags: bool) -> Outcome {
    let argv = &a[2..];
    let Some((_, d)) = lookup_command(argv) else {
        return Err(fail("ERR Invalid command specified"));
    };
    let specs = specs_of(d);
    let proc = d.get("get_keys_function").and_then(Value::as_str);
    if proc.is_none() && !specs.iter().any(|s| !has(s, "flags", "NOT_KEY")) {
        return Err(fail("ERR The command has no key arguments"));
    }
    let arity = int(d.get("arity"));
    let n = argv.len() as i64;
    if (arity > 0 && arity != n) || n < -arity {
        return Err(fail(
            "ERR Invalid number of arguments specified for command",
        ));
    }
    let keys = keys_of(&specs, proc, argv);
    if keys.is_empty() {
        return match has(d, "command_flags", "NO_MANDATORY_KEYS") {
            true => Ok(Reply::Array(Vec::new())),
            false => Err(fail("ERR Invalid arguments specified for command")),
        };
    }
    Ok(Reply::Array(
        keys.into_iter()
            .map(|(pos, flags)| {
                let key = Reply::Bulk(argv[pos].clone());
                match with_flags {
                    false => key,
                    true => Reply::Array(vec![key, key_flag_set(&flags)]),
                }
            })
            .collect(),
    ))
}

/// The keys of a full command line with the access each needs, as ACL
/// key patterns check them (`ACLSelectorCheckKey`): (position, read,
/// write). Read is the spec's `ACCESS`; write any of `INSERT`, `DELETE`,
/// `UPDATE`.
pub fn key_access(argv: &[Vec<u8>]) -> Vec<(usize, bool, bool)> {
    let Some((_, d)) = lookup_command(argv) else {
        return Vec::new();
    };
    let proc = d.get("get_keys_function").and_then(Value::as_str);
    keys_of(&specs_of(d), proc, argv)
        .into_iter()
        .map(|(pos, flags)| {
            let has = |f: &str| flags.contains(&f);
            let write = has("INSERT") || has("DELETE") || has("UPDATE");
            (pos, has("ACCESS"), write)
        })
        .collect()
}

/// The keys: by the specs if they serve, else by the command's own code.
fn keys_of(specs: &[&Value], proc: Option<&str>, argv: &[Vec<u8>]) -> Vec<Key> {
    let variable = specs.iter().any(|s| has(s, "flags", "VARIABLE_FLAGS"));
    if !variable && specs.iter().any(|s| !has(s, "flags", "NOT_KEY")) {
        if let Some(keys) = by_specs(specs, argv) {
            return keys;
        }
    }
    proc.map_or_else(Vec::new, |p| by_proc(p, argv))
}

/// `getKeysUsingKeySpecs`; `None` where a spec cannot be followed.
fn by_specs(specs: &[&Value], argv: &[Vec<u8>]) -> Option<Vec<Key>> {
    let argc = argv.len() as i64;
    let mut keys = Vec::new();
    for spec in specs.iter().filter(|s| !has(s, "flags", "NOT_KEY")) {
        let flags = spec_flags(spec);
        let Some(first) = begin(spec.get("begin_search")?, argv)? else {
            continue; // a keyword not found: this spec has no keys here
        };
        let find = spec.get("find_keys")?;
        let (first, last, step) = if let Some(r) = find.get("range") {
            let (lastkey, limit) = (int(r.get("lastkey")), int(r.get("limit")));
            let last = match (lastkey >= 0, limit) {
                (true, _) => first + lastkey,
                (false, 0) => argc + lastkey,
                (false, limit) => first + ((argc - first) / limit + lastkey),
            };
            (first, last, int(r.get("step")))
        } else if let Some(k) = find.get("keynum") {
            let idx = first + int(k.get("keynumidx"));
            let count = argv
                .get(usize::try_from(idx).ok()?)
                .and_then(|n| crate::commands::canonical_int(n))
                .filter(|&n| n >= 0)?;
            let first = first + int(k.get("firstkey"));
            (first, first + count - 1, int(k.get("step")))
        } else {
            return None;
        };
        if last >= argc || last < first || first >= argc || step < 1 {
            return None;
        }
        let positions = (first as usize..=last as usize).step_by(step as usize);
        keys.extend(positions.map(|i| (i, flags.clone())));
        if has(spec, "flags", "INCOMPLETE") {
            return None;
        }
    }
    Some(keys)
}

/// Where a spec's keys begin: `Some(None)` when its keyword is absent,
/// `None` when the spec cannot be followed.
fn begin(search: &Value, argv: &[Vec<u8>]) -> Option<Option<i64>> {
    if let Some(index) = search.get("index") {
        return Some(Some(int(index.get("pos"))));
    }
    let k = search.get("keyword")?;
    let keyword = k.get("keyword").and_then(Value::as_str)?.as_bytes();
    let argc = argv.len() as i64;
    let from = int(k.get("startfrom"));
    let (start, end) = match from > 0 {
        true => (from, argc - 1),
        false => (argc + from, 1),
    };
    let mut i = start;
    while i != end {
        if i >= argc || i < 1 {
            break;
        }
        if argv[i as usize].eq_ignore_ascii_case(keyword) {
            return Some(Some(i + 1));
        }
        i += if start <= end { 1 } else { -1 };
    }
    Some(None)
}

/// Redis's own key-finding code for the commands that have it.
fn by_proc(proc: &str, argv: &[Vec<u8>]) -> Vec<Key> {
    let word = |i: usize, w: &str| {
        argv.get(i)
            .is_some_and(|a| a.eq_ignore_ascii_case(w.as_bytes()))
    };
    match proc {
        "evalGetKeys" | "functionGetKeys" | "blmpopGetKeys" => generic(argv, 0, 2, 3),
        "zunionInterDiffGetKeys" | "lmpopGetKeys" | "zmpopGetKeys" | "sintercardGetKeys" => {
            generic(argv, 0, 1, 2)
        }
        "zunionInterDiffStoreGetKeys" => generic(argv, 1, 2, 3),
        "sortROGetKeys" => vec![(1, vec!["RO", "ACCESS"])],
        "migrateGetKeys" => migrate(argv),
        "sortGetKeys" => {
            let mut keys = vec![(1, vec!["RO", "ACCESS"])];
            let mut store = None;
            let mut i = 2;
            while i < argv.len() {
                // Redis checks STORE only beside its first option name.
                if word(i, "limit") {
                    i += 2;
                } else if word(i, "store") && i + 1 < argv.len() {
                    store = Some(i + 1);
                } else if word(i, "get") || word(i, "by") {
                    i += 1;
                }
                i += 1;
            }
            keys.extend(store.map(|s| (s, vec!["OW", "UPDATE"])));
            keys
        }
        "setGetKeys" => {
            let get = (3..argv.len()).any(|i| word(i, "get"));
            vec![(
                1,
                if get {
                    vec!["RW", "ACCESS", "UPDATE"]
                } else {
                    vec!["OW", "UPDATE"]
                },
            )]
        }
        "bitfieldGetKeys" => vec![(1, bitfield_flags(argv))],
        "xreadGetKeys" => xread(argv),
        "georadiusGetKeys" => {
            let mut stored = None;
            let mut i = 5;
            while i < argv.len() {
                if (word(i, "store") || word(i, "storedist")) && i + 1 < argv.len() {
                    stored = Some(i + 1);
                    i += 1;
                }
                i += 1;
            }
            std::iter::once(1)
                .chain(stored)
                .map(|p| (p, Vec::new()))
                .collect()
        }
        _ => Vec::new(),
    }
}

/// `genericGetKeys`: a key count at `count_at`, the keys from `first_at`,
/// and a destination at `store_at` (0: none) listed last.
fn generic(argv: &[Vec<u8>], store_at: usize, count_at: usize, first_at: usize) -> Vec<Key> {
    let num = argv.get(count_at).map_or(0, |n| atoi(n));
    if num < 1 || num > (argv.len() as i64 - first_at as i64) {
        return Vec::new();
    }
    let keys = (0..num as usize).map(|i| (first_at + i, Vec::new()));
    keys.chain((store_at > 0).then_some((store_at, Vec::new())))
        .collect()
}

/// `migrateGetKeys`: the key at 3, or those after `KEYS` (past the
/// options with values, `AUTH pass` and `AUTH2 user pass`) when it is
/// empty; none when both are given (MIGRATE's own syntax error).
fn migrate(argv: &[Vec<u8>]) -> Vec<Key> {
    let flags = || vec!["RW", "ACCESS", "DELETE"];
    let (mut first, mut num) = (3, 1usize.min(argv.len().saturating_sub(3)));
    let mut i = 6;
    while i < argv.len() {
        let word = argv[i].to_ascii_lowercase();
        if word == b"keys" {
            match argv[3].is_empty() {
                true => (first, num) = (i + 1, argv.len() - i - 1),
                false => num = 0,
            }
            break;
        }
        i += match word.as_slice() {
            b"auth" => 2,
            b"auth2" => 3,
            _ => 1,
        };
    }
    (first..first + num).map(|pos| (pos, flags())).collect()
}

/// C's `atoi`: leading spaces, a sign, digits; 0 when there are none.
fn atoi(s: &[u8]) -> i64 {
    let s = std::str::from_utf8(s).unwrap_or("").trim_start();
    let (sign, digits) = match s.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, s.strip_prefix('+').unwrap_or(s)),
    };
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits[..end]
        .parse::<i64>()
        .map_or(0, |v| sign * v.min(i64::from(i32::MAX)))
}

fn bitfield_flags(argv: &[Vec<u8>]) -> Vec<&'static str> {
    let word = |i: usize, w: &str| argv[i].eq_ignore_ascii_case(w.as_bytes());
    let mut i = 2;
    while i < argv.len() {
        let rest = argv.len() - i - 1;
        if word(i, "get") && rest >= 2 {
            i += 2;
        } else if (word(i, "set") || word(i, "incrby")) && rest >= 3 {
            return vec!["RW", "ACCESS", "UPDATE"];
        } else if word(i, "overflow") && rest >= 1 {
            i += 1;
        } else {
            return vec!["RW", "ACCESS", "UPDATE"];
        }
        i += 1;
    }
    vec!["RO", "ACCESS"]
}

fn xread(argv: &[Vec<u8>]) -> Vec<Key> {
    let word = |i: usize, w: &str| argv[i].eq_ignore_ascii_case(w.as_bytes());
    let mut streams = None;
    let mut i = 1;
    while i < argv.len() {
        if word(i, "block") || word(i, "count") {
            i += 1;
        } else if word(i, "group") {
            i += 2;
        } else if word(i, "streams") {
            streams = Some(i);
            break;
        } else if !word(i, "noack") {
            break;
        }
        i += 1;
    }
    let Some(at) = streams else {
        return Vec::new();
    };
    let num = argv.len() - at - 1;
    if num == 0 || !num.is_multiple_of(2) {
        return Vec::new();
    }
    (at + 1..argv.len() - num / 2)
        .map(|p| (p, Vec::new()))
        .collect()
}
