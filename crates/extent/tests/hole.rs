//! `insert_hole` edge cases.

use slsm_extent::{ExtentMap, HoleError};

#[test]
fn invalid_arguments() {
    let m = ExtentMap::<u8>::new();
    assert_eq!(
        m.insert_hole(0, 100, 0, 1, 0),
        Err(HoleError::InvalidArgument)
    );
    assert_eq!(
        m.insert_hole(0, 100, 4, 0, 0),
        Err(HoleError::InvalidArgument)
    );
    assert_eq!(
        m.insert_hole(0, 100, 4, 3, 0),
        Err(HoleError::InvalidArgument)
    );
    assert_eq!(
        m.insert_hole(0, 100, 4, 12, 0),
        Err(HoleError::InvalidArgument)
    );
    assert!(m.is_empty());
}

#[test]
fn align_one_packs_densely() {
    let m = ExtentMap::<u8>::new();
    for i in 0..100u64 {
        assert_eq!(m.insert_hole(0, 1000, 3, 1, 0), Ok(i * 3));
    }
    // Free one in the middle: first fit reuses it.
    assert_eq!(m.remove(30, 3), Some(0));
    assert_eq!(m.insert_hole(0, 1000, 3, 1, 1), Ok(30));
    assert_eq!(m.insert_hole(0, 1000, 4, 1, 1), Ok(300));
}

#[test]
fn large_align_and_unaligned_hint() {
    let m = ExtentMap::<u8>::new();
    let a = 1u64 << 40;
    assert_eq!(m.insert_hole(1, u64::MAX, 10, a, 0), Ok(a));
    assert_eq!(m.insert_hole(1, u64::MAX, 10, a, 0), Ok(2 * a));
    // Unaligned hint is rounded up.
    assert_eq!(m.insert_hole(13, 1000, 8, 16, 0), Ok(16));
    assert_eq!(m.insert_hole(16, 1000, 8, 16, 0), Ok(32));
    // Hint inside an existing extent skips past it.
    m.insert(100, 50, 0).unwrap();
    assert_eq!(m.insert_hole(110, 1000, 1, 1, 0), Ok(150));
    assert_eq!(m.insert_hole(110, 1000, 1, 64, 0), Ok(192));
    // align = 2^63.
    assert_eq!(m.insert_hole(1, u64::MAX, 1, 1 << 63, 0), Ok(1 << 63));
}

#[test]
fn limit_exactly_fitting_and_no_space() {
    let m = ExtentMap::<u8>::new();
    assert_eq!(m.insert_hole(0, 64, 64, 64, 0), Ok(0));
    assert_eq!(m.insert_hole(0, 64, 1, 1, 0), Err(HoleError::NoSpace));
    assert_eq!(m.insert_hole(0, 128, 64, 64, 0), Ok(64));
    // Gap of exactly 10 between 200 and 210.
    m.insert(128, 72, 0).unwrap();
    m.insert(210, 10, 0).unwrap();
    assert_eq!(m.insert_hole(0, 220, 11, 1, 0), Err(HoleError::NoSpace));
    assert_eq!(m.insert_hole(0, 220, 10, 1, 0), Ok(200));
    // len > limit, hint beyond limit, hint == limit.
    assert_eq!(m.insert_hole(0, 5, 6, 1, 0), Err(HoleError::NoSpace));
    assert_eq!(m.insert_hole(1000, 500, 1, 1, 0), Err(HoleError::NoSpace));
    assert_eq!(m.insert_hole(500, 500, 1, 1, 0), Err(HoleError::NoSpace));
    // Aligned candidate would end past the limit.
    assert_eq!(
        m.insert_hole(300, 1030, 8, 1024, 0),
        Err(HoleError::NoSpace)
    );
    assert_eq!(m.insert_hole(300, 1032, 8, 1024, 0), Ok(1024));
}

#[test]
fn near_u64_max() {
    let m = ExtentMap::<u8>::new();
    // The last possible extent ends exactly at u64::MAX.
    assert_eq!(
        m.insert_hole(u64::MAX - 10, u64::MAX, 10, 1, 0),
        Ok(u64::MAX - 10)
    );
    assert_eq!(
        m.insert_hole(u64::MAX - 10, u64::MAX, 1, 1, 0),
        Err(HoleError::NoSpace)
    );
    assert_eq!(m.lookup(u64::MAX - 1).unwrap().start, u64::MAX - 10);
    // Aligning the hint up overflows.
    assert_eq!(
        m.insert_hole(u64::MAX - 3, u64::MAX, 1, 1 << 20, 0),
        Err(HoleError::NoSpace)
    );
    // Huge length.
    assert_eq!(m.insert_hole(0, u64::MAX, u64::MAX - 20, 1, 0), Ok(0));
    assert_eq!(m.insert_hole(0, u64::MAX, 1, 1, 0), Ok(u64::MAX - 20));
    assert_eq!(m.len(), 3);
}

#[test]
fn concurrent_claims_are_disjoint() {
    use std::sync::Arc;
    let m = Arc::new(ExtentMap::<u32, 8>::with_leaf_capacity());
    let handles: Vec<_> = (0..4u32)
        .map(|t| {
            let m = Arc::clone(&m);
            std::thread::spawn(move || {
                let mut got = Vec::new();
                for i in 0..500u32 {
                    let len = 1 + (i % 7) as u64;
                    let s = m.insert_hole(0, u64::MAX, len, 1, t).unwrap();
                    got.push((s, len));
                }
                got
            })
        })
        .collect();
    let mut all: Vec<(u64, u64)> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    all.sort();
    for w in all.windows(2) {
        assert!(w[0].0 + w[0].1 <= w[1].0, "overlapping claims {w:?}");
    }
    // First fit from 0 with nothing freed: the claims tile [0, total).
    let total: u64 = all.iter().map(|&(_, l)| l).sum();
    assert_eq!(all.last().map(|&(s, l)| s + l), Some(total));
    assert_eq!(m.len(), 2000);
}
