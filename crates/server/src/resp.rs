//! RESP, the Redis protocol: requests (multibulk arrays of bulk strings,
//! or inline commands) parsed incrementally with Redis's limits, and
//! replies encoded as RESP2 or RESP3.
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

/// [`parse`], resuming from `progress`, which must come from the call that
/// found the same request (at the start of `buf`) incomplete, or be the
/// default; it is left as the next call needs it.
pub fn parse_resuming(
    buf: &[u8],
    progress: &mut Progress,
) -> Result<Option<(Request, usize)>, ProtocolError> {
    match buf.first() {
        None => Ok(None),
        Some(b'*') => parse_multibulk(buf, progress),
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
        match bulk_at(buf, at)? {
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
    while let Ok(Some((arg, next))) = bulk_at(buf, at) {
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

/// A reply, encoded for the connection's protocol version.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Simple(String),
    Error(String),
    Int(i64),
    Bulk(Vec<u8>),
    /// A missing bulk string (`$-1` / `_`).
    Null,
    /// A missing array (`*-1` / `_`): EXEC after a WATCH conflict.
    NullArray,
    Array(Vec<Reply>),
    /// A map in RESP3, a flat array of pairs in RESP2.
    Map(Vec<(Reply, Reply)>),
    /// A double in RESP3, a bulk string in RESP2.
    Double(f64),
    /// A set in RESP3, an array in RESP2.
    Set(Vec<Reply>),
    /// Pairs (a sorted set's members with their scores): an array of
    /// two-element arrays in RESP3, one flat array in RESP2.
    Pairs(Vec<(Reply, Reply)>),
    /// Text for people (`INFO`, `CLIENT LIST`): a verbatim string of
    /// format `txt` in RESP3, a bulk string in RESP2.
    Verbatim(Vec<u8>),
    /// An array of bulk strings held in one buffer (`LRANGE`): one
    /// allocation for the lot instead of one per element.
    Bulks(Bulks),
    /// Out-of-band data (a pub/sub message, a subscription's
    /// confirmation): a push (`>`) in RESP3, an array in RESP2.
    Push(Vec<Reply>),
    /// Several replies to one command, one after another (`SUBSCRIBE a b`
    /// confirms each channel on its own).
    Several(Vec<Reply>),
}

/// Bulk strings back to back in one buffer, with where each ends.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Bulks {
    data: Vec<u8>,
    ends: Vec<usize>,
}

impl Bulks {
    pub fn with_capacity(n: usize) -> Bulks {
        Bulks {
            data: Vec::new(),
            ends: Vec::with_capacity(n),
        }
    }

    pub fn push(&mut self, b: &[u8]) {
        self.data.extend_from_slice(b);
        self.ends.push(self.data.len());
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &[u8]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts.zip(self.ends.iter()).map(|(s, &e)| &self.data[s..e])
    }
}

impl Reply {
    pub fn ok() -> Reply {
        Reply::Simple("OK".into())
    }

    pub fn err(msg: impl Into<String>) -> Reply {
        Reply::Error(msg.into())
    }

    pub fn bulk(b: impl Into<Vec<u8>>) -> Reply {
        Reply::Bulk(b.into())
    }

    /// Appends the encoding for protocol `proto` (2 or 3) to `out`.
    pub fn encode(&self, proto: u8, out: &mut Vec<u8>) {
        match self {
            Reply::Simple(s) => push_line(out, b'+', s.as_bytes()),
            Reply::Error(s) => push_line(out, b'-', s.as_bytes()),
            Reply::Int(n) => push_line(out, b':', n.to_string().as_bytes()),
            Reply::Bulk(b) => encode_bulk(b, out),
            Reply::Null if proto >= 3 => out.extend_from_slice(b"_\r\n"),
            Reply::Null => out.extend_from_slice(b"$-1\r\n"),
            Reply::NullArray if proto >= 3 => out.extend_from_slice(b"_\r\n"),
            Reply::NullArray => out.extend_from_slice(b"*-1\r\n"),
            Reply::Array(items) => {
                push_line(out, b'*', items.len().to_string().as_bytes());
                items.iter().for_each(|r| r.encode(proto, out));
            }
            Reply::Map(pairs) if proto >= 3 => {
                push_line(out, b'%', pairs.len().to_string().as_bytes());
                for (k, v) in pairs {
                    k.encode(proto, out);
                    v.encode(proto, out);
                }
            }
            Reply::Map(pairs) => {
                push_line(out, b'*', (pairs.len() * 2).to_string().as_bytes());
                for (k, v) in pairs {
                    k.encode(proto, out);
                    v.encode(proto, out);
                }
            }
            Reply::Pairs(pairs) if proto >= 3 => {
                push_line(out, b'*', pairs.len().to_string().as_bytes());
                for (k, v) in pairs {
                    out.extend_from_slice(b"*2\r\n");
                    k.encode(proto, out);
                    v.encode(proto, out);
                }
            }
            Reply::Pairs(pairs) => {
                push_line(out, b'*', (pairs.len() * 2).to_string().as_bytes());
                for (k, v) in pairs {
                    k.encode(proto, out);
                    v.encode(proto, out);
                }
            }
            Reply::Double(d) if proto >= 3 => push_line(out, b',', format_double(*d).as_bytes()),
            Reply::Double(d) => Reply::Bulk(format_double(*d).into_bytes()).encode(proto, out),
            Reply::Set(items) => encode_aggregate(b'~', items, proto, out),
            Reply::Verbatim(text) if proto >= 3 => {
                push_line(out, b'=', (text.len() + 4).to_string().as_bytes());
                out.extend_from_slice(b"txt:");
                out.extend_from_slice(text);
                out.extend_from_slice(b"\r\n");
            }
            Reply::Verbatim(text) => encode_bulk(text, out),
            Reply::Bulks(bulks) => {
                push_line(out, b'*', bulks.len().to_string().as_bytes());
                bulks.iter().for_each(|b| encode_bulk(b, out));
            }
            Reply::Push(items) => encode_aggregate(b'>', items, proto, out),
            Reply::Several(replies) => replies.iter().for_each(|r| r.encode(proto, out)),
        }
    }
}

/// A double as Redis 7.0 replies with one (a sorted set's score): C's
/// `%.17g`, with `inf` and `-inf` (stored scores are never -0, but a
/// ZINCRBY's result can be, and Redis prints it as `-0`).
pub fn format_double(d: f64) -> String {
    if d.is_nan() {
        return "nan".into();
    }
    if d.is_infinite() {
        return if d > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if d == 0.0 {
        return if d.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // Whole scores (most leaderboards') below 1e17 print as their digits:
    // no exponent, no fraction, and `as` is exact for them. The general
    // path below formats twice through the exact (bignum) formatter, a
    // tenth of a ZRANGE ... WITHSCORES.
    if d.fract() == 0.0 && d.abs() < 1e17 {
        return (d as i64).to_string();
    }
    // %g with 17 significant digits: the exponent is that of the value
    // rounded to 17 digits; scientific below 1e-4 or from 1e17 on.
    let sci = format!("{d:.16e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..17).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        return format!(
            "{}e{sign}{:02}",
            trim_fraction(mantissa),
            exp.unsigned_abs()
        );
    }
    trim_fraction(&format!("{d:.*}", (16 - exp) as usize)).to_string()
}

/// `s` without trailing zeros after its decimal point (nor a bare point).
fn trim_fraction(s: &str) -> &str {
    match s.contains('.') {
        true => s.trim_end_matches('0').trim_end_matches('.'),
        false => s,
    }
}

/// Appends bulk string `b` (the same in both protocols).
/// `items` under RESP3's aggregate `tag` (`~` a set, `>` a push), or as
/// an array in RESP2.
fn encode_aggregate(tag: u8, items: &[Reply], proto: u8, out: &mut Vec<u8>) {
    let tag = if proto >= 3 { tag } else { b'*' };
    push_line(out, tag, items.len().to_string().as_bytes());
    items.iter().for_each(|r| r.encode(proto, out));
}

pub fn encode_bulk(b: &[u8], out: &mut Vec<u8>) {
    push_line(out, b'$', itoa(b.len() as u64, &mut [0; 20]));
    out.extend_from_slice(b);
    out.extend_from_slice(b"\r\n");
}

/// `n` in decimal, written into `buf` without allocating.
fn itoa(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[at..];
        }
    }
}

fn push_line(out: &mut Vec<u8>, tag: u8, body: &[u8]) {
    out.push(tag);
    out.extend_from_slice(body);
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {

    #[test]
    fn bulks_encode_as_an_array_of_bulk_strings() {
        let mut b = Bulks::with_capacity(3);
        for v in [&b"a"[..], b"", b"bc"] {
            b.push(v);
        }
        assert_eq!(b.iter().collect::<Vec<_>>(), [&b"a"[..], b"", b"bc"]);
        for proto in [2, 3] {
            let mut out = Vec::new();
            Reply::Bulks(b.clone()).encode(proto, &mut out);
            assert_eq!(out, b"*3\r\n$1\r\na\r\n$0\r\n\r\n$2\r\nbc\r\n");
            let mut out = Vec::new();
            Reply::Bulks(Bulks::default()).encode(proto, &mut out);
            assert_eq!(out, b"*0\r\n");
        }
    }

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

    #[test]
    fn encodes_both_protocols() {
        let mut two = Vec::new();
        let mut three = Vec::new();
        let r = Reply::Array(vec![
            Reply::Null,
            Reply::Int(3),
            Reply::Map(vec![(Reply::bulk("a"), Reply::Double(1.5))]),
        ]);
        r.encode(2, &mut two);
        r.encode(3, &mut three);
        assert_eq!(two, b"*3\r\n$-1\r\n:3\r\n*2\r\n$1\r\na\r\n$3\r\n1.5\r\n");
        assert_eq!(three, b"*3\r\n_\r\n:3\r\n%1\r\n$1\r\na\r\n,1.5\r\n");
        assert_eq!(format_double(3.0), "3");
        // Pairs: nested in RESP3, flat in RESP2.
        let r = Reply::Pairs(vec![(Reply::bulk("m"), Reply::Double(2.0))]);
        let (mut two, mut three) = (Vec::new(), Vec::new());
        r.encode(2, &mut two);
        r.encode(3, &mut three);
        assert_eq!(two, b"*2\r\n$1\r\nm\r\n$1\r\n2\r\n");
        assert_eq!(three, b"*1\r\n*2\r\n$1\r\nm\r\n,2\r\n");
        // Sets and verbatim text, as Redis 7 sends COMMAND INFO's flags
        // and INFO.
        let r = Reply::Array(vec![
            Reply::Set(vec![Reply::Simple("fast".into())]),
            Reply::Verbatim(b"a:1".to_vec()),
        ]);
        let (mut two, mut three) = (Vec::new(), Vec::new());
        r.encode(2, &mut two);
        r.encode(3, &mut three);
        assert_eq!(two, b"*2\r\n*1\r\n+fast\r\n$3\r\na:1\r\n");
        assert_eq!(three, b"*2\r\n~1\r\n+fast\r\n=7\r\ntxt:a:1\r\n");
    }

    #[test]
    fn doubles_print_as_c_does_with_17_digits() {
        // What redis-server 7.0 answers to ZSCORE for these scores.
        for (d, text) in [
            (0.1, "0.10000000000000001"),
            (1.5, "1.5"),
            (3.0, "3"),
            (1e20, "1e+20"),
            (1e17, "1e+17"),
            (1e16, "10000000000000000"),
            (0.1 + 0.2, "0.30000000000000004"),
            (-2.5e-5, "-2.5000000000000001e-05"),
            (0.0001, "0.0001"),
            (-0.0, "-0"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (123456789.125, "123456789.125"),
            (f64::MAX, "1.7976931348623157e+308"),
        ] {
            assert_eq!(format_double(d), text, "{d:e}");
        }
    }

    #[test]
    fn whole_doubles_print_as_the_general_path_prints_them() {
        // The general path: scientific from 1e17 on, else fixed.
        let general = |d: f64| {
            let sci = format!("{d:.16e}");
            let exp: i32 = sci.split_once('e').map_or(0, |(_, e)| e.parse().unwrap());
            match exp >= 17 {
                true => String::new(),
                false => trim_fraction(&format!("{d:.*}", (16 - exp) as usize)).to_string(),
            }
        };
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for i in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let digits = 1 + i % 17;
            let magnitude = (x % 10u64.pow(digits)) as f64;
            for d in [
                magnitude,
                -magnitude,
                1e16,
                99_999_999_999_999_990.0,
                2f64.powi(53) + 2.0,
            ] {
                if d != 0.0 && d.abs() < 1e17 {
                    assert_eq!(format_double(d), general(d), "{d}");
                }
            }
        }
    }
}
