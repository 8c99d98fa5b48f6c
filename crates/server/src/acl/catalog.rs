//! The commands ACL rules name: every command and subcommand of Redis's
//! own table (`command_docs`' `commands.json`, Redis 7.0.15's, including
//! those slsm does not serve, so a rule written for Redis is accepted and
//! described back as Redis describes it: `command_docs::every_command`),
//! each with an id (its bit in a
//! selector's bitmap) and its ACL categories, those Redis derives from the
//! flags included (`command_docs::categories`).
//!
//! Owns nothing mutable: built once, read by every check. Ids follow name
//! order, a container's subcommands right after it, which is also the
//! order rules are described in (Redis walks a hash table; its order is
//! not stable, ours is).

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::command_docs::{self, CATEGORIES};

/// Bits of a selector's command bitmap; the last one is set only by
/// `+@all` (commands added later, Redis's "future commands").
pub const BITS: usize = 512;
pub const WORDS: usize = BITS / 64;
pub const FUTURE: usize = BITS - 1;

/// One command or subcommand.
pub struct Command {
    /// Redis's full name: `get`, `client|kill`.
    pub name: &'static str,
    pub id: usize,
    /// Bit `i` set: in `CATEGORIES[i]`.
    pub categories: u32,
    pub parent: Option<usize>,
    pub subcommands: Vec<usize>,
    /// Runs before authentication (`AUTH`, `HELLO`): no rule refuses it.
    pub no_auth: bool,
    pub has_keys: bool,
    /// Redis's arity: the exact count of words, or at least `-arity`.
    pub arity: i64,
}

pub struct Catalog {
    pub commands: Vec<Command>,
    by_name: HashMap<&'static str, usize>,
}

/// The catalog, built on first use.
pub fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(build)
}

fn build() -> Catalog {
    let mut all: Vec<_> = command_docs::every_command().collect();
    all.sort_by_key(|(name, _)| *name);
    let mut catalog = Catalog {
        commands: Vec::new(),
        by_name: HashMap::new(),
    };
    for &(name, d) in all.iter().filter(|(name, _)| !name.contains('|')) {
        let id = catalog.push(name, d, None);
        let prefix = format!("{name}|");
        for &(sub, d) in all.iter().filter(|(sub, _)| sub.starts_with(&prefix)) {
            let sub_id = catalog.push(sub, d, Some(id));
            catalog.commands[id].subcommands.push(sub_id);
        }
    }
    catalog
}

impl Catalog {
    fn push(&mut self, name: &'static str, d: &serde_json::Value, parent: Option<usize>) -> usize {
        let id = self.commands.len();
        let mut categories = 0u32;
        for c in command_docs::categories(d) {
            if let Some(i) = category(c) {
                categories |= 1 << i;
            }
        }
        let flags = d.get("command_flags").and_then(|f| f.as_array());
        let no_auth = flags.is_some_and(|f| f.iter().any(|v| v == "NO_AUTH"));
        let has_keys = d.get("key_specs").is_some() || d.get("get_keys_function").is_some();
        self.commands.push(Command {
            name,
            id,
            categories,
            parent,
            subcommands: Vec::new(),
            no_auth,
            has_keys,
            arity: d.get("arity").and_then(|a| a.as_i64()).unwrap_or(-1),
        });
        self.by_name.insert(name, id);
        id
    }

    /// The command `name` (a full name, `config|get`), any case.
    pub fn find(&self, name: &str) -> Option<&Command> {
        let lower = name.to_ascii_lowercase();
        self.by_name
            .get(lower.as_str())
            .map(|&id| &self.commands[id])
    }

    /// The command a command line runs: a container's subcommand by its
    /// second word (the container itself when that names none).
    pub fn of_request(&self, argv: &[Vec<u8>]) -> Option<&Command> {
        let name = String::from_utf8_lossy(argv.first()?);
        let cmd = self.find(&name)?;
        match argv.get(1) {
            Some(sub) if !cmd.subcommands.is_empty() => {
                let full = format!("{}|{}", cmd.name, String::from_utf8_lossy(sub));
                Some(self.find(&full).unwrap_or(cmd))
            }
            _ => Some(cmd),
        }
    }

    /// The commands of category bit `category`, subcommands included.
    pub fn in_category(&self, category: usize) -> impl Iterator<Item = &Command> {
        self.commands
            .iter()
            .filter(move |c| c.categories & (1 << category) != 0)
    }
}

/// The index of category `name` (`string`, any case) in `CATEGORIES`.
pub fn category(name: &str) -> Option<usize> {
    CATEGORIES.iter().position(|c| c.eq_ignore_ascii_case(name))
}
