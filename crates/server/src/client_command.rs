//! The `CLIENT` command: `LIST`, `INFO`, `KILL` (`client_kill.rs`),
//! `ID`, `SETNAME`, `GETNAME`, `SETINFO`, and the connection modes
//! (`client_modes.rs`: `REPLY`, `PAUSE`, `UNBLOCK`, ...).
//!
//! * **Owns**: nothing; what it reads and sets is the client's entry in
//!   `crate::clients`.

use crate::clients::Client;
use crate::commands::{fail, Fail, Outcome};
use crate::resp::Reply;
use crate::session::Session;
use crate::shared::Shared;

/// `CLIENT subcommand ...`.
pub fn command(s: &Shared, session: &mut Session, a: &[Vec<u8>]) -> Outcome {
    let sub = a.get(1).map(|s| s.to_ascii_lowercase()).unwrap_or_default();
    let me = &session.client;
    match (sub.as_slice(), a.len()) {
        (b"setname", 3) => {
            check_name(&a[2])?;
            me.names().name = a[2].clone();
            Ok(Reply::ok())
        }
        (b"getname", 2) => Ok(match me.names().name.clone() {
            name if name.is_empty() => Reply::Null,
            name => Reply::Bulk(name),
        }),
        (b"id", 2) => Ok(Reply::Int(session.id as i64)),
        (b"info", 2) => Ok(Reply::Verbatim(format!("{}\n", me.line()).into_bytes())),
        (b"list", _) => list(s, &a[2..]),
        (b"kill", n) if n >= 3 => crate::client_kill::kill(s, session, &a[2..]),
        (b"setinfo", 4) => set_info(me, &a[2], &a[3]),
        _ => crate::client_modes::command(s, session, a)
            .unwrap_or_else(|| Err(crate::registry::subcommand_refusal("client", a))),
    }
}

/// A name `CLIENT SETNAME` or `HELLO ... SETNAME` accepts.
pub fn check_name(name: &[u8]) -> Result<(), Fail> {
    match has_space_or_special(name) {
        true => Err(fail(
            "ERR Client names cannot contain spaces, newlines or special characters.",
        )),
        false => Ok(()),
    }
}

/// What Redis refuses in a client's name and library fields: spaces,
/// control characters and anything past `~`.
fn has_space_or_special(value: &[u8]) -> bool {
    value.iter().any(|&c| c <= b' ' || c > b'~')
}

/// `CLIENT LIST [TYPE normal|master|replica|pubsub] [ID id ...]`: every
/// client here is of type normal.
fn list(s: &Shared, args: &[Vec<u8>]) -> Outcome {
    let mut ids: Option<Vec<u64>> = None;
    let mut normal = true;
    let mut i = 0;
    while i < args.len() {
        match args[i].to_ascii_lowercase().as_slice() {
            b"type" if i + 1 < args.len() => {
                let t = args[i + 1].to_ascii_lowercase();
                if !matches!(t.as_slice(), b"normal" | b"master" | b"replica" | b"pubsub") {
                    return Err(fail(&format!(
                        "ERR Unknown client type '{}'",
                        String::from_utf8_lossy(&args[i + 1])
                    )));
                }
                normal = t == b"normal";
                i += 2;
            }
            b"id" if i + 1 < args.len() => {
                let mut wanted = Vec::new();
                for id in &args[i + 1..] {
                    match std::str::from_utf8(id).ok().and_then(|v| v.parse().ok()) {
                        Some(n) if n > 0 => wanted.push(n),
                        _ => return Err(fail("ERR Invalid client ID")),
                    }
                }
                ids = Some(wanted);
                i = args.len();
            }
            _ => return Err(fail("ERR syntax error")),
        }
    }
    let mut out = String::new();
    for c in s.registry.all() {
        if normal && ids.as_ref().is_none_or(|w| w.contains(&c.id)) {
            out.push_str(&c.line());
            out.push('\n');
        }
    }
    Ok(Reply::Verbatim(out.into_bytes()))
}

/// `CLIENT SETINFO LIB-NAME|LIB-VER value`: what a client library says
/// it is (shown in `CLIENT INFO` and `CLIENT LIST`).
fn set_info(me: &Client, attr: &[u8], value: &[u8]) -> Outcome {
    let attr = attr.to_ascii_lowercase();
    if attr != b"lib-name" && attr != b"lib-ver" {
        return Err(fail(&format!(
            "ERR Unrecognized option '{}'",
            String::from_utf8_lossy(&attr)
        )));
    }
    if has_space_or_special(value) {
        return Err(fail(&format!(
            "ERR {} cannot contain spaces, newlines or special characters.",
            String::from_utf8_lossy(&attr)
        )));
    }
    let mut names = me.names();
    match attr.as_slice() {
        b"lib-name" => names.lib_name = value.to_vec(),
        _ => names.lib_ver = value.to_vec(),
    }
    Ok(Reply::ok())
}
