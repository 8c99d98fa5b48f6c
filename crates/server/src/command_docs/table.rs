//! Redis's command table as `commands.json` and `unserved.json` hold it:
//! looking a command up by name or by command line, listing commands and
//! a container's subcommands.

use std::sync::OnceLock;

use serde_json::{Map, Value};

/// Full name (`get`, `config|get`) to Redis's description.
fn table() -> &'static Map<String, Value> {
    static TABLE: OnceLock<Map<String, Value>> = OnceLock::new();
    TABLE.get_or_init(|| serde_json::from_str(include_str!("commands.json")).unwrap_or_default())
}

/// Redis's descriptions of the commands slsm does not serve (Redis
/// 7.0.15's, without their arguments: `unserved.json`, written by the
/// same script), which ACL rules may still name.
fn unserved() -> &'static Map<String, Value> {
    static TABLE: OnceLock<Map<String, Value>> = OnceLock::new();
    TABLE.get_or_init(|| serde_json::from_str(include_str!("unserved.json")).unwrap_or_default())
}

/// Every command Redis 7.0 has, served or not, with its description:
/// the ACL's catalog (subcommands included, as `container|sub`).
pub fn every_command() -> impl Iterator<Item = (&'static str, &'static Value)> {
    table()
        .iter()
        .chain(unserved().iter())
        .map(|(n, d)| (n.as_str(), d))
}

/// Every top-level command: name and description.
pub fn top_level() -> impl Iterator<Item = (&'static str, &'static Value)> {
    table()
        .iter()
        .filter(|(name, _)| !name.contains('|'))
        .map(|(n, d)| (n.as_str(), d))
}

/// The subcommands of `name`.
pub fn subcommands(name: &str) -> Vec<(&'static str, &'static Value)> {
    let prefix = format!("{name}|");
    table()
        .iter()
        .filter(|(full, _)| full.starts_with(&prefix))
        .map(|(n, d)| (n.as_str(), d))
        .collect()
}

/// The command a command line runs, as Redis's `lookupCommand` finds it:
/// a container's subcommand by the second word.
pub fn lookup_command(argv: &[Vec<u8>]) -> Option<(&'static str, &'static Value)> {
    let base = String::from_utf8_lossy(argv.first()?).to_ascii_lowercase();
    if let Some((name, d)) = unserved().get_key_value(&base) {
        return Some((name.as_str(), d));
    }
    let (name, d) = table().get_key_value(&base)?;
    match argv.get(1) {
        Some(sub) if !subcommands(name).is_empty() => {
            let sub = String::from_utf8_lossy(sub).to_ascii_lowercase();
            lookup(format!("{name}|{sub}").as_bytes())
        }
        _ => Some((name.as_str(), d)),
    }
}

/// The command `name` names (`get`, `CONFIG|GET`), any case.
pub fn lookup(name: &[u8]) -> Option<(&'static str, &'static Value)> {
    let name = String::from_utf8_lossy(name).to_ascii_lowercase();
    table().get_key_value(&name).map(|(n, d)| (n.as_str(), d))
}
