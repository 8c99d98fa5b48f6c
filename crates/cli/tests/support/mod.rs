//! What the integration tests share.
pub mod linearizability;
