//! Tests of the WAL writer and reader.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use proptest::prelude::*;

use super::format::encode_record_into;
use super::resync::{find_valid_record, Scan};
use super::writer::check_payload_len;
use super::*;
use crate::codec::mask_crc;
use crate::error::Error;

/// Writes `records` to a new log `dir/log.wal` with number `n`; returns the
/// path and each record's offset.
fn write_log(dir: &Path, n: u64, records: &[Vec<u8>]) -> (PathBuf, Vec<u64>) {
    let path = dir.join(format!("{n:06}.wal"));
    let mut w = WalWriter::create(&path, n).expect("create");
    let mut offsets = Vec::new();
    for r in records {
        offsets.push(w.len());
        w.append(r).expect("append");
    }
    let len = w.len();
    w.close().expect("close");
    assert_eq!(len, fs::metadata(&path).expect("metadata").len());
    (path, offsets)
}

/// Reads every record; returns the payloads and the reader (for its end
/// state), or the error.
fn read_all(
    path: &Path,
    expected: Option<u64>,
    mode: RecoveryMode,
) -> Result<(Vec<Vec<u8>>, WalReader), Error> {
    let mut r = WalReader::open(path, expected, mode)?;
    let mut out = Vec::new();
    while let Some((_, payload)) = r.next_record()? {
        out.push(payload.to_vec());
    }
    Ok((out, r))
}

/// Deterministic, non-repeating test payload.
fn payload(i: usize, len: usize) -> Vec<u8> {
    (0..len)
        .map(|j| ((i * 131 + j * 7 + (j >> 8)) % 251) as u8 + 1)
        .collect()
}

fn sample_records() -> Vec<Vec<u8>> {
    vec![
        payload(0, 10),
        payload(1, 0),
        payload(2, 300),
        payload(3, 57),
        payload(4, 40),
    ]
}

fn rewrite(path: &Path, bytes: &[u8]) {
    fs::write(path, bytes).expect("rewrite");
}

const MODES: [RecoveryMode; 2] = [RecoveryMode::Strict, RecoveryMode::BestEffort];

#[test]
fn round_trip_with_offsets() {
    let dir = tempfile::tempdir().expect("tempdir");
    let records = sample_records();
    let (path, offsets) = write_log(dir.path(), 3, &records);
    let mut r = WalReader::open(&path, Some(3), RecoveryMode::Strict).expect("open");
    assert_eq!(r.log_number(), Some(3));
    for (i, rec) in records.iter().enumerate() {
        let (off, p) = r.next_record().expect("read").expect("record");
        assert_eq!(off, offsets[i]);
        assert_eq!(p, &rec[..]);
    }
    assert!(r.next_record().expect("end").is_none());
    assert!(r.next_record().expect("still end").is_none());
    assert_eq!(r.valid_end(), r.file_len());
    assert_eq!(r.tail_dropped(), None);
}

#[test]
fn empty_file_and_header_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let empty = dir.path().join("empty.wal");
    rewrite(&empty, b"");
    for mode in MODES {
        let (recs, r) = read_all(&empty, Some(1), mode).expect("empty file is an empty log");
        assert!(recs.is_empty());
        assert_eq!(
            (r.valid_end(), r.tail_dropped(), r.log_number()),
            (0, None, None)
        );
    }
    let (path, _) = write_log(dir.path(), 9, &[]);
    assert_eq!(
        fs::metadata(&path).expect("meta").len(),
        FILE_HEADER_LEN as u64
    );
    for mode in MODES {
        let (recs, r) = read_all(&path, Some(9), mode).expect("header only");
        assert!(recs.is_empty());
        assert_eq!(r.valid_end(), FILE_HEADER_LEN as u64);
        assert_eq!(r.tail_dropped(), None);
        assert_eq!(r.log_number(), Some(9));
    }
}

#[test]
fn torn_file_header_is_an_empty_log() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, _) = write_log(dir.path(), 5, &[]);
    let full = fs::read(&path).expect("read");
    for cut in 1..FILE_HEADER_LEN {
        rewrite(&path, &full[..cut]);
        for expected in [Some(5), None] {
            let (recs, r) = read_all(&path, expected, RecoveryMode::Strict).expect("torn header");
            assert!(recs.is_empty());
            assert_eq!(r.valid_end(), 0);
            let drop = TailDrop {
                offset: 0,
                bytes: cut as u64,
                kind: TailDropKind::Torn,
            };
            assert_eq!(r.tail_dropped(), Some(drop), "cut {cut}");
        }
    }
    // An all-zero file (size extended, data never written) is torn too.
    rewrite(&path, &[0u8; 100]);
    let (recs, r) = read_all(&path, Some(5), RecoveryMode::Strict).expect("zero file");
    assert!(recs.is_empty());
    assert_eq!(r.tail_dropped().map(|d| d.kind), Some(TailDropKind::Torn));
}

#[test]
fn bad_file_header() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, _) = write_log(dir.path(), 5, &sample_records());
    let good = fs::read(&path).expect("read");
    // Another program's file, a flipped header byte, a short foreign file.
    let mut foreign = b"#!/bin/sh\necho not a log at all\n".to_vec();
    foreign.extend_from_slice(&good[FILE_HEADER_LEN..]);
    let mut flipped = good.clone();
    flipped[13] ^= 0x01;
    for bytes in [foreign, flipped, b"hello".to_vec()] {
        rewrite(&path, &bytes);
        let err = read_all(&path, Some(5), RecoveryMode::Strict).expect_err("bad header");
        assert!(matches!(&err, Error::Corruption { offset: 0, .. }), "{err}");
        let (recs, r) = read_all(&path, Some(5), RecoveryMode::BestEffort).expect("best effort");
        assert!(recs.is_empty());
        assert_eq!(r.valid_end(), 0);
        let drop = TailDrop {
            offset: 0,
            bytes: bytes.len() as u64,
            kind: TailDropKind::Corruption,
        };
        assert_eq!(r.tail_dropped(), Some(drop));
    }
}

#[test]
fn wrong_log_number() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, _) = write_log(dir.path(), 5, &sample_records());
    let err = read_all(&path, Some(6), RecoveryMode::Strict).expect_err("mismatch");
    assert!(matches!(&err, Error::Corruption { offset: 0, .. }), "{err}");
    assert!(err.to_string().contains("log number 5"), "{err}");
    let (recs, r) = read_all(&path, Some(6), RecoveryMode::BestEffort).expect("best effort");
    assert!(recs.is_empty());
    assert_eq!(
        r.tail_dropped().map(|d| d.kind),
        Some(TailDropKind::Corruption)
    );
    // Without an expectation the header's number is accepted and reported.
    let (recs, r) = read_all(&path, None, RecoveryMode::Strict).expect("no expectation");
    assert_eq!(recs, sample_records());
    assert_eq!(r.log_number(), Some(5));
}

#[test]
fn unknown_format_version_is_not_a_database_in_both_modes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (path, _) = write_log(dir.path(), 5, &sample_records());
    let mut bytes = fs::read(&path).expect("read");
    bytes[8..12].copy_from_slice(&2u32.to_le_bytes());
    let crc = mask_crc(crc32c::crc32c(&bytes[0..20]));
    bytes[20..24].copy_from_slice(&crc.to_le_bytes());
    rewrite(&path, &bytes);
    for mode in MODES {
        let err = read_all(&path, Some(5), mode).expect_err("unknown version");
        assert!(matches!(err, Error::NotADatabase { .. }), "{err}");
    }
}

#[test]
fn torn_tail_at_every_truncation_of_the_last_record() {
    let dir = tempfile::tempdir().expect("tempdir");
    let records = sample_records();
    let (path, offsets) = write_log(dir.path(), 1, &records);
    let full = fs::read(&path).expect("read");
    let last = *offsets.last().expect("offsets") as usize;
    for cut in last..full.len() {
        rewrite(&path, &full[..cut]);
        for mode in MODES {
            let (recs, r) = read_all(&path, Some(1), mode).expect("torn tail is not an error");
            assert_eq!(recs, records[..records.len() - 1], "cut {cut}");
            assert_eq!(r.valid_end(), last as u64);
            let expected = (cut > last).then_some(TailDrop {
                offset: last as u64,
                bytes: (cut - last) as u64,
                kind: TailDropKind::Torn,
            });
            assert_eq!(r.tail_dropped(), expected, "cut {cut}");
        }
    }
}

#[test]
fn flipped_byte_in_last_record_is_a_torn_tail() {
    let dir = tempfile::tempdir().expect("tempdir");
    let records = sample_records();
    let (path, offsets) = write_log(dir.path(), 1, &records);
    let full = fs::read(&path).expect("read");
    let last = *offsets.last().expect("offsets") as usize;
    for i in last..full.len() {
        let mut bytes = full.clone();
        bytes[i] ^= 0x20;
        rewrite(&path, &bytes);
        for mode in MODES {
            let (recs, r) = read_all(&path, Some(1), mode).expect("dropped as torn");
            assert_eq!(recs, records[..records.len() - 1], "byte {i}");
            let drop = TailDrop {
                offset: last as u64,
                bytes: (full.len() - last) as u64,
                kind: TailDropKind::Torn,
            };
            assert_eq!(r.tail_dropped(), Some(drop), "byte {i}");
        }
    }
}

#[test]
fn flipped_byte_in_middle_record() {
    let dir = tempfile::tempdir().expect("tempdir");
    let records = sample_records();
    let (path, offsets) = write_log(dir.path(), 1, &records);
    let full = fs::read(&path).expect("read");
    let (bad, next) = (offsets[2] as usize, offsets[3] as usize);
    for i in bad..next {
        let mut bytes = full.clone();
        bytes[i] ^= 0x01;
        rewrite(&path, &bytes);

        let mut r = WalReader::open(&path, Some(1), RecoveryMode::Strict).expect("open");
        assert_eq!(
            r.next_record().expect("r0").map(|(o, _)| o),
            Some(offsets[0])
        );
        assert_eq!(
            r.next_record().expect("r1").map(|(o, _)| o),
            Some(offsets[1])
        );
        let err = r.next_record().expect_err("corruption in the middle");
        match &err {
            Error::Corruption { file, offset, .. } => {
                assert_eq!(
                    (file.as_path(), *offset),
                    (path.as_path(), bad as u64),
                    "byte {i}"
                );
            }
            other => panic!("byte {i}: expected corruption, got {other}"),
        }
        let again = r.next_record().expect_err("error is sticky");
        assert!(again.is_corruption());

        let (recs, r) = read_all(&path, Some(1), RecoveryMode::BestEffort).expect("best effort");
        assert_eq!(recs, records[..2], "byte {i}");
        assert_eq!(r.valid_end(), bad as u64);
        let drop = TailDrop {
            offset: bad as u64,
            bytes: (full.len() - bad) as u64,
            kind: TailDropKind::Corruption,
        };
        assert_eq!(r.tail_dropped(), Some(drop), "byte {i}");
    }
}

#[test]
fn impossible_length_in_the_middle_is_corruption() {
    let dir = tempfile::tempdir().expect("tempdir");
    let records = sample_records();
    let (path, offsets) = write_log(dir.path(), 1, &records);
    let mut bytes = fs::read(&path).expect("read");
    let at = offsets[1] as usize + 4;
    bytes[at..at + 4].copy_from_slice(&(MAX_RECORD_LEN as u32 + 1).to_le_bytes());
    rewrite(&path, &bytes);
    let err = read_all(&path, Some(1), RecoveryMode::Strict).expect_err("corrupt");
    assert!(matches!(err, Error::Corruption { offset, .. } if offset == offsets[1]));
}

#[test]
fn zero_filled_tail_is_torn() {
    let dir = tempfile::tempdir().expect("tempdir");
    let records = sample_records();
    let (path, offsets) = write_log(dir.path(), 1, &records);
    let full = fs::read(&path).expect("read");
    // Zeros after the last record (file extended, data never written).
    let mut bytes = full.clone();
    bytes.extend_from_slice(&[0u8; 5000]);
    rewrite(&path, &bytes);
    for mode in MODES {
        let (recs, r) = read_all(&path, Some(1), mode).expect("zero tail");
        assert_eq!(recs, records);
        let drop = TailDrop {
            offset: full.len() as u64,
            bytes: 5000,
            kind: TailDropKind::Torn,
        };
        assert_eq!(r.tail_dropped(), Some(drop));
        assert_eq!(r.valid_end(), full.len() as u64);
    }
    // Zeros replacing the end of the file from inside the last record.
    let mut bytes = full.clone();
    let from = offsets[4] as usize + 3;
    bytes[from..].fill(0);
    bytes.extend_from_slice(&[0u8; 4096]);
    rewrite(&path, &bytes);
    let (recs, r) = read_all(&path, Some(1), RecoveryMode::Strict).expect("zeroed last record");
    assert_eq!(recs, records[..4]);
    assert_eq!(
        r.tail_dropped().map(|d| (d.offset, d.kind)),
        Some((offsets[4], TailDropKind::Torn))
    );
}

#[test]
fn oversized_payload_rejected_without_poisoning() {
    assert!(matches!(
        check_payload_len(MAX_RECORD_LEN + 1),
        Err(Error::InvalidArgument(_))
    ));
    assert!(check_payload_len(MAX_RECORD_LEN).is_ok());
}

#[test]
fn writer_accounting_and_append_many() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("000002.wal");
    let mut w = WalWriter::create(&path, 2).expect("create");
    assert_eq!((w.len(), w.flushed_len(), w.synced_len()), (24, 24, 24));
    assert!(w.is_empty());
    assert_eq!((w.path(), w.log_number()), (path.as_path(), 2));
    w.append(b"abc").expect("append");
    assert_eq!((w.len(), w.flushed_len()), (24 + 8 + 3, 24));
    let (recs, _) = read_all(&path, Some(2), RecoveryMode::Strict).expect("read");
    assert!(recs.is_empty(), "append only buffers");
    w.append_many(&[b"", b"defg"]).expect("append_many");
    w.flush().expect("flush");
    let (recs, _) = read_all(&path, Some(2), RecoveryMode::Strict).expect("read");
    assert_eq!(recs.len(), 3, "flush hands every record to the file system");
    assert_eq!((w.flushed_len(), w.synced_len()), (w.len(), 24));
    w.sync().expect("sync");
    assert_eq!(w.synced_len(), w.len());
    w.close().expect("close");
    let (recs, _) = read_all(&path, Some(2), RecoveryMode::Strict).expect("read");
    assert_eq!(recs, vec![b"abc".to_vec(), Vec::new(), b"defg".to_vec()]);
    // create never overwrites an existing log.
    let err = WalWriter::create(&path, 2).expect_err("exists");
    assert!(matches!(err, Error::Io { .. }), "{err}");
}

#[test]
fn unflushed_records_are_lost_on_drop() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("000003.wal");
    let mut w = WalWriter::create(&path, 3).expect("create");
    w.append(b"flushed").expect("append");
    w.flush().expect("flush");
    w.append(b"never flushed").expect("append");
    drop(w);
    let (recs, r) = read_all(&path, Some(3), RecoveryMode::Strict).expect("read");
    assert_eq!(recs, vec![b"flushed".to_vec()]);
    // What follows is the log's reserved space, never written: zeros.
    let bytes = fs::read(&path).expect("read");
    assert!(bytes[r.valid_end() as usize..].iter().all(|&b| b == 0));
}

/// Checks that `w` is poisoned by a failed flush and stays poisoned.
fn assert_poisoned_after_failed_flush(mut w: WalWriter) {
    w.append(b"doomed").expect("append buffers only");
    let err = w.flush().expect_err("write must fail");
    assert!(matches!(err, Error::Io { .. }), "{err}");
    assert!(w.poisoned().is_some());
    let msg = err.to_string();
    for later in [w.append(b"x"), w.append_many(&[b"y"]), w.flush(), w.sync()] {
        let e = later.expect_err("poisoned");
        assert_eq!(e.to_string(), msg);
    }
    assert!(w.close().is_err());
}

#[test]
fn writer_poisoned_after_write_error_on_read_only_handle() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("000004.wal");
    let mut w = WalWriter::create(&path, 4).expect("create");
    let read_only = File::open(&path).expect("read-only handle");
    w.replace_file_for_test(crate::fs::log_file_for_test(read_only));
    assert_poisoned_after_failed_flush(w);
}

#[cfg(target_os = "linux")]
#[test]
fn writer_poisoned_after_enospc_on_dev_full() {
    let Ok(full) = OpenOptions::new().write(true).open("/dev/full") else {
        return; // no /dev/full in this environment
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = WalWriter::create(&dir.path().join("000005.wal"), 5).expect("create");
    w.replace_file_for_test(crate::fs::log_file_for_test(full));
    assert_poisoned_after_failed_flush(w);
}

#[test]
fn create_in_missing_directory_fails() {
    let dir = tempfile::tempdir().expect("tempdir");
    let err =
        WalWriter::create(&dir.path().join("no/such/000001.wal"), 1).expect_err("missing dir");
    assert!(matches!(err, Error::Io { .. }), "{err}");
}

#[test]
fn reader_reports_missing_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let err = WalReader::open(&dir.path().join("nope.wal"), None, RecoveryMode::Strict)
        .expect_err("missing");
    assert!(matches!(err, Error::Io { .. }), "{err}");
}

#[test]
fn copied_log_and_stray_trailing_byte() {
    // A copy of a log under another number is told apart by its header.
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, _) = write_log(dir.path(), 10, &sample_records());
    let b = dir.path().join("000011.wal");
    fs::copy(&a, &b).expect("copy");
    let err = read_all(&b, Some(11), RecoveryMode::Strict).expect_err("copied log");
    assert!(err.is_corruption());
    let mut f = OpenOptions::new().append(true).open(&a).expect("open");
    f.write_all(b"\x01").expect("write");
    let (recs, r) = read_all(&a, Some(10), RecoveryMode::Strict).expect("one stray byte");
    assert_eq!(recs, sample_records());
    assert_eq!(r.tail_dropped().map(|d| d.bytes), Some(1));
}

fn record_sizes() -> impl Strategy<Value = Vec<Vec<u8>>> {
    let size = prop_oneof![4 => 0usize..64, 2 => 64usize..4096, 1 => 4096usize..100_000];
    prop::collection::vec(
        size.prop_flat_map(|n| prop::collection::vec(any::<u8>(), n)),
        0..40,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn prop_round_trip(records in record_sizes(), n in any::<u64>()) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("x.wal");
        let mut w = WalWriter::create(&path, n).expect("create");
        for (i, r) in records.iter().enumerate() {
            w.append(r).expect("append");
            if i % 7 == 3 { w.flush().expect("flush"); }
        }
        let len = w.len();
        w.close().expect("close");
        let (got, r) = read_all(&path, Some(n), RecoveryMode::Strict).expect("read");
        prop_assert_eq!(got, records);
        prop_assert_eq!(r.tail_dropped(), None);
        prop_assert_eq!(r.valid_end(), len);
    }

    /// Any truncation and any byte flip yields a prefix of the records in
    /// best-effort mode, and a prefix or a corruption error in strict mode.
    #[test]
    fn prop_damage_yields_a_prefix(
        records in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..300), 1..20),
        cut in any::<prop::sample::Index>(),
        flip in any::<prop::sample::Index>(),
        mask in 1u8..=255,
        do_flip in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().expect("tempdir");
        let (path, _) = write_log(dir.path(), 1, &records);
        let mut bytes = fs::read(&path).expect("read");
        bytes.truncate(cut.index(bytes.len() + 1));
        if do_flip && !bytes.is_empty() {
            let i = flip.index(bytes.len());
            bytes[i] ^= mask;
        }
        rewrite(&path, &bytes);
        let (best, r) = read_all(&path, Some(1), RecoveryMode::BestEffort).expect("best effort");
        prop_assert!(best.len() <= records.len());
        prop_assert_eq!(&best[..], &records[..best.len()]);
        prop_assert!(r.valid_end() <= bytes.len() as u64);
        if let Some(d) = r.tail_dropped() {
            prop_assert_eq!(d.offset + d.bytes, bytes.len() as u64);
        }
        match read_all(&path, Some(1), RecoveryMode::Strict) {
            Ok((strict, _)) => prop_assert_eq!(strict, best),
            Err(e) => prop_assert!(e.is_corruption(), "{}", e),
        }
    }
}

#[test]
fn resync_scan_finds_records_and_respects_its_budget() {
    let mut data = vec![0xEEu8; 5];
    let at = data.len();
    encode_record_into(&mut data, &payload(1, 100));
    assert_eq!(find_valid_record(&data, 0, u64::MAX), Scan::Found(at));
    assert_eq!(find_valid_record(&data, at + 1, u64::MAX), Scan::NotFound);
    assert_eq!(find_valid_record(&data, 0, 0), Scan::GaveUp(at));
    assert_eq!(find_valid_record(&[1, 2, 3], 0, u64::MAX), Scan::NotFound);
}

/// Incompressible bytes (a record a user fills with random data).
fn random_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// A log of a small record, then a random 8 MiB one cut short by a crash
/// after `written` of its bytes, then `zeros` of reserved space.
fn torn_big_record(dir: &Path, written: usize, zeros: usize) -> (PathBuf, Vec<u8>) {
    let small = payload(1, 50);
    let big = random_bytes(0x5eed, 8 << 20);
    let (path, offsets) = write_log(dir, 1, &[small.clone(), big]);
    let mut bytes = fs::read(&path).unwrap();
    bytes.truncate(offsets[1] as usize + written);
    bytes.resize(bytes.len() + zeros, 0);
    rewrite(&path, &bytes);
    (path, small)
}

#[test]
fn a_torn_big_random_record_is_a_torn_tail() {
    let dir = tempfile::tempdir().unwrap();
    for (written, zeros) in [(5 << 20, 0), (3 << 20, 6 << 20), (4, 1 << 20), (9, 0)] {
        let (path, small) = torn_big_record(dir.path(), written, zeros);
        let started = std::time::Instant::now();
        let (got, r) = read_all(&path, Some(1), RecoveryMode::Strict)
            .unwrap_or_else(|e| panic!("{written} written, {zeros} zeros: {e}"));
        assert_eq!(got, vec![small]);
        assert_eq!(r.tail_dropped().map(|t| t.kind), Some(TailDropKind::Torn));
        assert!(started.elapsed().as_secs() < 20, "the scan is linear");
        fs::remove_file(&path).unwrap();
    }
}

#[test]
fn damage_inside_a_big_random_record_before_a_good_one_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let records = [payload(1, 50), random_bytes(7, 8 << 20), payload(2, 70)];
    let (path, offsets) = write_log(dir.path(), 1, &records);
    let mut bytes = fs::read(&path).unwrap();
    bytes[offsets[1] as usize + 1000] ^= 0x40;
    rewrite(&path, &bytes);
    let err = read_all(&path, Some(1), RecoveryMode::Strict).unwrap_err();
    assert!(err.is_corruption(), "{err}");
    let (got, _) = read_all(&path, Some(1), RecoveryMode::BestEffort).unwrap();
    assert_eq!(got, records[..1].to_vec());
}

// The writer through the operating system's mapped log file.

fn read_mapped(path: &Path) -> (Vec<Vec<u8>>, bool) {
    let mut r = WalReader::open(path, Some(7), RecoveryMode::Strict).unwrap();
    let mut out = Vec::new();
    while let Some((_, p)) = r.next_record().unwrap() {
        out.push(p.to_vec());
    }
    (out, r.tail_dropped().is_some())
}

#[test]
fn pages_dropped_behind_the_writer_keep_their_records() {
    // Small records go through the map; every WRITEBACK_STEP the pages
    // behind the writer are unmapped and handed to writeback, unsynced.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("000007.wal");
    let mut w = WalWriter::create(&path, 7).unwrap();
    let records: Vec<Vec<u8>> = (0..40_000u32)
        .map(|i| i.to_le_bytes().repeat(1 + i as usize % 30))
        .collect();
    for r in &records {
        w.append(r).unwrap();
        w.flush().unwrap();
    }
    assert!(
        w.flushed_len() > 8 * (256 << 10),
        "past several writeback steps"
    );
    let (got, _) = read_mapped(&path);
    assert_eq!(got, records);
    drop(w);
    assert_eq!(read_mapped(&path).0, records);
}

#[test]
fn records_round_trip_through_growth_and_finish() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("000007.wal");
    let mut w = WalWriter::create(&path, 7).unwrap();
    let records: Vec<Vec<u8>> = (0..3000u32)
        .map(|i| vec![(i % 251) as u8; (i as usize * 37) % 9000])
        .collect();
    for (i, r) in records.iter().enumerate() {
        w.append(r).unwrap();
        w.flush().unwrap();
        if i % 1000 == 0 {
            w.sync().unwrap();
        }
    }
    // Readable while still reserved (zero tail), as after a crash.
    let (got, _) = read_mapped(&path);
    assert_eq!(got, records);
    w.close().unwrap();
    let (got, torn) = read_mapped(&path);
    assert_eq!(got, records);
    assert!(!torn, "a finished log has no tail to drop");
}

#[test]
fn dropped_writer_leaves_a_readable_log() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("000007.wal");
    {
        let mut w = WalWriter::create(&path, 7).unwrap();
        w.append(b"one").unwrap();
        w.append(b"").unwrap();
        w.append(b"three").unwrap();
        w.flush().unwrap();
    }
    let (got, _) = read_mapped(&path);
    assert_eq!(got, vec![b"one".to_vec(), vec![], b"three".to_vec()]);
}

#[test]
fn create_refuses_an_existing_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("000007.wal");
    std::fs::write(&path, b"x").unwrap();
    assert!(WalWriter::create(&path, 7).is_err());
    assert_eq!(std::fs::read(&path).unwrap(), b"x");
}

#[test]
fn records_past_the_retained_buffer_are_written_without_growing_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("000009.wal");
    let mut w = WalWriter::create(&path, 9).expect("create");
    w.retain_at_most(4096);
    let records: Vec<Vec<u8>> = (0..40)
        .map(|i| payload(i, [10, 3000, 9000][i % 3]))
        .collect();
    for group in records.chunks(7) {
        let refs: Vec<&[u8]> = group.iter().map(|r| &r[..]).collect();
        w.append_many(&refs).expect("append_many");
        assert!(w.buffer_capacity() <= 8192, "{}", w.buffer_capacity());
        w.flush().expect("flush");
    }
    w.append(&payload(99, 100_000)).expect("append");
    w.sync().expect("sync");
    w.close().expect("close");
    let (recs, _) = read_all(&path, Some(9), RecoveryMode::Strict).expect("read");
    assert_eq!(recs.len(), records.len() + 1);
    assert_eq!(&recs[..records.len()], &records[..]);
    assert_eq!(recs[records.len()], payload(99, 100_000));
}

#[cfg(target_os = "linux")]
#[test]
fn a_big_record_that_cannot_be_written_poisons_the_writer() {
    let Ok(full) = OpenOptions::new().write(true).open("/dev/full") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = WalWriter::create(&dir.path().join("000010.wal"), 10).expect("create");
    w.retain_at_most(4096);
    w.replace_file_for_test(crate::fs::log_file_for_test(full));
    let err = w
        .append(&payload(1, 10_000))
        .expect_err("written at once, and full");
    assert!(matches!(err, Error::Io { .. }), "{err}");
    assert!(w.poisoned().is_some());
    assert!(w.flush().is_err());
}

/// A log on a fault-injecting in-memory file system, with `records`
/// appended and synced.
fn faulty_log(records: &[&[u8]]) -> (crate::fs::FaultFs, WalWriter) {
    let fault = crate::fs::FaultFs::new(7);
    let fs = fault.as_dyn();
    fs.create_dir_all(Path::new("/db")).expect("mkdir");
    let mut w = WalWriter::create_with(&*fs, Path::new("/db/000011.wal"), 11).expect("create");
    for r in records {
        w.append(r).expect("append");
    }
    w.sync().expect("sync");
    (fault, w)
}

#[test]
fn a_sync_begun_under_a_lock_runs_without_the_writer() {
    let (_fault, mut w) = faulty_log(&[b"first"]);
    assert!(
        w.begin_sync().expect("begin").is_none(),
        "nothing new to sync"
    );
    w.append(b"second").expect("append");
    let pending = w.begin_sync().expect("begin").expect("a sync to run");
    assert_eq!(
        w.synced_len() + 8 + 6,
        w.flushed_len(),
        "flushed, not yet synced"
    );
    let outcome = std::thread::scope(|s| s.spawn(|| pending.run()).join().expect("thread"));
    w.end_sync(pending, outcome).expect("end");
    assert_eq!(w.synced_len(), w.flushed_len());
}

#[test]
fn a_failed_detached_sync_cuts_the_log_where_its_records_begin() {
    let (fault, mut w) = faulty_log(&[b"acknowledged"]);
    let good = w.flushed_len();
    w.append(b"never acknowledged").expect("append");
    let pending = w.begin_sync().expect("begin").expect("a sync to run");
    fault.fail_nth(crate::fs::FaultOp::Sync, 1);
    let outcome = pending.run();
    assert!(outcome.is_err());
    assert!(w.end_sync(pending, outcome).is_err());
    assert!(w.poisoned().is_some());
    assert!(
        w.append(b"later").is_err(),
        "a poisoned log takes nothing more"
    );
    w.retire_damaged().expect("retire");
    assert_eq!(
        w.flushed_len(),
        good,
        "only the failed call's records are cut"
    );
}

#[test]
fn a_failed_sync_of_no_records_of_its_own_keeps_what_was_acknowledged() {
    // A `Db::sync` begun after a write was flushed (acknowledged to a
    // process crash), failing: that write stays in the log.
    let (fault, mut w) = faulty_log(&[]);
    w.append(b"flushed and acknowledged").expect("append");
    w.flush().expect("flush");
    let end = w.flushed_len();
    let pending = w.begin_sync().expect("begin").expect("a sync to run");
    fault.fail_nth(crate::fs::FaultOp::Sync, 1);
    let outcome = pending.run();
    assert!(w.end_sync(pending, outcome).is_err());
    w.retire_damaged().expect("retire");
    assert_eq!(w.flushed_len(), end);
}

#[cfg(target_os = "linux")]
#[test]
fn a_std_log_is_synced_detached_on_linux() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut w = WalWriter::create(&dir.path().join("000012.wal"), 12).expect("create");
    w.append(b"x").expect("append");
    let pending = w
        .begin_sync()
        .expect("begin")
        .expect("linux syncs detached");
    pending.run().expect("sync");
    w.end_sync(pending, Ok(())).expect("end");
    assert_eq!(w.synced_len(), w.flushed_len());
}
