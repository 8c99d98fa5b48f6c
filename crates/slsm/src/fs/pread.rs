//! Positional reads into fresh buffers, keeping the pages read in the
//! operating system's page cache or not.
//!
//! Not keeping them is Linux's `RWF_DONTCACHE` (6.14; ext4, XFS, btrfs):
//! the read goes through the page cache, which drops the pages it had to
//! bring in once they are copied (pages already cached stay). For a reader
//! whose own block cache keeps what it wants, in a memory limit that
//! cannot hold its files anyway, the pages it would leave behind are only
//! work for reclaim: measured with 5M keys in a 256 MiB cgroup, random
//! reads went from 58-60 to 51-53 us at the median and the cgroup's peak
//! from 150-156 to 98-99 MiB. A kernel or file system without the flag
//! answers `EOPNOTSUPP` (or `EINVAL`): from then on the reads are plain.

use std::fs::File;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};

/// `RWF_DONTCACHE` (`include/uapi/linux/fs.h`; not yet in the libc crate).
const RWF_DONTCACHE: libc::c_int = 0x80;

/// Whether the kernel has taken `RWF_DONTCACHE` so far (cleared when it
/// refuses it; one flag per process, as the kernel is).
static DONTCACHE_WORKS: AtomicBool = AtomicBool::new(true);

/// `len` bytes of `file` from `offset` in a new buffer (not zeroed first);
/// `UnexpectedEof` if the file ends first. With `keep_cached` false, the
/// pages read are not left in the page cache (see the [module docs](self)).
pub(super) fn read_vec(
    file: &File,
    offset: u64,
    len: usize,
    keep_cached: bool,
) -> io::Result<Vec<u8>> {
    let mut buf: Vec<u8> = Vec::with_capacity(len);
    let mut done = 0usize;
    while done < len {
        let spare = &mut buf.spare_capacity_mut()[..len - done];
        let n = read_once(file, spare, offset + done as u64, keep_cached);
        match n {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            n if n > 0 => {
                done += n as usize;
                // SAFETY: the read initialized the `n` bytes after the
                // `done` bytes already initialized.
                unsafe { buf.set_len(done) };
            }
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
    Ok(buf)
}

/// Fills `buf` from `offset` of `file`, as [`read_vec`] does.
pub(super) fn read_into(
    file: &File,
    offset: u64,
    buf: &mut [u8],
    keep_cached: bool,
) -> io::Result<()> {
    let mut done = 0usize;
    while done < buf.len() {
        // SAFETY: `u8` and `MaybeUninit<u8>` have the same layout, and the
        // read only writes initialized bytes into the slice it is given.
        let rest = unsafe { &mut *(&mut buf[done..] as *mut [u8] as *mut [MaybeUninit<u8>]) };
        match read_once(file, rest, offset + done as u64, keep_cached) {
            0 => return Err(io::ErrorKind::UnexpectedEof.into()),
            n if n > 0 => done += n as usize,
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
            }
        }
    }
    Ok(())
}

/// One `pread` (or `preadv2` with `RWF_DONTCACHE`) into `dst` from byte
/// `at` of `file`; the system call's result (bytes read, or -1).
fn read_once(file: &File, dst: &mut [MaybeUninit<u8>], at: u64, keep_cached: bool) -> isize {
    let (fd, at) = (file.as_raw_fd(), at as libc::off_t);
    let (ptr, len) = (dst.as_mut_ptr().cast::<libc::c_void>(), dst.len());
    if !keep_cached && DONTCACHE_WORKS.load(Ordering::Relaxed) {
        let iov = libc::iovec {
            iov_base: ptr,
            iov_len: len,
        };
        // SAFETY: `iov` describes `dst`, `len` bytes borrowed mutably for
        // the call, which the kernel writes and does not read; `fd` is open
        // for as long as `file` lives.
        let n = unsafe { libc::preadv2(fd, &iov, 1, at, RWF_DONTCACHE) };
        let refused = || {
            let code = io::Error::last_os_error().raw_os_error();
            code == Some(libc::EOPNOTSUPP) || code == Some(libc::EINVAL)
        };
        if n >= 0 || !refused() {
            return n;
        }
        DONTCACHE_WORKS.store(false, Ordering::Relaxed);
    }
    // SAFETY: as above: `dst` is `len` writable bytes, `fd` is open.
    unsafe { libc::pread(fd, ptr, len, at) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_kinds_of_read_return_the_file_s_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let bytes: Vec<u8> = (0..20_000u32).map(|i| (i * 7) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let file = File::open(&path).unwrap();
        for keep_cached in [true, false] {
            assert_eq!(read_vec(&file, 0, 20_000, keep_cached).unwrap(), bytes);
            assert_eq!(
                read_vec(&file, 4093, 5000, keep_cached).unwrap(),
                &bytes[4093..9093]
            );
            assert!(read_vec(&file, 0, 0, keep_cached).unwrap().is_empty());
            let past = read_vec(&file, 19_000, 2000, keep_cached).unwrap_err();
            assert_eq!(past.kind(), io::ErrorKind::UnexpectedEof);
            let mut buf = vec![0u8; 5000];
            read_into(&file, 4093, &mut buf, keep_cached).unwrap();
            assert_eq!(buf, &bytes[4093..9093]);
            let past = read_into(&file, 19_000, &mut buf[..2000], keep_cached).unwrap_err();
            assert_eq!(past.kind(), io::ErrorKind::UnexpectedEof);
        }
    }
}
