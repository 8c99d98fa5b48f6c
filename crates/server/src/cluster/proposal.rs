//! What `slsm serve --cluster` puts in the replicated log: a leader's
//! proposal of Redis commands, and the state machine's replies to it.
//!
//! * **Owns**: nothing: plain data, encoded with bincode (private to a
//!   cluster's nodes, like the frames between them).

use serde::{Deserialize, Serialize};

use crate::resp::{Reply, Request};

/// One log entry of the server's: the node that proposed it (it alone
/// sends the messages its scripts and transactions publish) and what to do.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Proposal {
    pub origin: u64,
    pub body: Body,
}

/// The commands of one entry.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Body {
    /// Writes of one pipeline (or one write alone), run one after another,
    /// each with its own reply, committed together: atomic, which is more
    /// than Redis promises between pipelined commands and never less.
    /// `FLUSHALL`, `FLUSHDB` and `FUNCTION` are always alone in theirs.
    Commands(#[serde(with = "requests")] Vec<Request>),
    /// `EXEC`: the queued commands, atomically, unless a watched key's
    /// value is no longer what `WATCH` read (`watched`: each key and a
    /// digest of its live stored bytes, `None` when it was missing), which
    /// makes the reply a null array. `local` holds, in the place of each
    /// queued server command (`CLIENT`, `CONFIG`, ...), the reply the
    /// leader gave it; data commands have `None` there.
    Exec {
        watched: Vec<(Vec<u8>, Option<u64>)>,
        #[serde(with = "requests")]
        queued: Vec<Request>,
        local: Vec<Option<Reply>>,
    },
    /// `body` proposed by a restricted ACL user, its rules carried whole
    /// as the proposing node had them, so every node checks the scripts'
    /// `redis.call`s (and `SORT`'s patterns) against the same rules.
    AsUser {
        user: crate::acl::user::User,
        body: Box<Body>,
    },
}

impl Body {
    /// The first command of the entry (to redirect it by).
    pub fn first_request(&self) -> crate::resp::Request {
        match self {
            Body::Commands(reqs) => reqs.first().cloned().unwrap_or_default(),
            Body::Exec { queued, .. } => queued.first().cloned().unwrap_or_default(),
            Body::AsUser { body, .. } => body.first_request(),
        }
    }
}

impl Proposal {
    pub fn encode(&self) -> Vec<u8> {
        bincode::serialize(self).unwrap_or_default()
    }

    pub fn decode(bytes: &[u8]) -> Option<Proposal> {
        bincode::deserialize(bytes).ok()
    }
}

/// The state machine's replies to a proposal, in its commands' order
/// (one for an `EXEC`).
pub fn encode_replies(replies: &[Reply]) -> Vec<u8> {
    bincode::serialize(replies).unwrap_or_default()
}

pub fn decode_replies(bytes: &[u8]) -> Option<Vec<Reply>> {
    bincode::deserialize(bytes).ok()
}

/// Requests as sequences of byte strings (`serde_bytes`: one copy per
/// argument, the same bincode bytes as `Vec<Vec<u8>>`).
mod requests {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use serde_bytes::{ByteBuf, Bytes};

    use crate::resp::Request;

    pub fn serialize<S: Serializer>(reqs: &[Request], s: S) -> Result<S::Ok, S::Error> {
        let wire: Vec<Vec<&Bytes>> = reqs
            .iter()
            .map(|r| r.iter().map(|a| Bytes::new(a)).collect())
            .collect();
        wire.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Request>, D::Error> {
        let wire: Vec<Vec<ByteBuf>> = Deserialize::deserialize(d)?;
        Ok(wire
            .into_iter()
            .map(|r| r.into_iter().map(ByteBuf::into_vec).collect())
            .collect())
    }
}

/// The digest of a key's live stored bytes that `WATCH` records.
pub fn digest(stored: Option<&[u8]>) -> Option<u64> {
    stored.map(xxhash_rust::xxh3::xxh3_64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proposal_and_its_replies_survive_encoding() {
        let p = Proposal {
            origin: 3,
            body: Body::Exec {
                watched: vec![(b"k".to_vec(), Some(7)), (b"gone".to_vec(), None)],
                queued: vec![vec![b"SET".to_vec(), b"k".to_vec(), b"v".to_vec()]],
                local: vec![None],
            },
        };
        let back = Proposal::decode(&p.encode()).unwrap();
        assert_eq!(format!("{back:?}"), format!("{p:?}"));
        let replies = vec![
            Reply::ok(),
            Reply::Int(-1),
            Reply::NullArray,
            Reply::Double(0.5),
        ];
        assert_eq!(decode_replies(&encode_replies(&replies)).unwrap(), replies);
        assert!(Proposal::decode(b"\xff\xff").is_none());
    }

    #[test]
    fn requests_encode_as_the_plain_byte_vectors_logs_already_hold() {
        #[derive(Serialize)]
        enum PlainBody {
            Commands(Vec<Vec<Vec<u8>>>),
        }
        let reqs = vec![vec![b"SET".to_vec(), b"k".to_vec(), vec![0, 255]], vec![]];
        assert_eq!(
            bincode::serialize(&Body::Commands(reqs.clone())).unwrap(),
            bincode::serialize(&PlainBody::Commands(reqs)).unwrap()
        );
    }
}
