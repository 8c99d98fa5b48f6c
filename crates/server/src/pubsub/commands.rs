//! `SUBSCRIBE`, `PSUBSCRIBE`, `SSUBSCRIBE`, their `UNSUBSCRIBE`s,
//! `PUBLISH`, `SPUBLISH` and `PUBSUB`, with Redis 7.0's replies (checked
//! against redis-server byte by byte, `tests/server/fidelity.rs`).
//!
//! A (un)subscription is confirmed per name, as a push in RESP3 and an
//! array in RESP2, with the client's count of subscriptions after it
//! (channels and patterns together, shard channels on their own, as Redis
//! counts them). A RESP2 client with any subscription may only
//! (un)subscribe, `PING`, `QUIT` or `RESET` ([`refused_while_subscribed`]).

use super::{Space, Subscriptions};
use crate::commands::{Fail, Outcome};
use crate::resp::Reply;
use crate::session::Session;
use crate::shared::Shared;

/// The pub/sub command `name` is: `Some((space, true))` for a subscribe,
/// `Some((space, false))` for an unsubscribe.
pub fn subscription_command(name: &str) -> Option<(Space, bool)> {
    Some(match name {
        "subscribe" => (Space::Channels, true),
        "psubscribe" => (Space::Patterns, true),
        "ssubscribe" => (Space::Shards, true),
        "unsubscribe" => (Space::Channels, false),
        "punsubscribe" => (Space::Patterns, false),
        "sunsubscribe" => (Space::Shards, false),
        _ => return None,
    })
}

/// The error a RESP2 client in subscribed mode gets for `name`, if the
/// command is not one it may run there.
pub fn refused_while_subscribed(session: &Session, name: &str) -> Option<Reply> {
    if session.proto >= 3 || !session.subscribed() {
        return None;
    }
    if subscription_command(name).is_some() || matches!(name, "ping" | "quit" | "reset") {
        return None;
    }
    Some(Reply::err(format!(
        "ERR Can't execute '{name}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context"
    )))
}

/// Runs a (un)subscription command.
pub fn run(
    s: &Shared,
    session: &mut Session,
    space: Space,
    subscribe: bool,
    names: &[Vec<u8>],
) -> Reply {
    match subscribe {
        true => self::subscribe(s, session, space, names),
        false => unsubscribe(s, session, space, names),
    }
}

fn confirmation(word: &str, name: Option<&[u8]>, count: usize) -> Reply {
    Reply::Push(vec![
        Reply::bulk(word),
        name.map_or(Reply::Null, |n| Reply::Bulk(n.to_vec())),
        Reply::Int(count as i64),
    ])
}

fn subscribe(s: &Shared, session: &mut Session, space: Space, names: &[Vec<u8>]) -> Reply {
    let outbox = &session.outbox;
    let subs = session
        .pubsub
        .get_or_insert_with(|| Box::new(Subscriptions::new(outbox)));
    let replies = names
        .iter()
        .map(|name| {
            if subs.names[space.index()].insert(name.clone()) {
                s.pubsub.add(space, name, &subs.sub);
            }
            confirmation(
                space.subscribe_word(),
                Some(name),
                subs.confirmed_count(space),
            )
        })
        .collect();
    subs.publish_counts();
    Reply::Several(replies)
}

fn unsubscribe(s: &Shared, session: &mut Session, space: Space, names: &[Vec<u8>]) -> Reply {
    let word = space.unsubscribe_word();
    let Some(subs) = session.pubsub.as_mut() else {
        return match names.is_empty() {
            true => confirmation(word, None, 0),
            false => Reply::Several(
                names
                    .iter()
                    .map(|n| confirmation(word, Some(n), 0))
                    .collect(),
            ),
        };
    };
    // With no names: every subscription in the space.
    let names: Vec<Vec<u8>> = match names.is_empty() {
        true => subs.names[space.index()].iter().cloned().collect(),
        false => names.to_vec(),
    };
    if names.is_empty() {
        return confirmation(word, None, subs.confirmed_count(space));
    }
    let replies = names
        .iter()
        .map(|name| {
            if subs.names[space.index()].remove(name) {
                s.pubsub.remove(space, name, &subs.sub);
            }
            confirmation(word, Some(name), subs.confirmed_count(space))
        })
        .collect();
    subs.publish_counts();
    Reply::Several(replies)
}

/// `PUBLISH` (or `SPUBLISH`) `channel message`: how many subscriptions
/// received it.
pub fn publish(s: &Shared, shard: bool, req: &[Vec<u8>]) -> Reply {
    Reply::Int(s.pubsub.publish(shard, &req[1], &req[2]) as i64)
}

const HELP: &[&str] = &[
    "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CHANNELS [<pattern>]",
    "    Return the currently active channels matching a <pattern> (default: '*').",
    "NUMPAT",
    "    Return number of subscriptions to patterns.",
    "NUMSUB [<channel> ...]",
    "    Return the number of subscribers for the specified channels, excluding",
    "    pattern subscriptions(default: no channels).",
    "SHARDCHANNELS [<pattern>]",
    "    Return the currently active shard level channels matching a <pattern> (default: '*').",
    "SHARDNUMSUB [<shardchannel> ...]",
    "    Return the number of subscribers for the specified shard level channel(s)",
    "HELP",
    "    Prints this help.",
];

/// `PUBSUB CHANNELS|SHARDCHANNELS [pattern]`, `NUMSUB|SHARDNUMSUB
/// [channel ...]`, `NUMPAT`, `HELP`.
pub fn introspect(s: &Shared, a: &[Vec<u8>]) -> Outcome {
    let sub = a[1].to_ascii_lowercase();
    let space = match sub.starts_with(b"shard") {
        true => Space::Shards,
        false => Space::Channels,
    };
    match (sub.as_slice(), a.len()) {
        (b"channels" | b"shardchannels", 2 | 3) => {
            let names = s.pubsub.active(space, a.get(2).map(Vec::as_slice));
            Ok(Reply::Array(names.into_iter().map(Reply::Bulk).collect()))
        }
        (b"channels" | b"shardchannels", _) => Err(Fail::Reply(Reply::err(format!(
            "ERR unknown subcommand or wrong number of arguments for '{}'. Try PUBSUB HELP.",
            String::from_utf8_lossy(&a[1])
        )))),
        (b"numsub" | b"shardnumsub", _) => Ok(Reply::Array(
            a[2..]
                .iter()
                .flat_map(|name| {
                    let n = s.pubsub.count(space, name) as i64;
                    [Reply::Bulk(name.clone()), Reply::Int(n)]
                })
                .collect(),
        )),
        (b"numpat", 2) => Ok(Reply::Int(s.pubsub.names(Space::Patterns) as i64)),
        (b"help", 2) => Ok(Reply::Array(
            HELP.iter().map(|l| Reply::Simple((*l).into())).collect(),
        )),
        _ => Err(crate::registry::subcommand_refusal("pubsub", a)),
    }
}
