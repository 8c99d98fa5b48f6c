//! A stream in Redis's `DUMP` payload (`rdbSaveObject`'s `OBJ_STREAM`):
//! its entries as listpack nodes of a radix tree, its counters, then each
//! consumer group with its pending entries and consumers.
//!
//! Read: the three types Redis writes, `RDB_TYPE_STREAM_LISTPACKS` (15,
//! Redis 5 and 6: no first ID, deletion mark, added count or read
//! counters), `_2` (19, Redis 7.0) and `_3` (21, Redis 7.2: a consumer's
//! active time after its seen time, not kept here). Written: type 19
//! under RDB version 10 (Redis 7.0's), the newest without the active
//! time this server does not keep.
//!
//! Reading checks what Redis's deep sanitization checks and refuses what
//! would leave a stream this server could not serve: entries out of
//! order or above the last ID, a length that is not the entries', a
//! pending entry without a consumer or claimed by two, a repeated group,
//! consumer or pending ID.

use std::collections::{HashMap, HashSet};

use super::encoding::{put_len, put_string, Reader};
use super::packed::{self, ListpackWriter};
use crate::collections::streams::{Group, Pending, StreamId};

pub const TYPE_V1: u8 = 15;
pub const TYPE_V2: u8 = 19;
pub const TYPE_V3: u8 = 21;
/// The RDB version a stream payload is written under (Redis 7.0's).
pub const WRITTEN_VERSION: u16 = 10;

/// Entries per listpack node written (Redis's `stream-node-max-entries`).
const NODE_ENTRIES: usize = 100;
/// An entry's flags in a node.
const DELETED: i64 = 1;
const SAME_FIELDS: i64 = 2;

/// A stream as a payload carries it.
#[derive(Debug, PartialEq, Default)]
pub struct StreamObject {
    /// Each entry's ID and its fields and values, alternating.
    pub entries: Vec<(StreamId, Vec<Vec<u8>>)>,
    pub last: StreamId,
    pub max_deleted: StreamId,
    /// Entries ever added.
    pub added: u64,
    pub groups: Vec<GroupObject>,
}

/// A consumer group as a payload carries it: its position, its pending
/// entries (each naming its consumer) in ID order, and its consumers with
/// when each was last seen (ms).
#[derive(Debug, PartialEq, Default)]
pub struct GroupObject {
    pub name: Vec<u8>,
    pub position: Group,
    pub pending: Vec<Pending>,
    pub consumers: Vec<(Vec<u8>, u64)>,
}

/// The stream after the type byte `kind`, `None` if malformed.
pub fn read(r: &mut Reader, kind: u8) -> Option<StreamObject> {
    let mut s = StreamObject::default();
    let nodes = r.count()?;
    for _ in 0..nodes {
        let master = id_of_raw(&r.string()?)?;
        let elements = packed::listpack(&r.string()?)?;
        read_node(master, &elements, &mut s.entries)?;
    }
    let length = r.len()?;
    s.last = read_id(r)?;
    if kind == TYPE_V1 {
        s.added = length;
    } else {
        read_id(r)?; // the first ID: the first entry's, recomputed here
        s.max_deleted = read_id(r)?;
        s.added = r.len()?;
    }
    let ordered = s.entries.windows(2).all(|w| w[0].0 < w[1].0);
    let below_last = s.entries.last().is_none_or(|(id, _)| *id <= s.last);
    if length != s.entries.len() as u64 || !ordered || !below_last {
        return None;
    }
    let groups = r.count()?;
    let mut names = HashSet::new();
    for _ in 0..groups {
        let g = read_group(r, kind, &s)?;
        names.insert(g.name.clone()).then_some(())?;
        s.groups.push(g);
    }
    Some(s)
}

fn read_id(r: &mut Reader) -> Option<StreamId> {
    Some(StreamId {
        ms: r.len()?,
        seq: r.len()?,
    })
}

/// An ID as 16 raw bytes (both numbers big endian).
fn id_of_raw(raw: &[u8]) -> Option<StreamId> {
    (raw.len() == 16).then(|| StreamId {
        ms: u64::from_be_bytes(raw[..8].try_into().unwrap_or_default()),
        seq: u64::from_be_bytes(raw[8..].try_into().unwrap_or_default()),
    })
}

fn raw_of_id(id: StreamId) -> [u8; 16] {
    let mut raw = [0; 16];
    raw[..8].copy_from_slice(&id.ms.to_be_bytes());
    raw[8..].copy_from_slice(&id.seq.to_be_bytes());
    raw
}

/// One node's live entries (`t_stream.c`'s layout): a master entry
/// (live count, deleted count, the master fields, a 0), then per entry
/// its flags, its ID as deltas from the master's, its values (when it has
/// the master's fields) or its fields and values, and its element count.
fn read_node(
    master: StreamId,
    elements: &[Vec<u8>],
    out: &mut Vec<(StreamId, Vec<Vec<u8>>)>,
) -> Option<()> {
    let int_of = |e: Option<&Vec<u8>>| crate::commands::canonical_int(e?);
    let (live, deleted) = (int_of(elements.first())?, int_of(elements.get(1))?);
    let master_fields = usize::try_from(int_of(elements.get(2))?).ok()?;
    let mut it = elements.iter().skip(3);
    let fields: Vec<&Vec<u8>> = it.by_ref().take(master_fields).collect();
    if fields.len() != master_fields || int_of(it.next())? != 0 {
        return None;
    }
    let (mut seen_live, mut seen_deleted) = (0, 0);
    while let Some(flags) = it.next() {
        let flags = int_of(Some(flags))?;
        let id = StreamId {
            ms: master.ms.wrapping_add(int_of(it.next())? as u64),
            seq: master.seq.wrapping_add(int_of(it.next())? as u64),
        };
        let (pairs, expected): (Vec<Vec<u8>>, usize) = if flags & SAME_FIELDS != 0 {
            let values = it.by_ref().take(master_fields);
            let pairs = fields
                .iter()
                .zip(values)
                .flat_map(|(f, v)| [(*f).clone(), v.clone()]);
            (pairs.collect(), 2 * master_fields)
        } else {
            let n = usize::try_from(int_of(it.next())?).ok()?;
            (it.by_ref().take(2 * n).cloned().collect(), 2 * n)
        };
        if pairs.len() != expected || pairs.is_empty() {
            return None;
        }
        int_of(it.next())?; // the element count, for walking backwards
        if flags & DELETED != 0 {
            seen_deleted += 1;
        } else {
            seen_live += 1;
            out.push((id, pairs));
        }
    }
    (seen_live == live && seen_deleted == deleted && live + deleted > 0).then_some(())
}

fn read_group(r: &mut Reader, kind: u8, s: &StreamObject) -> Option<GroupObject> {
    let mut g = GroupObject {
        name: r.string()?,
        ..GroupObject::default()
    };
    g.position.last = read_id(r)?;
    g.position.entries_read = match kind {
        TYPE_V1 => estimated_reads(s, g.position.last),
        _ => Some(r.len()?).filter(|&n| n != u64::MAX),
    };
    let mut owner: HashMap<StreamId, Option<usize>> = HashMap::new();
    for _ in 0..r.count()? {
        let id = id_of_raw(r.bytes(16)?)?;
        let delivered_at = u64::from_le_bytes(r.bytes(8)?.try_into().ok()?);
        let count = r.len()?;
        owner.insert(id, None).is_none().then_some(())?;
        g.pending.push(Pending {
            id,
            delivered_at,
            count,
            consumer: Vec::new(),
        });
    }
    let mut names = HashSet::new();
    for c in 0..r.count()? {
        let name = r.string()?;
        let seen = u64::from_le_bytes(r.bytes(8)?.try_into().ok()?);
        if kind == TYPE_V3 {
            r.bytes(8)?; // the active time
        }
        for _ in 0..r.count()? {
            let id = id_of_raw(r.bytes(16)?)?;
            // Claimed once, by one consumer, from the group's list.
            owner.get_mut(&id)?.replace(c).is_none().then_some(())?;
        }
        names.insert(name.clone()).then_some(())?;
        g.consumers.push((name, seen));
    }
    for p in &mut g.pending {
        p.consumer = g.consumers.get((*owner.get(&p.id)?)?)?.0.clone();
    }
    Some(g)
}

/// What Redis 7 estimates a group's `entries_read` to be when a Redis 6
/// payload has none (`streamEstimateDistanceFromFirstEverEntry` with no
/// deletions known and every entry ever added still there).
fn estimated_reads(s: &StreamObject, id: StreamId) -> Option<u64> {
    let Some((first, _)) = s.entries.first() else {
        return Some(s.added);
    };
    match id {
        _ if s.added == 0 => Some(0),
        _ if id == s.last => Some(s.added),
        _ if id > s.last => None,
        _ if id < *first => Some(s.added - s.entries.len() as u64),
        _ if id == *first => Some(s.added - s.entries.len() as u64 + 1),
        _ => None,
    }
}

/// The body (type byte and value) of a stream payload.
pub fn write(s: &StreamObject) -> Vec<u8> {
    let mut out = vec![TYPE_V2];
    put_len(&mut out, s.entries.len().div_ceil(NODE_ENTRIES) as u64);
    for node in s.entries.chunks(NODE_ENTRIES) {
        put_string(&mut out, &raw_of_id(node[0].0));
        put_string(&mut out, &node_listpack(node));
    }
    put_len(&mut out, s.entries.len() as u64);
    let first = s.entries.first().map_or(StreamId::default(), |e| e.0);
    for id in [s.last, first, s.max_deleted] {
        put_len(&mut out, id.ms);
        put_len(&mut out, id.seq);
    }
    put_len(&mut out, s.added);
    put_len(&mut out, s.groups.len() as u64);
    for g in &s.groups {
        write_group(&mut out, g);
    }
    out
}

/// One node: the first entry's fields are the master fields.
fn node_listpack(node: &[(StreamId, Vec<Vec<u8>>)]) -> Vec<u8> {
    let master = node[0].0;
    let master_fields: Vec<&[u8]> = node[0].1.iter().step_by(2).map(|f| f.as_slice()).collect();
    let mut lp = ListpackWriter::default();
    lp.push_int(node.len() as i64);
    lp.push_int(0);
    lp.push_int(master_fields.len() as i64);
    master_fields.iter().for_each(|f| lp.push(f));
    lp.push_int(0);
    for (id, pairs) in node {
        let fields = pairs.iter().step_by(2).map(|f| f.as_slice());
        let same = fields.eq(master_fields.iter().copied());
        lp.push_int(if same { SAME_FIELDS } else { 0 });
        lp.push_int(id.ms.wrapping_sub(master.ms) as i64);
        lp.push_int(id.seq.wrapping_sub(master.seq) as i64);
        let n = pairs.len() / 2;
        if same {
            pairs.iter().skip(1).step_by(2).for_each(|v| lp.push(v));
            lp.push_int(n as i64 + 3);
        } else {
            lp.push_int(n as i64);
            pairs.iter().for_each(|e| lp.push(e));
            lp.push_int(2 * n as i64 + 4);
        }
    }
    lp.finish()
}

fn write_group(out: &mut Vec<u8>, g: &GroupObject) {
    put_string(out, &g.name);
    put_len(out, g.position.last.ms);
    put_len(out, g.position.last.seq);
    put_len(out, g.position.entries_read.unwrap_or(u64::MAX));
    put_len(out, g.pending.len() as u64);
    // Each consumer's own list, in the group's (ID) order: one pass.
    let mut owned: HashMap<&[u8], Vec<StreamId>> = HashMap::new();
    for p in &g.pending {
        out.extend(raw_of_id(p.id));
        out.extend(p.delivered_at.to_le_bytes());
        put_len(out, p.count);
        owned.entry(&p.consumer).or_default().push(p.id);
    }
    put_len(out, g.consumers.len() as u64);
    for (name, seen) in &g.consumers {
        put_string(out, name);
        out.extend(seen.to_le_bytes());
        let ids = owned.get(name.as_slice()).map_or(&[][..], |ids| ids);
        put_len(out, ids.len() as u64);
        ids.iter().for_each(|id| out.extend(raw_of_id(*id)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn id(ms: u64, seq: u64) -> StreamId {
        StreamId { ms, seq }
    }

    fn pairs(items: &[&str]) -> Vec<Vec<u8>> {
        items.iter().map(|i| i.as_bytes().to_vec()).collect()
    }

    /// A stream with entries in two nodes, one group with a pending entry
    /// of each of two consumers, and one group with none.
    fn sample() -> StreamObject {
        let mut entries: Vec<_> = (1..=150)
            .map(|i| {
                (
                    id(1000 + i / 10, i),
                    pairs(&["f", &i.to_string(), "g", "x"]),
                )
            })
            .collect();
        entries[7].1 = pairs(&["other", "-70000", "", "\u{1}"]);
        let pending = |i: u64, consumer: &str| Pending {
            id: id(1000 + i / 10, i),
            delivered_at: 1_700_000_000_000 + i,
            count: i,
            consumer: consumer.into(),
        };
        StreamObject {
            entries,
            last: id(2000, 0),
            max_deleted: id(5, 5),
            added: 155,
            groups: vec![
                GroupObject {
                    name: b"g1".to_vec(),
                    position: Group {
                        last: id(1001, 12),
                        entries_read: Some(12),
                    },
                    pending: vec![pending(3, "bob"), pending(9, "alice")],
                    consumers: vec![
                        (b"alice".to_vec(), 17),
                        (b"bob".to_vec(), 18),
                        (b"idle".to_vec(), 1),
                    ],
                },
                GroupObject {
                    name: b"12345".to_vec(),
                    ..GroupObject::default()
                },
            ],
        }
    }

    fn read_body(body: &[u8]) -> Option<StreamObject> {
        let mut r = Reader { buf: body, at: 1 };
        read(&mut r, body[0])
    }

    #[test]
    fn streams_round_trip() {
        let s = sample();
        let body = write(&s);
        assert_eq!(body[0], TYPE_V2);
        assert_eq!(read_body(&body).unwrap(), s);
        let empty = StreamObject {
            last: id(7, 1),
            added: 1,
            ..StreamObject::default()
        };
        assert_eq!(read_body(&write(&empty)).unwrap(), empty);
    }

    #[test]
    fn listpack_elements_of_every_width_round_trip() {
        let mut lp = ListpackWriter::default();
        let mut want: Vec<Vec<u8>> = Vec::new();
        let ints = [
            0,
            127,
            128,
            -1,
            4095,
            -4096,
            4096,
            32767,
            -32768,
            8_388_607,
            -8_388_608,
            1 << 31,
            i64::MIN,
            i64::MAX,
        ];
        for v in ints {
            lp.push_int(v);
            want.push(v.to_string().into_bytes());
        }
        for len in [0, 1, 63, 64, 4095, 4096, 70_000] {
            let s = vec![b'a'; len];
            lp.push(&s);
            want.push(s);
        }
        lp.push(b"007");
        want.push(b"007".to_vec());
        assert_eq!(packed::listpack(&lp.finish()).unwrap(), want);
    }

    /// Redis 5 and 6's type: no first ID, deletion mark, added count or
    /// read counters; the counters are estimated as Redis 7 does.
    #[test]
    fn redis6_streams_read_with_estimated_counters() {
        let mut s = sample();
        s.groups[0].pending.clear();
        // Cut V2's extra fields: after the nodes and the length and last
        // ID, the first ID, deletion mark and added count; after a group's
        // last ID, its read counter.
        let mut v1 = vec![TYPE_V1];
        put_len(&mut v1, 2);
        for node in s.entries.chunks(NODE_ENTRIES) {
            put_string(&mut v1, &raw_of_id(node[0].0));
            put_string(&mut v1, &node_listpack(node));
        }
        put_len(&mut v1, 150);
        put_len(&mut v1, 2000);
        put_len(&mut v1, 0);
        put_len(&mut v1, 2);
        for (g, last) in [(&b"g1"[..], id(1000, 1)), (b"12345", id(999, 0))] {
            put_string(&mut v1, g);
            put_len(&mut v1, last.ms);
            put_len(&mut v1, last.seq);
            put_len(&mut v1, 0);
            put_len(&mut v1, 0);
        }
        let read = read_body(&v1).unwrap();
        assert_eq!(read.entries, s.entries);
        assert_eq!((read.added, read.max_deleted), (150, StreamId::default()));
        // At the first entry: one read; before it: none.
        assert_eq!(read.groups[0].position.entries_read, Some(1));
        assert_eq!(read.groups[1].position.entries_read, Some(0));
    }

    #[test]
    fn inconsistent_streams_are_refused() {
        let refused = |change: &dyn Fn(&mut StreamObject)| {
            let mut s = sample();
            change(&mut s);
            read_body(&write(&s)).is_none()
        };
        let write_as_is = |s: &StreamObject| read_body(&write(s));
        assert!(write_as_is(&sample()).is_some());
        // An entry above the last ID, entries out of order.
        assert!(refused(&|s| s.last = id(1, 0)));
        assert!(refused(&|s| s.entries.swap(3, 4)));
        // A group twice; a consumer twice; a pending entry twice.
        assert!(refused(&|s| s.groups[1].name = b"g1".to_vec()));
        assert!(refused(&|s| s.groups[0].consumers[1].0 = b"alice".to_vec()));
        assert!(refused(&|s| {
            let p = s.groups[0].pending[0].clone();
            s.groups[0].pending.push(p)
        }));
        // A pending entry of no consumer.
        assert!(refused(
            &|s| s.groups[0].pending[0].consumer = b"nobody".to_vec()
        ));
        // An entry without fields.
        assert!(refused(&|s| s.entries[0].1.clear()));
    }

    #[test]
    fn a_length_that_is_not_the_entries_is_refused() {
        let s = sample();
        let body = write(&s);
        // The length follows the nodes: find it by writing the nodes alone.
        let mut nodes = vec![TYPE_V2];
        put_len(&mut nodes, 2);
        for node in s.entries.chunks(NODE_ENTRIES) {
            put_string(&mut nodes, &raw_of_id(node[0].0));
            put_string(&mut nodes, &node_listpack(node));
        }
        assert_eq!(body[nodes.len()], 0x40); // 150: two bytes
        let mut wrong = body.clone();
        wrong[nodes.len() + 1] = 149;
        assert!(read_body(&wrong).is_none());
    }

    proptest! {
        /// Any stream round trips; any damage to its body is read or
        /// refused, never a panic.
        #[test]
        fn any_stream_round_trips(
            lens in proptest::collection::vec((1usize..4, 0usize..30), 0..250),
            flip in any::<prop::sample::Index>(),
            bit in 0u8..8,
        ) {
            let entries: Vec<_> = lens
                .iter()
                .enumerate()
                .map(|(i, (n, len))| {
                    let fields = (0..*n)
                        .flat_map(|f| [format!("f{}", f * (i % 3)).into_bytes(), vec![b'7'; *len]])
                        .collect();
                    (id(i as u64 / 4, i as u64), fields)
                })
                .collect();
            let s = StreamObject {
                last: entries.last().map_or(id(0, 0), |e| e.0),
                added: entries.len() as u64,
                entries,
                ..sample()
            };
            let s = StreamObject { groups: Vec::new(), ..s };
            let mut body = write(&s);
            prop_assert_eq!(read_body(&body).unwrap(), s);
            let i = 1 + flip.index(body.len() - 1);
            body[i] ^= 1 << bit;
            let _ = read_body(&body);
        }
    }
}
