//! One ACL selector: which commands (a bitmap over the catalog, plus the
//! first arguments allowed of an otherwise refused command), which keys
//! (patterns, each for reading, writing or both) and which channels a
//! user may use. A user has a root selector and any number of `(...)`
//! ones; a command runs if one of them allows it. Rules and their
//! description follow Redis 7.0's `acl.c` (`ACLSetSelector`,
//! `ACLSelectorCheckCmd`, `ACLDescribeSelectorCommandRules`), so a rule
//! set written for Redis means the same here and reads back the same.
//!
//! A value type: no locks, no I/O; the users table (`acl::Acl`) owns the
//! selectors and replaces a user whole when its rules change.

use std::collections::BTreeMap;

use super::catalog::{self, catalog, Command, WORDS};
pub use super::rule_error::RuleError;
use crate::glob;

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KeyPattern {
    pub pattern: Vec<u8>,
    pub read: bool,
    pub write: bool,
}

impl KeyPattern {
    pub(super) fn describe(&self) -> String {
        let prefix = match (self.read, self.write) {
            (true, false) => "%R~",
            (false, true) => "%W~",
            _ => "~",
        };
        format!("{prefix}{}", String::from_utf8_lossy(&self.pattern))
    }
}

/// Why a selector refused a command (ordered as Redis's `ACL_DENIED_*`,
/// which picks the largest of its selectors' refusals to report), with
/// the argument that was refused.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub enum Denied {
    Command,
    Key(usize),
    Channel(usize),
}

impl Denied {
    fn rank(self) -> (u8, usize) {
        match self {
            Denied::Command => (1, 0),
            Denied::Key(i) => (2, i),
            Denied::Channel(i) => (4, i),
        }
    }

    /// The more relevant of two refusals: the stronger reason, then the
    /// later argument.
    pub fn max(self, other: Denied) -> Denied {
        match other.rank() > self.rank() {
            true => other,
            false => self,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Selector {
    allowed: [u64; WORDS],
    pub all_commands: bool,
    pub all_keys: bool,
    pub all_channels: bool,
    /// Command id to the first arguments allowed of it (`+select|0`).
    pub(super) first_args: BTreeMap<usize, Vec<String>>,
    pub keys: Vec<KeyPattern>,
    pub channels: Vec<Vec<u8>>,
}

impl Selector {
    /// A selector that allows nothing (all channels if
    /// `acl-pubsub-default` is `allchannels`).
    pub fn new(all_channels: bool) -> Selector {
        Selector {
            allowed: [0; WORDS],
            all_commands: false,
            all_keys: false,
            all_channels,
            first_args: BTreeMap::new(),
            keys: Vec::new(),
            channels: Vec::new(),
        }
    }

    pub(super) fn bit(&self, id: usize) -> bool {
        self.allowed[id / 64] & (1 << (id % 64)) != 0
    }

    fn set_bit(&mut self, id: usize, on: bool) {
        match on {
            true => self.allowed[id / 64] |= 1 << (id % 64),
            false => {
                self.allowed[id / 64] &= !(1 << (id % 64));
                self.all_commands = false;
            }
        }
    }

    /// Allows or refuses a command and, for a container, its subcommands.
    pub(super) fn change(&mut self, cmd: &Command, allow: bool) {
        self.set_bit(cmd.id, allow);
        self.first_args.remove(&cmd.id);
        for &sub in &cmd.subcommands {
            self.set_bit(sub, allow);
        }
    }

    pub(super) fn change_category(&mut self, category: usize, allow: bool) {
        for cmd in catalog().in_category(category) {
            self.change(cmd, allow);
        }
    }

    /// True when both allow the same commands (and first arguments).
    pub fn same_commands(&self, other: &Selector) -> bool {
        self.allowed == other.allowed && self.first_args == other.first_args
    }

    /// True when the selector lets through everything of every kind.
    pub fn unrestricted(&self) -> bool {
        self.all_commands && self.all_keys && self.all_channels
    }

    /// Applies one rule (`+get`, `-@string`, `~key:*`, `&chan`, ...).
    pub fn apply(&mut self, op: &str) -> Result<(), RuleError> {
        let lower = op.to_ascii_lowercase();
        match lower.as_str() {
            "allkeys" | "~*" => {
                self.all_keys = true;
                self.keys.clear();
            }
            "resetkeys" => {
                self.all_keys = false;
                self.keys.clear();
            }
            "allchannels" | "&*" => {
                self.all_channels = true;
                self.channels.clear();
            }
            "resetchannels" => {
                self.all_channels = false;
                self.channels.clear();
            }
            "allcommands" | "+@all" => {
                self.allowed = [u64::MAX; WORDS];
                self.all_commands = true;
                self.first_args.clear();
            }
            "nocommands" | "-@all" => {
                self.allowed = [0; WORDS];
                self.all_commands = false;
                self.first_args.clear();
            }
            _ => return self.apply_pattern_or_command(op),
        }
        Ok(())
    }

    fn apply_pattern_or_command(&mut self, op: &str) -> Result<(), RuleError> {
        let bytes = op.as_bytes();
        match bytes.first() {
            Some(b'~' | b'%') => self.add_key_pattern(op),
            Some(b'&') => self.add_channel(&op[1..]),
            Some(b'+') if bytes.get(1) == Some(&b'@') => self.category_rule(&op[2..], true),
            Some(b'-') if bytes.get(1) == Some(&b'@') => self.category_rule(&op[2..], false),
            Some(b'+') => self.allow_command(&op[1..]),
            Some(b'-') => {
                let cmd = catalog().find(&op[1..]).ok_or(RuleError::Unknown)?;
                self.change(cmd, false);
                Ok(())
            }
            _ => Err(RuleError::Syntax),
        }
    }

    fn category_rule(&mut self, name: &str, allow: bool) -> Result<(), RuleError> {
        let category = catalog::category(name).ok_or(RuleError::Unknown)?;
        self.change_category(category, allow);
        Ok(())
    }

    fn add_key_pattern(&mut self, op: &str) -> Result<(), RuleError> {
        if self.all_keys {
            return Err(RuleError::KeyAfterAll);
        }
        let (read, write, pattern) = match op.strip_prefix('~') {
            Some(pattern) => (true, true, pattern),
            None => key_permissions(&op[1..])?,
        };
        if has_spaces(pattern) {
            return Err(RuleError::Syntax);
        }
        let pattern = pattern.as_bytes().to_vec();
        match self.keys.iter_mut().find(|k| k.pattern == pattern) {
            Some(existing) => {
                existing.read |= read;
                existing.write |= write;
            }
            None => self.keys.push(KeyPattern {
                pattern,
                read,
                write,
            }),
        }
        Ok(())
    }

    fn add_channel(&mut self, pattern: &str) -> Result<(), RuleError> {
        if self.all_channels {
            return Err(RuleError::ChannelAfterAll);
        }
        if has_spaces(pattern) {
            return Err(RuleError::Syntax);
        }
        if !self.channels.iter().any(|c| c == pattern.as_bytes()) {
            self.channels.push(pattern.as_bytes().to_vec());
        }
        Ok(())
    }

    /// `+cmd`, `+container|sub`, or `+cmd|first-arg`.
    fn allow_command(&mut self, name: &str) -> Result<(), RuleError> {
        let Some((base, sub)) = name.rsplit_once('|') else {
            let cmd = catalog().find(name).ok_or(RuleError::Unknown)?;
            self.change(cmd, true);
            return Ok(());
        };
        let cmd = catalog().find(base).ok_or(RuleError::Unknown)?;
        if cmd.parent.is_some() {
            return Err(RuleError::FirstArgOfSubcommand);
        }
        if sub.is_empty() {
            return Err(RuleError::Syntax);
        }
        if !cmd.subcommands.is_empty() {
            let sub = catalog().find(name).ok_or(RuleError::Unknown)?;
            self.change(sub, true);
            return Ok(());
        }
        if self.bit(cmd.id) {
            // Already allowed whole: a first argument adds nothing (and a
            // later `-cmd` would drop it).
            return Ok(());
        }
        let args = self.first_args.entry(cmd.id).or_default();
        if !args.iter().any(|a| a.eq_ignore_ascii_case(sub)) {
            args.push(sub.to_string());
        }
        Ok(())
    }

    /// Whether this selector lets `argv` (of `cmd`, `None` for a command
    /// outside Redis's table) run: the command, then its keys, then its
    /// channels.
    pub fn check(
        &self,
        cmd: Option<&Command>,
        argv: &[Vec<u8>],
        keys: &mut KeyCache,
    ) -> Result<(), Denied> {
        self.check_command(cmd, argv)?;
        if !self.all_keys && cmd.is_some_and(|c| c.has_keys) {
            for &(pos, read, write) in keys.get(argv) {
                if !self.key_allowed(&argv[pos], read, write) {
                    return Err(Denied::Key(pos));
                }
            }
        }
        if !self.all_channels {
            for (pos, pattern) in channels_of(argv) {
                if !self.channel_allowed(&argv[pos], pattern) {
                    return Err(Denied::Channel(pos));
                }
            }
        }
        Ok(())
    }

    fn check_command(&self, cmd: Option<&Command>, argv: &[Vec<u8>]) -> Result<(), Denied> {
        if self.all_commands {
            return Ok(());
        }
        let Some(cmd) = cmd else {
            return Err(Denied::Command);
        };
        if cmd.no_auth || self.bit(cmd.id) {
            return Ok(());
        }
        let first = argv.get(if cmd.parent.is_some() { 2 } else { 1 });
        let allowed = self.first_args.get(&cmd.id);
        match (first, allowed) {
            (Some(arg), Some(args))
                if args.iter().any(|a| a.as_bytes().eq_ignore_ascii_case(arg)) =>
            {
                Ok(())
            }
            _ => Err(Denied::Command),
        }
    }

    /// Whether every key may be read (`~*`, `%R~*`, `allkeys`).
    pub fn reads_every_key(&self) -> bool {
        self.all_keys || self.keys.iter().any(|p| p.read && p.pattern == b"*")
    }

    /// Whether a key may be used for reading and/or writing.
    pub fn key_allowed(&self, key: &[u8], read: bool, write: bool) -> bool {
        self.all_keys
            || self
                .keys
                .iter()
                .any(|p| (p.read || !read) && (p.write || !write) && glob::matches(&p.pattern, key))
    }

    /// A channel (`pattern`: as `PSUBSCRIBE` names it, compared literally).
    pub fn channel_allowed(&self, channel: &[u8], pattern: bool) -> bool {
        self.all_channels
            || self.channels.iter().any(|c| match pattern {
                true => c == channel,
                false => glob::matches(c, channel),
            })
    }
}

/// `%R~`, `%W~`, `%RW~`: the permissions and the pattern after them (an
/// `%RW` with no `~` is an empty pattern, as Redis takes it).
fn key_permissions(spec: &str) -> Result<(bool, bool, &str), RuleError> {
    let (mut read, mut write) = (false, false);
    for (i, c) in spec.char_indices() {
        match c.to_ascii_uppercase() {
            'R' if !read => read = true,
            'W' if !write => write = true,
            '~' if read || write => return Ok((read, write, &spec[i + 1..])),
            _ => return Err(RuleError::Syntax),
        }
    }
    match read || write {
        true => Ok((read, write, "")),
        false => Err(RuleError::Syntax),
    }
}

/// Redis refuses spaces and NULs in names and patterns, so a rule reads
/// back as the words it was written in.
pub fn has_spaces(s: &str) -> bool {
    s.bytes().any(|b| b.is_ascii_whitespace() || b == 0)
}

/// The channels a command line names, with whether each is a pattern
/// (`getChannelsFromCommand`, the publishing and subscribing commands:
/// unsubscribing needs no permission).
fn channels_of(argv: &[Vec<u8>]) -> Vec<(usize, bool)> {
    let name = String::from_utf8_lossy(&argv[0]).to_ascii_lowercase();
    match name.as_str() {
        "publish" | "spublish" if argv.len() > 1 => vec![(1, false)],
        "subscribe" | "ssubscribe" => (1..argv.len()).map(|i| (i, false)).collect(),
        "psubscribe" => (1..argv.len()).map(|i| (i, true)).collect(),
        _ => Vec::new(),
    }
}

/// A command line's keys, found once for all of a user's selectors.
#[derive(Default)]
pub struct KeyCache {
    keys: Option<Vec<(usize, bool, bool)>>,
}

impl KeyCache {
    fn get(&mut self, argv: &[Vec<u8>]) -> &[(usize, bool, bool)] {
        self.keys
            .get_or_insert_with(|| crate::command_docs::key_access(argv))
    }
}
