//! Bytes as a MANIFEST (a snapshot and edits, or a version-3 file):
//! decoding must never panic, and whatever decodes must be valid and
//! survive an encode/decode round trip unchanged, with an encoding that is
//! canonical.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use slsm::manifest::Manifest;

fuzz_target!(|data: &[u8]| {
    let path = Path::new("/f/MANIFEST");
    if let Ok(m) = Manifest::decode(data, path) {
        m.validate().expect("what decodes is valid");
        let bytes = m.encode();
        let again = Manifest::decode(&bytes, path).expect("re-decode");
        assert_eq!(m, again, "round trip changed the manifest");
        assert_eq!(again.encode(), bytes, "encoding is not canonical");
    }
});
