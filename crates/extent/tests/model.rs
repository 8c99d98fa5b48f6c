//! Property test: random operation sequences against a `BTreeMap` model.
//! Run with a tiny leaf capacity (4: constant splits and leaf unlinks) and
//! with the default capacity.

use std::collections::BTreeMap;

use proptest::prelude::*;
use slsm_extent::{Error, Extent, ExtentMap, HoleError};

type Model = BTreeMap<u64, (u64, u32)>;

#[derive(Debug, Clone)]
enum Op {
    Insert(u64, u64),
    /// Remove the i-th (mod len) extent of the model.
    RemoveExisting(usize),
    Remove(u64, u64),
    Lookup(u64),
    Hole(u64, u64, u64, u32),
    Check,
}

fn point() -> impl Strategy<Value = u64> {
    prop_oneof![
        6 => 0u64..3000,
        1 => (u64::MAX - 300)..=u64::MAX,
        1 => Just(0u64),
    ]
}

fn length() -> impl Strategy<Value = u64> {
    prop_oneof![
        8 => 1u64..40,
        1 => 40u64..400,
        1 => Just(0u64),
        1 => Just(u64::MAX),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        10 => (point(), length()).prop_map(|(s, l)| Op::Insert(s, l)),
        5 => any::<usize>().prop_map(Op::RemoveExisting),
        1 => (point(), length()).prop_map(|(s, l)| Op::Remove(s, l)),
        4 => point().prop_map(Op::Lookup),
        3 => (point(), prop_oneof![point(), Just(u64::MAX)], 0u64..50, 0u32..7)
            .prop_map(|(h, lim, l, a)| Op::Hole(h, lim, l, a)),
        1 => Just(Op::Check),
    ]
}

fn model_lookup(m: &Model, p: u64) -> Option<Extent<u32>> {
    let (&s, &(l, v)) = m.range(..=p).next_back()?;
    (p - s < l).then_some(Extent {
        start: s,
        len: l,
        value: v,
    })
}

fn model_overlap(m: &Model, s: u64, e: u64) -> Option<(u64, u64)> {
    // The lowest stored extent intersecting [s, e).
    if let Some((&ps, &(pl, _))) = m.range(..=s).next_back() {
        if ps + pl > s {
            return Some((ps, pl));
        }
    }
    m.range(s..e).next().map(|(&k, &(l, _))| (k, l))
}

fn align_up(x: u64, a: u64) -> Option<u64> {
    Some(x.checked_add(a - 1)? & !(a - 1))
}

fn model_hole(m: &Model, hint: u64, limit: u64, len: u64, align: u64) -> Result<u64, HoleError> {
    if len == 0 || !align.is_power_of_two() {
        return Err(HoleError::InvalidArgument);
    }
    let mut c = align_up(hint, align).ok_or(HoleError::NoSpace)?;
    loop {
        let e = match c.checked_add(len) {
            Some(e) if e <= limit => e,
            _ => return Err(HoleError::NoSpace),
        };
        match m.range(..e).next_back() {
            Some((&s, &(l, _))) if s + l > c => {
                c = align_up(s + l, align).ok_or(HoleError::NoSpace)?;
            }
            _ => return Ok(c),
        }
    }
}

fn check_all<const C: usize>(map: &ExtentMap<u32, C>, m: &Model) {
    let want: Vec<Extent<u32>> = m
        .iter()
        .map(|(&s, &(l, v))| Extent {
            start: s,
            len: l,
            value: v,
        })
        .collect();
    let got: Vec<_> = map.iter().collect();
    assert_eq!(got, want, "iter");
    assert_eq!(map.len(), m.len(), "len");
    assert_eq!(map.is_empty(), m.is_empty());
    let flat: Vec<_> = map.leaves().flatten().collect();
    assert_eq!(flat, want, "leaves");
    for leaf in map.leaves() {
        assert!(!leaf.is_empty() && leaf.len() <= C);
    }
    assert_eq!(map.first(), want.first().cloned(), "first");
    assert_eq!(map.last(), want.last().cloned(), "last");
    // Forward walk with next_after.
    let mut fwd = Vec::new();
    let mut cur = map.first();
    while let Some(e) = cur {
        cur = map.next_after(e.start);
        fwd.push(e);
    }
    assert_eq!(fwd, want, "forward walk");
    // Backward walk with prev_before.
    let mut bwd = Vec::new();
    let mut cur = map.last();
    while let Some(e) = cur {
        cur = map.prev_before(e.start);
        bwd.push(e);
    }
    bwd.reverse();
    assert_eq!(bwd, want, "backward walk");
}

fn run<const C: usize>(ops: &[Op]) {
    let map: ExtentMap<u32, C> = ExtentMap::with_leaf_capacity();
    let mut m = Model::new();
    let mut next_val = 0u32;
    for op in ops {
        match *op {
            Op::Insert(s, l) => {
                next_val += 1;
                let got = map.insert(s, l, next_val);
                let want = if l == 0 || s.checked_add(l).is_none() {
                    Err(Error::InvalidRange)
                } else if let Some((os, ol)) = model_overlap(&m, s, s + l) {
                    Err(Error::Overlap { start: os, len: ol })
                } else {
                    m.insert(s, (l, next_val));
                    Ok(())
                };
                assert_eq!(got, want, "insert({s}, {l})");
            }
            Op::RemoveExisting(i) => {
                if m.is_empty() {
                    continue;
                }
                let (&s, &(l, v)) = m.iter().nth(i % m.len()).unwrap();
                assert_eq!(map.remove(s, l), Some(v));
                m.remove(&s);
                assert_eq!(map.remove(s, l), None);
            }
            Op::Remove(s, l) => {
                let want = match m.get(&s) {
                    Some(&(ml, v)) if ml == l => {
                        m.remove(&s);
                        Some(v)
                    }
                    _ => None,
                };
                assert_eq!(map.remove(s, l), want, "remove({s}, {l})");
            }
            Op::Lookup(p) => {
                assert_eq!(map.lookup(p), model_lookup(&m, p), "lookup({p})");
                if p > 0 {
                    assert_eq!(map.lookup(p - 1), model_lookup(&m, p - 1));
                }
            }
            Op::Hole(hint, limit, len, alog) => {
                // alog 0..=5 -> 1..32; 6 -> 3 (not a power of two).
                let align = if alog == 6 { 3 } else { 1u64 << (alog * 2) };
                next_val += 1;
                let want = model_hole(&m, hint, limit, len, align);
                let got = map.insert_hole(hint, limit, len, align, next_val);
                assert_eq!(got, want, "insert_hole({hint}, {limit}, {len}, {align})");
                if let Ok(s) = got {
                    m.insert(s, (len, next_val));
                }
            }
            Op::Check => check_all(&map, &m),
        }
    }
    check_all(&map, &m);
    // Drain everything: exercises emptying and unlinking every leaf.
    let all: Vec<_> = m.iter().map(|(&s, &(l, v))| (s, l, v)).collect();
    for (s, l, v) in all {
        assert_eq!(map.remove(s, l), Some(v));
    }
    assert_eq!(map.len(), 0);
    assert_eq!(map.iter().count(), 0);
    assert_eq!(map.leaves().count(), 0);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn model_tiny_leaves(ops in proptest::collection::vec(op(), 1..500)) {
        run::<4>(&ops);
    }

    #[test]
    fn model_default_leaves(ops in proptest::collection::vec(op(), 1..500)) {
        run::<{ slsm_extent::DEFAULT_LEAF_CAP }>(&ops);
    }
}

/// Deterministic: sequential, reverse and interleaved fills big enough to
/// split many leaves, adjacent extents, then emptying leaves in the middle.
#[test]
fn splits_adjacent_and_unlink() {
    let map: ExtentMap<u64, 4> = ExtentMap::with_leaf_capacity();
    // Adjacent extents [10i, 10i+10), inserted in a scrambled order.
    let n = 2000u64;
    for i in 0..n {
        let k = (i * 7919) % n;
        map.insert(k * 10, 10, k).unwrap();
    }
    assert_eq!(map.len(), n as usize);
    assert!(map.leaves().count() >= (n as usize) / 4);
    for k in 0..n {
        let e = map.lookup(k * 10 + 9).unwrap();
        assert_eq!((e.start, e.len, e.value), (k * 10, 10, k));
    }
    assert_eq!(
        map.insert(5, 10, 0),
        Err(Error::Overlap { start: 0, len: 10 })
    );
    // Remove a block in the middle: whole leaves empty and are unlinked.
    for k in 500..1500 {
        assert_eq!(map.remove(k * 10, 10), Some(k));
    }
    assert!(map.lookup(5000).is_none());
    assert_eq!(map.next_after(4990).unwrap().start, 15000);
    assert_eq!(map.prev_before(15000).unwrap().start, 4990);
    // A long extent spanning the hole (last point in a later leaf).
    map.insert(5000, 10000, 42).unwrap();
    assert_eq!(map.lookup(5001).unwrap().value, 42);
    assert_eq!(map.lookup(14999).unwrap().value, 42);
    assert_eq!(map.len(), 1001);
    let v: Vec<_> = map.iter().map(|e| e.start).collect();
    assert!(v.windows(2).all(|w| w[0] < w[1]));
    // Extents at the very top of the key space.
    map.insert(u64::MAX - 1, 1, 7).unwrap();
    assert_eq!(map.lookup(u64::MAX - 1).unwrap().value, 7);
    assert!(map.lookup(u64::MAX).is_none());
    assert_eq!(map.insert(u64::MAX, 1, 0), Err(Error::InvalidRange));
    assert_eq!(map.last().unwrap().start, u64::MAX - 1);
    assert_eq!(map.remove(u64::MAX - 1, 1), Some(7));
    assert_eq!(map.remove(0, 10), Some(0));
    map.insert(0, 1, 9).unwrap();
    assert_eq!(map.first().unwrap().start, 0);
    assert_eq!(map.insert(0, 0, 0), Err(Error::InvalidRange));
}

#[test]
fn send_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<ExtentMap<u64>>();
    assert_send_sync::<ExtentMap<std::sync::Arc<String>, 16>>();
}
