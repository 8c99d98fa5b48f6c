//! A follower of `slsm serve --cluster` whose disk fills: it stops (a
//! storage fault ends the node, as etcd's does, rather than serving from
//! a state it can no longer keep), the other two go on acknowledging
//! writes, and once space is freed the node restarts from its own
//! directory and catches up with every acknowledged write.
//!
//! The node's directory is a small tmpfs mounted for the test, so this
//! needs root (CI has it); elsewhere it says so and does nothing.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use support::cluster::{wait_replicated, write, Cluster, Conn, Resp};

/// A tmpfs mounted at a directory for the guard's life.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: &Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(at).ok()?;
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Tmpfs(at.to_path_buf()))
    }

    /// Bytes free on it.
    fn free(&self) -> u64 {
        let out = Command::new("df")
            .args(["--output=avail", "-B1"])
            .arg(&self.0)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        text.lines().nth(1).unwrap().trim().parse().unwrap()
    }

    /// Fills it but for `leave` bytes, with one file it returns.
    fn fill_leaving(&self, leave: u64) -> PathBuf {
        let filler = self.0.join("filler");
        let size = self.free().saturating_sub(leave);
        std::fs::write(&filler, vec![0u8; size as usize]).unwrap();
        filler
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        // Lazily: a node may still hold files there; it is killed next.
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[test]
fn a_follower_whose_disk_fills_stops_and_catches_up_once_space_is_freed() {
    let mut cluster = Cluster::prepare(50_000);
    let full = 2;
    let Some(disk) = Tmpfs::mount(&cluster.node_dir(full), "64m") else {
        eprintln!("skipped: mounting a tmpfs needs root");
        return;
    };
    // Two members elect a leader; the third joins on the small disk as a
    // follower.
    cluster.spawn(0);
    cluster.spawn(1);
    cluster.leader(Duration::from_secs(20)).expect("a leader");
    cluster.spawn(full);
    assert_eq!(
        write(&cluster, &["SET", "before", "1"]),
        Resp::Ok("OK".into())
    );
    let one = Resp::Bulk(Some(b"1".to_vec()));
    wait_replicated(&cluster.clients[full], "before", &one);
    let filler = disk.fill_leaving(1 << 20);

    // Writes go on being acknowledged (by the two others) while the
    // follower runs out of space and stops.
    let value = "x".repeat(4000);
    let started = Instant::now();
    let mut written = 0;
    let stopped = loop {
        let key = format!("k{written}");
        let slow = Instant::now();
        assert_eq!(
            write(&cluster, &["SET", &key, &value]),
            Resp::Ok("OK".into())
        );
        assert!(
            slow.elapsed() < Duration::from_secs(2),
            "a write took {:?}",
            slow.elapsed()
        );
        written += 1;
        let child = cluster.children[full].as_mut().unwrap();
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the follower kept running on a full disk after {written} writes"
        );
    };
    assert!(
        !stopped.success(),
        "a storage fault must end the node with an error"
    );
    cluster.children[full] = None;
    for n in written..written + 50 {
        let key = format!("k{n}");
        assert_eq!(
            write(&cluster, &["SET", &key, &value]),
            Resp::Ok("OK".into())
        );
    }
    written += 50;

    // Space freed, the same directory: the node recovers and catches up.
    std::fs::remove_file(filler).unwrap();
    cluster.spawn(full);
    let last = Resp::Bulk(Some(value.clone().into_bytes()));
    wait_replicated(&cluster.clients[full], &format!("k{}", written - 1), &last);
    let mut here = Conn::open(&cluster.clients[full]).unwrap();
    here.call(&["READONLY"]).unwrap();
    assert_eq!(
        here.call(&["DBSIZE"]).unwrap(),
        Resp::Int(written as i64 + 1)
    );
    for n in (0..written).step_by(7) {
        let key = format!("k{n}");
        assert_eq!(here.call(&["GET", &key]).unwrap(), last, "{key}");
    }
    assert_eq!(here.call(&["GET", "before"]).unwrap(), one);
}
