//! Node layout.
//!
//! ```text
//!            tower: 8 + 16 * (height - 1) bytes, level 0 nearest the header
//!  base ---> [next[h-1] | succ_prefix[h-1]] ... [next[1] | succ_prefix[1]] [next[0]]
//!  node ---> [prefix: u64 BE of user key][key_len: u32][val_len: u32][height: u8][key bytes][value bytes][pad to 8]
//!             0                          8             12            16          17
//! ```
//!
//! The tower sits *before* the node address so the key starts at a fixed
//! offset (17) whatever the height, and the header is only 17 bytes.
//!
//! Levels >= 1 keep, beside the forward pointer, a copy of the successor's
//! prefix (`succ_prefix`, `u64::MAX` for "none"). It is only a *hint*: it is
//! written after the pointer and may be stale, but only ever too large (a
//! node's successor can only be replaced by a smaller key). A hint above the
//! key's prefix lets a read-only search stop early at a level ("the successor
//! is beyond the key: descend"), which is always safe, without touching the
//! overshooting node; a hint below the key's prefix proves the successor is
//! smaller than the key, so any search steps onto it without loading its
//! header. Only an equal hint needs the real compare. Hints are stored with
//! Release and loaded with Acquire.
//! Level 0 has no hint (75% of nodes only have level 0, so it costs ~2.7
//! bytes per entry on average with p = 1/4). Build with the
//! `no-succ-prefix` feature to disable it (for benchmarking). A node
//! is allocated in one arena block and never moves or changes after it is
//! published (only its tower's atomic pointers change).

use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

use crate::arena::Arena;

/// Upper bound on `Options::max_height`.
pub const MAX_HEIGHT: usize = 32;

/// Offset of the key bytes from the node address.
const KEY_OFFSET: usize = 17;

#[repr(C)]
pub(crate) struct Node {
    pub(crate) prefix: u64,
    key_len: u32,
    val_len: u32,
    height: u8,
}

/// Software prefetch of the cache line holding `p` into all cache levels
/// (`_mm_prefetch` with `_MM_HINT_T0` on x86_64; a no-op elsewhere and under Miri).
/// A prefetch is only a hint: it never faults, whatever the address.
/// Public because the engine above prefetches its own structures (filter
/// and data blocks) the same way.
#[inline(always)]
pub fn prefetch(p: *const u8) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: `prefetcht0` has no architectural effect besides cache state and never faults,
    // even for an invalid address; SSE is part of the x86_64 baseline.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    };
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = p;
}

/// Whether upper levels carry the successor-prefix hint.
pub(crate) const SUCC_PREFIX: bool = cfg!(not(feature = "no-succ-prefix"));

/// Bytes of the tower of a node of `height`.
#[inline(always)]
const fn tower_bytes(height: usize) -> usize {
    if SUCC_PREFIX {
        16 * height - 8
    } else {
        8 * height
    }
}

/// Offset (below the node address) of the forward pointer at `level`.
#[inline(always)]
const fn slot_offset(level: usize) -> usize {
    if SUCC_PREFIX && level > 0 {
        8 + 16 * level
    } else {
        8 * (level + 1)
    }
}

/// Bytes of one node of the given height and sizes, or `None` on overflow.
#[inline]
pub(crate) fn node_size(height: usize, key_len: usize, val_len: usize) -> Option<usize> {
    tower_bytes(height)
        .checked_add(KEY_OFFSET)?
        .checked_add(key_len)?
        .checked_add(val_len)
}

impl Node {
    /// Allocates and fully initialises a node whose tower pointers are all null.
    ///
    /// # Safety
    /// `1 <= height <= MAX_HEIGHT`, `key.len()` and `value.len()` fit in `u32`.
    pub(crate) unsafe fn alloc(
        arena: &Arena,
        height: usize,
        prefix: u64,
        key: &[u8],
        value: &[u8],
    ) -> Option<*mut Node> {
        let size = node_size(height, key.len(), value.len())?;
        let base = arena.alloc(size)?.as_ptr();
        // SAFETY: the block has `size` bytes, aligned to 8; the tower occupies the first
        // `tower_bytes(height)` bytes and the header/key/value the rest. The block is exclusively ours
        // until it is published by a Release CAS.
        unsafe {
            let node = base.add(tower_bytes(height)) as *mut Node;
            for l in 0..height {
                let slot = (node as *mut u8).sub(slot_offset(l));
                (slot as *mut AtomicPtr<Node>).write(AtomicPtr::new(std::ptr::null_mut()));
                if SUCC_PREFIX && l > 0 {
                    (slot.add(8) as *mut AtomicU64).write(AtomicU64::new(u64::MAX));
                }
            }
            std::ptr::addr_of_mut!((*node).prefix).write(prefix);
            std::ptr::addr_of_mut!((*node).key_len).write(key.len() as u32);
            std::ptr::addr_of_mut!((*node).val_len).write(value.len() as u32);
            std::ptr::addr_of_mut!((*node).height).write(height as u8);
            let kp = (node as *mut u8).add(KEY_OFFSET);
            std::ptr::copy_nonoverlapping(key.as_ptr(), kp, key.len());
            std::ptr::copy_nonoverlapping(value.as_ptr(), kp.add(key.len()), value.len());
            Some(node)
        }
    }

    /// The forward pointer of `node` at `level`.
    ///
    /// # Safety
    /// `node` is a live node and `level < height(node)`.
    #[inline(always)]
    pub(crate) unsafe fn tower<'a>(node: *const Node, level: usize) -> &'a AtomicPtr<Node> {
        // SAFETY: per the contract the tower slot `level` lies `slot_offset(level)` bytes before
        // the node, inside the node's block, and holds an initialised AtomicPtr.
        unsafe { &*((node as *const u8).sub(slot_offset(level)) as *const AtomicPtr<Node>) }
    }

    /// The successor-prefix hint at `level` (only with [`SUCC_PREFIX`]).
    ///
    /// # Safety
    /// `node` is a live node, `1 <= level < height(node)`, and `SUCC_PREFIX`.
    #[inline(always)]
    pub(crate) unsafe fn succ_prefix<'a>(node: *const Node, level: usize) -> &'a AtomicU64 {
        debug_assert!(SUCC_PREFIX && level > 0);
        // SAFETY: the hint is the 8 bytes after the forward pointer of `level`, inside the
        // node's block, initialised at allocation.
        unsafe { &*((node as *const u8).sub(slot_offset(level) - 8) as *const AtomicU64) }
    }

    /// Address of the tower slot of `node` at `level` (for prefetching; no dereference).
    #[inline(always)]
    pub(crate) fn slot_addr(node: *const Node, level: usize) -> *const u8 {
        (node as *const u8).wrapping_sub(slot_offset(level))
    }

    /// Acquire-load of the successor at `level`.
    ///
    /// # Safety
    /// As for [`Node::tower`].
    #[inline(always)]
    pub(crate) unsafe fn next(node: *const Node, level: usize) -> *mut Node {
        // SAFETY: forwarded contract.
        unsafe { Self::tower(node, level).load(Ordering::Acquire) }
    }

    /// # Safety
    /// `node` is a live, published (or own, initialised) node.
    #[inline(always)]
    pub(crate) unsafe fn prefix(node: *const Node) -> u64 {
        // SAFETY: initialised header field of a live node.
        unsafe { (*node).prefix }
    }

    /// # Safety
    /// As for [`Node::prefix`]; the slice lives as long as the arena.
    #[inline(always)]
    pub(crate) unsafe fn key<'a>(node: *const Node) -> &'a [u8] {
        // SAFETY: the key bytes follow the header and were written before publication;
        // they are never modified afterwards.
        unsafe {
            let len = (*node).key_len as usize;
            std::slice::from_raw_parts((node as *const u8).add(KEY_OFFSET), len)
        }
    }

    /// # Safety
    /// As for [`Node::key`].
    #[inline(always)]
    pub(crate) unsafe fn value<'a>(node: *const Node) -> &'a [u8] {
        // SAFETY: the value bytes follow the key bytes, written before publication.
        unsafe {
            let kl = (*node).key_len as usize;
            let vl = (*node).val_len as usize;
            std::slice::from_raw_parts((node as *const u8).add(KEY_OFFSET + kl), vl)
        }
    }

    /// # Safety
    /// As for [`Node::prefix`].
    #[inline(always)]
    pub(crate) unsafe fn height(node: *const Node) -> usize {
        // SAFETY: initialised header field of a live node.
        unsafe { (*node).height as usize }
    }
}
