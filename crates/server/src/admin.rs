//! Connection and server commands: PING ECHO HELLO AUTH SELECT CLIENT
//! COMMAND CONFIG INFO DBSIZE FLUSHDB.

use std::sync::atomic::Ordering;

use crate::commands::{fail, int_arg, syntax_error, Outcome};
use crate::glob;
use crate::resp::Reply;
use crate::session::Session;
use crate::store::{Access, Direct};
use crate::Shared;

/// The version clients see in HELLO and INFO.
pub const REDIS_VERSION: &str = "7.2.0";

pub fn hello(s: &Shared, session: &mut Session, a: &[Vec<u8>]) -> Outcome {
    let mut i = 1;
    if let Some(v) = a.get(1) {
        let proto = int_arg(v)
            .map_err(|_| fail("ERR Protocol version is not an integer or out of range"))?;
        if !(2..=3).contains(&proto) {
            return Err(fail("NOPROTO unsupported protocol version"));
        }
        session.pending_proto = proto as u8;
        i = 2;
    }
    while i < a.len() {
        match a[i].to_ascii_lowercase().as_slice() {
            b"auth" if i + 2 < a.len() => {
                auth(s, session, &a[i + 2])?;
                i += 3;
            }
            b"setname" if i + 1 < a.len() => {
                session.name = a[i + 1].clone();
                i += 2;
            }
            _ => return Err(syntax_error()),
        }
    }
    if !session.authenticated {
        return Err(fail("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time"));
    }
    session.proto = session.pending_proto;
    Ok(Reply::Map(vec![
        (Reply::bulk("server"), Reply::bulk("redis")),
        (Reply::bulk("version"), Reply::bulk(REDIS_VERSION)),
        (Reply::bulk("proto"), Reply::Int(session.proto as i64)),
        (Reply::bulk("id"), Reply::Int(session.id as i64)),
        (Reply::bulk("mode"), Reply::bulk("standalone")),
        (Reply::bulk("role"), Reply::bulk("master")),
        (Reply::bulk("modules"), Reply::Array(Vec::new())),
    ]))
}

pub fn auth(
    s: &Shared,
    session: &mut Session,
    password: &[u8],
) -> Result<(), crate::commands::Fail> {
    match &s.opts.requirepass {
        None => Err(fail("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")),
        Some(p) if p.as_bytes() == password => {
            session.authenticated = true;
            Ok(())
        }
        Some(_) => Err(fail("WRONGPASS invalid username-password pair or user is disabled.")),
    }
}

pub fn client(session: &mut Session, a: &[Vec<u8>]) -> Outcome {
    let sub = a.get(1).map(|s| s.to_ascii_lowercase()).unwrap_or_default();
    match (sub.as_slice(), a.len()) {
        (b"setname", 3) => {
            if a[2].iter().any(|&c| c <= b' ' || c > b'~') {
                return Err(fail(
                    "ERR Client names cannot contain spaces, newlines or special characters.",
                ));
            }
            session.name = a[2].clone();
            Ok(Reply::ok())
        }
        (b"getname", 2) => Ok(match session.name.is_empty() {
            true => Reply::Null,
            false => Reply::Bulk(session.name.clone()),
        }),
        (b"id", 2) => Ok(Reply::Int(session.id as i64)),
        (b"setinfo", 4) => Ok(Reply::ok()),
        _ => Err(fail(&format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try CLIENT HELP.",
            String::from_utf8_lossy(a.get(1).map_or(&b""[..], |v| v))
        ))),
    }
}

/// `COMMAND`, `COMMAND COUNT`, `COMMAND DOCS`, `COMMAND INFO`: enough for
/// redis-cli and client libraries.
pub fn command(a: &[Vec<u8>]) -> Outcome {
    let sub = a.get(1).map(|s| s.to_ascii_lowercase()).unwrap_or_default();
    let info = |name: &str| {
        let arity = crate::session::arity_of(name).unwrap_or(-1);
        Reply::Array(vec![
            Reply::bulk(name),
            Reply::Int(arity as i64),
            Reply::Array(Vec::new()),
            Reply::Int(1),
            Reply::Int(1),
            Reply::Int(1),
        ])
    };
    match sub.as_slice() {
        b"" => Ok(Reply::Array(
            crate::session::COMMANDS.iter().map(|n| info(n)).collect(),
        )),
        b"count" => Ok(Reply::Int(crate::session::COMMANDS.len() as i64)),
        b"docs" => Ok(Reply::Map(Vec::new())),
        b"info" => Ok(Reply::Array(
            a[2..]
                .iter()
                .map(|n| {
                    let n = String::from_utf8_lossy(n).to_ascii_lowercase();
                    match crate::session::COMMANDS.contains(&n.as_str()) {
                        true => info(&n),
                        false => Reply::Null,
                    }
                })
                .collect(),
        )),
        _ => Err(fail("ERR unknown subcommand. Try COMMAND HELP.")),
    }
}

/// `CONFIG GET pattern...`: the parameters clients ask about.
pub fn config(s: &Shared, a: &[Vec<u8>]) -> Outcome {
    let sub = a.get(1).map(|s| s.to_ascii_lowercase()).unwrap_or_default();
    match sub.as_slice() {
        b"get" if a.len() >= 3 => {
            let params: Vec<(&str, String)> = vec![
                ("appendonly", "yes".into()),
                ("appendfsync", s.opts.appendfsync.name().into()),
                ("save", String::new()),
                ("databases", "1".into()),
                ("maxclients", s.opts.maxclients.to_string()),
                ("proto-max-bulk-len", crate::resp::MAX_BULK.to_string()),
                ("timeout", "0".into()),
                ("bind", s.opts.bind.ip().to_string()),
                ("port", s.opts.bind.port().to_string()),
            ];
            let mut out = Vec::new();
            for (name, value) in &params {
                if a[2..]
                    .iter()
                    .any(|p| glob::matches(&p.to_ascii_lowercase(), name.as_bytes()))
                {
                    out.push((Reply::bulk(*name), Reply::bulk(value.clone())));
                }
            }
            Ok(Reply::Map(out))
        }
        b"set" | b"resetstat" | b"rewrite" => Ok(Reply::ok()),
        _ => Err(fail(
            "ERR unknown subcommand or wrong number of arguments for 'config'",
        )),
    }
}

/// Live keys, counted by a scan.
pub fn dbsize(s: &Shared) -> Result<i64, slsm::Error> {
    let ks = s.store.keyspace();
    let opts = slsm::WriteOptions::default();
    let mut acc = Direct {
        ks: &ks,
        opts: &opts,
    };
    let (mut n, mut after) = (0i64, None::<Vec<u8>>);
    loop {
        let batch = acc.keys_after(after.as_deref(), 4096)?;
        n += batch.len() as i64;
        if batch.len() < 4096 {
            return Ok(n);
        }
        after = batch.last().cloned();
    }
}

pub fn info(s: &Shared, a: &[Vec<u8>]) -> Outcome {
    let stats = s.store.db.stats();
    let section = a
        .get(1)
        .map(|v| String::from_utf8_lossy(v).to_ascii_lowercase());
    let want = |name: &str| match section.as_deref() {
        None | Some("all") | Some("default") | Some("everything") => true,
        Some(s) => s == name,
    };
    let mut text = String::new();
    if want("server") {
        text += &format!(
            "# Server\r\nredis_version:{REDIS_VERSION}\r\nredis_mode:standalone\r\nos:{}\r\nprocess_id:{}\r\ntcp_port:{}\r\nuptime_in_seconds:{}\r\nexecutable:slsm\r\nslsm_version:{}\r\n\r\n",
            std::env::consts::OS,
            std::process::id(),
            s.opts.bind.port(),
            s.started.elapsed().as_secs(),
            env!("CARGO_PKG_VERSION"),
        );
    }
    if want("clients") {
        text += &format!(
            "# Clients\r\nconnected_clients:{}\r\nmaxclients:{}\r\n\r\n",
            s.clients.load(Ordering::Relaxed),
            s.opts.maxclients
        );
    }
    if want("memory") {
        text += &format!(
            "# Memory\r\nused_memory:{}\r\nmaxmemory:{}\r\nslsm_block_cache_bytes:{}\r\n\r\n",
            stats.memory.total(),
            stats.memory.budget,
            stats.memory.cache.usage
        );
    }
    if want("persistence") {
        text += &format!(
            "# Persistence\r\nloading:0\r\naof_enabled:1\r\nappendfsync:{}\r\nrdb_changes_since_last_save:0\r\n\r\n",
            s.opts.appendfsync.name()
        );
    }
    if want("stats") {
        text += &format!(
            "# Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\nrejected_connections:{}\r\n\r\n",
            s.connections.load(Ordering::Relaxed),
            s.commands.load(Ordering::Relaxed),
            s.rejected.load(Ordering::Relaxed)
        );
    }
    if want("keyspace") {
        let keys = dbsize(s)?;
        text += "# Keyspace\r\n";
        if keys > 0 {
            text += &format!("db0:keys={keys},expires=0,avg_ttl=0\r\n");
        }
        text += "\r\n";
    }
    Ok(Reply::Bulk(text.into_bytes()))
}
