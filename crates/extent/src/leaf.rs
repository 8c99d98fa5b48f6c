//! Leaves: the skiplist nodes. Each leaf holds up to `C` extents in sorted
//! parallel arrays, a writer lock, a sequence counter that lets readers
//! validate what they read without locking, a `dead` flag and a tower of
//! `next` pointers.
//!
//! ```text
//!  Leaf<T, C>  (#[repr(C)], one allocation)
//!  +-----+--------+-------------------------------------------------+
//!  | key | height | next[0..MAX_LEVEL]: (ptr, successor's key)       |
//!  +-----+--------+-------------------------------------------------+
//!  | pad | seq | len | dead | lock | pad   (written by updates)        |
//!  +-------------------------------------------------------------------+
//!  | lasts [u64; C]      last point of each extent, sorted (searched)  |
//!  | slots [(start, val); C]   val --> heap cell holding T (epoch GC) |
//!  +-------------------------------------------------------------------+
//! ```
//!
//! A leaf with key `k` whose level-0 successor has key `n` is *responsible*
//! for every extent whose **last** point (`start + len - 1`) lies in
//! `[k, n)`. The head leaf has key `0` and is never removed.
//!
//! Slot arrays are updated in place by the (single, locked) writer inside
//! a sequence-counter write section (`seq` odd while writing). Readers load
//! `seq`, read with relaxed atomic loads, then re-check `seq` and retry if
//! it moved: the article's RCU lookup with the validation it lacked. Every
//! field a reader touches is an atomic, so racing reads are merely stale,
//! never undefined behaviour; values are behind epoch-managed pointers and
//! are dereferenced only after validation.

use std::cell::Cell;
use std::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicUsize, Ordering};

use crossbeam_epoch::{self as epoch, Atomic, Guard, Shared};
use parking_lot::Mutex;

/// Maximum tower height. With a branching factor of 2 this indexes about
/// 2^20 leaves (tens of millions of extents) at full speed; beyond that
/// searches degrade gracefully.
pub(crate) const MAX_LEVEL: usize = 20;

/// One slot as read (possibly inconsistently, until validated).
pub(crate) struct Raw<T> {
    pub start: u64,
    pub last: u64,
    pub val: *const T,
}

impl<T> Clone for Raw<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Raw<T> {}

impl<T: Clone> Raw<T> {
    /// Clones the slot into an [`Extent`](crate::Extent).
    ///
    /// # Safety
    /// The read that produced `self` must have been validated (`seq`
    /// unchanged) or done under the leaf lock, and the guard under which it
    /// was read must still be alive.
    pub unsafe fn extent(&self) -> crate::Extent<T> {
        crate::Extent {
            start: self.start,
            len: self.last - self.start + 1,
            // SAFETY: per the contract, `val` was a live slot's value when
            // read, and values are retired (deferred) only after their slot
            // is overwritten, so it is valid while the guard lives.
            value: unsafe { (*self.val).clone() },
        }
    }
}

/// Field order: what a search hop touches (`key`, `next`) comes first and
/// is written only when links change; the fields every slot update writes
/// (`seq`, `len`, the lock word) live on their own cache line(s) so that
/// updates to a leaf do not evict it from the caches of threads that merely
/// search through it. Each slot's start and value pointer share a line.
#[repr(C)]
pub(crate) struct Leaf<T, const C: usize> {
    /// Lower bound of the `last` points this leaf is responsible for.
    pub key: u64,
    /// Number of levels this leaf is linked at (`1..=MAX_LEVEL`).
    pub height: usize,
    /// Tower: successor pointer and a copy of the successor's key per
    /// level (so a search does not touch a successor it will not enter).
    next: [Link<T, C>; MAX_LEVEL],
    /// Padding instead of `CachePadded`: a cache line of padding on each
    /// side keeps `w` off the lines of `next` and `lasts` without raising
    /// the leaf's alignment (an over-aligned type needs `posix_memalign`,
    /// which was a visible cost of every split).
    _pad0: [u64; 8],
    w: WriteState,
    _pad1: [u64; 8],
    lasts: [AtomicU64; C],
    slots: [SlotCell<T>; C],
}

struct Link<T, const C: usize> {
    ptr: Atomic<Leaf<T, C>>,
    /// Key of the leaf `ptr` points to (`u64::MAX` if null). Written after
    /// `ptr`; the pair may be seen torn, which searches tolerate (they
    /// re-check the real key of a leaf before entering it, and a stale
    /// "too large" key only stops a level early).
    key: AtomicU64,
}

/// The per-leaf fields written on every update.
pub(crate) struct WriteState {
    /// Sequence counter, odd while the slots are being changed.
    seq: AtomicU64,
    len: AtomicUsize,
    /// Set (under `lock`) just before the leaf is unlinked; never cleared.
    pub dead: AtomicBool,
    /// Writers' lock: held to change the slots or `next`.
    pub lock: Mutex<()>,
}

impl<T, const C: usize> std::ops::Deref for Leaf<T, C> {
    type Target = WriteState;
    fn deref(&self) -> &WriteState {
        &self.w
    }
}

/// Start and value pointer of one slot (its last point is in `lasts`).
struct SlotCell<T> {
    start: AtomicU64,
    val: Atomic<T>,
}

impl<T, const C: usize> Leaf<T, C> {
    pub fn new(key: u64, height: usize) -> Self {
        debug_assert!((1..=MAX_LEVEL).contains(&height));
        Leaf {
            key,
            next: std::array::from_fn(|_| Link {
                ptr: Atomic::null(),
                key: AtomicU64::new(u64::MAX),
            }),
            height,
            _pad0: [0; 8],
            w: WriteState {
                seq: AtomicU64::new(0),
                len: AtomicUsize::new(0),
                dead: AtomicBool::new(false),
                lock: Mutex::new(()),
            },
            _pad1: [0; 8],
            lasts: std::array::from_fn(|_| AtomicU64::new(0)),
            slots: std::array::from_fn(|_| SlotCell {
                start: AtomicU64::new(0),
                val: Atomic::null(),
            }),
        }
    }

    /// Successor at `lvl`, or `None` at the end of the list.
    #[inline]
    pub fn next_at<'g>(&self, lvl: usize, guard: &'g Guard) -> Option<&'g Leaf<T, C>> {
        let p = self.next[lvl].ptr.load(Ordering::Acquire, guard);
        // SAFETY: a non-null `next` pointer always points to a leaf that was
        // allocated by this map and is freed only through the epoch
        // collector (`Guard::defer_unchecked`) after it has been unlinked. A
        // leaf reachable by a pinned reader was linked at some moment after the reader
        // pinned (see the reclamation argument in map.rs), so it cannot be
        // freed before `guard` is dropped; the reference lives for 'g.
        unsafe { p.as_ref() }
    }

    /// Raw successor pointer at `lvl`.
    #[inline]
    pub fn next_ptr<'g>(&self, lvl: usize, guard: &'g Guard) -> Shared<'g, Leaf<T, C>> {
        self.next[lvl].ptr.load(Ordering::Acquire, guard)
    }

    /// Cached key of the successor at `lvl` (`u64::MAX` if none); may be
    /// momentarily stale.
    #[inline]
    pub fn next_key(&self, lvl: usize) -> u64 {
        self.next[lvl].key.load(Ordering::Acquire)
    }

    /// Sets the successor at `lvl`. Caller holds `self.lock`, or the leaf is
    /// not yet reachable; `p` is null or a leaf valid under the caller's
    /// guard.
    #[inline]
    pub fn set_next(&self, lvl: usize, p: Shared<'_, Leaf<T, C>>) {
        // SAFETY: per the contract `p` is null or points to a live leaf
        // protected by the caller's guard.
        let k = unsafe { p.as_ref() }.map_or(u64::MAX, |l| l.key);
        self.next[lvl].ptr.store(p, Ordering::Release);
        self.next[lvl].key.store(k, Ordering::Release);
    }

    // ---- Reads. Racy (validate with `read_begin`/`read_valid`) unless the
    // ---- caller holds `lock`. Indices are clamped, so garbage is harmless.

    /// Starts a validated read: the current (even) sequence number, or
    /// `None` while a writer is active.
    #[inline]
    pub fn read_begin(&self) -> Option<u64> {
        let s = self.seq.load(Ordering::Acquire);
        (s & 1 == 0).then_some(s)
    }

    /// Whether everything read since `read_begin` returned `s` is a
    /// consistent snapshot.
    #[inline]
    pub fn read_valid(&self, s: u64) -> bool {
        fence(Ordering::Acquire);
        self.seq.load(Ordering::Relaxed) == s
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed).min(C)
    }

    #[inline]
    pub fn item(&self, i: usize) -> Raw<T> {
        Raw {
            start: self.slots[i].start.load(Ordering::Relaxed),
            last: self.lasts[i].load(Ordering::Relaxed),
            val: self.val_at(i),
        }
    }

    #[inline]
    fn val_at(&self, i: usize) -> *const T {
        // SAFETY: `unprotected` is only used to read the pointer value; it
        // is dereferenced later, under the caller's guard.
        self.slots[i]
            .val
            .load(Ordering::Relaxed, unsafe { epoch::unprotected() })
            .as_raw()
    }

    /// Index of the first slot whose last point is `>= x`. Two branch-free
    /// counting passes over the dense `lasts` array: first every 8th entry
    /// (one per cache line; independent loads, so a cold leaf's lines are
    /// fetched in parallel, unlike a binary search's dependent probes),
    /// then the 8 entries of the block found. On a racy read the array may
    /// be unsorted; the result is still in `0..=len`.
    #[inline]
    pub fn first_last_ge(&self, x: u64) -> usize {
        const B: usize = 8;
        let lasts = &self.lasts[..self.len()];
        let lt = |l: &AtomicU64| (l.load(Ordering::Relaxed) < x) as usize;
        let blocks: usize = lasts.iter().skip(B - 1).step_by(B).map(lt).sum();
        let lo = blocks * B;
        let hi = (lo + B).min(lasts.len());
        lo + lasts[lo..hi].iter().map(lt).sum::<usize>()
    }

    /// Number of slots whose start is `< x` (they form a prefix).
    #[inline]
    pub fn count_start_lt(&self, x: u64) -> usize {
        let i = self.first_last_ge(x);
        if i < self.len() && self.slots[i].start.load(Ordering::Relaxed) < x {
            i + 1
        } else {
            i
        }
    }

    // ---- Writes: caller holds `lock`.

    #[inline]
    fn write_begin(&self) {
        debug_assert!(self.lock.is_locked());
        let s = self.seq.load(Ordering::Relaxed);
        self.seq.store(s + 1, Ordering::Relaxed);
        fence(Ordering::Release);
    }

    #[inline]
    fn write_end(&self) {
        let s = self.seq.load(Ordering::Relaxed);
        self.seq.store(s + 1, Ordering::Release);
    }

    #[inline]
    fn set(&self, i: usize, r: Raw<T>) {
        self.slots[i].start.store(r.start, Ordering::Relaxed);
        self.lasts[i].store(r.last, Ordering::Relaxed);
        self.slots[i]
            .val
            .store(Shared::from(r.val), Ordering::Relaxed);
    }

    /// Inserts a slot at `pos` (shifting the tail right). Needs room.
    pub fn insert_at(&self, pos: usize, start: u64, last: u64, val: Shared<'_, T>) {
        let n = self.len();
        assert!(n < C && pos <= n);
        self.write_begin();
        for i in (pos..n).rev() {
            self.set(i + 1, self.item(i));
        }
        self.set(
            pos,
            Raw {
                start,
                last,
                val: val.as_raw(),
            },
        );
        self.len.store(n + 1, Ordering::Relaxed);
        self.write_end();
    }

    /// Removes the slot at `pos` (shifting the tail left) and returns its
    /// value pointer, which the caller must retire.
    pub fn remove_at<'g>(&self, pos: usize) -> Shared<'g, T> {
        let n = self.len();
        assert!(pos < n);
        let val = Shared::from(self.item(pos).val);
        self.write_begin();
        for i in pos + 1..n {
            self.set(i - 1, self.item(i));
        }
        self.slots[n - 1]
            .val
            .store(Shared::null(), Ordering::Relaxed);
        self.len.store(n - 1, Ordering::Relaxed);
        self.write_end();
        val
    }

    /// Drops slots `keep..` from this leaf (their values now belong to
    /// another leaf).
    pub fn truncate(&self, keep: usize) {
        let n = self.len();
        assert!(keep <= n);
        self.write_begin();
        self.len.store(keep, Ordering::Relaxed);
        self.write_end();
        for c in &self.slots[keep..n] {
            c.val.store(Shared::null(), Ordering::Relaxed);
        }
    }

    /// Appends `src[range]` to this (unpublished) leaf.
    pub fn fill_from(&self, src: &Self, range: std::ops::Range<usize>) {
        let (n, add) = (self.len(), range.len());
        assert!(n + add <= C);
        for (k, i) in range.enumerate() {
            self.set(n + k, src.item(i));
        }
        self.len.store(n + add, Ordering::Relaxed);
    }
}

impl<T, const C: usize> Drop for Leaf<T, C> {
    fn drop(&mut self) {
        let n = self.len();
        // SAFETY: `&mut self` means nobody else can reach this leaf any more
        // (it is destroyed either by the epoch collector after every reader
        // that could see it has unpinned, or by `ExtentMap::drop` which has
        // exclusive access). Slots `0..len` own their value cells (from
        // `pool::alloc`; dead leaves are empty; a split hands `keep..` over
        // and nulls them).
        unsafe {
            let g = epoch::unprotected();
            for c in &self.slots[..n] {
                let p = c.val.load(Ordering::Relaxed, g);
                if !p.is_null() {
                    crate::pool::free(p.as_raw().cast_mut());
                }
            }
        }
    }
}

thread_local! {
    static RNG: Cell<u64> = const { Cell::new(0) };
}

/// Random tower height, P(height > h) = 2^-h.
pub(crate) fn random_height() -> usize {
    let x = RNG.with(|c| {
        let mut x = c.get();
        if x == 0 {
            // Seed from the address of a stack variable and a counter.
            static SEED: AtomicU64 = AtomicU64::new(0);
            let local = 0u8;
            x = (std::ptr::addr_of!(local) as u64)
                ^ SEED
                    .fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed)
                    .wrapping_mul(0xBF58_476D_1CE4_E5B9)
                | 1;
        }
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        c.set(x);
        x
    });
    let h = 1 + x.trailing_zeros() as usize;
    h.min(MAX_LEVEL)
}
