//! The manifest's codec, log and writer, against its invariants.

use super::state::{Cursor, PREFIX_LEN};
use super::*;
use crate::codec::Reader;
use crate::keyspace::catalog::Catalog;
use crate::sst::RunProperties;
use proptest::prelude::*;
use std::fs;

fn run(n: u64, min: &[u8], max: &[u8], seqs: (u64, u64)) -> RunProperties {
    RunProperties {
        file_number: n,
        file_size: 1000 + n,
        entries: 10 * n,
        tombstones: n,
        range_tombstones: n % 3,
        min_user_key: min.to_vec(),
        max_user_key: max.to_vec(),
        min_seq: seqs.0,
        max_seq: seqs.1,
        data_bytes: 900 + n,
        raw_data_bytes: 1900 + n,
        checksum: n as u32 * 7,
    }
}

fn sample() -> Manifest {
    Manifest {
        format_version: MANIFEST_FORMAT_VERSION,
        db_id: *b"0123456789abcdef",
        next_file_number: 20,
        last_sequence: 500,
        min_wal_number: 17,
        levels: vec![
            vec![
                run(12, b"a", b"m", (300, 500)),
                run(15, b"", b"\xff\xff", (1, 400)),
            ],
            vec![],
            vec![run(3, b"b", b"b", (0, 0))],
        ],
        catalog: Catalog::default()
            .with_new("users", 0)
            .and_then(|c| c.with_new("sessions", 3_600_000))
            .unwrap(),
    }
}

fn p() -> &'static Path {
    Path::new("/db/MANIFEST")
}

#[test]
fn new_round_trips() {
    let m = Manifest::new();
    assert_eq!(Manifest::default(), m);
    assert_eq!(Manifest::decode(&m.encode(), p()).expect("decode"), m);
    assert!(m.validate().is_ok());
}

#[test]
fn sample_round_trips() {
    let m = sample();
    assert_eq!(Manifest::decode(&m.encode(), p()).expect("decode"), m);
    assert_eq!(m.runs().count(), 3);
}

#[test]
fn every_byte_flip_is_corruption() {
    let good = sample().encode();
    for i in 0..good.len() {
        for mask in [0x01u8, 0x80, 0xff] {
            let mut bad = good.clone();
            bad[i] ^= mask;
            match Manifest::decode(&bad, p()) {
                Err(e) => assert!(e.is_corruption(), "byte {i}: {e}"),
                Ok(m) => assert_eq!(m, sample(), "byte {i} decoded differently"),
            }
        }
    }
}

#[test]
fn every_truncation_is_corruption() {
    let good = sample().encode();
    for cut in 0..good.len() {
        let err = Manifest::decode(&good[..cut], p()).expect_err("truncated");
        assert!(err.is_corruption(), "cut {cut}: {err}");
    }
}

/// A version-4 file whose snapshot record holds `payload`.
fn framed(payload: &[u8]) -> Vec<u8> {
    let mut b = log::file_header();
    log::put_record(&mut b, log::RecordKind::Snapshot, payload);
    b
}

/// The snapshot payload of `m`.
fn payload(m: &Manifest) -> Vec<u8> {
    snapshot::encode(m)
}

#[test]
fn trailing_bytes_in_the_snapshot_are_corruption() {
    let mut b = payload(&sample());
    let at = PREFIX_LEN + 9 + b.len();
    b.extend_from_slice(b"xx");
    let err = Manifest::decode(&framed(&b), p()).expect_err("trailing");
    assert!(
        matches!(err, Error::Corruption { offset, .. } if offset == at as u64),
        "{err}"
    );
}

#[test]
fn unknown_version_is_not_a_database() {
    let mut b = sample().encode();
    b[8..12].copy_from_slice(&7u32.to_le_bytes());
    let err = Manifest::decode(&b, p()).expect_err("version");
    assert!(
        err.is_corruption(),
        "a version without its checksum is damage: {err}"
    );
    let crc = crate::codec::masked_crc(&b[..12]);
    b[12..16].copy_from_slice(&crc.to_le_bytes());
    let err = Manifest::decode(&b, p()).expect_err("version");
    assert!(matches!(err, Error::NotADatabase { .. }), "{err}");
}

#[test]
fn inconsistent_manifests_are_rejected_by_decode_and_store() {
    let mut cases = Vec::new();
    let mut m = sample();
    m.levels[2][0].file_number = 12; // duplicate
    cases.push(m);
    let mut m = sample();
    m.levels[0][0].file_number = 20; // not below next_file_number
    cases.push(m);
    let mut m = sample();
    m.levels[0][1].file_number = 0;
    cases.push(m);
    let mut m = sample();
    m.levels[0][0].max_seq = 501; // above last_sequence
    cases.push(m);
    let mut m = sample();
    m.levels[0][0].min_seq = 501; // min > max
    cases.push(m);
    let mut m = sample();
    m.levels[0][0].min_user_key = b"z".to_vec();
    cases.push(m);
    let mut m = sample();
    m.min_wal_number = 21;
    cases.push(m);
    let dir = tempfile::tempdir().expect("tempdir");
    for m in cases {
        let reason = m.validate().expect_err("invalid");
        let err = Manifest::decode(&m.encode(), p()).expect_err("decode must reject");
        assert!(err.is_corruption(), "{reason}: {err}");
        let err = m.store(dir.path()).expect_err("store must reject");
        assert!(matches!(err, Error::InvalidArgument(_)), "{reason}: {err}");
    }
    assert!(
        Manifest::load(dir.path()).expect("load").is_none(),
        "nothing was written"
    );
    let mut m = sample();
    m.format_version = MANIFEST_FORMAT_VERSION + 1;
    assert!(matches!(
        m.store(dir.path()),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn corruption_offset_points_at_the_bad_run() {
    let mut m = sample();
    m.levels[2][0].max_seq = 9999;
    let b = m.encode();
    let err = Manifest::decode(&b, p()).expect_err("bad run");
    // prefix and record header + id 16 + counters 24 + level count 4 + level 0 (4 + two
    // runs) + level 1 (4) + level 2's run count (4); a run is 10 u64s and
    // 2 varint-prefixed keys.
    let run0 = 80 + (1 + 1) + (1 + 1);
    let run1 = 80 + 1 + (1 + 2);
    let expected = PREFIX_LEN + 9 + 16 + 24 + 4 + 4 + run0 + run1 + 4 + 4;
    assert!(
        matches!(err, Error::Corruption { offset, .. } if offset == expected as u64),
        "{err}"
    );
}

#[test]
fn huge_counts_do_not_allocate_or_panic() {
    // id 16, counters 24, then the level count.
    let mut b = payload(&Manifest::new());
    b[40..44].copy_from_slice(&u32::MAX.to_le_bytes());
    let err = Manifest::decode(&framed(&b), p()).expect_err("huge level count");
    assert!(err.is_corruption());
    b[40..44].copy_from_slice(&1u32.to_le_bytes());
    b.splice(44..44, u32::MAX.to_le_bytes()); // level 0's run count
    let err = Manifest::decode(&framed(&b), p()).expect_err("huge run count");
    assert!(err.is_corruption());
}

#[test]
fn store_and_load() {
    let dir = tempfile::tempdir().expect("tempdir");
    assert!(Manifest::load(dir.path()).expect("load").is_none());
    Manifest::new().store(dir.path()).expect("store");
    assert_eq!(
        Manifest::load(dir.path()).expect("load"),
        Some(Manifest::new())
    );
    sample().store(dir.path()).expect("store again");
    assert_eq!(Manifest::load(dir.path()).expect("load"), Some(sample()));
    assert!(!dir.path().join("MANIFEST.tmp").exists());
}

#[test]
fn leftover_tmp_is_ignored() {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::write(dir.path().join("MANIFEST.tmp"), b"half-written garbage").expect("seed");
    assert!(Manifest::load(dir.path()).expect("load").is_none());
    sample().store(dir.path()).expect("store");
    fs::write(
        dir.path().join("MANIFEST.tmp"),
        &Manifest::new().encode()[..10],
    )
    .expect("seed");
    assert_eq!(Manifest::load(dir.path()).expect("load"), Some(sample()));
}

#[test]
fn load_reports_corruption_with_the_manifest_path() {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::write(dir.path().join(MANIFEST_FILE), b"SLSMMANI garbage").expect("seed");
    match Manifest::load(dir.path()) {
        Err(Error::Corruption { file, .. }) => assert_eq!(file, dir.path().join(MANIFEST_FILE)),
        other => panic!("expected corruption, got {other:?}"),
    }
}

fn arb_manifest() -> impl Strategy<Value = Manifest> {
    let key = || prop::collection::vec(any::<u8>(), 0..20);
    let run = (
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        key(),
        key(),
        any::<u64>(),
        any::<u64>(),
    );
    let levels = prop::collection::vec(prop::collection::vec(run, 0..5), 0..6);
    (levels, any::<u64>(), 0u64..1000).prop_map(|(levels, last_sequence, extra)| {
        let mut next = 1u64;
        let levels: Vec<Vec<RunProperties>> = levels
            .into_iter()
            .map(|level| {
                level
                    .into_iter()
                    .map(|(size, entries, tomb, range, k1, k2, s1, s2)| {
                        let (min_seq, max_seq) = if s1 <= s2 { (s1, s2) } else { (s2, s1) };
                        let (lo, hi) = if k1 <= k2 { (k1, k2) } else { (k2, k1) };
                        next += 1;
                        RunProperties {
                            file_number: next - 1,
                            data_bytes: size / 2,
                            raw_data_bytes: size,
                            checksum: tomb as u32,
                            file_size: size,
                            entries,
                            tombstones: tomb,
                            range_tombstones: range,
                            min_user_key: lo,
                            max_user_key: hi,
                            min_seq: min_seq % (last_sequence.saturating_add(1)).max(1),
                            max_seq: max_seq.min(last_sequence),
                        }
                    })
                    .map(|mut r| {
                        r.min_seq = r.min_seq.min(r.max_seq);
                        r
                    })
                    .collect()
            })
            .collect();
        Manifest {
            format_version: MANIFEST_FORMAT_VERSION,
            db_id: [last_sequence as u8; 16],
            next_file_number: next + extra,
            last_sequence,
            min_wal_number: next,
            levels,
            catalog: Catalog::default(),
        }
    })
}

proptest! {
    #[test]
    fn prop_round_trip(m in arb_manifest()) {
        prop_assert!(m.validate().is_ok());
        prop_assert_eq!(Manifest::decode(&m.encode(), p()).expect("decode"), m);
    }

    #[test]
    fn prop_byte_flips_never_panic(m in arb_manifest(), i in any::<prop::sample::Index>(), mask in 1u8..=255) {
        let mut b = m.encode();
        let at = i.index(b.len());
        b[at] ^= mask;
        match Manifest::decode(&b, p()) {
            Err(e) => prop_assert!(e.is_corruption(), "{}", e),
            Ok(d) => prop_assert_eq!(d, m),
        }
    }

    #[test]
    fn prop_random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400), magic in any::<bool>()) {
        let mut bytes = bytes;
        if magic && bytes.len() >= 8 {
            bytes[..8].copy_from_slice(&MANIFEST_MAGIC);
        }
        let _ = Manifest::decode(&bytes, p());
        // With valid framing, the snapshot and edit parsers themselves see
        // random bytes.
        let _ = Manifest::decode(&framed(&bytes), p());
        let mut log = sample().encode();
        log::put_record(&mut log, log::RecordKind::Edit, &bytes);
        let _ = Manifest::decode(&log, p());
    }
}

/// A version-3 file of `m`: header, snapshot payload, one CRC.
fn legacy(m: &Manifest) -> Vec<u8> {
    let mut b = MANIFEST_MAGIC.to_vec();
    b.extend_from_slice(&3u32.to_le_bytes());
    b.extend_from_slice(&payload(m));
    let crc = crate::codec::masked_crc(&b);
    b.extend_from_slice(&crc.to_le_bytes());
    b
}

#[test]
fn a_version_3_manifest_is_read() {
    let m = sample();
    assert_eq!(Manifest::decode(&legacy(&m), p()).expect("decode"), m);
    let mut bad = legacy(&m);
    let at = bad.len() / 2;
    bad[at] ^= 1;
    assert!(Manifest::decode(&bad, p())
        .expect_err("flip")
        .is_corruption());
}

/// `sample()` then three changes: a flush, a merge into a new level, a
/// keyspace created.
fn states() -> Vec<Manifest> {
    let first = sample();
    let mut flushed = first.clone();
    flushed.next_file_number = 22;
    flushed.last_sequence = 600;
    flushed.min_wal_number = 21;
    flushed.levels[0].push(run(20, b"c", b"d", (501, 600)));
    let mut merged = flushed.clone();
    let moved: Vec<_> = merged.levels[0].drain(..2).collect();
    merged.levels.push(moved);
    merged.levels[2].clear();
    let mut created = merged.clone();
    created.catalog = created.catalog.with_new("events", 0).unwrap();
    vec![first, flushed, merged, created]
}

/// A log of `states`: the first as the snapshot, the others as edits, and
/// where each edit record starts.
fn log_of(states: &[Manifest]) -> (Vec<u8>, Vec<usize>) {
    let mut b = states[0].encode();
    let mut starts = Vec::new();
    for pair in states.windows(2) {
        starts.push(b.len());
        log::put_record(
            &mut b,
            log::RecordKind::Edit,
            &edit::encode(&pair[0], &pair[1]),
        );
    }
    (b, starts)
}

#[test]
fn edits_replay_to_the_last_state() {
    let states = states();
    let (b, _) = log_of(&states);
    let decoded = Manifest::decode_log(&b, p()).expect("decode");
    assert_eq!(decoded.manifest, states[3]);
    assert_eq!((decoded.edits, decoded.torn_at), (3, None));
}

#[test]
fn a_torn_last_edit_is_left_out_and_damage_before_it_is_corruption() {
    let states = states();
    let (b, starts) = log_of(&states);
    let last = *starts.last().unwrap();
    for cut in last..b.len() {
        let d = Manifest::decode_log(&b[..cut], p()).expect("a cut last edit is torn");
        assert_eq!(d.manifest, states[2], "cut at {cut}");
        assert_eq!(d.torn_at, (cut > last).then_some(last as u64));
    }
    for at in last..b.len() {
        let mut bad = b.clone();
        bad[at] ^= 0x10;
        let d = Manifest::decode(&bad, p()).expect("a damaged last edit is torn");
        assert_eq!(d, states[2], "flip at {at}");
    }
    // Garbage after the last record (a torn append's prefix) is left out.
    let mut tail = b.clone();
    tail.extend_from_slice(&[7, 0, 0]);
    assert_eq!(Manifest::decode(&tail, p()).expect("torn"), states[3]);
    // A damaged edit with a whole edit after it is damage, not a tear.
    for at in starts[1]..last {
        let mut bad = b.clone();
        bad[at] ^= 0x10;
        let err = Manifest::decode(&bad, p()).expect_err("damage in the middle");
        assert!(err.is_corruption(), "flip at {at}: {err}");
    }
}

#[test]
fn an_edit_that_breaks_an_invariant_is_corruption() {
    let states = states();
    let mut broken = states[1].clone();
    broken.levels[0][2].max_seq = 10_000; // above last_sequence
    let mut b = states[0].encode();
    let at = b.len();
    log::put_record(
        &mut b,
        log::RecordKind::Edit,
        &edit::encode(&states[0], &broken),
    );
    let err = Manifest::decode(&b, p()).expect_err("invalid state");
    assert!(
        matches!(err, Error::Corruption { offset, .. } if offset == at as u64),
        "{err}"
    );
    // A second snapshot is not an edit.
    let mut b = states[0].encode();
    log::put_record(&mut b, log::RecordKind::Snapshot, &payload(&states[1]));
    assert!(Manifest::decode(&b, p())
        .expect_err("two snapshots")
        .is_corruption());
}

#[test]
fn the_writer_appends_edits_and_rewrites_when_they_outgrow_the_snapshot() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fs: std::sync::Arc<dyn crate::fs::FileSystem> = std::sync::Arc::new(crate::fs::StdFs);
    let mut writer = ManifestLog::new(fs, dir.path(), 64 << 10);
    let states = states();
    assert!(matches!(
        writer.record(&states[0]),
        Ok(log::Written::File(_))
    ));
    for s in &states[1..] {
        assert!(matches!(writer.record(s), Ok(log::Written::Edit(_))));
    }
    assert_eq!(writer.record(&states[3]).unwrap(), log::Written::Nothing);
    assert_eq!(Manifest::load(dir.path()).unwrap(), Some(states[3].clone()));
    let mut m = states[3].clone();
    let mut rewrites = 0;
    for i in 0..2000u64 {
        m.last_sequence += 1;
        m.levels[0].push(run(
            m.next_file_number,
            b"e",
            b"f",
            (m.last_sequence, m.last_sequence),
        ));
        m.next_file_number += 1;
        if m.levels[0].len() > 4 {
            m.levels[0].remove(0);
        }
        match writer.record(&m).unwrap() {
            log::Written::File(_) => rewrites += 1,
            log::Written::Edit(_) => {}
            log::Written::Nothing => panic!("change {i} wrote nothing"),
        }
        let len = fs::metadata(dir.path().join(MANIFEST_FILE)).unwrap().len();
        assert!(len < 200 << 10, "the file stays bounded: {len} bytes");
    }
    assert!(
        (2..200).contains(&rewrites),
        "{rewrites} rewrites in 2,000 changes"
    );
    assert_eq!(Manifest::load(dir.path()).unwrap(), Some(m.clone()));
    // An invalid state is refused and nothing is written.
    let mut bad = m.clone();
    bad.min_wal_number = bad.next_file_number + 1;
    assert!(matches!(
        writer.record(&bad),
        Err(Error::InvalidArgument(_))
    ));
    assert_eq!(Manifest::load(dir.path()).unwrap(), Some(m));
}

#[test]
fn after_a_failed_append_the_next_change_writes_a_new_file() {
    use crate::fs::{FaultFs, FaultOp, FileSystem};
    let ffs = FaultFs::new(3);
    let dir = Path::new("/m");
    ffs.create_dir_all(dir).unwrap();
    let mut writer = ManifestLog::new(ffs.as_dyn(), dir, 64 << 10);
    let states = states();
    writer.record(&states[0]).unwrap();
    ffs.fail_nth(FaultOp::Write, 1);
    assert!(writer.record(&states[1]).is_err());
    let on_disk = Manifest::load_with(&ffs, dir).unwrap().unwrap();
    assert!(
        on_disk == states[0] || on_disk == states[1],
        "a torn append is left out"
    );
    assert!(matches!(
        writer.record(&states[2]),
        Ok(log::Written::File(_))
    ));
    assert_eq!(
        Manifest::load_with(&ffs, dir).unwrap(),
        Some(states[2].clone())
    );
    writer.record(&states[3]).unwrap();
    drop(writer);
    ffs.crash();
    assert_eq!(
        Manifest::load_with(&ffs, dir).unwrap(),
        Some(states[3].clone()),
        "synced edits survive a power loss"
    );
}

fn arb_pair() -> impl Strategy<Value = (Manifest, Manifest, Vec<(usize, usize)>)> {
    let moves = prop::collection::vec((0usize..8, 0usize..8), 0..6);
    (arb_manifest(), arb_manifest(), moves)
}

proptest! {
    #[test]
    fn prop_an_edit_turns_one_state_into_the_other((before, after, moves) in arb_pair()) {
        // Unrelated states: every level changed, runs replaced.
        let mut after = after;
        after.db_id = before.db_id;
        let b = edit::encode(&before, &after);
        let mut cur = Cursor { r: Reader::new(&b), file: p() };
        prop_assert_eq!(edit::decode_onto(&before, &mut cur, 0).expect("apply"), after);
        // Related states: runs moved between levels, levels added or cut.
        let mut moved = before.clone();
        for (from, to) in moves {
            if from < moved.levels.len() && !moved.levels[from].is_empty() {
                let r = moved.levels[from].remove(0);
                while moved.levels.len() <= to {
                    moved.levels.push(Vec::new());
                }
                moved.levels[to].push(r);
            } else {
                moved.levels.truncate(to);
            }
        }
        let b = edit::encode(&before, &moved);
        let mut cur = Cursor { r: Reader::new(&b), file: p() };
        prop_assert_eq!(edit::decode_onto(&before, &mut cur, 0).expect("apply"), moved);
    }
}

#[test]
fn huge_counts_in_an_edit_do_not_allocate_or_panic() {
    let before = sample();
    for (levels, changed) in [(u32::MAX, u32::MAX), (u32::MAX, 0), (4, u32::MAX)] {
        let mut b = Vec::new();
        for counter in [20u64, 500, 17] {
            b.extend_from_slice(&counter.to_le_bytes());
        }
        b.extend_from_slice(&levels.to_le_bytes());
        b.extend_from_slice(&changed.to_le_bytes());
        let mut cur = Cursor {
            r: Reader::new(&b),
            file: p(),
        };
        let err = edit::decode_onto(&before, &mut cur, 0).expect_err("huge counts");
        assert!(err.is_corruption(), "{err}");
    }
}
