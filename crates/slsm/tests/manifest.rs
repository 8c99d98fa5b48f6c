//! The MANIFEST as a database uses it: every flush appends one edit, the
//! file stays bounded, reopening gives back the same state, and a database
//! whose MANIFEST is in the previous format (version 3) opens.

use slsm::{Db, Options};

fn small() -> Options {
    Options {
        run_size: 64 << 10,
        background_merges: false,
        ..Options::default()
    }
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

fn manifest_len(dir: &std::path::Path) -> u64 {
    std::fs::metadata(dir.join("MANIFEST")).unwrap().len()
}

#[test]
fn many_small_flushes_append_edits_and_reopen_to_the_same_state() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path(), small()).unwrap();
    let opened = db.stats();
    assert_eq!(
        opened.manifest_files_written, 1,
        "an open starts a new MANIFEST"
    );
    for i in 0..400 {
        db.put(key(i), format!("value {i}")).unwrap();
        db.flush().unwrap();
        assert!(
            manifest_len(tmp.path()) <= 80 << 10,
            "the MANIFEST stays near its bound"
        );
    }
    let stats = db.stats();
    assert!(stats.flushes >= 400, "{} flushes", stats.flushes);
    assert!(
        stats.manifest_edits >= 400,
        "every flush and merge appends an edit: {stats:?}"
    );
    assert!(
        stats.manifest_files_written < 1 + stats.manifest_edits / 20,
        "new files only when the edits outgrow the snapshot: {stats:?}"
    );
    let levels: Vec<usize> = stats.levels.iter().map(|l| l.runs).collect();
    drop(db);
    let db = Db::open(tmp.path(), small()).unwrap();
    let again: Vec<usize> = db.stats().levels.iter().map(|l| l.runs).collect();
    assert_eq!(again, levels, "the runs of every level come back");
    for i in 0..400 {
        assert_eq!(
            db.get(key(i)).unwrap().as_deref(),
            Some(format!("value {i}").as_bytes())
        );
    }
    db.check().unwrap();
}

/// The version-3 file of a version-4 MANIFEST holding one snapshot: the
/// snapshot's payload between the old header and one CRC of it all.
fn as_version_3(v4: &[u8]) -> Vec<u8> {
    let len = u32::from_le_bytes(v4[16..20].try_into().unwrap()) as usize;
    assert_eq!(v4.len(), 16 + 8 + len, "one record: the snapshot");
    assert_eq!(v4[24], 1, "a snapshot record");
    let mut v3 = b"SLSMMANI".to_vec();
    v3.extend_from_slice(&3u32.to_le_bytes());
    v3.extend_from_slice(&v4[25..]);
    let crc = crc32c::crc32c(&v3)
        .rotate_right(15)
        .wrapping_add(0xa282_ead8);
    v3.extend_from_slice(&crc.to_le_bytes());
    v3
}

#[test]
fn a_database_with_a_version_3_manifest_opens_and_moves_to_version_4() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(tmp.path(), small()).unwrap();
    let users = db.keyspace("users").unwrap();
    for i in 0..50 {
        db.put(key(i), b"v").unwrap();
        users.put(key(i), b"u").unwrap();
        if i % 10 == 9 {
            db.flush().unwrap();
        }
    }
    drop(users);
    drop(db);
    // A clean close leaves a MANIFEST of one snapshot (the last change may
    // be an edit: open and close again without writing to make sure).
    drop(Db::open(tmp.path(), small()).unwrap());
    let path = tmp.path().join("MANIFEST");
    let v4 = std::fs::read(&path).unwrap();
    std::fs::write(&path, as_version_3(&v4)).unwrap();
    let db = Db::open(tmp.path(), small()).unwrap();
    let users = db.keyspace("users").unwrap();
    for i in 0..50 {
        assert_eq!(db.get(key(i)).unwrap().as_deref(), Some(&b"v"[..]));
        assert_eq!(users.get(key(i)).unwrap().as_deref(), Some(&b"u"[..]));
    }
    drop(users);
    drop(db);
    let now = std::fs::read(&path).unwrap();
    assert_eq!(
        u32::from_le_bytes(now[8..12].try_into().unwrap()),
        4,
        "rewritten in version 4"
    );
}
