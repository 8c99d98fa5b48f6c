//! The full-disk and read-only contracts on a real file system: a small
//! tmpfs mounted for the test (root only; the same contracts are tested
//! without mounting, through `FaultFs`, in `safety.rs`).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{key, small_options};
use slsm::{Db, Error, Options};

/// A tmpfs mounted on a temporary directory, unmounted on drop.
struct Tmpfs {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Tmpfs {
    /// `None` (with a note on stderr) where mounting is not allowed.
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().ok()?;
        let path = dir.path().join("mnt");
        std::fs::create_dir(&path).ok()?;
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&path)
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            eprintln!("skipped: cannot mount a tmpfs here (needs root)");
            return None;
        }
        Some(Tmpfs { _dir: dir, path })
    }

    fn remount(&self, how: &str) {
        let out = Command::new("mount")
            .args(["-o", &format!("remount,{how}")])
            .arg(&self.path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.path).status();
    }
}

/// 4 KiB that do not compress: the disk fills at the rate we write.
fn big_value(i: u32) -> Vec<u8> {
    let mut x = u64::from(i).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..4096)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn check_values(db: &Db, range: std::ops::Range<u32>) {
    for i in range {
        assert_eq!(
            db.get(key(i)).unwrap().as_deref(),
            Some(&big_value(i)[..]),
            "key {i}"
        );
    }
}

/// Writes `path` until the file system is full.
fn fill_up(path: &Path) {
    use std::io::Write;
    let mut f = std::fs::File::create(path).unwrap();
    let chunk = vec![7u8; 64 << 10];
    while f.write_all(&chunk).is_ok() {}
    let _ = f.sync_all();
}

fn options() -> Options {
    Options {
        run_size: 1 << 20,
        ..small_options()
    }
}

#[test]
fn a_full_disk_on_a_real_file_system() {
    let Some(fs) = Tmpfs::mount("24m") else {
        return;
    };
    let dir = fs.path.join("db");
    let filler = fs.path.join("filler");
    std::fs::write(&filler, vec![0u8; 4 << 20]).unwrap();
    let db = Db::open(&dir, options()).unwrap();
    let mut acked = 0;
    let error = loop {
        match db.put(key(acked), big_value(acked)) {
            Ok(()) => acked += 1,
            Err(e) => break e,
        }
        assert!(acked < 100_000, "the disk never filled");
    };
    assert!(error.is_no_space(), "{error}");
    assert!(acked > 100);
    check_values(&db, 0..acked);
    drop(db);

    // Whatever closing freed (the log's reserved tail) is taken too: the
    // open finds no space at all.
    let rest = fs.path.join("rest");
    fill_up(&rest);
    let db = Db::open(&dir, options()).expect("open with the disk full");
    check_values(&db, 0..acked);
    assert!(db.put(b"more", b"x").unwrap_err().is_no_space());
    std::fs::remove_file(&rest).unwrap();

    std::fs::remove_file(&filler).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let resumed = acked..acked + 200;
    for i in resumed.clone() {
        loop {
            match db.put(key(i), big_value(i)) {
                Ok(()) => break,
                Err(e) if e.is_no_space() && Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Err(e) => panic!("writes did not resume once space was back: {e}"),
            }
        }
    }
    check_values(&db, 0..resumed.end);
    drop(db);
    let db = Db::open(&dir, options()).unwrap();
    check_values(&db, 0..resumed.end);
    db.check().unwrap();
}

#[test]
fn a_read_only_mount() {
    let Some(fs) = Tmpfs::mount("64m") else {
        return;
    };
    let dir = fs.path.join("db");
    {
        let db = Db::open(&dir, options()).unwrap();
        for i in 0..300 {
            db.put(key(i), big_value(i)).unwrap();
        }
    }
    fs.remount("ro");
    let err = Db::open(&dir, options()).expect_err("a read-only mount cannot be opened for writes");
    assert!(!err.is_corruption(), "{err}");
    let db = Db::open_read_only(&dir, options()).unwrap();
    check_values(&db, 0..300);
    assert!(matches!(db.put(b"k", b"v"), Err(Error::ReadOnly(_))));
    drop(db);
    fs.remount("rw");
    let _ = Path::new(&dir);
}
