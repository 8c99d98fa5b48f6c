//! The `slsm` command line's library: a db_bench-compatible benchmark harness
//! generic over the engine ([`bench`]), the slsm adapter ([`engine`]), and
//! the admin and plot commands of the binary.

pub mod allocator;
pub mod bench;
#[cfg(feature = "engine")]
pub mod engine;
