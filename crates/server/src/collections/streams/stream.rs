//! A stream's metadata ([`Stream`]: its last ID, the counters `XINFO`
//! shows, the lowest ID an entry may have) and its entries' stored form,
//! which every stream command reads.

use super::id::{invalid_id, parse_strict, StreamId};
use crate::access::Access;
use crate::collections::Coll;
use crate::commands::{fail, Fail};
use crate::resp::Reply;
use crate::store::Kind;

/// A stream's metadata (see the module docs).
pub struct Stream {
    pub coll: Coll,
    pub last: StreamId,
    pub(super) max_deleted: StreamId,
    pub(super) added: u64,
    /// No entry's ID is below this.
    pub(super) low: StreamId,
}

impl Stream {
    pub fn load(acc: &mut dyn Access, key: &[u8]) -> Result<Option<Stream>, Fail> {
        Coll::load(acc, key, Kind::Stream)?
            .map(Stream::decode)
            .transpose()
    }

    pub(super) fn load_or_new(acc: &mut dyn Access, key: &[u8]) -> Result<Stream, Fail> {
        Stream::decode(Coll::load_or_new(acc, key, Kind::Stream)?)
    }

    fn decode(coll: Coll) -> Result<Stream, Fail> {
        let m = &coll.mark;
        if !m.is_empty() && m.len() != 56 {
            return Err(fail("ERR corrupt stream metadata"));
        }
        let word = |i: usize| {
            m.get(i * 8..i * 8 + 8)
                .map_or(0, |w| u64::from_be_bytes(w.try_into().unwrap_or_default()))
        };
        let id = |i: usize| StreamId {
            ms: word(i),
            seq: word(i + 1),
        };
        Ok(Stream {
            last: id(0),
            max_deleted: id(2),
            added: word(4),
            low: id(5),
            coll,
        })
    }

    pub(super) fn save(&mut self, acc: &mut dyn Access) -> Result<(), Fail> {
        let mut m = Vec::with_capacity(56);
        for w in [
            self.last.ms,
            self.last.seq,
            self.max_deleted.ms,
            self.max_deleted.seq,
            self.added,
            self.low.ms,
            self.low.seq,
        ] {
            m.extend_from_slice(&w.to_be_bytes());
        }
        self.coll.mark = m;
        self.coll.save(acc)
    }

    /// [`save`](Self::save), then the command's keyspace notification.
    pub(super) fn save_and_tell(
        &mut self,
        acc: &mut dyn Access,
        event: &'static str,
    ) -> Result<(), Fail> {
        self.save(acc)?;
        acc.notify(crate::notify::STREAM, event, &self.coll.key);
        Ok(())
    }

    /// Up to `limit` entries from `from` on (`low` at the least) to `to`
    /// (inclusive), ascending, as (ID, stored fields).
    pub fn entries(
        &self,
        acc: &mut dyn Access,
        from: StreamId,
        to: StreamId,
        limit: usize,
    ) -> Result<Vec<(StreamId, Vec<u8>)>, Fail> {
        let from = from.max(self.low);
        if from > to {
            return Ok(Vec::new());
        }
        let end = to.next().map(|id| id.sub_key().to_vec());
        let end = end.unwrap_or_else(|| b"f".to_vec());
        let items = self.coll.items(acc, &from.sub_key(), Some(&end), limit)?;
        items
            .into_iter()
            .map(|(sub, v)| Ok((StreamId::of_sub_key(&sub)?, v)))
            .collect()
    }

    /// No entry's ID is below this.
    pub fn low_mark(&self) -> StreamId {
        self.low
    }

    /// Deletes entry `id` (which exists).
    pub(super) fn remove(&mut self, acc: &mut dyn Access, id: StreamId) -> Result<(), Fail> {
        acc.del_item(&self.coll.item_key(&id.sub_key()))?;
        self.coll.len -= 1;
        Ok(())
    }
}

/// An entry's fields and values as stored: each a 32-bit big-endian
/// length, then its bytes.
pub(super) fn encode_fields(pairs: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(pairs.iter().map(|p| p.len() + 4).sum());
    for p in pairs {
        out.extend_from_slice(&(p.len() as u32).to_be_bytes());
        out.extend_from_slice(p);
    }
    out
}

/// An entry's fields and values, alternating, from their stored form.
pub(super) fn decode_fields(stored: &[u8]) -> Result<Vec<Vec<u8>>, Fail> {
    let mut fields = Vec::new();
    let mut rest = stored;
    while !rest.is_empty() {
        let len = rest
            .get(..4)
            .map(|l| u32::from_be_bytes(l.try_into().unwrap_or_default()) as usize);
        match len.and_then(|len| rest.get(4..4 + len)) {
            Some(bytes) => {
                fields.push(bytes.to_vec());
                rest = &rest[4 + bytes.len()..];
            }
            None => return Err(fail("ERR corrupt stream: a bad entry")),
        }
    }
    Ok(fields)
}

/// The reply for one entry: `[id, [field, value, ...]]`.
pub fn entry_reply(id: StreamId, stored: &[u8]) -> Result<Reply, Fail> {
    let fields = decode_fields(stored)?
        .into_iter()
        .map(Reply::Bulk)
        .collect();
    Ok(Reply::Array(vec![
        Reply::Bulk(id.to_bytes()),
        Reply::Array(fields),
    ]))
}

/// Concrete IDs, all checked before any is used (`XDEL`, `XACK`: all or
/// nothing).
pub(super) fn strict_ids(args: &[Vec<u8>]) -> Result<Vec<StreamId>, Fail> {
    args.iter()
        .map(|arg| Ok(parse_strict(arg, 0, false)?.id))
        .collect()
}

/// An error for an ID argument.
pub(crate) fn bad_id() -> Fail {
    invalid_id()
}
