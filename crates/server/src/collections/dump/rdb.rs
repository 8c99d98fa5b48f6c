//! Redis's `DUMP` payload: one value in RDB's object encoding, then the
//! RDB version (2 bytes) and a CRC-64 (Jones) of everything before it
//! (8 bytes), both little-endian.
//!
//! Read: every value type Redis 2.6 to 7.2 writes for strings, lists,
//! sets, sorted sets and hashes (plain, listpack, ziplist, intset,
//! quicklist; LZF and integer-encoded strings), so a payload `DUMP`ed by
//! Redis restores here. Written: the plain encodings every Redis since
//! 2.6 reads (`RDB_TYPE_LIST`, `SET`, `ZSET_2`, `HASH`) under RDB version
//! 9, so a payload dumped here restores in Redis 5, 6 and 7. Streams are
//! read and written by `stream.rs` (written under version 10: Redis 7.0
//! and later restore them). Module values are neither read nor written.

use super::encoding::{put_len, put_string, Reader};
use super::packed;
use super::stream::{self, StreamObject};

/// The newest RDB version read (Redis 7.2's; 7.4's adds hash-field
/// expiry types, which are not read).
const NEWEST_READ: u16 = 11;
/// The version written: the oldest that has every type written.
const WRITTEN: u16 = 9;

const CRC: crc::Crc<u64> = crc::Crc::<u64>::new(&crc::CRC_64_REDIS);

/// A value as a payload carries it.
#[derive(Debug, PartialEq)]
pub enum Object {
    String(Vec<u8>),
    List(Vec<Vec<u8>>),
    Set(Vec<Vec<u8>>),
    ZSet(Vec<(Vec<u8>, f64)>),
    Hash(Vec<(Vec<u8>, Vec<u8>)>),
    Stream(Box<StreamObject>),
}

/// Why a payload was refused, as Redis words it.
#[derive(Debug, PartialEq)]
pub enum Refused {
    /// Too short, a newer RDB version, or a wrong checksum.
    VersionOrChecksum,
    BadFormat,
}

/// `payload`'s value, if its footer holds and the value parses.
pub fn read(payload: &[u8]) -> Result<Object, Refused> {
    let body = checked_body(payload).ok_or(Refused::VersionOrChecksum)?;
    let mut r = Reader { buf: body, at: 0 };
    object(&mut r).ok_or(Refused::BadFormat)
}

/// The body of `payload` if its footer holds: an RDB version read here
/// and the CRC of everything before it.
pub(super) fn checked_body(payload: &[u8]) -> Option<&[u8]> {
    let body_len = payload.len().checked_sub(10)?;
    let version = u16::from_le_bytes([payload[body_len], payload[body_len + 1]]);
    let crc = u64::from_le_bytes(payload[body_len + 2..].try_into().ok()?);
    (version <= NEWEST_READ && CRC.checksum(&payload[..body_len + 2]) == crc)
        .then(|| &payload[..body_len])
}

/// A payload holding `object`.
pub fn write(object: &Object) -> Vec<u8> {
    let mut out = Vec::new();
    match object {
        Object::String(s) => {
            out.push(0);
            put_string(&mut out, s);
        }
        Object::List(items) | Object::Set(items) => {
            out.push(if matches!(object, Object::List(_)) {
                1
            } else {
                2
            });
            put_len(&mut out, items.len() as u64);
            items.iter().for_each(|i| put_string(&mut out, i));
        }
        Object::ZSet(members) => {
            out.push(5);
            put_len(&mut out, members.len() as u64);
            for (m, score) in members {
                put_string(&mut out, m);
                out.extend(score.to_le_bytes());
            }
        }
        Object::Hash(fields) => {
            out.push(4);
            put_len(&mut out, fields.len() as u64);
            for (f, v) in fields {
                put_string(&mut out, f);
                put_string(&mut out, v);
            }
        }
        Object::Stream(s) => return framed(&stream::write(s), stream::WRITTEN_VERSION),
    }
    frame(&out)
}

/// `body` (a type byte and a value) with the footer: version and CRC.
pub fn frame(body: &[u8]) -> Vec<u8> {
    framed(body, WRITTEN)
}

fn framed(body: &[u8], version: u16) -> Vec<u8> {
    let mut out = body.to_vec();
    out.extend(version.to_le_bytes());
    let crc = CRC.checksum(&out);
    out.extend(crc.to_le_bytes());
    out
}

/// The value after the type byte, `None` if malformed, empty, or holding
/// a duplicate member or field.
fn object(r: &mut Reader) -> Option<Object> {
    let kind = r.byte()?;
    let object = match kind {
        0 => Object::String(r.string()?),
        1 => Object::List(strings(r)?),
        2 => Object::Set(strings(r)?),
        3 | 5 => {
            let n = r.count()?;
            let mut members = Vec::new();
            for _ in 0..n {
                let m = r.string()?;
                let score = match kind {
                    5 => r.binary_double()?,
                    _ => r.text_double()?,
                };
                members.push((m, score));
            }
            Object::ZSet(members)
        }
        4 => {
            let n = r.count()?;
            let mut fields = Vec::new();
            for _ in 0..n {
                fields.push((r.string()?, r.string()?));
            }
            Object::Hash(fields)
        }
        10 => Object::List(packed::ziplist(&r.string()?)?),
        11 => Object::Set(packed::intset(&r.string()?)?),
        12 => Object::ZSet(scored(packed::ziplist(&r.string()?)?)?),
        13 => Object::Hash(paired(packed::ziplist(&r.string()?)?)?),
        14 | 18 => Object::List(quicklist(r, kind == 18)?),
        16 => Object::Hash(paired(packed::listpack(&r.string()?)?)?),
        17 => Object::ZSet(scored(packed::listpack(&r.string()?)?)?),
        20 => Object::Set(packed::listpack(&r.string()?)?),
        stream::TYPE_V1 | stream::TYPE_V2 | stream::TYPE_V3 => {
            Object::Stream(Box::new(stream::read(r, kind)?))
        }
        _ => return None,
    };
    valid(object)
}

fn strings(r: &mut Reader) -> Option<Vec<Vec<u8>>> {
    let n = r.count()?;
    (0..n).map(|_| r.string()).collect()
}

/// A quicklist's nodes (ziplists before Redis 7; after, listpacks or
/// plain single elements, each marked).
fn quicklist(r: &mut Reader, marked: bool) -> Option<Vec<Vec<u8>>> {
    let nodes = r.count()?;
    let mut items = Vec::new();
    for _ in 0..nodes {
        let container = if marked { r.len()? } else { 2 };
        let blob = r.string()?;
        match (container, marked) {
            (1, _) => items.push(blob),
            (2, true) => items.extend(packed::listpack(&blob)?),
            (2, false) => items.extend(packed::ziplist(&blob)?),
            _ => return None,
        }
    }
    Some(items)
}

/// Alternating fields and values.
fn paired(flat: Vec<Vec<u8>>) -> Option<Vec<(Vec<u8>, Vec<u8>)>> {
    if !flat.len().is_multiple_of(2) {
        return None;
    }
    let mut it = flat.into_iter();
    let mut out = Vec::new();
    while let (Some(f), Some(v)) = (it.next(), it.next()) {
        out.push((f, v));
    }
    Some(out)
}

/// Alternating members and scores (a score as text or an integer).
fn scored(flat: Vec<Vec<u8>>) -> Option<Vec<(Vec<u8>, f64)>> {
    paired(flat)?
        .into_iter()
        .map(|(m, s)| Some((m, crate::collections::zsets::members::parse_score(&s)?)))
        .collect()
}

/// `object` unless it is empty, has a NaN score, or repeats a member or
/// field (Redis refuses each).
fn valid(object: Object) -> Option<Object> {
    fn distinct<'a>(keys: impl Iterator<Item = &'a [u8]>) -> bool {
        let mut seen = std::collections::HashSet::new();
        keys.into_iter().all(|k| seen.insert(k))
    }
    let ok = match &object {
        Object::String(_) => true,
        Object::List(items) => !items.is_empty(),
        Object::Set(items) => !items.is_empty() && distinct(items.iter().map(|i| i.as_slice())),
        Object::ZSet(m) => {
            !m.is_empty()
                && m.iter().all(|(_, s)| !s.is_nan())
                && distinct(m.iter().map(|(k, _)| k.as_slice()))
        }
        Object::Hash(f) => !f.is_empty() && distinct(f.iter().map(|(k, _)| k.as_slice())),
        Object::Stream(_) => true,
    };
    ok.then_some(object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any body, well framed, is read or refused: never a panic.
        #[test]
        fn any_body_is_read_or_refused(kind in 0u8..24, body in proptest::collection::vec(any::<u8>(), 0..300)) {
            let mut b = vec![kind];
            b.extend(body);
            let _ = read(&frame(&b));
        }

        /// A valid payload with one byte changed (the footer fixed up) is
        /// read or refused, never a panic.
        #[test]
        fn damaged_bodies_never_panic(at in any::<prop::sample::Index>(), bit in 0u8..8) {
            let list = Object::List((0..40).map(|i| format!("{i}").into_bytes()).collect());
            let good = write(&list);
            let mut body = good[..good.len() - 10].to_vec();
            let i = at.index(body.len());
            body[i] ^= 1 << bit;
            let _ = read(&frame(&body));
        }

        #[test]
        fn strings_and_hashes_round_trip(
            s in proptest::collection::vec(any::<u8>(), 0..100),
            fields in proptest::collection::hash_map(proptest::collection::vec(any::<u8>(), 0..20), proptest::collection::vec(any::<u8>(), 0..20), 1..20),
        ) {
            let o = Object::String(s);
            prop_assert_eq!(read(&write(&o)).unwrap(), o);
            let o = Object::Hash(fields.into_iter().collect());
            prop_assert_eq!(read(&write(&o)).unwrap(), o);
        }
    }

    #[test]
    fn payloads_round_trip() {
        let objects = [
            Object::String(b"hello".to_vec()),
            Object::String(b"-129".to_vec()),
            Object::String(b"007".to_vec()),
            Object::String(vec![7; 20_000]),
            Object::List(vec![b"a".to_vec(), b"12".to_vec(), vec![0; 70]]),
            Object::Set(vec![b"x".to_vec(), b"y".to_vec()]),
            Object::ZSet(vec![(b"m".to_vec(), 1.5), (b"n".to_vec(), f64::INFINITY)]),
            Object::Hash(vec![(b"f".to_vec(), b"v".to_vec())]),
        ];
        for o in objects {
            assert_eq!(read(&write(&o)).unwrap(), o);
        }
    }

    #[test]
    fn redis_string_payloads_read() {
        // DUMP of "hello" and of 1000 from redis-server 7.0.
        let hello = b"\x00\x05hello\x0a\x00\x63\x72\xdf\x76\x65\x34\x20\x0a";
        assert_eq!(read(hello).unwrap(), Object::String(b"hello".to_vec()));
        let thousand = b"\x00\xc1\xe8\x03\x0a\x00\x89\xd1\x47\x8e\xba\xc4\xb7\x64";
        assert_eq!(read(thousand).unwrap(), Object::String(b"1000".to_vec()));
        assert_eq!(write(&Object::String(b"1000".to_vec()))[..4], thousand[..4]);
    }

    #[test]
    fn damaged_payloads_are_refused() {
        let good = write(&Object::List(vec![b"a".to_vec(), b"b".to_vec()]));
        let mut flipped = good.clone();
        flipped[3] ^= 1;
        assert_eq!(read(&flipped), Err(Refused::VersionOrChecksum));
        assert_eq!(read(&good[..9]), Err(Refused::VersionOrChecksum));
        let mut newer = good[..good.len() - 10].to_vec();
        newer.extend(12u16.to_le_bytes());
        let crc = CRC.checksum(&newer);
        newer.extend(crc.to_le_bytes());
        assert_eq!(read(&newer), Err(Refused::VersionOrChecksum));
        // A well-framed body that claims more elements than it holds.
        let mut short = vec![1, 5, 1, b'a'];
        short.extend(WRITTEN.to_le_bytes());
        let crc = CRC.checksum(&short);
        short.extend(crc.to_le_bytes());
        assert_eq!(read(&short), Err(Refused::BadFormat));
    }
}
