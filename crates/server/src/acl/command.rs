//! `ACL` and its subcommands (`aclCommand`): SETUSER, GETUSER, DELUSER,
//! LIST, USERS, WHOAMI, CAT, LOG, DRYRUN, GENPASS, LOAD, SAVE, HELP.

use std::sync::Arc;

use super::catalog::{self, catalog};
use super::selector::{has_spaces, Denied, Selector};
use super::user::{merge_selectors, User};
use super::{file, Acl};
use crate::command_docs::CATEGORIES;
use crate::commands::{fail, int_arg, Outcome};
use crate::pubsub::Space;
use crate::resp::Reply;
use crate::session::Session;
use crate::shared::Shared;

const HELP: &[&str] = &[
    "CAT [<category>]",
    "    List all commands that belong to <category>, or all command categories",
    "    when no category is specified.",
    "DELUSER <username> [<username> ...]",
    "    Delete a list of users.",
    "DRYRUN <username> <command> [<arg> ...]",
    "    Returns whether the user can execute the given command without executing the command.",
    "GETUSER <username>",
    "    Get the user's details.",
    "GENPASS [<bits>]",
    "    Generate a secure 256-bit user password. The optional `bits` argument can",
    "    be used to specify a different size.",
    "LIST",
    "    Show users details in config file format.",
    "LOAD",
    "    Reload users from the ACL file.",
    "LOG [<count> | RESET]",
    "    Show the ACL log entries.",
    "SAVE",
    "    Save the current config to the ACL file.",
    "SETUSER <username> <attribute> [<attribute> ...]",
    "    Create or modify a user with the specified attributes.",
    "USERS",
    "    List all the registered usernames.",
    "WHOAMI",
    "    Return the current connection username.",
];

pub fn command(s: &Shared, session: &Session, a: &[Vec<u8>]) -> Outcome {
    let sub = String::from_utf8_lossy(&a[1]).to_ascii_lowercase();
    let n = a.len();
    match sub.as_str() {
        "setuser" if n >= 3 => setuser(s, &a[2], &a[3..]),
        "deluser" if n >= 3 => deluser(s, &a[2..]),
        "getuser" if n == 3 => Ok(getuser(&s.acl, &a[2])),
        "list" if n == 2 => Ok(list(&s.acl, false)),
        "users" if n == 2 => Ok(list(&s.acl, true)),
        "whoami" if n == 2 => Ok(Reply::bulk(session.user.name.as_str())),
        "load" | "save" if n == 2 && s.acl.file.is_none() => Err(fail("ERR This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.")),
        "load" if n == 2 => load(s),
        "save" if n == 2 => save(&s.acl),
        "cat" if n == 2 => Ok(Reply::Array(CATEGORIES.iter().map(|c| Reply::bulk(*c)).collect())),
        "cat" if n == 3 => cat(&a[2]),
        "genpass" if n == 2 || n == 3 => genpass(a.get(2)),
        "log" if n == 2 || n == 3 => log(&s.acl, a.get(2)),
        "dryrun" if n >= 4 => dryrun(&s.acl, &a[2], &a[3..]),
        "help" if n == 2 => Ok(Reply::Array(
            std::iter::once("ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
                .chain(HELP.iter().copied())
                .chain(["HELP", "    Prints this help."])
                .map(|l| Reply::Simple(l.into()))
                .collect(),
        )),
        _ => Err(crate::registry::subcommand_error("ACL", a)),
    }
}

fn setuser(s: &Shared, name: &[u8], rules: &[Vec<u8>]) -> Outcome {
    let name = String::from_utf8_lossy(name).into_owned();
    if has_spaces(&name) {
        return Err(fail(
            "ERR Usernames can't contain spaces or null characters",
        ));
    }
    let merged = merge_selectors(rules).map_err(|i| {
        fail(&format!(
            "ERR Unmatched parenthesis in acl selector starting at '{}'.",
            String::from_utf8_lossy(&rules[i])
        ))
    })?;
    let all_channels = s.acl.pubsub_default();
    let old = s.acl.user(&name);
    let mut user = old
        .as_deref()
        .cloned()
        .unwrap_or_else(|| User::new(&name, all_channels));
    for rule in &merged {
        if let Err(e) = user.apply(rule, all_channels) {
            return Err(fail(&format!(
                "ERR Error in ACL SETUSER modifier '{}': {}",
                String::from_utf8_lossy(rule),
                e.message()
            )));
        }
    }
    if let Some(old) = old {
        close_revoked_subscribers(s, &old, &user);
    }
    s.acl.put(user);
    Ok(Reply::ok())
}

/// Closes the subscribers logged in as `old` whose subscriptions `new` no
/// longer allows (`ACLKillPubsubClientsIfNeeded`).
fn close_revoked_subscribers(s: &Shared, old: &User, new: &User) {
    let all = |u: &User| u.selectors.iter().any(|s| s.all_channels);
    if all(new) {
        return;
    }
    let upcoming: Vec<&Vec<u8>> = new.selectors.iter().flat_map(|s| &s.channels).collect();
    let kept = !all(old)
        && old
            .selectors
            .iter()
            .flat_map(|s| &s.channels)
            .all(|c| upcoming.contains(&c));
    if kept {
        return;
    }
    let mut only = Selector::new(false);
    let _ = only.apply("resetchannels");
    only.channels = upcoming.into_iter().cloned().collect();
    for client in s.registry.all() {
        if client.user() != old.name {
            continue;
        }
        let revoked = Space::ALL.iter().any(|&space| {
            s.pubsub
                .subscriptions_of(space, client.id)
                .iter()
                .any(|name| !only.channel_allowed(name, space == Space::Patterns))
        });
        if revoked {
            client.kill();
        }
    }
}

fn deluser(s: &Shared, names: &[Vec<u8>]) -> Outcome {
    if names.iter().any(|n| n == b"default") {
        return Err(fail("ERR The 'default' user cannot be removed"));
    }
    let mut deleted = 0;
    for name in names {
        let name = String::from_utf8_lossy(name);
        if s.acl.remove(&name) {
            deleted += 1;
            for client in s.registry.all().into_iter().filter(|c| c.user() == name) {
                client.kill();
            }
        }
    }
    Ok(Reply::Int(deleted))
}

fn selector_fields(s: &Selector) -> Vec<(Reply, Reply)> {
    vec![
        (Reply::bulk("commands"), Reply::bulk(s.describe_commands())),
        (Reply::bulk("keys"), Reply::bulk(s.describe_keys())),
        (Reply::bulk("channels"), Reply::bulk(s.describe_channels())),
    ]
}

fn getuser(acl: &Acl, name: &[u8]) -> Reply {
    let Some(u) = acl.user(&String::from_utf8_lossy(name)) else {
        return Reply::Null;
    };
    let mut fields = vec![
        (
            Reply::bulk("flags"),
            Reply::Set(u.flags().into_iter().map(Reply::bulk).collect()),
        ),
        (
            Reply::bulk("passwords"),
            Reply::Array(
                u.passwords
                    .iter()
                    .map(|p| Reply::bulk(p.as_str()))
                    .collect(),
            ),
        ),
    ];
    fields.extend(selector_fields(&u.selectors[0]));
    let others = u.selectors[1..]
        .iter()
        .map(|s| Reply::Map(selector_fields(s)));
    fields.push((Reply::bulk("selectors"), Reply::Array(others.collect())));
    Reply::Map(fields)
}

fn list(acl: &Acl, names_only: bool) -> Reply {
    let users = acl.table();
    Reply::Array(
        users
            .values()
            .map(|u| match names_only {
                true => Reply::bulk(u.name.as_str()),
                false => Reply::bulk(format!("user {} {}", u.name, u.describe())),
            })
            .collect(),
    )
}

fn load(s: &Shared) -> Outcome {
    let Some(path) = &s.acl.file else {
        return Err(fail("ERR no ACL file"));
    };
    let users = file::load(path, s.acl.pubsub_default()).map_err(|e| fail(&format!("ERR {e}")))?;
    let gone: Vec<String> = {
        let old = s.acl.table();
        old.iter()
            .filter(|(name, u)| users.get(*name).is_none_or(|new| !Arc::ptr_eq(new, u)))
            .map(|(name, _)| name.clone())
            .collect()
    };
    s.acl.replace_users(users);
    // Redis frees every user but `default` and closes their connections.
    for client in s.registry.all() {
        let user = client.user();
        if user != "default" && gone.contains(&user) {
            client.kill();
        }
    }
    Ok(Reply::ok())
}

fn save(acl: &Acl) -> Outcome {
    let Some(path) = &acl.file else {
        return Err(fail("ERR no ACL file"));
    };
    let users = acl.table().clone();
    file::save(path, &users).map_err(|e| {
        eprintln!("slsm serve: ACL SAVE to {}: {e}", path.display());
        fail("ERR There was an error trying to save the ACLs. Please check the server logs for more information")
    })?;
    Ok(Reply::ok())
}

fn cat(name: &[u8]) -> Outcome {
    let name = String::from_utf8_lossy(name);
    let Some(category) = catalog::category(&name) else {
        let shown: String = name.chars().take(128).collect();
        return Err(fail(&format!("ERR Unknown category '{shown}'")));
    };
    let names = catalog().in_category(category).map(|c| Reply::bulk(c.name));
    Ok(Reply::Array(names.collect()))
}

fn genpass(bits: Option<&Vec<u8>>) -> Outcome {
    const MAX_BITS: i64 = 4096;
    let bits = match bits {
        None => 256,
        Some(b) => int_arg(b).map_err(|_| fail("ERR value is not an integer or out of range"))?,
    };
    if bits <= 0 || bits > MAX_BITS {
        return Err(fail(&format!("ERR ACL GENPASS argument must be the number of bits for the output password, a positive number up to {MAX_BITS}")));
    }
    let chars = (bits as usize).div_ceil(4);
    let mut bytes = vec![0u8; chars.div_ceil(2)];
    getrandom::getrandom(&mut bytes).map_err(|e| fail(&format!("ERR {e}")))?;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Ok(Reply::bulk(&hex[..chars]))
}

fn log(acl: &Acl, arg: Option<&Vec<u8>>) -> Outcome {
    let count = match arg {
        Some(a) if a.eq_ignore_ascii_case(b"reset") => {
            acl.log().reset();
            return Ok(Reply::ok());
        }
        Some(a) => int_arg(a)
            .map_err(|_| fail("ERR value is not an integer or out of range"))?
            .max(0) as usize,
        None => 10,
    };
    Ok(acl.log().reply(count))
}

fn dryrun(acl: &Acl, name: &[u8], argv: &[Vec<u8>]) -> Outcome {
    let name = String::from_utf8_lossy(name);
    let Some(user) = acl.user(&name) else {
        return Err(fail(&format!("ERR User '{name}' not found")));
    };
    let Some(cmd) = catalog().of_request(argv) else {
        return Err(fail(&format!(
            "ERR Command '{}' not found",
            String::from_utf8_lossy(&argv[0])
        )));
    };
    let n = argv.len() as i64;
    if (cmd.arity > 0 && cmd.arity != n) || n < -cmd.arity {
        return Err(fail(&format!(
            "ERR wrong number of arguments for '{}' command",
            cmd.name
        )));
    }
    let text = |i: usize| String::from_utf8_lossy(&argv[i]).into_owned();
    match user.check(Some(cmd), argv) {
        Ok(()) => Ok(Reply::ok()),
        Err(Denied::Command) => Ok(Reply::bulk(format!(
            "This user has no permissions to run the '{}' command",
            cmd.name
        ))),
        Err(Denied::Key(i)) => Ok(Reply::bulk(format!(
            "This user has no permissions to access the '{}' key",
            text(i)
        ))),
        Err(Denied::Channel(i)) => Ok(Reply::bulk(format!(
            "This user has no permissions to access the '{}' channel",
            text(i)
        ))),
    }
}
