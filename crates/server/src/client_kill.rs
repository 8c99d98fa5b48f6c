//! `CLIENT KILL`, in both of Redis's forms: by address, or by filters
//! (`ID`, `ADDR`, `LADDR`, `TYPE`, `USER`, `SKIPME`).

use crate::clients::Client;
use crate::commands::{fail, Outcome};
use crate::resp::Reply;
use crate::session::Session;
use crate::shared::Shared;

/// `CLIENT KILL addr` (the old form: `OK`, or an error if no such client)
/// or `CLIENT KILL [ID id] [ADDR addr] [LADDR addr] [TYPE t] [USER u]
/// [SKIPME yes|no]` (how many were killed). A killed connection closes
/// once its current batch of requests is answered.
pub fn kill(s: &Shared, session: &Session, args: &[Vec<u8>]) -> Outcome {
    if args.len() == 1 {
        let addr = String::from_utf8_lossy(&args[0]);
        let victim = s.registry.all().into_iter().find(|c| c.addr == addr);
        return match victim {
            Some(c) => {
                c.kill();
                Ok(Reply::ok())
            }
            None => Err(fail("ERR No such client")),
        };
    }
    if !args.len().is_multiple_of(2) {
        return Err(fail("ERR syntax error"));
    }
    let mut filter = KillFilter {
        skip_me: true,
        ..KillFilter::default()
    };
    for pair in args.chunks_exact(2) {
        let value = String::from_utf8_lossy(&pair[1]).into_owned();
        match pair[0].to_ascii_lowercase().as_slice() {
            b"id" => match value.parse::<u64>() {
                Ok(id) if id > 0 => filter.id = Some(id),
                _ => return Err(fail("ERR client-id should be greater than 0")),
            },
            b"addr" => filter.addr = Some(value),
            b"laddr" => filter.laddr = Some(value),
            b"type" => match value.to_ascii_lowercase().as_str() {
                "normal" => {}
                "master" | "replica" | "slave" | "pubsub" => filter.none = true,
                _ => return Err(fail(&format!("ERR Unknown client type '{value}'"))),
            },
            b"user" if s.acl.user(&value).is_none() => {
                return Err(fail(&format!("ERR No such user '{value}'")))
            }
            b"user" => filter.user = Some(value),
            b"skipme" => match value.to_ascii_lowercase().as_str() {
                "yes" => filter.skip_me = true,
                "no" => filter.skip_me = false,
                _ => return Err(fail("ERR syntax error")),
            },
            _ => return Err(fail("ERR syntax error")),
        }
    }
    let mut killed = 0;
    for c in s.registry.all() {
        if filter.matches(&c, session.id) {
            c.kill();
            killed += 1;
        }
    }
    Ok(Reply::Int(killed))
}

#[derive(Default)]
struct KillFilter {
    id: Option<u64>,
    addr: Option<String>,
    laddr: Option<String>,
    /// The ACL user it is logged in as.
    user: Option<String>,
    skip_me: bool,
    /// A filter no client here can match (another type).
    none: bool,
}

impl KillFilter {
    fn matches(&self, c: &Client, me: u64) -> bool {
        let skipped = self.none || (self.skip_me && c.id == me);
        !skipped
            && self.id.is_none_or(|id| id == c.id)
            && self.addr.as_ref().is_none_or(|a| *a == c.addr)
            && self.laddr.as_ref().is_none_or(|a| *a == c.laddr)
            && self.user.as_ref().is_none_or(|u| *u == c.user())
    }
}
