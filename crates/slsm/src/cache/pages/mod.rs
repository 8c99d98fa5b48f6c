//! [`Page`]s: the memory cached data blocks (and the key hashes of run
//! files being built, `bloom::KeyHashes`) live in, 4 KiB at a time,
//! from one pool per process that the engine hands back to the operating
//! system itself.
//!
//! Why not the heap: a block read for the cache used to be a fresh `Vec`
//! (zeroed before the decompressor wrote it), freed when it was evicted.
//! Three costs came of it on every miss: `malloc`, a `memset` of the block
//! and `free` (together ~15% of a lookup that misses, perf); and glibc kept
//! the freed blocks' memory, since a 4 KiB chunk with its header never
//! covers a page of its own, so memory the cache gave back stayed resident
//! while whoever the budget gave it to took fresh pages (the reason
//! `budget` could not lend the cache what the memory runs leave unused).
//! A page from this pool is reused as it is (its old bytes are valid
//! memory to decompress over), and a free page beyond what the caches may
//! refill is returned to the system with `madvise(MADV_DONTNEED)`.
//!
//! * Pages are carved from 2 MiB regions, never huge pages (see
//!   `region::fault_in` for why and what was measured).
//! * A region is faulted in with one call when it is mapped: that costs a
//!   third less than page by page (measured on this VM: 1.9-2.3 us against
//!   2.8-3.0 a page, most of it the hypervisor backing fresh memory), and
//!   the cache filling up is what asks for them.
//! * Free pages stay resident up to the caches' allowance: the sum of their
//!   capacities less the pages they hold, plus a few to batch the returns.
//!   Past that they are returned, so what the pool holds resident never
//!   exceeds what the caches are allowed (their capacity is charged to the
//!   memory budget) by more than [`SPARE_PAGES`].
//! * The next region is mapped and faulted in on a thread of its own while
//!   the current one is handed out (see `region`), only while the caches'
//!   allowance has room for all of it.
//! * Regions are never unmapped once carved: a returned page costs only
//!   its address.
//!
//! * **Owns**: the regions and the free pages.
//! * **Thread safety**: one mutex, taken once per page handed out or back
//!   (a cache miss), never on a hit.

use std::ptr::NonNull;

use parking_lot::Mutex;

mod region;

use self::region::{map, prepare_in_background, release, unmap};

/// Bytes of a page.
pub(crate) const PAGE: usize = 4096;
/// Pages of a region.
const REGION_PAGES: usize = 512;
/// Free pages kept beyond the allowance, so that returns go in batches.
const SPARE_PAGES: usize = 64;

/// A page of memory for one block, given back to the pool when dropped.
pub(crate) struct Page {
    addr: NonNull<u8>,
}

// SAFETY: a `Page` owns its 4 KiB exclusively (the pool hands each page to
// one `Page` at a time and takes it back only in `Drop`), like a
// `Box<[u8; PAGE]>`.
unsafe impl Send for Page {}
// SAFETY: shared access is read-only through `Deref`.
unsafe impl Sync for Page {}

impl std::ops::Deref for Page {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: `addr` is the start of a mapped, readable and writable page
        // of PAGE bytes that this `Page` owns alone; mapped memory is
        // initialized (zeros, or the bytes an earlier owner wrote).
        unsafe { std::slice::from_raw_parts(self.addr.as_ptr(), PAGE) }
    }
}

impl std::ops::DerefMut for Page {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as for `deref`, and `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.addr.as_ptr(), PAGE) }
    }
}

impl Drop for Page {
    fn drop(&mut self) {
        POOL.lock().give_back(self.addr);
    }
}

impl std::fmt::Debug for Page {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Page({:p})", self.addr)
    }
}

/// A page from the pool; `None` if no memory could be mapped (the caller
/// falls back to the heap).
pub(crate) fn page() -> Option<Page> {
    let addr = take_from(&POOL, Pool::take)?;
    Some(Page { addr })
}

/// A page of `pool` by `take`, and the pool's next region asked for in
/// the background if `take` made it due.
fn take_from(
    pool: &'static Mutex<Pool>,
    take: fn(&mut Pool) -> Option<NonNull<u8>>,
) -> Option<NonNull<u8>> {
    let mut guard = pool.lock();
    let addr = take(&mut guard);
    let prepare = guard.next_region_due();
    drop(guard);
    if prepare {
        prepare_in_background(pool);
    }
    addr
}

/// A page for memory the budget charges beside the caches (the key hashes
/// of a run file being built): while it is held the pool's allowance grows
/// by it, so that it does not count against what the caches may keep warm,
/// and dropping it ends that allowance as it gives the page back.
pub(crate) struct PageBesideCaches(std::mem::ManuallyDrop<Page>);

impl std::ops::Deref for PageBesideCaches {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl std::ops::DerefMut for PageBesideCaches {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.0
    }
}

impl Drop for PageBesideCaches {
    fn drop(&mut self) {
        // The inner `Page` is never dropped (`ManuallyDrop`): its page goes
        // back here, with the allowance it raised.
        POOL.lock().give_back_beside_caches(self.0.addr);
    }
}

/// A [`PageBesideCaches`] from the pool; `None` if no memory could be
/// mapped (the caller falls back to the heap).
pub(crate) fn page_beside_caches() -> Option<PageBesideCaches> {
    let addr = take_from(&POOL, Pool::take_beside_caches)?;
    Some(PageBesideCaches(std::mem::ManuallyDrop::new(Page { addr })))
}

/// Changes the caches' allowance by `delta` bytes (a cache was created,
/// resized or dropped), returning free pages beyond it to the system.
pub(crate) fn adjust_allowance(delta: i64) {
    let mut pool = POOL.lock();
    let pages = delta.unsigned_abs() as usize / PAGE;
    pool.allowance = match delta >= 0 {
        true => pool.allowance.saturating_add(pages),
        false => pool.allowance.saturating_sub(pages),
    };
    pool.trim();
}

/// What the pool holds, in pages.
#[cfg(test)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PoolStats {
    /// Handed out and not given back.
    pub out: usize,
    /// Free and still resident.
    pub warm: usize,
    /// Free and returned to the system.
    pub cold: usize,
    /// Never handed out yet (mapped and faulted in with their region).
    pub fresh: usize,
}

#[cfg(test)]
#[allow(dead_code)]
pub(crate) fn stats() -> PoolStats {
    let pool = POOL.lock();
    PoolStats {
        out: pool.out,
        warm: pool.warm.len(),
        cold: pool.cold.len(),
        fresh: pool.fresh_left,
    }
}

static POOL: Mutex<Pool> = Mutex::new(Pool::new(0));

struct Pool {
    /// The next never-used page of the newest region, and how many follow
    /// it there.
    fresh: Option<NonNull<u8>>,
    fresh_left: usize,
    /// The next region, mapped and faulted in ahead of need.
    spare: Option<NonNull<u8>>,
    /// A thread is preparing the next region.
    preparing: bool,
    /// Free pages still resident (handed out first: no fault).
    warm: Vec<NonNull<u8>>,
    /// Free pages returned to the system (zero-filled on their next touch).
    cold: Vec<NonNull<u8>>,
    out: usize,
    /// Pages the caches may hold: the sum of their capacities.
    allowance: usize,
}

// SAFETY: the pool's pointers are addresses of pages no `Page` owns (free
// or not yet handed out); any thread may hand them out under the mutex.
unsafe impl Send for Pool {}

impl Pool {
    /// An empty pool whose caches may hold `allowance` pages.
    const fn new(allowance: usize) -> Pool {
        Pool {
            fresh: None,
            fresh_left: 0,
            spare: None,
            preparing: false,
            warm: Vec::new(),
            cold: Vec::new(),
            out: 0,
            allowance,
        }
    }

    fn take(&mut self) -> Option<NonNull<u8>> {
        let addr = match self.warm.pop() {
            Some(addr) => addr,
            None => match self.take_fresh() {
                Some(addr) => addr,
                None => match self.cold.pop() {
                    Some(addr) => addr,
                    None => self.map_region()?,
                },
            },
        };
        self.out += 1;
        Some(addr)
    }

    fn take_beside_caches(&mut self) -> Option<NonNull<u8>> {
        let addr = self.take()?;
        self.allowance += 1;
        Some(addr)
    }

    fn give_back_beside_caches(&mut self, addr: NonNull<u8>) {
        self.allowance = self.allowance.saturating_sub(1);
        self.give_back(addr);
    }

    fn take_fresh(&mut self) -> Option<NonNull<u8>> {
        let addr = self.fresh.filter(|_| self.fresh_left > 0)?;
        self.fresh_left -= 1;
        // SAFETY: `fresh_left` more pages of the region follow `addr`, so
        // the next page is inside the region (or one past its end, unused).
        self.fresh = Some(unsafe { addr.add(PAGE) });
        Some(addr)
    }

    fn give_back(&mut self, addr: NonNull<u8>) {
        self.out -= 1;
        self.warm.push(addr);
        if self.warm.len() > self.warm_limit() + SPARE_PAGES {
            self.trim();
        }
    }

    /// Free pages that may stay resident: what the caches could still take.
    fn warm_limit(&self) -> usize {
        self.allowance.saturating_sub(self.out)
    }

    /// Pages resident and not handed out, or handed out: what the pool
    /// holds in memory (a spare region aside).
    fn resident(&self) -> usize {
        self.out + self.warm.len() + self.fresh_left
    }

    /// Whether the caches may grow by a whole region beyond what the pool
    /// holds: the condition for keeping a spare one.
    fn has_room_for_a_region(&self) -> bool {
        self.resident() + REGION_PAGES <= self.allowance
    }

    /// Whether to start preparing the next region: half of the current one
    /// is handed out, none is ready or on its way, no returned page is left
    /// to refill first, and the caches may still grow by a whole region.
    fn next_region_due(&mut self) -> bool {
        let due = !self.preparing
            && self.spare.is_none()
            && self.fresh_left < REGION_PAGES / 2
            && self.cold.is_empty()
            && self.has_room_for_a_region();
        self.preparing |= due;
        due
    }

    /// Returns free pages beyond [`warm_limit`](Self::warm_limit), and the
    /// spare region once the caches may no longer grow by all of it.
    fn trim(&mut self) {
        if self.spare.is_some() && !self.has_room_for_a_region() {
            if let Some(region) = self.spare.take() {
                unmap(region, REGION_PAGES * PAGE);
            }
        }
        let keep = self.warm_limit();
        if self.warm.len() <= keep {
            return;
        }
        let mut excess = self.warm.split_off(keep);
        excess.sort_unstable();
        for (start, len) in contiguous_runs(&excess) {
            release(start, len);
        }
        self.cold.extend(excess);
    }

    /// Maps a region and hands out its first page (the rest become fresh).
    fn map_region(&mut self) -> Option<NonNull<u8>> {
        let start = match self.spare.take() {
            Some(region) => region,
            None => map(REGION_PAGES * PAGE)?,
        };
        self.fresh = Some(start);
        self.fresh_left = REGION_PAGES;
        self.take_fresh()
    }
}

/// `(start, bytes)` of each run of adjacent pages in `pages`, sorted.
fn contiguous_runs(pages: &[NonNull<u8>]) -> Vec<(NonNull<u8>, usize)> {
    let mut runs: Vec<(NonNull<u8>, usize)> = Vec::new();
    for &p in pages {
        match runs.last_mut() {
            Some((start, len)) if start.addr().get() + *len == p.addr().get() => *len += PAGE,
            _ => runs.push((p, PAGE)),
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_are_page_sized_distinct_and_writable() {
        // Every byte where it is fast, three a page under Miri.
        let touched = |i: usize| {
            match cfg!(miri) {
                true => vec![0, PAGE / 2, PAGE - 1],
                false => (0..PAGE).collect(),
            }
            .into_iter()
            .map(move |at| (at, (i + at) as u8))
        };
        let mut pages: Vec<Page> = (0..300).map(|_| page().unwrap()).collect();
        for (i, p) in pages.iter_mut().enumerate() {
            assert_eq!(p.len(), PAGE);
            assert_eq!(p.as_ptr().addr() % PAGE, 0);
            for (at, b) in touched(i) {
                p[at] = b;
            }
        }
        for (i, p) in pages.iter().enumerate() {
            for (at, b) in touched(i) {
                assert_eq!(p[at], b, "page {i} overwritten at {at}");
            }
        }
    }

    fn local_pool(allowance: usize) -> Pool {
        Pool::new(allowance)
    }

    /// Waits (a bounded time) until no thread prepares a region for `pool`.
    fn settle(pool: &Mutex<Pool>) {
        for _ in 0..10_000 {
            if !pool.lock().preparing {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        panic!("the next region was never prepared");
    }

    #[test]
    fn the_next_region_is_prepared_ahead_while_the_allowance_has_room() {
        let pool: &'static Mutex<Pool> =
            Box::leak(Box::new(Mutex::new(local_pool(4 * REGION_PAGES))));
        let half = REGION_PAGES / 2;
        let mut taken: Vec<NonNull<u8>> = (0..half)
            .map(|_| take_from(pool, Pool::take).unwrap())
            .collect();
        settle(pool);
        assert!(
            pool.lock().spare.is_none(),
            "not due before half the region is out"
        );
        taken.push(take_from(pool, Pool::take).unwrap());
        settle(pool);
        let spare = pool
            .lock()
            .spare
            .expect("prepared once half the region was out");
        // The rest of the first region, then the spare's first page.
        while taken.len() < REGION_PAGES {
            taken.push(take_from(pool, Pool::take).unwrap());
        }
        let next = take_from(pool, Pool::take).unwrap();
        assert_eq!(next, spare);
        taken.push(next);
        settle(pool);
        assert!(
            pool.lock().spare.is_none(),
            "not due again until half of it is out"
        );
        // A spare the caches may no longer fill goes back to the system.
        while pool.lock().spare.is_none() {
            taken.push(take_from(pool, Pool::take).unwrap());
            settle(pool);
        }
        let mut p = pool.lock();
        p.allowance = p.resident();
        p.trim();
        assert!(p.spare.is_none());
        // Nothing is prepared past the allowance.
        assert!(!p.next_region_due());
        drop(p);
        for addr in taken {
            pool.lock().give_back(addr);
        }
    }

    #[test]
    fn a_region_prepared_while_the_allowance_shrank_is_not_kept() {
        let pool: &'static Mutex<Pool> =
            Box::leak(Box::new(Mutex::new(local_pool(4 * REGION_PAGES))));
        assert!(pool.lock().next_region_due());
        pool.lock().allowance = 0;
        prepare_in_background(pool);
        settle(pool);
        let p = pool.lock();
        assert!(p.spare.is_none());
        assert!(!p.preparing);
    }

    #[test]
    fn free_pages_beyond_the_allowance_go_back_to_the_system() {
        // Pages of one region and a half.
        let n = REGION_PAGES * 3 / 2;
        let mut pool = local_pool(100);
        let pages: Vec<NonNull<u8>> = (0..n).map(|_| pool.take().unwrap()).collect();
        assert_eq!(pool.out, n);
        let mut distinct = pages.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), n);
        for &p in &pages {
            // SAFETY: a page the pool handed out and nobody else uses.
            unsafe { std::ptr::write_bytes(p.as_ptr(), 7, PAGE) };
            pool.give_back(p);
            assert!(pool.warm.len() <= pool.warm_limit() + SPARE_PAGES);
        }
        assert_eq!(pool.out, 0);
        // At most the allowance stays resident (plus the batch of spares).
        assert!(pool.warm.len() <= 100 + SPARE_PAGES, "{}", pool.warm.len());
        assert_eq!(pool.warm.len() + pool.cold.len(), n);
        // Pages are handed out again, warm ones first, then the rest of the
        // region, then the returned ones, which read as zeros.
        let again: Vec<NonNull<u8>> = (0..n).map(|_| pool.take().unwrap()).collect();
        assert!(pool.warm.is_empty());
        // Two regions were mapped: the second one's unused pages came
        // before returned ones, as many returned ones are left.
        assert_eq!(pool.cold.len(), 2 * REGION_PAGES - n);
        #[cfg(not(miri))]
        assert!(again.iter().any(|&p| {
            // SAFETY: handed out by the pool, unused elsewhere.
            let bytes = unsafe { std::slice::from_raw_parts(p.as_ptr(), PAGE) };
            bytes.iter().all(|&b| b == 0)
        }));
        for p in again {
            pool.give_back(p);
        }
        // A smaller allowance returns what no cache may take any more.
        pool.allowance = 10;
        pool.trim();
        assert_eq!(pool.warm.len(), 10);
    }

    #[test]
    fn pages_held_beside_the_caches_do_not_shrink_what_the_caches_keep_warm() {
        let mut pool = local_pool(600);
        let cached: Vec<NonNull<u8>> = (0..600).map(|_| pool.take().unwrap()).collect();
        let hashes: Vec<NonNull<u8>> = (0..300)
            .map(|_| pool.take_beside_caches().unwrap())
            .collect();
        // The cache shrinks to nothing while the hashes are held: all of
        // its pages stay warm for it to refill, none go back.
        for p in cached {
            pool.give_back(p);
        }
        assert_eq!((pool.warm.len(), pool.cold.len()), (600, 0));
        // The hashes are done: their allowance ends, and what is warm
        // beyond the caches' own allowance goes back to the system (in
        // batches of spares).
        for p in hashes {
            pool.give_back_beside_caches(p);
        }
        assert_eq!(pool.allowance, 600);
        assert_eq!(pool.out, 0);
        assert_eq!(pool.warm.len() + pool.cold.len(), 900);
        assert!(pool.warm.len() <= 600 + SPARE_PAGES, "{}", pool.warm.len());
        assert!(pool.cold.len() >= 300 - SPARE_PAGES, "{}", pool.cold.len());
    }

    #[test]
    fn runs_of_adjacent_pages_are_found() {
        let mut region = vec![0u8; 10 * PAGE];
        let base = NonNull::new(region.as_mut_ptr()).unwrap();
        // SAFETY: every offset is inside `region`.
        let p = |i: usize| unsafe { base.add(i * PAGE) };
        assert_eq!(
            contiguous_runs(&[p(0), p(1), p(2), p(5), p(7), p(8)]),
            vec![(p(0), 3 * PAGE), (p(5), PAGE), (p(7), 2 * PAGE)]
        );
        assert!(contiguous_runs(&[]).is_empty());
    }
}
