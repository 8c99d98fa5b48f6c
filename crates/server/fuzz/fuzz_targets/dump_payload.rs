//! `RESTORE`'s payload reader on arbitrary bytes, framed with a correct
//! footer so the body's parse is what gets exercised: it never panics nor
//! allocates past what the bytes can hold, and whatever it reads, written
//! back as this server's `DUMP` writes it, reads back the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use slsm_server::collections::dump::{frame, read_payload, write_payload};

fuzz_target!(|data: &[u8]| {
    // Unframed: almost always a wrong checksum, but never a panic.
    let _ = read_payload(data);
    if let Ok(object) = read_payload(&frame(data)) {
        assert_eq!(read_payload(&write_payload(&object)), Ok(object));
    }
});
