//! The Redis-protocol parser of `slsm serve` on arbitrary bytes: it never
//! panics, never claims more bytes than it was given, what it parses
//! encodes back to bytes it parses the same way, and resuming a parse over
//! input that arrives piece by piece gives what one parse of it all gives.
#![no_main]

use libfuzzer_sys::fuzz_target;
use slsm_server::resp::{parse, parse_resuming, Progress, Reply};

fuzz_target!(|data: &[u8]| {
    let mut at = 0;
    while at < data.len() {
        let whole = parse(&data[at..]);
        assert_eq!(piece_by_piece(&data[at..]), whole);
        match whole {
            Ok(Some((req, used))) => {
                assert!(used > 0 && at + used <= data.len());
                at += used;
                // A request re-encoded as a multibulk parses to itself.
                let mut enc = Vec::new();
                Reply::Array(req.iter().map(|a| Reply::Bulk(a.clone())).collect())
                    .encode(2, &mut enc);
                if !req.is_empty() {
                    let (again, n) = parse(&enc).unwrap().unwrap();
                    assert_eq!(n, enc.len());
                    assert_eq!(again, req);
                }
            }
            Ok(None) | Err(_) => break,
        }
    }
});

/// The parse of `input` fed to the resuming parser in pieces of sizes
/// taken from the input itself.
fn piece_by_piece(
    input: &[u8],
) -> Result<Option<(Vec<Vec<u8>>, usize)>, slsm_server::resp::ProtocolError> {
    let mut progress = Progress::default();
    let mut end = 0;
    loop {
        let step = 1 + input.get(end).map_or(0, |&b| b as usize % 13);
        end = (end + step).min(input.len());
        match parse_resuming(&input[..end], &mut progress) {
            Ok(None) if end < input.len() => continue,
            result => return result,
        }
    }
}
