//! A stream whole, as `DUMP` reads it and `RESTORE` writes it: its
//! entries, counters and consumer groups (the payload's form is
//! `collections/dump/stream.rs`).

use super::groups::consumer_key;
use super::id::MAX;
use super::stream::{decode_fields, encode_fields, Stream};
use crate::access::Access;
use crate::collections::dump::{GroupObject, StreamObject};
use crate::commands::{fail, Fail};

/// Entries read per step.
const STEP: usize = 1024;

/// The stream at `key` (which holds one), whole.
pub fn read_whole(acc: &mut dyn Access, key: &[u8]) -> Result<StreamObject, Fail> {
    let Some(s) = Stream::load(acc, key)? else {
        return Err(fail("ERR no such key"));
    };
    let mut entries = Vec::new();
    let mut from = s.low;
    loop {
        let batch = s.entries(acc, from, MAX, STEP)?;
        let done = batch.len() < STEP;
        for (id, stored) in &batch {
            entries.push((*id, decode_fields(stored)?));
        }
        match batch.last().and_then(|(id, _)| id.next()) {
            Some(next) if !done => from = next,
            _ => break,
        }
    }
    let mut groups = Vec::new();
    for (name, position) in s.groups(acc)? {
        groups.push(GroupObject {
            pending: s.all_pending(acc, &name)?,
            consumers: s.consumers(acc, &name)?,
            name,
            position,
        });
    }
    Ok(StreamObject {
        entries,
        last: s.last,
        max_deleted: s.max_deleted,
        added: s.added,
        groups,
    })
}

/// Writes `object` as the stream at `key`, which holds nothing.
pub fn create(acc: &mut dyn Access, key: &[u8], object: StreamObject) -> Result<(), Fail> {
    let mut s = Stream::load_or_new(acc, key)?;
    for (id, pairs) in &object.entries {
        acc.put_item(&s.coll.item_key(&id.sub_key()), &encode_fields(pairs))?;
    }
    s.coll.len = object.entries.len() as i64;
    s.last = object.last;
    s.max_deleted = object.max_deleted;
    s.added = object.added;
    s.low = object.entries.first().map_or(Default::default(), |e| e.0);
    for g in object.groups {
        s.set_group(acc, &g.name, &g.position)?;
        for p in &g.pending {
            s.put_pending(acc, &g.name, p)?;
        }
        for (consumer, seen) in g.consumers {
            let k = s.coll.item_key(&consumer_key(&g.name, &consumer));
            acc.put_item(&k, &seen.to_be_bytes())?;
        }
    }
    s.save(acc)
}
