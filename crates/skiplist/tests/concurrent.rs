//! Concurrency stress: 4 writers + 2 readers.
#![cfg(not(miri))]

use std::sync::atomic::{AtomicBool, Ordering};

use slsm_skiplist::{InsertHint, Options, SkipList};

fn key(t: u64, i: u64) -> [u8; 16] {
    // Interleave writers' keys; scramble so inserts land everywhere.
    let x = (i.wrapping_mul(0x9E37_79B9_7F4A_7C15)) ^ t;
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&(x >> 8).to_be_bytes()[..8]);
    k[8..].copy_from_slice(&(i * 4 + t).to_be_bytes());
    k
}

#[test]
fn four_writers_two_readers() {
    let list = SkipList::with_options(Options {
        arena_chunk_size: 64 << 10,
        ..Options::default()
    });
    let per = 40_000u64;
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let writers: Vec<_> = (0..4u64)
            .map(|t| {
                let list = &list;
                s.spawn(move || {
                    let mut hint = InsertHint::new();
                    let mut acked = Vec::new();
                    for i in 0..per {
                        let k = key(t, i);
                        // Overlapping keys between writers: writer t also tries writer (t+1)%4's key.
                        let other = key((t + 1) % 4, i);
                        let ok = if i % 2 == 0 {
                            list.insert(&k, &k)
                        } else {
                            list.insert_with_hint(&mut hint, &k, &k)
                        };
                        if ok {
                            acked.push(k);
                        }
                        // Writer (t+1)%4 races for this one: exactly one of them wins.
                        if list.insert(&other, &other) {
                            acked.push(other);
                        }
                    }
                    acked
                })
            })
            .collect();
        for _ in 0..2 {
            let (list, done) = (&list, &done);
            s.spawn(move || {
                let mut rounds = 0;
                while (!done.load(Ordering::Relaxed) || rounds < 2) && rounds < 100_000 {
                    let mut prev: Option<&[u8]> = None;
                    let mut seen: Vec<&[u8]> = Vec::new();
                    for (n, (k, v)) in list.iter().enumerate() {
                        assert_eq!(k, v);
                        if n.is_multiple_of(37) {
                            seen.push(k);
                        }
                        if let Some(p) = prev {
                            assert!(p < k, "order violated");
                        }
                        prev = Some(k);
                    }
                    let mut f = list.finger();
                    for i in (0..1000u64).step_by(7) {
                        let k = key(i % 4, i);
                        if let Some((fk, _)) = f.seek_ge(&k) {
                            assert!(fk >= &k[..]);
                        }
                    }
                    // Entries seen once are found by every later lookup (interleaved and finger
                    // multi_get, during the writes); probe them in reverse with absent keys too.
                    seen.reverse();
                    let mut probes = seen.clone();
                    let absent: Vec<Vec<u8>> = seen.iter().map(|k| [*k, b"!"].concat()).collect();
                    probes.extend(absent.iter().map(|k| &k[..]));
                    for got in [list.multi_get(&probes), list.multi_get_finger(&probes)] {
                        for (i, g) in got.iter().enumerate() {
                            if i < seen.len() {
                                assert_eq!(*g, Some(seen[i]));
                            } else {
                                assert!(g.is_none() || *g == Some(probes[i]));
                            }
                        }
                    }
                    rounds += 1;
                }
            });
        }
        let mut all = Vec::new();
        for w in writers {
            all.extend(w.join().unwrap());
        }
        done.store(true, Ordering::Relaxed);
        assert_eq!(
            all.len(),
            4 * per as usize,
            "every key acknowledged exactly once"
        );
        for k in &all {
            assert_eq!(list.get(k), Some(&k[..]));
        }
        for t in 0..4 {
            for i in 0..per {
                assert!(list.get(&key(t, i)).is_some());
            }
        }
    });
    assert_eq!(list.len(), 4 * per as usize);
    list.check_invariants().unwrap();
}
