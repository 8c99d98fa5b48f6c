//! Sharded bump arena.
//!
//! Memory comes from large chunks; nothing is freed before the arena drops, so
//! a pointer handed out stays valid (and its bytes stay put) for the arena's
//! whole life. Readers of the skiplist therefore need no epoch or hazard
//! protection.
//!
//! To let several writer threads allocate without bouncing one cache line,
//! the arena has [`SHARDS`] independent bump allocators, each on its own cache
//! line, chosen by a per-thread index (assigned once per thread). A shard's
//! mutex is, in practice, only ever taken by the same thread, so it stays
//! uncontended and local to that core. Each shard also carries the striped
//! entry counter the list uses for `len()`.

use std::alloc::{alloc, dealloc, handle_alloc_error, Layout};
use std::cell::Cell;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Number of allocator shards (a power of two).
pub(crate) const SHARDS: usize = 8;
/// Alignment of every allocation.
pub(crate) const ALIGN: usize = 8;

/// Once a shard has reserved this many bytes, its new chunks are [`HUGE_CHUNK`]
/// bytes aligned to [`HUGE_ALIGN`] and advised as transparent huge pages (Linux),
/// so a large list needs few TLB entries. Small lists keep the configured chunk size.
const HUGE_AFTER: usize = 16 << 20;
/// Chunk size once a shard is large (see [`HUGE_AFTER`]).
const HUGE_CHUNK: usize = 4 << 20;
/// Alignment of those chunks: one x86_64 huge page.
const HUGE_ALIGN: usize = 2 << 20;
/// Whether large shards use huge-page chunks (feature `no-huge-pages` disables it).
const HUGE: bool = cfg!(not(feature = "no-huge-pages"));

#[cfg(all(target_os = "linux", not(miri)))]
extern "C" {
    fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: std::ffi::c_int)
        -> std::ffi::c_int;
}

/// Asks the kernel to back `[p, p + len)` with transparent huge pages (a hint; errors
/// are ignored). A no-op outside Linux and under Miri.
#[allow(unused_variables)]
fn advise_huge_pages(p: NonNull<u8>, len: usize) {
    #[cfg(all(target_os = "linux", not(miri)))]
    {
        const MADV_HUGEPAGE: std::ffi::c_int = 14;
        // SAFETY: `[p, p + len)` is a live allocation of ours with page-aligned start;
        // MADV_HUGEPAGE only changes how the kernel backs the range, never its contents.
        unsafe { madvise(p.as_ptr().cast(), len, MADV_HUGEPAGE) };
    }
}

static NEXT_THREAD: AtomicUsize = AtomicUsize::new(0);
thread_local! {
    static THREAD_SHARD: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// This thread's shard index (assigned round-robin on first use).
#[inline]
fn thread_shard() -> usize {
    THREAD_SHARD.with(|c| {
        let v = c.get();
        if v != usize::MAX {
            return v;
        }
        let v = NEXT_THREAD.fetch_add(1, Ordering::Relaxed) % SHARDS;
        c.set(v);
        v
    })
}

struct ShardState {
    /// Next free byte of the current chunk.
    cur: *mut u8,
    /// Bytes left in the current chunk.
    left: usize,
    /// Every block allocated by this shard, freed on drop.
    blocks: Vec<(NonNull<u8>, Layout)>,
}

// SAFETY: the raw pointers refer to heap blocks owned by the arena; the state is
// only touched under the shard's mutex.
unsafe impl Send for ShardState {}

#[repr(align(128))]
pub(crate) struct Shard {
    state: Mutex<ShardState>,
    reserved: AtomicUsize,
    /// Striped entry counter (see `SkipList::len`).
    pub(crate) entries: AtomicUsize,
}

pub(crate) struct Arena {
    chunk_size: usize,
    shards: Box<[Shard]>,
}

impl Arena {
    pub(crate) fn new(chunk_size: usize) -> Self {
        let chunk_size = chunk_size.max(256).next_multiple_of(ALIGN);
        let shards = (0..SHARDS)
            .map(|_| Shard {
                state: Mutex::new(ShardState {
                    cur: std::ptr::null_mut(),
                    left: 0,
                    blocks: Vec::new(),
                }),
                reserved: AtomicUsize::new(0),
                entries: AtomicUsize::new(0),
            })
            .collect();
        Arena { chunk_size, shards }
    }

    /// The calling thread's shard.
    #[inline]
    pub(crate) fn shard(&self) -> &Shard {
        &self.shards[thread_shard()]
    }

    pub(crate) fn shards(&self) -> &[Shard] {
        &self.shards
    }

    /// Bytes reserved from the system allocator (chunks and oversized blocks).
    pub(crate) fn memory_usage(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.reserved.load(Ordering::Relaxed))
            .sum()
    }

    /// Allocates `size` bytes (rounded up to [`ALIGN`]), aligned to [`ALIGN`].
    /// The memory is uninitialised and stays valid until the arena drops.
    ///
    /// Returns `None` only when `size` overflows a `Layout`.
    #[inline]
    pub(crate) fn alloc(&self, size: usize) -> Option<NonNull<u8>> {
        let size = size.checked_next_multiple_of(ALIGN)?.max(ALIGN);
        let shard = self.shard();
        let mut st = shard.state.lock().unwrap_or_else(|e| e.into_inner());
        if size <= st.left {
            let p = st.cur;
            // SAFETY: `size <= left`, so `p + size` is inside (or one past) the current chunk.
            st.cur = unsafe { p.add(size) };
            st.left -= size;
            // SAFETY: `cur` is non-null whenever `left > 0`.
            return Some(unsafe { NonNull::new_unchecked(p) });
        }
        if size > self.chunk_size / 4 {
            // Large block: give it a dedicated allocation so the current
            // chunk's tail is not thrown away.
            let block = Self::system_block(size)?;
            st.blocks
                .push((block, Layout::from_size_align(size, ALIGN).ok()?));
            shard.reserved.fetch_add(size, Ordering::Relaxed);
            return Some(block);
        }
        let (csize, align) = if HUGE
            && self.chunk_size < HUGE_CHUNK
            && shard.reserved.load(Ordering::Relaxed) >= HUGE_AFTER
        {
            (HUGE_CHUNK, HUGE_ALIGN)
        } else {
            (self.chunk_size, ALIGN)
        };
        let chunk = Self::system_block_aligned(csize, align)?;
        if align == HUGE_ALIGN {
            advise_huge_pages(chunk, csize);
        }
        st.blocks
            .push((chunk, Layout::from_size_align(csize, align).ok()?));
        shard.reserved.fetch_add(csize, Ordering::Relaxed);
        // SAFETY: `size <= chunk_size / 4 < chunk_size <= csize`.
        st.cur = unsafe { chunk.as_ptr().add(size) };
        st.left = csize - size;
        Some(chunk)
    }

    fn system_block(size: usize) -> Option<NonNull<u8>> {
        Self::system_block_aligned(size, ALIGN)
    }

    fn system_block_aligned(size: usize, align: usize) -> Option<NonNull<u8>> {
        let layout = Layout::from_size_align(size, align).ok()?;
        // SAFETY: `layout` has non-zero size (`size >= ALIGN`).
        let p = unsafe { alloc(layout) };
        match NonNull::new(p) {
            Some(p) => Some(p),
            None => handle_alloc_error(layout),
        }
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        for shard in self.shards.iter_mut() {
            let st = shard.state.get_mut().unwrap_or_else(|e| e.into_inner());
            for (p, layout) in st.blocks.drain(..) {
                // SAFETY: every block was allocated by `system_block` with exactly this layout
                // and is freed once, here.
                unsafe { dealloc(p.as_ptr(), layout) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_and_large_blocks() {
        let a = Arena::new(256);
        let mut ptrs = Vec::new();
        for i in 0..100usize {
            let sz = (i % 13) + 1;
            let p = a.alloc(sz).unwrap();
            assert_eq!(p.as_ptr() as usize % ALIGN, 0);
            // SAFETY: freshly allocated `sz` bytes.
            unsafe { std::ptr::write_bytes(p.as_ptr(), i as u8, sz) };
            ptrs.push((p, sz, i as u8));
        }
        let big = a.alloc(10_000).unwrap();
        // SAFETY: freshly allocated 10_000 bytes.
        unsafe { std::ptr::write_bytes(big.as_ptr(), 7, 10_000) };
        for (p, sz, v) in ptrs {
            // SAFETY: blocks stay valid and untouched by later allocations.
            let s = unsafe { std::slice::from_raw_parts(p.as_ptr(), sz) };
            assert!(s.iter().all(|&b| b == v));
        }
        assert!(a.memory_usage() >= 10_000 + 256);
    }

    #[test]
    #[cfg_attr(miri, ignore)] // 24 MiB of allocations: too slow under the interpreter
    fn large_shard_switches_to_huge_chunks() {
        if !HUGE {
            return; // feature `no-huge-pages`
        }
        let a = Arena::new(1 << 20);
        let mut last = std::ptr::null_mut();
        while a.memory_usage() < HUGE_AFTER {
            last = a.alloc(1000).unwrap().as_ptr();
        }
        assert_eq!(a.memory_usage(), HUGE_AFTER);
        let mut fresh = Vec::new();
        for _ in 0..(HUGE_CHUNK / 1000 + 10) {
            let p = a.alloc(1000).unwrap().as_ptr();
            // SAFETY: freshly allocated 1000 bytes.
            unsafe { std::ptr::write_bytes(p, 0xAB, 1000) };
            fresh.push(p);
        }
        // The tail of the last 1 MiB chunk was used first, then 4 MiB chunks on 2 MiB boundaries.
        let first_huge = fresh
            .iter()
            .copied()
            .find(|&p| (p as usize).is_multiple_of(HUGE_ALIGN));
        assert!(first_huge.is_some());
        assert!(a.memory_usage() >= HUGE_AFTER + HUGE_CHUNK);
        assert!(!last.is_null());
        assert!(fresh.iter().all(|&p| {
            // SAFETY: every block is still live and was filled above.
            unsafe { *p == 0xAB && *p.add(999) == 0xAB }
        }));
    }
}
