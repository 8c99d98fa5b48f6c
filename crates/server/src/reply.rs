//! Replies, encoded as RESP2 or RESP3 for the connection's protocol
//! version (parsing requests is `resp.rs`).

/// A reply, encoded for the connection's protocol version (serializable:
/// a cluster's state machine answers with them, `cluster`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Reply {
    Simple(String),
    Error(String),
    Int(i64),
    Bulk(#[serde(with = "serde_bytes")] Vec<u8>),
    /// A missing bulk string (`$-1` / `_`).
    Null,
    /// A missing array (`*-1` / `_`): EXEC after a WATCH conflict.
    NullArray,
    Array(Vec<Reply>),
    /// A map in RESP3, a flat array of pairs in RESP2.
    Map(Vec<(Reply, Reply)>),
    /// A map in RESP3, an array of two-element arrays in RESP2 (`XREAD`).
    Keyed(Vec<(Reply, Reply)>),
    /// A double in RESP3, a bulk string in RESP2.
    Double(f64),
    /// A double given as its text, where Redis prints one its own way
    /// (`GEOPOS`'s coordinates): a double in RESP3, a bulk string in RESP2.
    DoubleText(String),
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
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
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
            Reply::Simple(s) => push_text_line(out, b'+', s.as_bytes()),
            Reply::Error(s) => push_text_line(out, b'-', s.as_bytes()),
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
            Reply::Map(pairs) | Reply::Keyed(pairs) if proto >= 3 => {
                encode_pairs(pairs, PairShape::Map, proto, out)
            }
            Reply::Keyed(pairs) => encode_pairs(pairs, PairShape::Nested, proto, out),
            Reply::Pairs(pairs) if proto >= 3 => encode_pairs(pairs, PairShape::Nested, proto, out),
            Reply::Map(pairs) | Reply::Pairs(pairs) => {
                encode_pairs(pairs, PairShape::Flat, proto, out)
            }
            Reply::Double(d) if proto >= 3 => push_line(out, b',', format_double(*d).as_bytes()),
            Reply::Double(d) => Reply::Bulk(format_double(*d).into_bytes()).encode(proto, out),
            Reply::DoubleText(t) if proto >= 3 => push_line(out, b',', t.as_bytes()),
            Reply::DoubleText(t) => encode_bulk(t.as_bytes(), out),
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

    /// Only the pushes of this reply, for a client under `CLIENT REPLY
    /// OFF` or `SKIP`: a push (a subscription's confirmation, a message)
    /// is not a reply, and Redis 7.0 sends it anyway, in RESP2 too (its
    /// `CLIENT_PUSHING`).
    pub fn encode_pushes(&self, proto: u8, out: &mut Vec<u8>) {
        match self {
            Reply::Push(_) => self.encode(proto, out),
            Reply::Several(replies) => replies.iter().for_each(|r| r.encode_pushes(proto, out)),
            _ => {}
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
/// How pairs go on the wire: a RESP3 map, an array of two-element
/// arrays, or one flat array.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PairShape {
    Map,
    Nested,
    Flat,
}

fn encode_pairs(pairs: &[(Reply, Reply)], shape: PairShape, proto: u8, out: &mut Vec<u8>) {
    let (tag, len) = match shape {
        PairShape::Map => (b'%', pairs.len()),
        PairShape::Nested => (b'*', pairs.len()),
        PairShape::Flat => (b'*', pairs.len() * 2),
    };
    push_line(out, tag, len.to_string().as_bytes());
    for (k, v) in pairs {
        if shape == PairShape::Nested {
            out.extend_from_slice(b"*2\r\n");
        }
        k.encode(proto, out);
        v.encode(proto, out);
    }
}

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

/// A status or error line whose text may hold anything (a script's
/// `{ok=...}`, an error quoting an argument): a CR or LF in it becomes a
/// space, as Redis does (`addReplyErrorLength`, `sdsmapchars`), so no
/// text can end the line early and forge replies.
fn push_text_line(out: &mut Vec<u8>, tag: u8, body: &[u8]) {
    out.push(tag);
    out.extend(
        body.iter()
            .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
    );
    out.extend_from_slice(b"\r\n");
}

fn push_line(out: &mut Vec<u8>, tag: u8, body: &[u8]) {
    out.push(tag);
    out.extend_from_slice(body);
    out.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_breaks_in_a_status_or_an_error_become_spaces() {
        let mut out = Vec::new();
        Reply::Simple("x\r\ny".into()).encode(2, &mut out);
        Reply::Error("ERR a\nb\r".into()).encode(2, &mut out);
        assert_eq!(out, b"+x  y\r\n-ERR a b \r\n");
    }

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
        // Keyed (XREAD): a map in RESP3, pairs of two in RESP2, each
        // element in the connection's protocol.
        let r = Reply::Keyed(vec![(Reply::bulk("k"), Reply::NullArray)]);
        let (mut two, mut three) = (Vec::new(), Vec::new());
        r.encode(2, &mut two);
        r.encode(3, &mut three);
        assert_eq!(two, b"*1\r\n*2\r\n$1\r\nk\r\n*-1\r\n");
        assert_eq!(three, b"%1\r\n$1\r\nk\r\n_\r\n");
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
