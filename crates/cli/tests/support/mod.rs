//! What the integration tests share (each test binary uses part of it).
#![allow(dead_code)]
pub mod cluster;
pub mod linearizability;
