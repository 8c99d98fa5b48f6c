//! Bytes as a run file: opening, verifying, seeking and iterating it in both
//! directions must never panic, and whatever verifies must read back
//! consistently.
#![no_main]

use std::path::Path;
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use std::io::Write;

use slsm::fs::{FaultFs, FileSystem};
use slsm::sst::{RunFile, RunIter};

fuzz_target!(|data: &[u8]| {
    let fs = FaultFs::new(0);
    let dir = Path::new("/f");
    fs.create_dir_all(dir).unwrap();
    let path = dir.join("000001.run");
    {
        let mut f = fs.create_new(&path).unwrap();
        f.write_all(data).unwrap();
    }
    let Ok(file) = RunFile::open_with(fs.as_dyn(), &path) else {
        return;
    };
    let file = Arc::new(file);
    let verified = file.verify().is_ok();
    let _ = file.range_tombstones().len();
    let mut forward = Vec::new();
    let mut it = RunIter::new(file.clone());
    it.seek_to_first();
    while it.valid() {
        forward.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    let forward_ok = it.status().is_ok();
    let mut backward = Vec::new();
    it.seek_to_last();
    while it.valid() {
        backward.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    let backward_ok = it.status().is_ok();
    backward.reverse();
    if verified {
        // A file that verifies must iterate cleanly and identically both
        // ways, and every entry must be found by a seek.
        assert!(forward_ok && backward_ok, "verified run failed to iterate");
        assert_eq!(forward, backward, "forward and backward iteration disagree");
        assert_eq!(forward.len() as u64, file.properties().entries);
        for (k, v) in forward.iter().take(64) {
            let got = file.seek(k).expect("seek in a verified run");
            let got = got.as_ref().map(|e| (e.key().into_owned(), e.value()));
            assert_eq!(got, Some((k.clone(), &v[..])), "seek disagrees with iteration");
        }
    } else {
        for (k, _) in forward.iter().take(16) {
            let _ = file.seek(k);
        }
    }
});
