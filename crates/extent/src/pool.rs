//! Recycling of the map's heap objects: value cells (one per
//! stored extent) and leaves.
//!
//! Every stored value lives in its own heap cell (readers clone it through
//! a pointer read from a validated snapshot) and every leaf is a heap
//! object; both are freed through the epoch collector. With one cell
//! allocated per insert and one freed per remove — by whichever thread runs
//! the collector, a garbage bag (64 objects) at a time — `malloc`/`free`
//! took about a sixth of an allocate/free (IOMMU-like) workload
//! single-threaded and a fifth with four threads (frees of other threads'
//! cells, fastbin consolidation triggered by the 2 KiB leaf allocations,
//! heap trimming and regrowth). So freed objects go to a per-thread free
//! list per layout (LIFO, so reuse is cache-hot), which absorbs the
//! steady-state churn.
//!
//! *Large* objects (leaves, big values: at least `LARGE` bytes) are also
//! exchanged between threads through a global depot, whole batches at a
//! time (the slab allocator's magazines and depot, in miniature; the depot
//! lock is taken once per batch): the thread that runs the collector frees
//! other threads' objects, and after an epoch stall (a thread preempted
//! while pinned) garbage comes back in bursts, so per-thread lists alone
//! would overflow on one thread and run dry on the others.
//!
//! *Small* objects (value cells) keep only a short per-thread list and are
//! otherwise left to the allocator: a fresh heap hands out consecutive
//! allocations at consecutive addresses, so cells of extents inserted one
//! after another share cache lines and are prefetched well when read in
//! that order again. Recycling large numbers of small cells through a depot
//! scattered them and made lookups after a fill visibly slower (4-thread
//! check phase of the benchmark about 25% slower), more than it saved.
//!
//! Objects are allocated with exactly `Layout::new::<X>()`, so a pooled
//! object is also a valid `Box<X>` allocation and vice versa: memory may be
//! taken from one thread's pool and returned to another's, or to the
//! global allocator, freely.

use std::alloc::{dealloc, Layout};
use std::cell::RefCell;
use std::ptr::NonNull;

use parking_lot::Mutex;

/// Bytes moved between a thread and the depot at once (at least
/// `MIN_BATCH`, at most `MAX_BATCH` objects).
const BATCH_BYTES: usize = 16 << 10;
const MIN_BATCH: usize = 8;
const MAX_BATCH: usize = 256;
/// Bytes the depot keeps per layout (beyond: returned to `free`). Large
/// because reclamation is bursty: a thread preempted while pinned stalls
/// the epoch, and everything retired meanwhile comes back at once.
const DEPOT_BYTES: usize = 4 << 20;
/// Distinct layouts pooled (more are not pooled).
const MAX_CLASSES: usize = 8;
/// Objects of at least this size use the depot.
const LARGE: usize = 256;
/// Per-thread list length for small objects: a few collector bursts
/// (a garbage bag holds 64 objects).
const SMALL_KEEP: usize = 256;

/// A list of unused blocks of one layout.
struct Blocks(Vec<NonNull<u8>>);
// SAFETY: the blocks are unused memory owned by the list; any thread may
// reuse or free them.
unsafe impl Send for Blocks {}

impl Blocks {
    fn free_all(&mut self, layout: Layout) {
        for p in self.0.drain(..) {
            // SAFETY: every pooled block was allocated by the global
            // allocator (via `Box`) with `layout` and is owned by the list.
            unsafe { dealloc(p.as_ptr(), layout) };
        }
    }
}

fn batch_len(layout: Layout) -> usize {
    (BATCH_BYTES / layout.size()).clamp(MIN_BATCH, MAX_BATCH)
}

fn is_large(layout: Layout) -> bool {
    layout.size() >= LARGE
}

/// Blocks shared by all threads, a batch at a time (the slab allocator's
/// depot): the thread that runs the epoch collector frees other threads'
/// objects, so per-thread lists alone fill up on one thread and run dry on
/// the others.
static DEPOT: Mutex<Vec<(Layout, Vec<Blocks>)>> = Mutex::new(Vec::new());

fn depot_take(layout: Layout) -> Option<Blocks> {
    let mut d = DEPOT.lock();
    d.iter_mut().find(|(l, _)| *l == layout)?.1.pop()
}

fn depot_put(layout: Layout, mut batch: Blocks) {
    {
        let mut d = DEPOT.lock();
        let i = match d.iter().position(|(l, _)| *l == layout) {
            Some(i) => i,
            None => {
                d.push((layout, Vec::new()));
                d.len() - 1
            }
        };
        if d[i].1.len() * batch.0.len() * layout.size() < DEPOT_BYTES {
            d[i].1.push(batch);
            return;
        }
    }
    batch.free_all(layout);
}

struct Class {
    layout: Layout,
    batch: usize,
    free: Blocks,
}

struct Pool {
    classes: Vec<Class>,
}

impl Pool {
    fn class(&mut self, layout: Layout) -> Option<&mut Class> {
        let i = match self.classes.iter().position(|c| c.layout == layout) {
            Some(i) => i,
            None if self.classes.len() < MAX_CLASSES => {
                self.classes.push(Class {
                    layout,
                    batch: batch_len(layout),
                    free: Blocks(Vec::new()),
                });
                self.classes.len() - 1
            }
            None => return None,
        };
        Some(&mut self.classes[i])
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // Thread exit: hand large blocks to the depot (whatever does not
        // fit is freed), free small ones.
        for c in &mut self.classes {
            let mut b = std::mem::replace(&mut c.free, Blocks(Vec::new()));
            if is_large(c.layout) && !b.0.is_empty() {
                depot_put(c.layout, b);
            } else {
                b.free_all(c.layout);
            }
        }
    }
}

thread_local! {
    static POOL: RefCell<Pool> = const { RefCell::new(Pool { classes: Vec::new() }) };
}

/// An unused block with `layout` from this thread's list or the depot.
fn take(layout: Layout) -> Option<NonNull<u8>> {
    POOL.try_with(|pool| {
        let mut pool = pool.try_borrow_mut().ok()?;
        let c = pool.class(layout)?;
        if let Some(p) = c.free.0.pop() {
            return Some(p);
        }
        if !is_large(layout) {
            return None;
        }
        let mut batch = depot_take(layout)?;
        let p = batch.0.pop();
        c.free = batch;
        p
    })
    .ok()
    .flatten()
}

/// Keeps an unused block for reuse; `false` if it must be freed instead.
fn keep(layout: Layout, block: NonNull<u8>) -> bool {
    POOL.try_with(|pool| {
        let Ok(mut pool) = pool.try_borrow_mut() else {
            return false;
        };
        let Some(c) = pool.class(layout) else {
            return false;
        };
        if !is_large(layout) {
            if c.free.0.len() >= SMALL_KEEP {
                return false;
            }
        } else if c.free.0.len() >= 2 * c.batch {
            let at = c.free.0.len() - c.batch;
            let batch = Blocks(c.free.0.split_off(at));
            depot_put(layout, batch);
        }
        c.free.0.push(block);
        true
    })
    .unwrap_or(false)
}

/// Moves `x` to the heap (into a recycled block if one is available) and
/// returns the owning pointer; release it with [`free`] (or
/// `Box::from_raw`).
#[inline]
pub(crate) fn alloc<X>(x: X) -> *mut X {
    let layout = Layout::new::<X>();
    if layout.size() != 0 {
        if let Some(b) = take(layout) {
            let p = b.as_ptr().cast::<X>();
            // SAFETY: `b` is an unused block with `X`'s exact layout.
            unsafe { p.write(x) };
            return p;
        }
    }
    Box::into_raw(Box::new(x))
}

/// Drops `*p` and recycles (or frees) its memory.
///
/// # Safety
/// `p` came from [`alloc`] or `Box::into_raw` and nothing else can access
/// it any more (not even a pinned reader).
#[inline]
pub(crate) unsafe fn free<X>(p: *mut X) {
    let layout = Layout::new::<X>();
    if layout.size() == 0 {
        // SAFETY: per the contract `p` is an owning `Box` pointer.
        drop(unsafe { Box::from_raw(p) });
        return;
    }
    // SAFETY: per the contract `*p` is initialised and unaliased.
    unsafe { p.drop_in_place() };
    let block = NonNull::new(p.cast::<u8>()).expect("heap pointers are non-null");
    if !keep(layout, block) {
        // List full (small objects), pool busy (a value's destructor
        // freeing map objects), too many layouts, or torn down (thread
        // exit): give the block back.
        // SAFETY: the block was allocated with `layout` (see module docs).
        unsafe { dealloc(block.as_ptr(), layout) };
    }
}
