//! The ACL log (`ACL LOG`): refused commands, keys, channels and logins,
//! newest first, a repeat of a recent entry counted on it rather than
//! added (`addACLLogEntry`), at most `acllog-max-len` entries.
//!
//! Owned by `acl::Acl`, behind its lock.

use std::collections::VecDeque;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::resp::Reply;

/// Entries of the same event this close in time are one entry.
const GROUPING_MS: u64 = 60_000;
/// How many recent entries a new one is compared with.
const SCAN: usize = 10;

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    Command,
    Key,
    Channel,
    Auth,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Context {
    Toplevel,
    Multi,
    Lua,
}

pub struct Entry {
    count: u64,
    reason: Reason,
    context: Context,
    object: String,
    username: String,
    created_ms: u64,
    client_info: String,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Entry {
    pub fn new(reason: Reason, context: Context, object: String, username: String) -> Entry {
        Entry {
            count: 1,
            reason,
            context,
            object,
            username,
            created_ms: now_ms(),
            client_info: String::new(),
        }
    }

    fn same_event(&self, other: &Entry) -> bool {
        self.reason == other.reason
            && self.context == other.context
            && self.created_ms.abs_diff(other.created_ms) <= GROUPING_MS
            && self.object == other.object
            && self.username == other.username
    }

    fn reply(&self, now: u64) -> Reply {
        let reason = match self.reason {
            Reason::Command => "command",
            Reason::Key => "key",
            Reason::Channel => "channel",
            Reason::Auth => "auth",
        };
        let context = match self.context {
            Context::Toplevel => "toplevel",
            Context::Multi => "multi",
            Context::Lua => "lua",
        };
        let age = now.saturating_sub(self.created_ms) as f64 / 1000.0;
        Reply::Map(vec![
            (Reply::bulk("count"), Reply::Int(self.count as i64)),
            (Reply::bulk("reason"), Reply::bulk(reason)),
            (Reply::bulk("context"), Reply::bulk(context)),
            (Reply::bulk("object"), Reply::bulk(self.object.as_str())),
            (Reply::bulk("username"), Reply::bulk(self.username.as_str())),
            (Reply::bulk("age-seconds"), Reply::Double(age)),
            (
                Reply::bulk("client-info"),
                Reply::bulk(self.client_info.as_str()),
            ),
        ])
    }
}

pub struct Log {
    entries: VecDeque<Entry>,
    max: usize,
}

impl Default for Log {
    fn default() -> Log {
        Log {
            entries: VecDeque::new(),
            max: 128,
        }
    }
}

impl Log {
    pub fn add(&mut self, mut entry: Entry, client_info: String) {
        entry.client_info = client_info;
        let scan = self.entries.len().min(SCAN);
        if let Some(i) = (0..scan).find(|&i| self.entries[i].same_event(&entry)) {
            if let Some(mut found) = self.entries.remove(i) {
                found.count += 1;
                found.created_ms = entry.created_ms;
                found.client_info = entry.client_info;
                self.entries.push_front(found);
            }
            return;
        }
        self.entries.push_front(entry);
        self.entries.truncate(self.max);
    }

    pub fn reset(&mut self) {
        self.entries.clear();
    }

    pub fn set_max(&mut self, max: usize) {
        self.max = max;
        self.entries.truncate(max);
    }

    pub fn max(&self) -> usize {
        self.max
    }

    /// The newest `count` entries.
    pub fn reply(&self, count: usize) -> Reply {
        let now = now_ms();
        Reply::Array(
            self.entries
                .iter()
                .take(count)
                .map(|e| e.reply(now))
                .collect(),
        )
    }
}
