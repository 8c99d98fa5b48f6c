//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::fs;
use std::path::{Path, PathBuf};

use slsm::Options;

/// Options with tiny memory runs so flushes and merges happen quickly.
pub fn small_options() -> Options {
    Options {
        run_size: 8 << 10,
        memory_runs: 3,
        level_runs: 2,
        fence_entries: 4,
        ..Options::default()
    }
}

/// Files in `dir` whose name ends with `ext`, sorted by name.
pub fn files_with_ext(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    v.sort();
    v
}

/// XORs `mask` into the byte at `offset` of `path`.
pub fn flip_byte(path: &Path, offset: u64, mask: u8) {
    let mut bytes = fs::read(path).unwrap();
    bytes[offset as usize] ^= mask;
    fs::write(path, bytes).unwrap();
}

pub fn key(i: u32) -> Vec<u8> {
    format!("key{i:06}").into_bytes()
}

pub fn value(i: u32) -> Vec<u8> {
    format!("value-{i}-{}", "x".repeat((i % 17) as usize)).into_bytes()
}

/// A number from the environment (the long modes of the loops), or
/// `default`.
pub fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
