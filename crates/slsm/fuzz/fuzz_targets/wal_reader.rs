//! Bytes as a WAL: the reader must never panic in either recovery mode,
//! best effort must return a prefix of what strict returns, and opening a
//! database whose log holds these bytes must either fail cleanly or give a
//! database that iterates and checks cleanly.
#![no_main]

use std::io::Write;
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use slsm::fs::{FaultFs, FileSystem};
use slsm::wal::{WalReader, WalWriter};
use slsm::{Db, Options, RecoveryMode};

fn records(fs: &FaultFs, path: &Path, mode: RecoveryMode) -> (Vec<Vec<u8>>, bool) {
    let Ok(mut r) = WalReader::open_with(fs, path, Some(7), mode) else {
        return (Vec::new(), false);
    };
    let mut out = Vec::new();
    let len = r.file_len();
    loop {
        match r.next_record() {
            Ok(Some((off, p))) => {
                assert!(off < len);
                out.push(p.to_vec());
            }
            Ok(None) => return (out, true),
            Err(_) => return (out, false),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let fs = FaultFs::new(0);
    let dir = Path::new("/f");
    fs.create_dir_all(dir).unwrap();
    let path = dir.join("000007.wal");
    // Half of the inputs get a valid file header, so the fuzzer spends its
    // time on the records.
    let with_header = data.first().is_some_and(|b| b & 1 == 1);
    if with_header {
        WalWriter::create_with(&fs, &path, 7)
            .unwrap()
            .close()
            .unwrap();
        fs.edit(&path, |d| d.extend_from_slice(&data[1..])).unwrap();
    } else {
        let mut f = fs.create_new(&path).unwrap();
        f.write_all(data).unwrap();
    }
    let (strict, strict_ok) = records(&fs, &path, RecoveryMode::Strict);
    let (best, best_ok) = records(&fs, &path, RecoveryMode::BestEffort);
    if strict_ok {
        assert_eq!(strict, best, "modes disagree on an undamaged log");
    }
    let _ = best_ok;
    assert!(strict.len() <= best.len() || !strict_ok);
    assert_eq!(
        &best[..strict.len().min(best.len())],
        &strict[..strict.len().min(best.len())]
    );

    // The same bytes as the log of a database.
    if !with_header {
        return;
    }
    let db_dir = Path::new("/db");
    let opts = |recovery| Options {
        fs: fs.as_dyn(),
        background_merges: false,
        recovery,
        run_size: 4096,
        ..Options::default()
    };
    drop(Db::open(db_dir, opts(RecoveryMode::Strict)).unwrap());
    let wal = fs
        .list()
        .into_iter()
        .map(|(p, _, _)| p)
        .find(|p| p.starts_with(db_dir) && p.extension().is_some_and(|e| e == "wal"))
        .unwrap();
    let number: u64 = wal.file_stem().unwrap().to_str().unwrap().parse().unwrap();
    fs.remove_file(&wal).unwrap();
    WalWriter::create_with(&fs, &wal, number)
        .unwrap()
        .close()
        .unwrap();
    fs.edit(&wal, |d| d.extend_from_slice(&data[1..])).unwrap();
    for mode in [RecoveryMode::Strict, RecoveryMode::BestEffort] {
        if let Ok(db) = Db::open(db_dir, opts(mode)) {
            db.check().expect("check after recovery");
            let fwd: Vec<_> = db.iter().map(|r| r.expect("iterate")).collect();
            let mut back: Vec<_> = db.iter().rev().map(|r| r.expect("iterate")).collect();
            back.reverse();
            assert_eq!(fwd, back);
            return;
        }
    }
});
