//! LZF decompression, for the compressed strings in Redis's `DUMP`
//! payloads (`RDB_ENC_LZF`).
//!
//! Hand-written rather than taken from a crate: the input comes from the
//! network, so every read and back-reference is checked and the output
//! never grows past the length the payload states (itself capped by the
//! caller). The format is liblzf's: a control byte below 32 starts a run
//! of that many plus one literal bytes; otherwise its top three bits are
//! a back-reference's length less two (7: one more length byte follows)
//! and its low five bits with the next byte the distance less one.

/// The `expected` bytes `input` decompresses to, or `None` if it is not
/// a valid LZF stream of exactly that length.
pub fn decompress(input: &[u8], expected: usize) -> Option<Vec<u8>> {
    // Grown as bytes are decoded: a stated length is not trusted for
    // an allocation (a repeat turns 3 input bytes into at most 264).
    let mut out = Vec::with_capacity(expected.min(input.len().saturating_mul(88)));
    let mut i = 0;
    while i < input.len() {
        let ctrl = usize::from(input[i]);
        i += 1;
        if ctrl < 32 {
            let run = input.get(i..i + ctrl + 1)?;
            if out.len() + run.len() > expected {
                return None;
            }
            out.extend_from_slice(run);
            i += ctrl + 1;
            continue;
        }
        let mut len = ctrl >> 5;
        if len == 7 {
            len += usize::from(*input.get(i)?);
            i += 1;
        }
        let len = len + 2;
        let distance = ((ctrl & 0x1f) << 8) + usize::from(*input.get(i)?) + 1;
        i += 1;
        if distance > out.len() || out.len() + len > expected {
            return None;
        }
        // The reference may overlap what it writes (a repeat), so copy
        // byte by byte.
        let start = out.len() - distance;
        for k in 0..len {
            out.push(out[start + k]);
        }
    }
    (out.len() == expected).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_and_back_references() {
        // "abcabcabcabc": three literals, then a reference 3 back of 9.
        let stream = [2, b'a', b'b', b'c', (7 << 5), 0, 2];
        assert_eq!(decompress(&stream, 12).unwrap(), b"abcabcabcabc");
        // A short reference: length 3 (1 + 2), distance 3.
        let stream = [2, b'x', b'y', b'z', (1 << 5), 2];
        assert_eq!(decompress(&stream, 6).unwrap(), b"xyzxyz");
    }

    #[test]
    fn bad_streams_are_refused() {
        assert!(decompress(&[5, b'a'], 6).is_none(), "short literal run");
        assert!(
            decompress(&[0, b'a', (1 << 5), 5], 4).is_none(),
            "reference before start"
        );
        assert!(decompress(&[0, b'a', (7 << 5)], 20).is_none(), "truncated");
        assert!(
            decompress(&[2, b'a', b'b', b'c'], 2).is_none(),
            "longer than stated"
        );
        assert!(
            decompress(&[2, b'a', b'b', b'c'], 4).is_none(),
            "shorter than stated"
        );
    }
}
