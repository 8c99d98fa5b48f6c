//! The C allocator's settings for the programs this crate builds (the
//! benchmark of every engine, `slsm serve`, the admin commands).
//!
//! glibc's malloc serves an allocation above its mmap threshold with its
//! own mapping, returned to the system when freed; but each time such a
//! block is freed it raises the threshold to the block's size (up to 32
//! MiB), so later buffers of that size come from the heap instead, where a
//! freed buffer between live ones cannot be returned. A storage engine
//! frees many large buffers (merge and filter buffers, memory runs, cache
//! blocks): measured on `fillrandom,readwhilewriting` of 5M keys with a 128
//! MiB budget, the peak RSS was 194-224 MiB with the dynamic threshold and
//! 126 MiB with it fixed at 256 KiB, at the same speed. Every engine the
//! benchmark drives gets the same setting, so the comparison stays even.
//!
//! A library does not change its host's allocator: programs embedding slsm
//! on glibc get the same effect with `MALLOC_MMAP_THRESHOLD_=262144` in the
//! environment (or by using jemalloc or mimalloc).

/// The threshold above which glibc maps allocations of their own.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: libc::c_int = 256 * 1024;

/// Fixes glibc's mmap threshold (a no-op elsewhere, or when the
/// environment already sets it).
pub fn tune() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_none() {
        // SAFETY: mallopt only changes malloc's parameters; it is safe to
        // call at any time, from any thread.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
        }
    }
}

/// Hands the memory the C allocator holds free back to the system (glibc's
/// `malloc_trim`; a no-op elsewhere). The benchmark calls it when it closes
/// one database before opening the next, for every engine alike: without
/// it, the freed cache blocks of the closed database stay resident, spread
/// over the heap and its per-thread arenas, and count toward the next
/// database's peak (the default set's `deleterandom` after `fillseq`:
/// 159 -> 127 MiB for slsm).
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages to the system; it may be
    // called at any time, from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}
