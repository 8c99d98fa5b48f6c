//! The Redis-protocol parser of `slsm serve` on arbitrary bytes: it never
//! panics, never claims more bytes than it was given, and what it parses
//! encodes back to bytes it parses the same way.
#![no_main]

use libfuzzer_sys::fuzz_target;
use slsm_server::resp::{parse, Reply};

fuzz_target!(|data: &[u8]| {
    let mut at = 0;
    while at < data.len() {
        match parse(&data[at..]) {
            Ok(Some((req, used))) => {
                assert!(used > 0 && at + used <= data.len());
                at += used;
                // A request re-encoded as a multibulk parses to itself.
                let mut enc = Vec::new();
                Reply::Array(req.iter().map(|a| Reply::Bulk(a.clone())).collect()).encode(2, &mut enc);
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
