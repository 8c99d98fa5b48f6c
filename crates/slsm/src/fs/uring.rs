//! Many direct reads submitted together through `io_uring`: the reads of
//! a batched lookup's blocks (`cache::fetch`) when the blocks are read with
//! `O_DIRECT` (`fs::direct`).
//!
//! Why not only the pool of reader threads `cache::fetch` hands reads to
//! otherwise: on this 2-core VM a read costs ~20 us of CPU in the kernel
//! (the virtual disk's doorbell and completion interrupt), and a thread per
//! outstanding read adds two context switches to each: a `multireadrandom`
//! of 64 spent a quarter of its CPU switching threads. One submission of
//! the whole batch from the calling thread rings the doorbell once per
//! batch and waits once (fio, 4 KiB random direct reads: 89k reads/s with
//! `io_uring` at queue depth 16 against 62k for 16 threads).
//!
//! Where `io_uring` is refused (kernels before 5.6, seccomp filters of
//! container runtimes, `kernel.io_uring_disabled`) [`read_batch`] says so
//! and the caller uses its threads. Each thread that reads batches keeps
//! one ring of [`RING_ENTRIES`] entries.
//!
//! * **Owns**: this thread's ring.
//! * **Thread safety**: rings are per thread; nothing is shared.

use std::cell::RefCell;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

use io_uring::{opcode, types, IoUring};

use super::direct::DirectRead;
use super::direct::ALIGN;

/// Submission entries of a thread's ring: reads of one submission at most
/// (a batch of more is read in rounds). The device gains nothing past a
/// queue depth of 16-32 (fio on this disk: 84.6k reads/s at 16, 83.9k at
/// 32).
const RING_ENTRIES: u32 = 64;

/// Cleared for good the first time the kernel refuses a ring.
static RINGS_WORK: AtomicBool = AtomicBool::new(true);

thread_local! {
    static RING: RefCell<Option<Ring>> = const { RefCell::new(None) };
}

/// A thread's ring, and the buffer its reads land in (kept, so that a
/// batch allocates and zeroes nothing).
struct Ring {
    ring: IoUring,
    buf: Vec<u8>,
}

/// Reads every one of `reads` directly, all submitted together, and calls
/// `done(k, bytes)` for each read `k` that returned all its bytes, in the
/// order they complete. A read that failed or came up short is left out
/// (the caller reads it again its own way, which reports the error).
/// `false`, with nothing read, if this thread cannot have a ring.
pub fn read_batch(reads: &[DirectRead], mut done: impl FnMut(usize, &[u8])) -> bool {
    if !RINGS_WORK.load(Ordering::Relaxed) {
        return false;
    }
    RING.with(|cell| {
        let Ok(mut slot) = cell.try_borrow_mut() else {
            return false;
        };
        if slot.is_none() {
            match IoUring::new(RING_ENTRIES) {
                Ok(ring) => {
                    *slot = Some(Ring {
                        ring,
                        buf: Vec::new(),
                    })
                }
                Err(_) => {
                    RINGS_WORK.store(false, Ordering::Relaxed);
                    return false;
                }
            }
        }
        let Some(ring) = slot.as_mut() else {
            return false;
        };
        for (round, chunk) in reads.chunks(RING_ENTRIES as usize).enumerate() {
            let first = round * RING_ENTRIES as usize;
            if !read_round(ring, chunk, |k, bytes| done(first + k, bytes)) {
                // The ring is in an unknown state: drop it (after its reads
                // were waited for, see `read_round`) and start over with a
                // new one next time.
                *slot = None;
                break;
            }
        }
        true
    })
}

/// Where one read lands in a round's shared buffer.
struct Span {
    /// Start of its aligned window in the buffer.
    at: usize,
    /// Bytes of the window (whole pages).
    len: usize,
    /// The read's first byte, from the window's start.
    skip: usize,
}

/// Reads `reads` (at most [`RING_ENTRIES`]) through `ring`; false if the
/// ring failed (its buffer is then leaked: reads still in flight may
/// write into it).
fn read_round(ring: &mut Ring, reads: &[DirectRead], mut done: impl FnMut(usize, &[u8])) -> bool {
    let spans = spans_of(reads);
    let total = spans.last().map_or(0, |s| s.at + s.len);
    if ring.buf.len() < total + ALIGN {
        ring.buf.resize(total + ALIGN, 0);
    }
    let Ring { ring, buf } = ring;
    let base = buf.as_ptr().align_offset(ALIGN);
    let mut submitted = 0usize;
    {
        let mut sq = ring.submission();
        for (k, (read, span)) in reads.iter().zip(&spans).enumerate() {
            let window = buf[base + span.at..].as_mut_ptr();
            let entry = opcode::Read::new(types::Fd(read.fd), window, span.len as u32)
                .offset(read.offset - span.skip as u64)
                .build()
                .user_data(k as u64);
            // SAFETY: the entry's buffer, `span.len` bytes of `buf` at an
            // aligned offset (windows do not overlap), stays allocated and
            // unused by anything else until its completion is reaped below
            // (or is leaked if that cannot be waited for); the descriptor
            // is open for as long as the caller's file, which outlives this
            // call.
            if unsafe { sq.push(&entry) }.is_err() {
                break;
            }
            submitted += 1;
        }
    }
    let mut reaped = 0usize;
    while reaped < submitted {
        match ring.submit_and_wait(1) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {}
            Err(_) => {
                // Whatever is in flight may still write into `buf`.
                std::mem::forget(std::mem::take(buf));
                return false;
            }
        }
        for cqe in ring.completion() {
            reaped += 1;
            let k = cqe.user_data() as usize;
            let (Some(read), Some(span)) = (reads.get(k), spans.get(k)) else {
                continue;
            };
            let got = usize::try_from(cqe.result()).unwrap_or(0);
            if got >= span.skip + read.len {
                let start = base + span.at + span.skip;
                done(k, &buf[start..start + read.len]);
            }
        }
    }
    submitted == reads.len()
}

/// The aligned windows of `reads`, back to back.
fn spans_of(reads: &[DirectRead]) -> Vec<Span> {
    let mut at = 0usize;
    reads
        .iter()
        .map(|r| {
            let skip = (r.offset % ALIGN as u64) as usize;
            let len = (skip + r.len).div_ceil(ALIGN) * ALIGN;
            let span = Span { at, len, skip };
            at += len;
            span
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fs::direct::tests::patterned;
    use std::os::fd::AsRawFd;

    #[test]
    fn a_batch_returns_every_read_s_bytes() {
        let (_dir, bytes, file) = patterned(300_000);
        let Some(direct) = super::super::direct::reopen_direct(&file) else {
            return;
        };
        let fd = direct.as_raw_fd();
        // More reads than a ring holds, unaligned, some straddling pages,
        // one ending at the end of the file.
        let reads: Vec<DirectRead> = (0..80u64)
            .map(|k| DirectRead {
                fd,
                offset: (k * 3_677) % 290_000,
                len: 1 + (k as usize * 997) % 9_000,
            })
            .chain([DirectRead {
                fd,
                offset: 299_000,
                len: 1_000,
            }])
            .collect();
        let mut seen = vec![false; reads.len()];
        let ran = read_batch(&reads, |k, got| {
            let r = reads[k];
            assert_eq!(
                got,
                &bytes[r.offset as usize..r.offset as usize + r.len],
                "read {k}"
            );
            seen[k] = true;
        });
        if !ran {
            eprintln!("no io_uring here: nothing to check");
            return;
        }
        assert!(seen.iter().all(|&s| s), "every read completed");
    }

    #[test]
    fn reads_past_the_end_are_left_out() {
        let (_dir, bytes, file) = patterned(10_000);
        let Some(direct) = super::super::direct::reopen_direct(&file) else {
            return;
        };
        let fd = direct.as_raw_fd();
        let reads = [
            DirectRead {
                fd,
                offset: 9_000,
                len: 2_000,
            },
            DirectRead {
                fd,
                offset: 100,
                len: 50,
            },
            DirectRead {
                fd,
                offset: 20_480,
                len: 10,
            },
        ];
        let mut seen = Vec::new();
        let ran = read_batch(&reads, |k, got| {
            assert_eq!(got, &bytes[100..150]);
            seen.push(k);
        });
        match ran {
            true => assert_eq!(seen, [1], "only the read inside the file completes"),
            false => assert!(seen.is_empty(), "no ring, nothing read: {seen:?}"),
        }
    }
}
