//! How much memory the process may use, as the operating system says: the
//! limit of its memory cgroup (v2 `memory.max` along its ancestors, v1's
//! `hierarchical_memory_limit`), else the machine's physical memory. The
//! page cache of the process's files is charged to that cgroup too, so
//! what the limit leaves beyond the engine's own budget is what the page
//! cache can hold for it (see `budget`).
//!
//! Read once per database open; `None` where nothing can be read (another
//! OS, `/proc` or `/sys` not mounted): the caller then assumes plenty.
//!
//! And the heap the engine frees: see [`release_free_heap`].

use std::path::{Path, PathBuf};

/// The memory limit of this process in bytes, if one can be found.
pub(crate) fn memory_limit() -> Option<u64> {
    let physical = physical_memory();
    let cgroup = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|table| cgroup_limit(&table, Path::new("/sys/fs/cgroup")));
    match (cgroup, physical) {
        (Some(c), Some(p)) => Some(c.min(p)),
        (c, p) => c.or(p),
    }
}

/// Hands the pages the C allocator holds free back to the system (glibc's
/// `malloc_trim`; a no-op with other C libraries). Jobs call it once they
/// have swapped their inputs for their output: a job frees megabytes at
/// once (the memory runs it flushed, the filter hashes and index of the
/// file it built, the pinned indexes and filters of the files it merged),
/// and glibc keeps freed memory that sits between live blocks of its heap
/// and per-thread arenas. Without it the process held tens of megabytes the
/// budget no longer counts (5M keys at the default budget,
/// `readwhilewriting`: 36-44 MiB free but resident; the default set's peak
/// RSS 163-175 -> 128-139 MiB, at the same speed). It touches only free
/// memory, whichever allocator Rust uses; a trim took 0.2 ms at the median
/// (0.9 ms at most), and runs at most every [`MIN_TRIM_INTERVAL`] however
/// small and frequent the jobs are.
pub(crate) fn release_free_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if trim_is_due() {
        // SAFETY: malloc_trim only returns free pages to the system; it may
        // be called at any time, from any thread, and changes no live
        // allocation.
        unsafe {
            libc::malloc_trim(0);
        }
    }
}

/// The shortest time between two trims.
const MIN_TRIM_INTERVAL: std::time::Duration = std::time::Duration::from_millis(50);

/// True (once per interval, for one caller) if no trim ran in the last
/// [`MIN_TRIM_INTERVAL`].
#[cfg_attr(not(all(target_os = "linux", target_env = "gnu")), allow(dead_code))]
fn trim_is_due() -> bool {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::OnceLock;
    use std::time::Instant;
    static START: OnceLock<Instant> = OnceLock::new();
    /// Milliseconds since `START` of the last trim, plus one (0: never).
    static LAST: AtomicU64 = AtomicU64::new(0);
    let now = START.get_or_init(Instant::now).elapsed().as_millis() as u64 + 1;
    let last = LAST.load(Ordering::Relaxed);
    if last != 0 && now < last + MIN_TRIM_INTERVAL.as_millis() as u64 {
        return false;
    }
    LAST.compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
        .is_ok()
}

/// `MemTotal` of `/proc/meminfo`, in bytes.
fn physical_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The memory limit of the cgroup `table` (the text of `/proc/self/cgroup`)
/// names, read under `root` (the cgroup file system's mount point).
fn cgroup_limit(table: &str, root: &Path) -> Option<u64> {
    for line in table.lines() {
        let mut fields = line.splitn(3, ':');
        let (id, controllers, path) = (fields.next()?, fields.next()?, fields.next()?);
        let relative = path.trim_start_matches('/');
        if id == "0" && controllers.is_empty() {
            if let Some(limit) = v2_limit(root, relative) {
                return Some(limit);
            }
        } else if controllers.split(',').any(|c| c == "memory") {
            return v1_limit(&root.join("memory").join(relative));
        }
    }
    None
}

/// The smallest `memory.max` from the cgroup at `root/relative` up to the
/// root (`max` means none).
fn v2_limit(root: &Path, relative: &str) -> Option<u64> {
    let mut dir: PathBuf = root.join(relative);
    let mut limit: Option<u64> = None;
    loop {
        let here = std::fs::read_to_string(dir.join("memory.max"))
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok());
        limit = match (limit, here) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if dir == root || !dir.pop() || !dir.starts_with(root) {
            return limit;
        }
    }
}

/// cgroup v1's limit for the cgroup at `dir`, its ancestors' included
/// (`memory.stat`'s `hierarchical_memory_limit`; a huge number means none).
fn v1_limit(dir: &Path) -> Option<u64> {
    let stat = std::fs::read_to_string(dir.join("memory.stat")).ok()?;
    let line = stat
        .lines()
        .find(|l| l.starts_with("hierarchical_memory_limit "))?;
    let limit: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    (limit < 1 << 60).then_some(limit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_v2_limits_along_the_ancestors() {
        let root = tempfile::tempdir().unwrap();
        let leaf = root.path().join("a/b");
        std::fs::create_dir_all(&leaf).unwrap();
        std::fs::write(root.path().join("a/memory.max"), "268435456\n").unwrap();
        std::fs::write(leaf.join("memory.max"), "max\n").unwrap();
        assert_eq!(cgroup_limit("0::/a/b\n", root.path()), Some(256 << 20));
        std::fs::write(leaf.join("memory.max"), "1048576\n").unwrap();
        assert_eq!(cgroup_limit("0::/a/b\n", root.path()), Some(1 << 20));
        assert_eq!(cgroup_limit("0::/\n", root.path()), None);
    }

    #[test]
    fn reads_the_v1_hierarchical_limit() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("memory/job");
        std::fs::create_dir_all(&dir).unwrap();
        let stat = "cache 0\nhierarchical_memory_limit 268435456\nhierarchical_memsw_limit 9\n";
        std::fs::write(dir.join("memory.stat"), stat).unwrap();
        let table = "9:pids:/\n4:cpu,memory:/job\n";
        assert_eq!(cgroup_limit(table, root.path()), Some(256 << 20));
        std::fs::write(
            dir.join("memory.stat"),
            "hierarchical_memory_limit 9223372036854771712\n",
        )
        .unwrap();
        assert_eq!(cgroup_limit(table, root.path()), None);
    }

    #[test]
    fn this_process_has_some_limit() {
        assert!(memory_limit().is_some_and(|l| l > 0));
    }
}
