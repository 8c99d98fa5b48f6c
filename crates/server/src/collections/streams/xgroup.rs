//! `XGROUP` (`CREATE`, `SETID`, `DESTROY`, `CREATECONSUMER`,
//! `DELCONSUMER`, `HELP`) and `XACK`, in Redis 7.0's order of checks.

use super::groups::{consumer_key, Group};
use super::id::{parse_any, parse_strict, StreamId};
use super::stream::Stream;
use crate::access::Access;
use crate::commands::{fail, int_arg, Fail, Outcome};
use crate::resp::Reply;

const XGROUP_HELP: &[&str] = &[
    "XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CREATE <key> <groupname> <id|$> [option]",
    "    Create a new consumer group. Options are:",
    "    * MKSTREAM",
    "      Create the empty stream if it does not exist.",
    "    * ENTRIESREAD entries_read",
    "      Set the group's entries_read counter (internal use).",
    "CREATECONSUMER <key> <groupname> <consumer>",
    "    Create a new consumer in the specified group.",
    "DELCONSUMER <key> <groupname> <consumer>",
    "    Remove the specified consumer.",
    "DESTROY <key> <groupname>",
    "    Remove the specified group.",
    "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    "    Set the current group ID and entries_read counter.",
    "HELP",
    "    Prints this help.",
];

fn subcommand_error(a: &[Vec<u8>]) -> Fail {
    crate::registry::subcommand_error("XGROUP", a)
}

/// Sets group `group`'s position and saves the stream, told as `event`:
/// `OK`.
fn place(
    acc: &mut dyn Access,
    s: &mut Stream,
    (group, last, entries_read): (&[u8], StreamId, Option<u64>),
    event: &'static str,
) -> Outcome {
    s.set_group(acc, group, &Group { last, entries_read })?;
    s.save_and_tell(acc, event)?;
    Ok(Reply::ok())
}

/// `XGROUP`, in Redis 7.0's order of checks.
pub fn xgroup(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    // A script's `redis.call` reaches here without the shape check.
    crate::registry::check_subcommand("xgroup", a)?;
    let sub = a[1].to_ascii_lowercase();
    if sub == b"help" {
        return Ok(Reply::Array(
            XGROUP_HELP
                .iter()
                .map(|l| Reply::Simple(l.to_string()))
                .collect(),
        ));
    }
    let mut mkstream = false;
    let mut entries_read = None;
    if sub == b"create" || sub == b"setid" {
        let mut i = 5;
        while i < a.len() {
            if sub == b"create" && a[i].eq_ignore_ascii_case(b"mkstream") {
                mkstream = true;
                i += 1;
            } else if a[i].eq_ignore_ascii_case(b"entriesread") && i + 1 < a.len() {
                let n = int_arg(&a[i + 1])?;
                if n < 0 && n != -1 {
                    return Err(fail("ERR value for ENTRIESREAD must be positive or -1"));
                }
                entries_read = u64::try_from(n).ok();
                i += 2;
            } else {
                return Err(subcommand_error(a));
            }
        }
    }
    let (key, group) = (&a[2], &a[3]);
    let stream = Stream::load(acc, key)?;
    if stream.is_none() && !(sub == b"create" && mkstream) {
        return Err(fail("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically."));
    }
    let last = match &stream {
        Some(s) => s.group_last(acc, group)?,
        None => None,
    };
    let needs_group = matches!(
        sub.as_slice(),
        b"setid" | b"createconsumer" | b"delconsumer"
    );
    if needs_group && last.is_none() {
        return Err(fail(&format!(
            "NOGROUP No such consumer group '{}' for key name '{}'",
            String::from_utf8_lossy(group),
            String::from_utf8_lossy(key)
        )));
    }
    match (sub.as_slice(), a.len()) {
        (b"create", 5..=8) => {
            let id = match a[4].as_slice() {
                b"$" => stream.as_ref().map_or(StreamId::default(), |s| s.last),
                arg => parse_strict(arg, 0, false)?.id,
            };
            let mut s = match stream {
                Some(s) => s,
                None => Stream::load_or_new(acc, key)?,
            };
            if last.is_some() {
                return Err(fail("BUSYGROUP Consumer Group name already exists"));
            }
            place(acc, &mut s, (group, id, entries_read), "xgroup-create")
        }
        (b"setid", 5 | 7) => {
            let Some(mut s) = stream else {
                return Err(subcommand_error(a));
            };
            let id = match a[4].as_slice() {
                b"$" => s.last,
                arg => parse_any(arg, 0)?,
            };
            // Without ENTRIESREAD the counter becomes unknown, as in Redis.
            place(acc, &mut s, (group, id, entries_read), "xgroup-setid")
        }
        (b"destroy", 4) => match (stream, last) {
            (Some(mut s), Some(_)) => {
                s.destroy_group(acc, group)?;
                s.save_and_tell(acc, "xgroup-destroy")?;
                Ok(Reply::Int(1))
            }
            _ => Ok(Reply::Int(0)),
        },
        (b"createconsumer", 5) => {
            let Some(mut s) = stream else {
                return Err(subcommand_error(a));
            };
            if s.has_consumer(acc, group, &a[4])? {
                return Ok(Reply::Int(0));
            }
            s.touch_consumer(acc, group, &a[4])?;
            s.save(acc)?;
            Ok(Reply::Int(1))
        }
        (b"delconsumer", 5) => {
            let Some(mut s) = stream else {
                return Err(subcommand_error(a));
            };
            if !s.has_consumer(acc, group, &a[4])? {
                return Ok(Reply::Int(0));
            }
            let mut pending = 0;
            for p in s.all_pending(acc, group)? {
                if p.consumer == a[4] {
                    s.del_pending(acc, group, p.id)?;
                    pending += 1;
                }
            }
            acc.del_item(&s.coll.item_key(&consumer_key(group, &a[4])))?;
            s.save_and_tell(acc, "xgroup-delconsumer")?;
            Ok(Reply::Int(pending))
        }
        _ => Err(subcommand_error(a)),
    }
}

/// `XACK key group id...`: the count of pending entries acknowledged.
pub fn xack(a: &[Vec<u8>], acc: &mut dyn Access) -> Outcome {
    let stream = Stream::load(acc, &a[1])?;
    let last = match &stream {
        Some(s) => s.group_last(acc, &a[2])?,
        None => None,
    };
    // No stream or no group: nothing to acknowledge, whatever the IDs.
    let (Some(mut s), Some(_)) = (stream, last) else {
        return Ok(Reply::Int(0));
    };
    let ids = super::stream::strict_ids(&a[3..])?;
    let mut acked = 0;
    for id in ids {
        if s.pending(acc, &a[2], id)?.is_some() {
            s.del_pending(acc, &a[2], id)?;
            acked += 1;
        }
    }
    if acked > 0 {
        s.save(acc)?;
    }
    Ok(Reply::Int(acked))
}
