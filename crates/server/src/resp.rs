//! RESP, the Redis protocol: requests (multibulk arrays of bulk strings,
//! or inline commands) parsed incrementally with Redis's limits. Replies
//! and their encoding are in `reply.rs`, re-exported here.
//!
//! Limits as Redis has them: a bulk string of at most 512 MB
//! (`proto-max-bulk-len`), a multibulk of at most 2^31 - 1 elements, an
//! inline command of at most 64 KiB. Anything else malformed is a protocol
//! error: the caller answers `-ERR Protocol error: ...` and closes. One
//! check is stricter than Redis's: the two bytes after a bulk string must
//! be `\r\n` (Redis skips them unread, so `$4\r\nPINGXY` is its PING).

/// Largest bulk string, as Redis's default `proto-max-bulk-len`.
pub const MAX_BULK: usize = 512 * 1024 * 1024;
/// Most elements of one request: Redis 7's `INT_MAX` (memory is bounded
/// by the query-buffer limits, not by this count; the argument list is
/// not allocated from it).
pub const MAX_MULTIBULK: usize = i32::MAX as usize;
/// Longest inline request.
pub const MAX_INLINE: usize = 64 * 1024;

/// One request: the command name and its arguments.
pub type Request = Vec<Vec<u8>>;

/// A malformed request (the message after `Protocol error: `).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolError(pub String);

/// Parses the first complete request of `buf`: `Ok(Some((request, bytes
/// used)))`, `Ok(None)` if more input is needed, or the protocol error.
/// An empty inline line is a request with no arguments (skipped).
pub fn parse(buf: &[u8]) -> Result<Option<(Request, usize)>, ProtocolError> {
    parse_resuming(buf, &mut Progress::default())
}

/// How far the checking of an incomplete request at the start of the
/// input got (arguments and bytes), so that the next attempt, with more
/// input, starts there: a request of many arguments arriving in many reads
/// costs its length once, not once per read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    args: usize,
    at: usize,
}

/// How large a request may be: Redis's limits, or its tighter ones for a
/// client that has not logged in while a password is needed (at most 10
/// arguments of at most 16 KiB, `processMultibulkBuffer`), so that such a
/// client cannot make the server hold much for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    args: usize,
    bulk: usize,
    unauthenticated: bool,
}

impl Limits {
    pub const DEFAULT: Limits = Limits {
        args: MAX_MULTIBULK,
        bulk: MAX_BULK,
        unauthenticated: false,
    };
    pub const UNAUTHENTICATED: Limits = Limits {
        args: 10,
        bulk: 16 * 1024,
        unauthenticated: true,
    };

    fn too_many(self) -> ProtocolError {
        match self.unauthenticated {
            true => err("unauthenticated multibulk length"),
            false => err("invalid multibulk length"),
        }
    }

    fn too_long(self) -> ProtocolError {
        match self.unauthenticated {
            true => err("unauthenticated bulk length"),
            false => err("invalid bulk length"),
        }
    }
}

/// [`parse`], resuming from `progress`, which must come from the call that
/// found the same request (at the start of `buf`) incomplete, or be the
/// default; it is left as the next call needs it.
pub fn parse_resuming(
    buf: &[u8],
    progress: &mut Progress,
) -> Result<Option<(Request, usize)>, ProtocolError> {
    parse_limited(buf, progress, Limits::DEFAULT)
}

/// [`parse_resuming`] within `limits`.
pub fn parse_limited(
    buf: &[u8],
    progress: &mut Progress,
    limits: Limits,
) -> Result<Option<(Request, usize)>, ProtocolError> {
    match buf.first() {
        None => Ok(None),
        Some(b'*') => parse_multibulk(buf, progress, limits),
        Some(_) => parse_inline(buf),
    }
}

/// The line starting at `at` (without `\r\n`) and the offset after it.
fn line(buf: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let rest = buf.get(at..)?;
    let end = rest.windows(2).position(|w| w == b"\r\n")?;
    Some((&rest[..end], at + end + 2))
}

/// A length as Redis's `string2ll` reads it: no sign but `-`, no leading
/// zeros, no blanks (`$04` and `*01` are protocol errors there too).
fn number(digits: &[u8]) -> Option<i64> {
    let text = std::str::from_utf8(digits).ok()?;
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    let canonical = match unsigned.as_bytes() {
        [b'0'] => text == "0",
        [b'1'..=b'9', ..] => true,
        _ => false,
    };
    canonical.then(|| text.parse().ok()).flatten()
}

fn err(msg: &str) -> ProtocolError {
    ProtocolError(msg.to_string())
}

fn parse_multibulk(
    buf: &[u8],
    progress: &mut Progress,
    limits: Limits,
) -> Result<Option<(Request, usize)>, ProtocolError> {
    let Some((head, first)) = line(buf, 1) else {
        return match buf.len() > MAX_INLINE {
            true => Err(err("too big mbulk count string")),
            false => Ok(None),
        };
    };
    let count = number(head).ok_or_else(|| err("invalid multibulk length"))?;
    if count > MAX_MULTIBULK as i64 {
        return Err(err("invalid multibulk length"));
    }
    if count > limits.args as i64 {
        return Err(limits.too_many());
    }
    if count <= 0 {
        return Ok(Some((Vec::new(), first)));
    }
    let count = count as usize;
    // Checked up to `progress` by the calls that found the request
    // incomplete: each byte is scanned once however slowly it arrives.
    let (mut checked, mut at) = match progress.args > 0 {
        true => (progress.args, progress.at),
        false => (0, first),
    };
    while checked < count {
        match bulk_at(buf, at, limits)? {
            Some((_, next)) => (checked, at) = (checked + 1, next),
            None => {
                *progress = Progress { args: checked, at };
                return Ok(None);
            }
        }
    }
    *progress = Progress::default();
    let mut args = Vec::with_capacity(count);
    let mut at = first;
    while let Ok(Some((arg, next))) = bulk_at(buf, at, limits) {
        args.push(buf[arg].to_vec());
        at = next;
        if args.len() == count {
            break;
        }
    }
    Ok(Some((args, at)))
}

/// The bulk string at `at`: the range of its bytes and the offset after
/// it, `None` if `buf` ends first.
fn bulk_at(
    buf: &[u8],
    at: usize,
    limits: Limits,
) -> Result<Option<(std::ops::Range<usize>, usize)>, ProtocolError> {
    match buf.get(at) {
        None => return Ok(None),
        Some(b'$') => {}
        Some(&c) => return Err(ProtocolError(format!("expected '$', got '{}'", c as char))),
    }
    let Some((len, start)) = line(buf, at + 1) else {
        return match buf.len() - at > MAX_INLINE {
            true => Err(err("too big bulk count string")),
            false => Ok(None),
        };
    };
    let len = number(len).ok_or_else(|| err("invalid bulk length"))?;
    if len < 0 || len > MAX_BULK as i64 {
        return Err(err("invalid bulk length"));
    }
    if len > limits.bulk as i64 {
        return Err(limits.too_long());
    }
    let end = start + len as usize;
    if buf.len() < end + 2 {
        return Ok(None);
    }
    if &buf[end..end + 2] != b"\r\n" {
        return Err(err("invalid bulk length"));
    }
    Ok(Some((start..end, end + 2)))
}

fn parse_inline(buf: &[u8]) -> Result<Option<(Request, usize)>, ProtocolError> {
    let Some(nl) = buf.iter().position(|&b| b == b'\n') else {
        return match buf.len() > MAX_INLINE {
            true => Err(err("too big inline request")),
            false => Ok(None),
        };
    };
    if nl > MAX_INLINE {
        return Err(err("too big inline request"));
    }
    let text = buf[..nl].strip_suffix(b"\r").unwrap_or(&buf[..nl]);
    Ok(Some((split_inline(text)?, nl + 1)))
}

/// Splits an inline command as Redis does (`inline.rs`).
fn split_inline(text: &[u8]) -> Result<Request, ProtocolError> {
    crate::inline::split_args(text).map_err(|_| err("unbalanced quotes in request"))
}

pub use crate::reply::{encode_bulk, format_double, Bulks, Reply};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_multibulk_incrementally() {
        let req = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n";
        for cut in 0..req.len() {
            assert_eq!(parse(&req[..cut]), Ok(None), "cut {cut}");
        }
        let (r, n) = parse(req).unwrap().unwrap();
        assert_eq!(n, req.len());
        assert_eq!(r, vec![b"SET".to_vec(), b"k".to_vec(), b"hello".to_vec()]);
    }

    #[test]
    fn resumes_where_the_last_attempt_stopped() {
        let mut req = b"*1000\r\n".to_vec();
        for i in 0..1000 {
            let arg = format!("arg{i}");
            req.extend(format!("${}\r\n{arg}\r\n", arg.len()).as_bytes());
        }
        let mut progress = Progress::default();
        for cut in (0..req.len()).step_by(7) {
            assert_eq!(parse_resuming(&req[..cut], &mut progress), Ok(None));
        }
        let (r, n) = parse_resuming(&req, &mut progress).unwrap().unwrap();
        assert_eq!((r.len(), n), (1000, req.len()));
        assert_eq!(r[999], b"arg999");
        assert_eq!(progress, Progress::default());
        // A damaged argument after the checked ones is still an error.
        let mut bad = req[..req.len() - 2].to_vec();
        bad.extend(b"XY");
        let mut progress = Progress::default();
        assert_eq!(
            parse_resuming(&bad[..bad.len() / 2], &mut progress),
            Ok(None)
        );
        assert!(parse_resuming(&bad, &mut progress).is_err());
    }

    #[test]
    fn a_request_cut_anywhere_parses_as_the_whole() {
        let req = b"*3\r\n$3\r\nSET\r\n$2\r\nk\r\r\n$5\r\nhe\r\no\r\n*1\r\n$4\r\nPING\r\n";
        let whole = parse(req).unwrap().unwrap();
        assert_eq!(
            whole.0,
            vec![b"SET".to_vec(), b"k\r".to_vec(), b"he\r\no".to_vec()]
        );
        for cut in 0..req.len() {
            let mut progress = Progress::default();
            let first = parse_resuming(&req[..cut], &mut progress).unwrap();
            match first {
                Some(done) => assert_eq!(done, whole, "cut {cut}"),
                None => assert_eq!(parse_resuming(req, &mut progress), Ok(Some(whole.clone()))),
            }
            assert_eq!(progress, Progress::default(), "cut {cut}");
        }
    }

    #[test]
    fn parses_inline_with_quotes() {
        let (r, n) = parse(b"set \"a b\" 'c'\r\nrest").unwrap().unwrap();
        assert_eq!(r, vec![b"set".to_vec(), b"a b".to_vec(), b"c".to_vec()]);
        assert_eq!(n, 15);
        assert!(parse(b"set \"a\r\n").is_err());
    }

    #[test]
    fn malformed_requests_are_protocol_errors() {
        assert!(parse(b"*x\r\n").is_err());
        assert!(parse(b"*2147483648\r\n").is_err());
        assert_eq!(parse(b"*2147483647\r\n"), Ok(None));
        assert!(parse(b"*01\r\n$4\r\nPING\r\n").is_err());
        assert!(parse(b"*1\r\n$04\r\nPING\r\n").is_err());
        assert!(parse(b"*1\r\n$+4\r\nPING\r\n").is_err());
        assert!(parse(b"*1\r\n:3\r\n").is_err());
        assert!(parse(b"*1\r\n$-5\r\n").is_err());
        assert!(parse(b"*1\r\n$600000000\r\n").is_err());
        assert!(parse(b"*1\r\n$1\r\nab\r\n").is_err());
        assert!(parse(&vec![b'a'; MAX_INLINE + 10]).is_err());
    }
}
