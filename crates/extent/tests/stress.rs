//! Concurrency stress: 4 writer threads insert, remove and claim holes in a
//! shared range while 2 reader threads look up and iterate. Every writer
//! records what it owns; at the end the map must equal the union of what
//! the writers own, with no overlap (so no range was handed out twice and
//! no extent was lost). Readers check every answer is a real, covering
//! extent and that "pinned" extents (never removed) are always found.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use slsm_extent::ExtentMap;

/// Value stored: enough to recognise a torn or misplaced read. Extents
/// claimed with `insert_hole` cannot name their range in advance and carry
/// `start == len == 0`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Val {
    start: u64,
    len: u64,
    owner: u32,
}

impl Val {
    fn matches(&self, start: u64, len: u64) -> bool {
        (self.start, self.len) == (start, len) || (self.start, self.len) == (0, 0)
    }
}

const DOMAIN: u64 = 1 << 18;
const PIN_STRIDE: u64 = 4096;
const PINNED_OWNER: u32 = 99;

fn stress<const C: usize>(ops_per_writer: usize, seed: u64) {
    let map = Arc::new(ExtentMap::<Val, C>::with_leaf_capacity());
    let mut pinned = Vec::new();
    for k in 0..DOMAIN / PIN_STRIDE {
        let (s, l) = (k * PIN_STRIDE + 7, 5);
        map.insert(
            s,
            l,
            Val {
                start: s,
                len: l,
                owner: PINNED_OWNER,
            },
        )
        .unwrap();
        pinned.push((s, l));
    }
    let pinned = Arc::new(pinned);
    let stop = Arc::new(AtomicBool::new(false));

    let readers: Vec<_> = (0..2u64)
        .map(|r| {
            let (map, stop, pinned) = (map.clone(), stop.clone(), pinned.clone());
            std::thread::spawn(move || {
                let mut rng = StdRng::seed_from_u64(seed ^ (1000 + r));
                let mut lookups = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..256 {
                        let p = rng.gen_range(0..DOMAIN);
                        if let Some(e) = map.lookup(p) {
                            assert!(e.contains(p), "lookup({p}) returned {e:?}");
                            assert!(e.value.matches(e.start, e.len), "{e:?}");
                        }
                        let (s, l) = pinned[rng.gen_range(0..pinned.len())];
                        let q = s + rng.gen_range(0..l);
                        let e = map.lookup(q).expect("pinned extent must always be found");
                        assert_eq!((e.start, e.len, e.value.owner), (s, l, PINNED_OWNER));
                        lookups += 2;
                    }
                    // Cursor steps around a random point: strictly ordered,
                    // and a pinned extent is never skipped.
                    let p = rng.gen_range(0..DOMAIN);
                    let mut cur = map.next_after(p);
                    for _ in 0..8 {
                        let Some(e) = cur else { break };
                        assert!(e.start > p);
                        let n = map.next_after(e.start);
                        if let Some(n) = &n {
                            assert!(n.start >= e.end(), "next_after overlaps: {e:?} {n:?}");
                        }
                        cur = n;
                    }
                    if let Some(e) = map.prev_before(p) {
                        assert!(e.start < p);
                    }
                    let k = (p / PIN_STRIDE) * PIN_STRIDE + 7; // a pinned start
                    if k < p && k + 5 <= p {
                        let e = map.prev_before(p).expect("pinned extent before p");
                        assert!(e.start >= k, "prev_before({p}) skipped pin at {k}: {e:?}");
                    }
                    // A full scan: ordered, non-overlapping, all pins present.
                    let mut prev_end = 0;
                    let mut pins_seen = 0;
                    for e in map.iter() {
                        assert!(e.start >= prev_end, "iteration went backwards");
                        assert!(e.value.matches(e.start, e.len), "{e:?}");
                        prev_end = e.end();
                        pins_seen += (e.value.owner == PINNED_OWNER) as usize;
                    }
                    assert_eq!(pins_seen, pinned.len());
                }
                lookups
            })
        })
        .collect();

    let writers: Vec<_> = (0..4u32)
        .map(|t| {
            let map = map.clone();
            std::thread::spawn(move || {
                let mut rng = StdRng::seed_from_u64(seed ^ t as u64);
                let mut owned: Vec<(u64, u64)> = Vec::new();
                let (mut ins, mut holes, mut rems, mut conflicts) = (0, 0, 0, 0);
                for _ in 0..ops_per_writer {
                    let r = rng.gen_range(0..100);
                    if (r < 30 && !owned.is_empty()) || owned.len() > 1500 {
                        let i = rng.gen_range(0..owned.len());
                        let (s, l) = owned.swap_remove(i);
                        let v = map.remove(s, l).expect("owned extent vanished");
                        assert_eq!(v.owner, t);
                        assert!(v.matches(s, l));
                        rems += 1;
                    } else if r < 65 {
                        let s = rng.gen_range(0..DOMAIN);
                        let l = rng.gen_range(1..64);
                        match map.insert(
                            s,
                            l,
                            Val {
                                start: s,
                                len: l,
                                owner: t,
                            },
                        ) {
                            Ok(()) => {
                                owned.push((s, l));
                                ins += 1;
                            }
                            Err(_) => conflicts += 1,
                        }
                    } else {
                        let hint = rng.gen_range(0..DOMAIN);
                        let l = rng.gen_range(1..32);
                        let align = 1u64 << rng.gen_range(0..5);
                        match map.insert_hole(
                            hint,
                            DOMAIN,
                            l,
                            align,
                            Val {
                                start: 0,
                                len: 0,
                                owner: t,
                            },
                        ) {
                            Ok(s) => {
                                assert_eq!(s % align, 0);
                                assert!(s >= hint && s + l <= DOMAIN);
                                let e = map.lookup(s).expect("claimed hole vanished");
                                assert_eq!((e.start, e.len), (s, l));
                                assert_eq!(e.value.owner, t, "hole handed out twice");
                                owned.push((s, l));
                                holes += 1;
                            }
                            Err(_) => conflicts += 1,
                        }
                    }
                }
                (owned, ins, holes, rems, conflicts)
            })
        })
        .collect();

    let mut all: Vec<(u64, u64, u32)> = pinned.iter().map(|&(s, l)| (s, l, PINNED_OWNER)).collect();
    let mut stats = (0, 0, 0, 0);
    for (t, w) in writers.into_iter().enumerate() {
        let (owned, i, h, r, c) = w.join().unwrap();
        all.extend(owned.into_iter().map(|(s, l)| (s, l, t as u32)));
        stats = (stats.0 + i, stats.1 + h, stats.2 + r, stats.3 + c);
    }
    stop.store(true, Ordering::Relaxed);
    let lookups: u64 = readers.into_iter().map(|r| r.join().unwrap()).sum();
    assert!(stats.0 > 0 && stats.1 > 0 && stats.2 > 0, "{stats:?}");
    assert!(lookups > 0);

    all.sort();
    for w in all.windows(2) {
        assert!(w[0].0 + w[0].1 <= w[1].0, "owned ranges overlap: {w:?}");
    }
    let got: Vec<(u64, u64, u32)> = map
        .iter()
        .map(|e| {
            assert!(e.value.matches(e.start, e.len));
            (e.start, e.len, e.value.owner)
        })
        .collect();
    assert_eq!(got.len(), all.len());
    assert_eq!(got, all, "map content != union of owned extents");
    assert_eq!(map.len(), all.len());
    let flat: Vec<(u64, u64, u32)> = map
        .leaves()
        .flatten()
        .map(|e| (e.start, e.len, e.value.owner))
        .collect();
    assert_eq!(flat, all);
    for &(s, l, o) in &all {
        let e = map.lookup(s + l - 1).unwrap();
        assert_eq!((e.start, e.len, e.value.owner), (s, l, o));
    }
}

#[test]
fn stress_tiny_leaves() {
    stress::<4>(150_000, 1);
}

#[test]
fn stress_default_leaves() {
    stress::<{ slsm_extent::DEFAULT_LEAF_CAP }>(150_000, 2);
}
