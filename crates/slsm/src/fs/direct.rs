//! Direct reads (`O_DIRECT`): from the device into our buffer, with no
//! page of the operating system's page cache in between.
//!
//! A run file's blocks are read this way when the block cache says the
//! memory limit cannot hold the files anyway (`bypasses_os_cache`), where
//! the reads were `RWF_DONTCACHE` reads before (see `pread`): those still
//! allocate a page-cache page per page read, insert it, copy out of it and
//! drop it again, which this disk's fio measured at 45.7-46.8 us a 4 KiB
//! random read buffered against 37.8-42.5 us direct. Measured in the
//! engine (5M keys with LZ4 in a 256 MiB cgroup, one loaded database, 8
//! alternating rounds of 30,000 random reads): 36.2 us a read at the
//! median against 44.7 with `RWF_DONTCACHE`, 7 rounds of 8 faster;
//! batches of 64, 17.8 against 18.6 us a key. Merges and scans keep their
//! large sequential reads buffered (`read_vec_at_uncached`), which the
//! kernel serves in one request however unaligned.
//!
//! A direct read must start, end and land on the device's logical block
//! size. We read the aligned pages that cover the bytes asked for into an
//! aligned per-thread buffer and copy the bytes out (a few KiB: well under
//! a microsecond beside the device's ~40 us). [`ALIGN`] is 4 KiB, which
//! both 512-byte and 4 KiB devices accept. A file system that refuses
//! `O_DIRECT` (at open, or `EINVAL` at the first read) gets plain reads.
//!
//! Reads stay coherent with writes through the page cache: the kernel
//! writes a range's dirty pages back before a direct read of it, and run
//! files are synced before anyone reads them anyway.

use std::cell::RefCell;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};

/// Alignment of a direct read's offset, length and memory.
pub(super) const ALIGN: usize = 4096;

/// Reads into one buffer of a thread larger than this allocate instead of
/// keeping the buffer (a data block is a few KiB; an index can be large).
const SCRATCH_KEEP: usize = 256 << 10;

thread_local! {
    /// The aligned buffer of this thread's direct reads (see [`with_aligned`]).
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A second descriptor of `file` (the same open file, even if it has been
/// unlinked since) opened with `O_DIRECT`, through `/proc/self/fd`; `None`
/// where the file system or the system refuses.
pub(super) fn reopen_direct(file: &File) -> Option<File> {
    let path = format!("/proc/self/fd/{}", file.as_raw_fd());
    let open = |flags| {
        OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT | flags)
            .open(&path)
    };
    match open(libc::O_NOATIME) {
        Err(e) if e.raw_os_error() == Some(libc::EPERM) => open(0).ok(),
        other => other.ok(),
    }
}

/// Fills `buf` from byte `offset` of `direct` (opened by
/// [`reopen_direct`]); an error of kind `UnexpectedEof` if the file ends
/// first, and the system's `EINVAL` if the file system will not read it
/// directly after all (the caller then reads it plainly).
pub(super) fn read_into(direct: &File, offset: u64, buf: &mut [u8]) -> io::Result<()> {
    if buf.is_empty() {
        return Ok(());
    }
    let start = offset - offset % ALIGN as u64;
    let skip = (offset - start) as usize;
    let span = (skip + buf.len()).div_ceil(ALIGN) * ALIGN;
    with_aligned(span, |pages| {
        let got = read_pages(direct, start, pages)?;
        if got < skip + buf.len() {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        buf.copy_from_slice(&pages[skip..skip + buf.len()]);
        Ok(())
    })
}

/// Reads `pages` (aligned, a multiple of [`ALIGN`] long) from the aligned
/// offset `at`; the bytes read, fewer only where the file ends.
fn read_pages(direct: &File, at: u64, pages: &mut [u8]) -> io::Result<usize> {
    let mut done = 0usize;
    while done < pages.len() {
        match direct.read_at(&mut pages[done..], at + done as u64) {
            Ok(0) => break,
            Ok(n) => {
                done += n;
                // A short direct read ends at the end of the file; the next
                // offset would be unaligned, which the kernel refuses.
                if !done.is_multiple_of(ALIGN) {
                    break;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// Calls `f` with `len` bytes of memory aligned to [`ALIGN`] (contents
/// unspecified): a window of this thread's buffer, or of a fresh one for a
/// large or nested read. The alignment is found inside an over-allocated
/// `Vec`, which needs no unsafe allocation code.
fn with_aligned<R>(len: usize, f: impl FnOnce(&mut [u8]) -> R) -> R {
    let window = |buf: &mut Vec<u8>| {
        if buf.len() < len + ALIGN {
            buf.resize(len + ALIGN, 0);
        }
        let at = buf.as_ptr().align_offset(ALIGN);
        f(&mut buf[at..at + len])
    };
    if len > SCRATCH_KEEP {
        return window(&mut Vec::new());
    }
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buf) => window(&mut buf),
        Err(_) => window(&mut Vec::new()),
    })
}

/// One read of [`read_direct_batch`](super::read_direct_batch): `len` bytes at `offset` of the file
/// whose [`RandomAccessFile::direct_fd`](super::RandomAccessFile::direct_fd) is `fd`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DirectRead {
    /// The file's direct descriptor.
    pub(crate) fd: std::os::fd::RawFd,
    /// First byte.
    pub(crate) offset: u64,
    /// Bytes.
    pub(crate) len: usize,
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A file of `len` patterned bytes in a temporary directory.
    pub(in crate::fs) fn patterned(len: u32) -> (tempfile::TempDir, Vec<u8>, File) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + i / 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let file = File::open(&path).unwrap();
        (dir, bytes, file)
    }

    #[test]
    fn unaligned_ranges_read_the_file_s_bytes() {
        let (_dir, bytes, file) = patterned(20_000);
        let Some(direct) = reopen_direct(&file) else {
            eprintln!("this file system refuses O_DIRECT: nothing to check");
            return;
        };
        let ranges = [
            (0, 20_000),
            (0, 1),
            (4093, 5000),
            (4096, 4096),
            (8191, 2),
            (12_288, 7_712),
            (19_999, 1),
            (100, 0),
        ];
        for (offset, len) in ranges {
            let mut buf = vec![0xAAu8; len];
            read_into(&direct, offset as u64, &mut buf).unwrap();
            assert_eq!(buf, &bytes[offset..offset + len], "{offset}+{len}");
        }
        let mut big = vec![0u8; 19_000];
        read_into(&direct, 1000, &mut big).unwrap();
        assert_eq!(big, &bytes[1000..]);
    }

    #[test]
    fn a_read_past_the_end_is_unexpected_eof() {
        let (_dir, _bytes, file) = patterned(10_000);
        let Some(direct) = reopen_direct(&file) else {
            return;
        };
        for (offset, len) in [(9_000u64, 2_000usize), (10_000, 1), (40_960, 10)] {
            let err = read_into(&direct, offset, &mut vec![0; len]).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof, "{offset}+{len}");
        }
    }

    #[test]
    fn the_direct_descriptor_outlives_the_file_s_name() {
        let (dir, bytes, file) = patterned(9_000);
        std::fs::remove_file(dir.path().join("f")).unwrap();
        let Some(direct) = reopen_direct(&file) else {
            return;
        };
        let mut buf = vec![0u8; 5_000];
        read_into(&direct, 3_000, &mut buf).unwrap();
        assert_eq!(buf, &bytes[3_000..8_000]);
    }

    #[test]
    fn ext4_and_xfs_open_directly() {
        // The tests above pass vacuously where O_DIRECT is refused; on the
        // file systems CI runs on it must not be.
        let (_dir, _bytes, file) = patterned(10);
        let fs = std::process::Command::new("stat")
            .args(["-f", "-c", "%T"])
            .arg(std::env::temp_dir())
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
        if matches!(fs.as_str(), "ext2/ext3" | "xfs") {
            assert!(reopen_direct(&file).is_some(), "{fs} refused O_DIRECT");
        }
    }
}
