//! What a workload cost the storage: the bytes this process made the kernel
//! read from and write to the device (`/proc/self/io`), and the space a
//! database takes on disk. The same measure for every engine, so write and
//! read amplification compare across them whatever each engine counts.

use std::path::Path;

/// Storage I/O of this process so far (every thread, background ones too).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IoCounters {
    /// Bytes the process caused to be read from storage (page-cache misses,
    /// read-ahead included; reads served by the page cache are not counted).
    pub read_bytes: u64,
    /// Bytes the process caused to be written to storage (counted when a
    /// page is dirtied, by `write(2)` or through a shared mapping).
    pub write_bytes: u64,
}

impl IoCounters {
    /// The counters now, if the kernel provides them (Linux with task I/O
    /// accounting).
    pub fn now() -> Option<IoCounters> {
        let text = std::fs::read_to_string("/proc/self/io").ok()?;
        parse(&text)
    }

    /// What happened between `earlier` and `self`.
    pub fn since(&self, earlier: &IoCounters) -> IoCounters {
        IoCounters {
            read_bytes: self.read_bytes.saturating_sub(earlier.read_bytes),
            write_bytes: self.write_bytes.saturating_sub(earlier.write_bytes),
        }
    }
}

fn parse(text: &str) -> Option<IoCounters> {
    let field = |name: &str| -> Option<u64> {
        text.lines()
            .find_map(|l| l.strip_prefix(name))?
            .trim()
            .parse()
            .ok()
    };
    Some(IoCounters {
        read_bytes: field("read_bytes:")?,
        write_bytes: field("write_bytes:")?,
    })
}

/// Bytes allocated on disk for every file under `dir` (what `du` reports:
/// space reserved ahead of writes counts, holes do not). `None` if `dir`
/// does not exist (an in-memory database).
pub fn disk_usage(dir: &Path) -> Option<u64> {
    let meta = std::fs::symlink_metadata(dir).ok()?;
    if !meta.is_dir() {
        return Some(allocated(&meta));
    }
    let mut total = 0;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let Ok(meta) = entry.metadata() else { continue };
        if meta.is_dir() {
            total += disk_usage(&entry.path()).unwrap_or(0);
        } else {
            total += allocated(&meta);
        }
    }
    Some(total)
}

#[cfg(unix)]
fn allocated(meta: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    meta.blocks() * 512
}

#[cfg(not(unix))]
fn allocated(meta: &std::fs::Metadata) -> u64 {
    meta.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_self_io() {
        let text = "rchar: 10\nwchar: 20\nsyscr: 1\nsyscw: 2\nread_bytes: 4096\n\
                    write_bytes: 8192\ncancelled_write_bytes: 0\n";
        let c = parse(text).unwrap();
        assert_eq!((c.read_bytes, c.write_bytes), (4096, 8192));
        assert_eq!(parse("rchar: 1\n"), None);
        let later = IoCounters {
            read_bytes: 5000,
            write_bytes: 9000,
        };
        assert_eq!(later.since(&c).write_bytes, 808);
    }

    #[test]
    fn disk_usage_counts_written_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a"), vec![1u8; 100_000]).unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/b"), vec![2u8; 50_000]).unwrap();
        let used = disk_usage(dir.path()).unwrap();
        // Allocated blocks: at least the bytes written, at most a few pages more.
        assert!((150_000..150_000 + 64 * 1024).contains(&used), "{used}");
        assert_eq!(disk_usage(&dir.path().join("missing")), None);
    }
}
