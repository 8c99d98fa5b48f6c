//! The ACL file (`--aclfile`): one `user NAME RULES...` line per user, as
//! Redis writes and reads it (`ACLLoadFromFile`, `ACLSaveToFile`). A file
//! with any error loads nothing (the users in force stay); a save writes
//! a temporary file, syncs it and renames it over the old one, so a crash
//! leaves the old file or the new, never half of one.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use super::selector::RuleError;
use super::user::{merge_selectors, User, Users};

/// The users of the file at `path` (a `default` user it does not define
/// is Redis's default); every error, line by line, if there is any.
pub fn load(path: &Path, all_channels: bool) -> Result<Users, String> {
    let name = path.display();
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("Error loading ACLs, opening file '{name}': {e}"))?;
    let mut users = Users::new();
    let mut errors = String::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_matches([' ', '\t', '\r', '\n']);
        if line.is_empty() {
            continue;
        }
        let words: Vec<&str> = line.split(' ').filter(|w| !w.is_empty()).collect();
        let n = i + 1;
        if words.len() < 2 || words[0] != "user" {
            errors +=
                &format!("{name}:{n} should start with user keyword followed by the username. ");
            continue;
        }
        let username = words[1];
        if users.contains_key(username) {
            errors += &format!("WARNING: Duplicate user '{username}' found on line {n}. ");
            continue;
        }
        match parse_user(username, &words[2..], all_channels) {
            Ok(user) => {
                users.insert(username.to_string(), Arc::new(user));
            }
            Err(e) => errors += &format!("{name}:{n}: {e}. "),
        }
    }
    if !errors.is_empty() {
        errors += "WARNING: ACL errors detected, no change to the previously active ACL rules was performed";
        return Err(errors);
    }
    users
        .entry("default".to_string())
        .or_insert_with(|| Arc::new(User::default_user()));
    Ok(users)
}

fn parse_user(name: &str, rules: &[&str], all_channels: bool) -> Result<User, String> {
    if super::selector::has_spaces(name) {
        return Err(format!("username '{name}' contains invalid characters"));
    }
    let args: Vec<Vec<u8>> = rules.iter().map(|r| r.as_bytes().to_vec()).collect();
    let merged = merge_selectors(&args)
        .map_err(|_| "Unmatched parenthesis in selector definition".to_string())?;
    let mut user = User::new(name, all_channels);
    for rule in &merged {
        user.apply(rule, all_channels).map_err(|e| match e {
            RuleError::Unknown => format!(
                "Error in applying operation '{}': {}",
                String::from_utf8_lossy(rule),
                e.message()
            ),
            _ => e.message().to_string(),
        })?;
    }
    Ok(user)
}

/// Writes every user to `path`, replacing it whole.
pub fn save(path: &Path, users: &Users) -> std::io::Result<()> {
    let mut text = String::new();
    for user in users.values() {
        text += &format!("user {} {}\n", user.name, user.describe());
    }
    let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::File::open(dir)?.sync_all()?;
        }
        Ok(())
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}
