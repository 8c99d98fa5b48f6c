//! ACL users, as Redis 7.0 has them: who may log in with which password,
//! and which commands, keys and channels each user may use. `AUTH`,
//! `HELLO ... AUTH` and `--requirepass` (the `default` user's password)
//! go through here; every command a restricted user sends is checked
//! before it runs, queued commands again at `EXEC`, and a script's
//! `redis.call`s as they are made (`acl::caller`).
//!
//! Owns the users table (a copy-on-write map: a connection holds its
//! user's current version, and a change bumps [`Acl::epoch`], which each
//! connection compares before a command), the ACL log, and the ACL file's
//! path. Calls `clients` (to close the connections of a deleted user and
//! the subscribers whose channels were revoked) and `pubsub` (to see what
//! they subscribed to). Thread-safe: the table and the log are behind
//! their own locks, held briefly and never together.
//!
//! In a cluster the users are each node's own, as in Redis Cluster.

pub mod caller;
pub mod catalog;
pub mod command;
mod describe;
mod file;
pub mod gate;
mod log;
mod rule_error;
pub mod selector;
#[cfg(test)]
mod tests;
pub mod user;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

pub use log::{Context, Reason};
pub use selector::RuleError;
use user::{User, Users};

pub struct Acl {
    users: RwLock<Users>,
    /// Bumped by every change of the table.
    epoch: AtomicU64,
    log: Mutex<log::Log>,
    /// `--aclfile`: where `ACL LOAD` and `ACL SAVE` read and write.
    pub file: Option<PathBuf>,
    /// `acl-pubsub-default`: whether new users start with all channels.
    pub pubsub_default_all: AtomicBool,
    /// `requirepass` as last set ("" for none), for `CONFIG GET`.
    requirepass: Mutex<String>,
}

impl Acl {
    /// The table with Redis's `default` user, its password `requirepass`
    /// if one is given, then the ACL file's users if there is one (new
    /// users get every channel if `all_channels`: `acl-pubsub-default`).
    pub fn new(
        requirepass: Option<&str>,
        file: Option<PathBuf>,
        all_channels: bool,
    ) -> Result<Acl, String> {
        let acl = Acl {
            users: RwLock::new(Users::new()),
            epoch: AtomicU64::new(0),
            log: Mutex::new(log::Log::default()),
            file,
            pubsub_default_all: AtomicBool::new(all_channels),
            requirepass: Mutex::new(String::new()),
        };
        acl.replace_users(Users::from([(
            "default".to_string(),
            Arc::new(User::default_user()),
        )]));
        if let Some(p) = requirepass {
            acl.set_default_password(Some(p));
        }
        if let Some(path) = &acl.file {
            let users = file::load(path, acl.pubsub_default())?;
            acl.replace_users(users);
        }
        Ok(acl)
    }

    fn table(&self) -> std::sync::RwLockReadGuard<'_, Users> {
        self.users.read().unwrap_or_else(|p| p.into_inner())
    }

    fn replace_users(&self, users: Users) {
        *self.users.write().unwrap_or_else(|p| p.into_inner()) = users;
        self.epoch.fetch_add(1, Ordering::AcqRel);
    }

    /// Replaces (or adds) one user.
    fn put(&self, user: User) {
        let mut users = self.users.write().unwrap_or_else(|p| p.into_inner());
        users.insert(user.name.clone(), Arc::new(user));
        drop(users);
        self.epoch.fetch_add(1, Ordering::AcqRel);
    }

    /// Deletes a user; false if there was none of that name.
    fn remove(&self, name: &str) -> bool {
        let removed = self
            .users
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(name)
            .is_some();
        if removed {
            self.epoch.fetch_add(1, Ordering::AcqRel);
        }
        removed
    }

    pub fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    pub fn pubsub_default(&self) -> bool {
        self.pubsub_default_all.load(Ordering::Relaxed)
    }

    pub fn user(&self, name: &str) -> Option<Arc<User>> {
        self.table().get(name).cloned()
    }

    pub fn default_user(&self) -> Arc<User> {
        self.user("default")
            .unwrap_or_else(|| Arc::new(User::default_user()))
    }

    /// Whether a new connection starts logged in (as `default`).
    pub fn default_logs_in(&self) -> bool {
        let d = self.default_user();
        d.enabled && d.nopass
    }

    /// `requirepass`: the default user's one password, or `nopass`.
    pub fn set_default_password(&self, password: Option<&str>) {
        *self.requirepass.lock().unwrap_or_else(|p| p.into_inner()) =
            password.unwrap_or_default().to_string();
        let mut d = (*self.default_user()).clone();
        let _ = d.apply(b"resetpass", false);
        let rule = match password {
            Some(p) if !p.is_empty() => [b">", p.as_bytes()].concat(),
            _ => b"nopass".to_vec(),
        };
        let _ = d.apply(&rule, false);
        self.put(d);
    }

    pub fn requirepass(&self) -> String {
        self.requirepass
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The log, for `ACL LOG` and for recording a refusal.
    fn log(&self) -> MutexGuard<'_, log::Log> {
        self.log.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn set_log_max(&self, max: usize) {
        self.log().set_max(max);
    }

    pub fn log_max(&self) -> usize {
        self.log().max()
    }

    /// Records a refusal by `client` in the ACL log.
    pub fn record(&self, client: &crate::clients::Client, entry: log::Entry) {
        self.log().add(entry, client.line());
    }
}

pub(super) fn full_name(cmd: Option<&catalog::Command>, req: &[Vec<u8>]) -> String {
    cmd.map_or_else(
        || String::from_utf8_lossy(&req[0]).to_ascii_lowercase(),
        |c| c.name.to_string(),
    )
}
