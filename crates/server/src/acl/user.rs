//! One ACL user: enabled or not, its passwords (SHA-256 hashes, never the
//! passwords themselves, as Redis keeps them) or `nopass`, and its
//! selectors (the root one first). `ACL SETUSER`'s rules are applied to a
//! copy and the copy replaces the user only if every rule was valid
//! (`ACLStringSetUser`), so a bad rule changes nothing.
//!
//! A value type: the users table (`acl::Acl`) owns the users.

use sha2::{Digest, Sha256};

use super::selector::{Denied, KeyCache, RuleError, Selector};
use crate::acl::catalog::Command;

/// The users by name.
pub type Users = std::collections::BTreeMap<String, std::sync::Arc<User>>;

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct User {
    pub name: String,
    pub enabled: bool,
    pub nopass: bool,
    /// `skip-sanitize-payload` (false) or `sanitize-payload` (true), if
    /// either was given.
    pub sanitize_payload: Option<bool>,
    /// Hex SHA-256 of each password, in the order they were added.
    pub passwords: Vec<String>,
    /// The root selector first, then the `(...)` ones.
    pub selectors: Vec<Selector>,
}

/// The hex SHA-256 of a password, as `ACL GETUSER` shows it.
pub fn hash_password(password: &[u8]) -> String {
    Sha256::digest(password)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn valid_hash(hash: &str) -> bool {
    hash.len() == 64
        && hash
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

impl User {
    /// A new user: off, no password, no permission (`ACLCreateUser`).
    pub fn new(name: &str, all_channels: bool) -> User {
        User {
            name: name.to_string(),
            enabled: false,
            nopass: false,
            sanitize_payload: None,
            passwords: Vec::new(),
            selectors: vec![Selector::new(all_channels)],
        }
    }

    /// Redis's `default` user: on, no password, everything allowed.
    pub fn default_user() -> User {
        let mut u = User::new("default", false);
        for rule in ["+@all", "~*", "&*", "on", "nopass"] {
            let _ = u.apply(rule.as_bytes(), false);
        }
        u
    }

    /// True when nothing is refused: checks can be skipped.
    pub fn unrestricted(&self) -> bool {
        self.selectors.iter().any(Selector::unrestricted)
    }

    pub fn root(&mut self) -> &mut Selector {
        &mut self.selectors[0]
    }

    /// Applies one rule (`ACLSetUser`); `all_channels` is
    /// `acl-pubsub-default`, for `reset` and new selectors.
    pub fn apply(&mut self, op: &[u8], all_channels: bool) -> Result<(), RuleError> {
        if op.is_empty() {
            return Ok(());
        }
        let text = String::from_utf8_lossy(op);
        match text.to_ascii_lowercase().as_str() {
            "on" => self.enabled = true,
            "off" => self.enabled = false,
            "skip-sanitize-payload" => self.sanitize_payload = Some(false),
            "sanitize-payload" => self.sanitize_payload = Some(true),
            "nopass" => {
                self.nopass = true;
                self.passwords.clear();
            }
            "resetpass" => {
                self.nopass = false;
                self.passwords.clear();
            }
            "clearselectors" => self.selectors.truncate(1),
            "reset" => self.reset(all_channels),
            _ => return self.apply_other(op, &text, all_channels),
        }
        Ok(())
    }

    fn reset(&mut self, all_channels: bool) {
        self.nopass = false;
        self.passwords.clear();
        self.enabled = false;
        self.sanitize_payload = Some(true);
        self.selectors.truncate(1);
        let root = self.root();
        let _ = root.apply("resetkeys");
        let _ = root.apply(if all_channels {
            "allchannels"
        } else {
            "resetchannels"
        });
        let _ = root.apply("-@all");
    }

    fn apply_other(&mut self, op: &[u8], text: &str, all_channels: bool) -> Result<(), RuleError> {
        match op[0] {
            b'>' => self.add_hash(hash_password(&op[1..])),
            b'#' if valid_hash(&text[1..]) => self.add_hash(text[1..].to_string()),
            b'<' => self.remove_hash(&hash_password(&op[1..]))?,
            b'!' if valid_hash(&text[1..]) => self.remove_hash(&text[1..])?,
            b'#' | b'!' => return Err(RuleError::BadHash),
            b'(' if op.ends_with(b")") => {
                let mut selector = Selector::new(all_channels);
                for rule in split_words(&text[1..text.len() - 1]) {
                    selector.apply(&rule)?;
                }
                self.selectors.push(selector);
            }
            _ => self.root().apply(text)?,
        }
        Ok(())
    }

    fn add_hash(&mut self, hash: String) {
        if !self.passwords.contains(&hash) {
            self.passwords.push(hash);
        }
        self.nopass = false;
    }

    fn remove_hash(&mut self, hash: &str) -> Result<(), RuleError> {
        let at = self.passwords.iter().position(|p| p == hash);
        let at = at.ok_or(RuleError::NoSuchPassword)?;
        self.passwords.remove(at);
        Ok(())
    }

    /// Whether `password` logs in as this user (compared as hashes, whose
    /// equality says nothing of the password's length or prefix).
    pub fn accepts(&self, password: &[u8]) -> bool {
        if !self.enabled {
            return false;
        }
        if self.nopass {
            return true;
        }
        let hashed = hash_password(password);
        self.passwords.iter().fold(false, |found, p| {
            found | constant_time_eq(p.as_bytes(), hashed.as_bytes())
        })
    }

    /// Whether the user may run `argv` (of `cmd`): one selector allowing
    /// it is enough; otherwise the most relevant refusal.
    pub fn check(&self, cmd: Option<&Command>, argv: &[Vec<u8>]) -> Result<(), Denied> {
        let mut keys = KeyCache::default();
        let mut worst = Denied::Command;
        for s in &self.selectors {
            match s.check(cmd, argv, &mut keys) {
                Ok(()) => return Ok(()),
                Err(d) => worst = worst.max(d),
            }
        }
        Err(worst)
    }

    /// Whether one selector both lets `argv` run and reads every key
    /// (`ACLUserCheckCmdWithUnrestrictedKeyAccess`: SORT's BY and GET
    /// patterns name keys no check saw).
    pub fn reads_every_key(&self, cmd: Option<&Command>, argv: &[Vec<u8>]) -> bool {
        let mut keys = KeyCache::default();
        self.selectors
            .iter()
            .any(|s| s.reads_every_key() && s.check(cmd, argv, &mut keys).is_ok())
    }

    /// Whether the user may use channel `name` (`pattern`: a subscribed
    /// pattern, compared literally).
    pub fn channel_allowed(&self, name: &[u8], pattern: bool) -> bool {
        self.selectors
            .iter()
            .any(|s| s.channel_allowed(name, pattern))
    }

    /// The flags as `ACL GETUSER` lists them, in Redis's order.
    pub fn flags(&self) -> Vec<&'static str> {
        let mut flags = vec![if self.enabled { "on" } else { "off" }];
        if self.nopass {
            flags.push("nopass");
        }
        match self.sanitize_payload {
            Some(false) => flags.push("skip-sanitize-payload"),
            Some(true) => flags.push("sanitize-payload"),
            None => {}
        }
        flags
    }

    /// The user in `ACL LIST`'s and the ACL file's form (without `user
    /// NAME`).
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = self.flags().iter().map(|f| f.to_string()).collect();
        parts.extend(self.passwords.iter().map(|p| format!("#{p}")));
        parts.push(self.selectors[0].describe());
        parts.extend(
            self.selectors[1..]
                .iter()
                .map(|s| format!("({})", s.describe())),
        );
        parts.join(" ")
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// A selector's rules between its parentheses: words split on spaces.
fn split_words(s: &str) -> Vec<String> {
    s.split_ascii_whitespace().map(str::to_string).collect()
}

/// `ACL SETUSER`'s and the ACL file's arguments with a `(...)` selector
/// written over several words joined into one (`ACLMergeSelectorArguments`);
/// `Err(i)`: the parenthesis opened at argument `i` is never closed.
pub fn merge_selectors(args: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, usize> {
    let mut merged = Vec::new();
    let mut open: Option<(usize, Vec<u8>)> = None;
    for (i, op) in args.iter().enumerate() {
        if let Some((_, selector)) = open.as_mut() {
            selector.push(b' ');
            selector.extend_from_slice(op);
            if op.ends_with(b")") {
                merged.push(open.take().map(|(_, s)| s).unwrap_or_default());
            }
            continue;
        }
        if op.first() == Some(&b'(') && !op.ends_with(b")") {
            open = Some((i, op.clone()));
            continue;
        }
        merged.push(op.clone());
    }
    match open {
        Some((i, _)) => Err(i),
        None => Ok(merged),
    }
}
