//! What the cache holds and how it comes in (a leaf of `cache/`: the
//! cache, its slots and shards, the fetch and the warming build on it).

/// Bytes charged per cached block beyond its data: its queue entry, the
/// block's header and the allocations' headers.
pub(crate) const ENTRY_OVERHEAD: u64 = 128;

/// What a cache holds: one block of a file, which knows what it costs in
/// memory. The cache knows nothing else of it (nor of the files' format).
pub trait Cacheable: Send + Sync + 'static {
    /// Bytes the block takes (it is charged that plus [`ENTRY_OVERHEAD`]).
    fn charge(&self) -> usize;

    /// Starts loading the block's first lines into the CPU's cache (a hit
    /// borrowed for a lookup, before the lookup reads it).
    fn prefetch_header(&self) {}
}

/// How a block enters the cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Admission {
    /// Read by the lookup that needs it (which is not a hit).
    Read,
    /// Put there ahead of the read that needs it (a batch's fetch, warming
    /// a new file into free room): that read is not a hit either.
    Ahead,
    /// A new file's block that takes the place of a cached block of a file
    /// it replaces (a merge): it goes straight to the main queue, as
    /// reused as what it replaces (see `warm`).
    Inherited,
}
