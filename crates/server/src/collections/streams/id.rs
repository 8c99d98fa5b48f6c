//! Stream entry IDs (`<ms>-<seq>`, two unsigned 64-bit numbers) and the
//! ways Redis 7.0 parses them: strict (a concrete ID, as `XADD`, `XDEL`
//! and `MINID` take one), or as a range end (`-`, `+`, a `(` for an
//! exclusive end; a missing sequence number is the lowest at a start and
//! the highest at an end).

use crate::commands::{fail, Fail};

/// An entry ID; the derived order is Redis's (milliseconds, then sequence).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId {
    pub ms: u64,
    pub seq: u64,
}

pub const MAX: StreamId = StreamId {
    ms: u64::MAX,
    seq: u64::MAX,
};

impl StreamId {
    /// The element sub-key of this entry: `e`, then both numbers big
    /// endian, so that byte order is ID order.
    pub fn sub_key(self) -> [u8; 17] {
        let mut k = [0; 17];
        k[0] = b'e';
        k[1..9].copy_from_slice(&self.ms.to_be_bytes());
        k[9..].copy_from_slice(&self.seq.to_be_bytes());
        k
    }

    /// The ID an element sub-key holds.
    pub fn of_sub_key(sub: &[u8]) -> Result<StreamId, Fail> {
        match (sub.get(1..9), sub.get(9..17)) {
            (Some(ms), Some(seq)) if sub.len() == 17 => Ok(StreamId {
                ms: u64::from_be_bytes(ms.try_into().unwrap_or_default()),
                seq: u64::from_be_bytes(seq.try_into().unwrap_or_default()),
            }),
            _ => Err(fail("ERR corrupt stream: a bad entry key")),
        }
    }

    pub fn to_bytes(self) -> Vec<u8> {
        format!("{}-{}", self.ms, self.seq).into_bytes()
    }

    /// The next ID, `None` past the last.
    pub fn next(self) -> Option<StreamId> {
        match self.seq.checked_add(1) {
            Some(seq) => Some(StreamId { ms: self.ms, seq }),
            None => self.ms.checked_add(1).map(|ms| StreamId { ms, seq: 0 }),
        }
    }

    /// The previous ID, `None` before the first.
    pub fn prev(self) -> Option<StreamId> {
        match self.seq.checked_sub(1) {
            Some(seq) => Some(StreamId { ms: self.ms, seq }),
            None => self
                .ms
                .checked_sub(1)
                .map(|ms| StreamId { ms, seq: u64::MAX }),
        }
    }
}

pub fn invalid_id() -> Fail {
    fail("ERR Invalid stream ID specified as stream command argument")
}

/// A parsed `XADD` ID: the ID, and whether its sequence number was given
/// (`<ms>-*` leaves it to the server).
#[derive(Debug)]
pub struct AddId {
    pub id: StreamId,
    pub seq_given: bool,
}

/// A concrete ID (`-` and `+` refused); `<ms>-*` only where `star` allows
/// it (`XADD`). A missing sequence number is `missing_seq`.
pub fn parse_strict(arg: &[u8], missing_seq: u64, star: bool) -> Result<AddId, Fail> {
    if arg == b"-" || arg == b"+" {
        return Err(invalid_id());
    }
    parse(arg, missing_seq, star)
}

/// An ID, `-` or `+`, with no `(` (Redis's `streamParseIDOrReply`, as
/// `XGROUP SETID` takes one).
pub fn parse_any(arg: &[u8], missing_seq: u64) -> Result<StreamId, Fail> {
    Ok(parse(arg, missing_seq, false)?.id)
}

/// A range end: `-`, `+`, or an ID (its sequence number `missing_seq` if
/// missing); with a `(` (and more after it), exclusive.
pub fn parse_end(arg: &[u8], missing_seq: u64) -> Result<(StreamId, bool), Fail> {
    if arg.len() > 1 && arg[0] == b'(' {
        return Ok((parse_strict(&arg[1..], missing_seq, false)?.id, true));
    }
    Ok((parse(arg, missing_seq, false)?.id, false))
}

/// Redis's `streamGenericParseIDOrReply`: C sees the argument up to its
/// first NUL, and each number as `string2ull` reads it.
fn parse(arg: &[u8], missing_seq: u64, star: bool) -> Result<AddId, Fail> {
    if arg.len() > 127 {
        return Err(invalid_id());
    }
    let text = arg.split(|&b| b == 0).next().unwrap_or_default();
    match text {
        b"-" => return Ok(given(0, 0)),
        b"+" => return Ok(given(u64::MAX, u64::MAX)),
        _ => {}
    }
    let (ms, seq) = match text.iter().position(|&b| b == b'-') {
        Some(dash) => (&text[..dash], Some(&text[dash + 1..])),
        None => (text, None),
    };
    let ms = string2ull(ms).ok_or_else(invalid_id)?;
    match seq {
        Some(b"*") if star => Ok(AddId {
            id: StreamId { ms, seq: 0 },
            seq_given: false,
        }),
        Some(seq) => Ok(given(ms, string2ull(seq).ok_or_else(invalid_id)?)),
        None => Ok(given(ms, missing_seq)),
    }
}

fn given(ms: u64, seq: u64) -> AddId {
    AddId {
        id: StreamId { ms, seq },
        seq_given: true,
    }
}

/// Redis's `string2ull`: a canonical signed integer that is not negative,
/// else whatever C's `strtoull` reads whole without a range error
/// (leading blanks, a sign, a minus that wraps around, included).
fn string2ull(text: &[u8]) -> Option<u64> {
    if let Ok(n) = crate::commands::int_arg(text) {
        return u64::try_from(n).ok();
    }
    if text.is_empty() {
        return None;
    }
    let c = std::ffi::CString::new(text).ok()?;
    let mut end: *mut libc::c_char = std::ptr::null_mut();
    // SAFETY: `c` is NUL-terminated and outlives the call; `end` is a
    // valid place for strtoull to store a pointer into it; errno is this
    // thread's.
    let (value, parsed, errno) = unsafe {
        *libc::__errno_location() = 0;
        let value = libc::strtoull(c.as_ptr(), &mut end, 10);
        (
            value,
            end.offset_from(c.as_ptr()) as usize,
            *libc::__errno_location(),
        )
    };
    (errno != libc::EINVAL && errno != libc::ERANGE && parsed == text.len()).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(ms: u64, seq: u64) -> StreamId {
        StreamId { ms, seq }
    }

    fn parse_strict(arg: &[u8], missing_seq: u64, star: bool) -> Result<AddId, ()> {
        super::parse_strict(arg, missing_seq, star).map_err(|_| ())
    }

    fn parse_end(arg: &[u8], missing_seq: u64) -> Result<(StreamId, bool), ()> {
        super::parse_end(arg, missing_seq).map_err(|_| ())
    }

    #[test]
    fn ids_parse_as_redis_reads_them() {
        assert_eq!(parse_strict(b"5-3", 0, false).unwrap().id, id(5, 3));
        assert_eq!(parse_strict(b"5", 7, false).unwrap().id, id(5, 7));
        assert!(parse_strict(b"-", 0, false).is_err());
        assert!(parse_strict(b"5-*", 0, false).is_err());
        let star = parse_strict(b"5-*", 0, true).unwrap();
        assert_eq!((star.id, star.seq_given), (id(5, 0), false));
        assert!(parse_strict(b"-1", 0, false).is_err());
        assert!(parse_strict(b"5-x", 0, false).is_err());
        assert!(parse_strict(b"", 0, false).is_err());
        assert!(parse_strict(b"18446744073709551616", 0, false).is_err());
        assert_eq!(
            parse_strict(b"18446744073709551615-0", 0, false)
                .unwrap()
                .id,
            id(u64::MAX, 0)
        );
        // strtoull's leniency, which Redis inherits.
        assert_eq!(parse_strict(b" 5", 0, false).unwrap().id, id(5, 0));
        assert_eq!(parse_strict(b"+5", 0, false).unwrap().id, id(5, 0));
        assert_eq!(parse_end(b"-", 0).unwrap(), (id(0, 0), false));
        assert_eq!(parse_end(b"+", 0).unwrap(), (MAX, false));
        assert_eq!(parse_end(b"(5", u64::MAX).unwrap(), (id(5, u64::MAX), true));
        assert!(parse_end(b"(-", 0).is_err());
        assert!(parse_end(b"(", 0).is_err());
    }

    #[test]
    fn sub_keys_sort_as_ids_and_round_trip() {
        let ids = [id(0, 1), id(1, 0), id(1, 2), id(256, 0), id(u64::MAX, 5)];
        for w in ids.windows(2) {
            assert!(w[0].sub_key() < w[1].sub_key());
        }
        for i in ids {
            assert_eq!(StreamId::of_sub_key(&i.sub_key()).ok(), Some(i));
        }
        assert_eq!(id(3, u64::MAX).next(), Some(id(4, 0)));
        assert_eq!(MAX.next(), None);
        assert_eq!(id(4, 0).prev(), Some(id(3, u64::MAX)));
        assert_eq!(id(0, 0).prev(), None);
    }
}
