//! Which node serves which command in a cluster, and what a node that
//! may not serve one answers: `-MOVED <slot> <leader's client address>`
//! (what `redis-cli -c` and cluster-aware clients follow), or
//! `-CLUSTERDOWN The cluster is down` while no leader is known.
//!
//! * **Owns**: nothing: the classification is the command's registry row.

use crate::resp::{Reply, Request};

pub use crate::registry::Class;

/// Where command `name` (lowercase) of `req` runs: as its registry row
/// says (an unknown command is refused before it gets here).
pub fn class(name: &str, req: &Request) -> Class {
    crate::registry::find(name).map_or(Class::Leader, |c| c.class(req))
}

/// Redis Cluster's hash slot of `key`: CRC16 (XMODEM) of the key, or of
/// its hash tag (the part between the first `{` and the next `}`, if not
/// empty), modulo 16384.
pub fn key_slot(key: &[u8]) -> u16 {
    const CRC16: crc::Crc<u16> = crc::Crc::<u16>::new(&crc::CRC_16_XMODEM);
    let tagged = key.iter().position(|&b| b == b'{').and_then(|open| {
        let rest = &key[open + 1..];
        let close = rest.iter().position(|&b| b == b'}')?;
        (close > 0).then(|| &rest[..close])
    });
    CRC16.checksum(tagged.unwrap_or(key)) % 16384
}

/// What a node that is not the leader answers for `req`: `MOVED` to the
/// leader at `leader` (its client address), or `CLUSTERDOWN`.
pub fn redirect(req: &Request, leader: Option<&str>) -> Reply {
    match leader {
        Some(addr) => {
            let slot = req.get(1).map_or(0, |k| key_slot(k));
            Reply::err(format!("MOVED {slot} {addr}"))
        }
        None => Reply::err("CLUSTERDOWN The cluster is down"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(args: &[&str]) -> Request {
        args.iter().map(|a| a.as_bytes().to_vec()).collect()
    }

    #[test]
    fn slots_are_redis_clusters() {
        // Values from Redis Cluster's specification and `CLUSTER KEYSLOT`.
        assert_eq!(key_slot(b"123456789"), 0x31C3);
        assert_eq!(key_slot(b"foo"), 12182);
        assert_eq!(key_slot(b"{user1000}.following"), key_slot(b"user1000"));
        assert_eq!(key_slot(b"foo{}{bar}"), key_slot(b"foo{}{bar}"));
        assert_ne!(key_slot(b"foo{}{bar}"), key_slot(b"bar"));
    }

    #[test]
    fn commands_go_where_they_must() {
        assert_eq!(class("get", &req(&["get", "k"])), Class::Read);
        assert_eq!(class("set", &req(&["set", "k", "v"])), Class::Write);
        assert_eq!(class("blpop", &req(&["blpop", "k", "0"])), Class::Write);
        assert_eq!(
            class("lrange", &req(&["lrange", "k", "0", "1"])),
            Class::Read
        );
        assert_eq!(class("function", &req(&["function", "list"])), Class::Read);
        assert_eq!(
            class("function", &req(&["function", "load", "x"])),
            Class::Write
        );
        assert_eq!(
            class("publish", &req(&["publish", "c", "m"])),
            Class::Leader
        );
        assert_eq!(
            class("cluster", &req(&["cluster", "info"])),
            Class::Anywhere
        );
        assert_eq!(
            redirect(&req(&["get", "foo"]), Some("127.0.0.1:7001")),
            Reply::err("MOVED 12182 127.0.0.1:7001")
        );
        assert_eq!(
            redirect(&req(&["get", "foo"]), None),
            Reply::err("CLUSTERDOWN The cluster is down")
        );
    }
}
