//! The memory of the page pool: 2 MiB regions mapped, faulted in and
//! given back, and the next region prepared on a thread of its own.
//!
//! Why in the background: a cache filling up takes a fresh region every
//! 512 misses, and faulting one in (the kernel zeroing 2 MiB that the
//! hypervisor backs for the first time) is slow on a VM: 13% of the CPU
//! time of cold random reads in a 256 MiB cgroup (perf, 5M keys), on the
//! reading thread, between its disk reads. The pool asks for the next
//! region when half of the current one is handed out, so the zeroing
//! overlaps the reads instead of adding to them.
//!
//! * **Owns**: nothing; the pool owns what these functions map.
//! * **Thread safety**: the preparing thread maps and faults in without
//!   the pool's mutex and takes it only to hand the region over.

use std::ptr::NonNull;

use parking_lot::Mutex;

use super::{Pool, PAGE, REGION_PAGES};

/// Maps and faults in a region for `pool` on a new thread (the caller has
/// marked the pool as preparing one); the pool takes it as its next region
/// if the caches may still grow by all of it.
pub(super) fn prepare_in_background(pool: &'static Mutex<Pool>) {
    let spawned = std::thread::Builder::new()
        .name("slsm-pages".into())
        .spawn(move || {
            let region = map(REGION_PAGES * PAGE);
            let mut p = pool.lock();
            p.preparing = false;
            // The allowance may have shrunk meanwhile: a spare the caches
            // could not fill would be memory past the budget.
            let room = p.has_room_for_a_region();
            match region {
                Some(region) if room && p.spare.is_none() => p.spare = Some(region),
                Some(region) => unmap(region, REGION_PAGES * PAGE),
                None => {}
            }
        });
    if spawned.is_err() {
        pool.lock().preparing = false;
    }
}

/// `len` bytes of fresh anonymous memory, faulted in.
pub(super) fn map(len: usize) -> Option<NonNull<u8>> {
    // SAFETY: a new private anonymous mapping: no file, no fixed address,
    // nothing else refers to the memory it returns.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if addr == libc::MAP_FAILED {
        return None;
    }
    let region = NonNull::new(addr.cast::<u8>())?;
    fault_in(region, len);
    Some(region)
}

/// Faults the region in, so that the cache filling up, not a lookup, pays
/// the faults: with one call where the kernel has it
/// (`MADV_POPULATE_WRITE`, Linux 5.14), else a write to each page.
///
/// Never as huge pages (`MADV_NOHUGEPAGE`, which also keeps a system whose
/// policy is "always" from using them here): returning one page of the
/// pool splits a huge page, and faulting one in may compact memory on the
/// faulting thread. Measured with huge pages asked for: a cached Python
/// `get` 3-4% faster (fewer TLB misses), while the default 5M set's
/// `fillrandom` took 1.08x and `readwhilewriting` 1.18x the time of the
/// build before them in two runs of three rounds each (`fillrandom` 0.775
/// against 0.755 us without them in alternating processes).
fn fault_in(region: NonNull<u8>, len: usize) {
    #[cfg(all(target_os = "linux", not(miri)))]
    // SAFETY: advice on a range this pool just mapped; it changes how the
    // memory is backed, not its contents.
    unsafe {
        libc::madvise(region.as_ptr().cast(), len, libc::MADV_NOHUGEPAGE);
        if libc::madvise(region.as_ptr().cast(), len, libc::MADV_POPULATE_WRITE) == 0 {
            return;
        }
    }
    #[cfg(not(miri))]
    for at in (0..len).step_by(PAGE) {
        // SAFETY: `at < len`: a byte of the region, mapped writable and
        // owned by the pool.
        unsafe { region.as_ptr().add(at).write_volatile(0) };
    }
    #[cfg(miri)]
    let _ = (region, len);
}

/// Returns `len` bytes of free pages at `start` to the system; their next
/// touch finds zeros.
pub(super) fn release(start: NonNull<u8>, len: usize) {
    #[cfg(not(miri))]
    // SAFETY: the range is whole pages of a region this pool mapped, all of
    // them free: no `Page` refers to them, so discarding their contents
    // affects nobody.
    unsafe {
        libc::madvise(start.as_ptr().cast(), len, libc::MADV_DONTNEED);
    }
    #[cfg(miri)]
    let _ = (start, len);
}

/// Gives a whole region back to the system (its address too).
pub(super) fn unmap(region: NonNull<u8>, len: usize) {
    #[cfg(not(miri))]
    // SAFETY: `region` is a whole region `map` returned that no page of the
    // pool was carved from: nothing refers to its memory.
    unsafe {
        libc::munmap(region.as_ptr().cast(), len);
    }
    // Under Miri the region is leaked: the tests ignore leaks.
    #[cfg(miri)]
    let _ = (region, len);
}
