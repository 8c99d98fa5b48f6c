//! Deterministic tests, small enough to run under Miri.

mod common;

use std::ops::Bound;
use std::sync::Arc;

use common::{ikey, pairs, InternalOrder};
use slsm_skiplist::{InsertHint, Options, SkipList};

fn small() -> Options {
    Options {
        arena_chunk_size: 256,
        max_height: 6,
        branching: 2,
    }
}

#[test]
fn internal_keys_find_newest_visible_version() {
    let list = SkipList::with_order(InternalOrder, small());
    // User keys: shorter than 8 bytes, equal 8-byte prefixes, 0x00/0xFF bytes.
    let users: Vec<&[u8]> = vec![
        b"",
        b"a",
        b"a\x00",
        b"a\xff",
        b"abcdefgh",
        b"abcdefgh\x00",
        b"abcdefghi",
        b"abcdefgi",
        b"\xff\xff\xff\xff\xff\xff\xff\xff",
        b"\xff\xff\xff\xff\xff\xff\xff\xff\xff",
        b"\x00",
        b"\x00\x00\x00\x00\x00\x00\x00\x00\x01",
    ];
    let seqs = [1u64, 5, 9, 0xFF, 0x100, u64::MAX - 1];
    for u in &users {
        for s in seqs {
            let v = format!("{u:?}@{s}");
            assert!(list.insert(&ikey(u, s), v.as_bytes()));
        }
        assert!(!list.insert(&ikey(u, 5), b"dup"));
    }
    list.check_invariants().unwrap();
    for u in &users {
        for (snap, want) in [
            (0u64, None),
            (1, Some(1u64)),
            (4, Some(1)),
            (5, Some(5)),
            (8, Some(5)),
            (0x1FF, Some(0x100)),
            (u64::MAX, Some(u64::MAX - 1)),
        ] {
            // lower_bound(user ++ snap) = newest version with seq <= snap, if it is this user key.
            let got = list
                .lower_bound(&ikey(u, snap))
                .filter(|(k, _)| &k[..k.len() - 8] == *u)
                .map(|(k, v)| {
                    let seq = u64::from_be_bytes(k[k.len() - 8..].try_into().unwrap());
                    assert_eq!(v, format!("{u:?}@{seq}").as_bytes());
                    seq
                });
            assert_eq!(got, want, "user {u:?} snapshot {snap}");
            let mut f = list.finger();
            assert_eq!(f.seek_ge(&ikey(u, snap)), list.lower_bound(&ikey(u, snap)));
        }
    }
    // Full order: user keys ascending, seqs descending.
    let keys: Vec<Vec<u8>> = list.iter().map(|(k, _)| k.to_vec()).collect();
    let mut users_sorted = users.clone();
    users_sorted.sort();
    let mut want = Vec::new();
    for u in users_sorted {
        for s in seqs.iter().rev() {
            want.push(ikey(u, *s));
        }
    }
    assert_eq!(keys, want);
}

#[test]
fn values_larger_than_a_chunk() {
    let list = SkipList::with_options(small());
    let big: Vec<u8> = (0..5000u32).map(|i| i as u8).collect();
    for i in 0..20u8 {
        let mut v = big.clone();
        v[0] = i;
        assert!(list.insert(&[i], &v));
        assert!(list.insert(&[i, 1], b"x"));
    }
    assert!(list.insert(&vec![7u8; 3000], b"big key"));
    for i in 0..20u8 {
        let v = list.get(&[i]).unwrap();
        assert_eq!(v.len(), 5000);
        assert_eq!(v[0], i);
        assert_eq!(&v[1..], &big[1..]);
        assert_eq!(list.get(&[i, 1]), Some(&b"x"[..]));
    }
    assert_eq!(list.get(&vec![7u8; 3000]), Some(&b"big key"[..]));
    assert!(list.memory_usage() >= 20 * 5000);
    list.check_invariants().unwrap();
}

#[test]
fn empty_keys_and_values() {
    let list = SkipList::new();
    assert!(list.is_empty());
    assert_eq!(list.lower_bound(b""), None);
    assert!(list.insert(b"", b""));
    assert!(!list.insert(b"", b"other"));
    assert_eq!(list.get(b""), Some(&b""[..]));
    assert!(list.insert(b"\x00", b"z"));
    assert_eq!(list.lower_bound(b""), Some((&b""[..], &b""[..])));
    assert_eq!(list.len(), 2);
    assert!(!list.is_empty());
}

#[test]
fn duplicate_insert_keeps_old_value() {
    let list = SkipList::with_options(small());
    let mut hint = InsertHint::new();
    for i in 0..50u32 {
        assert!(list.insert(&i.to_be_bytes(), b"old"));
    }
    for i in 0..50u32 {
        assert!(!list.insert(&i.to_be_bytes(), b"new"));
        assert!(!list.insert_with_hint(&mut hint, &i.to_be_bytes(), b"new"));
        assert_eq!(list.try_insert(&i.to_be_bytes(), b"new"), Ok(false));
    }
    assert_eq!(list.len(), 50);
    assert!(list.iter().all(|(_, v)| v == b"old"));
}

#[test]
fn hint_ascending_descending_random_and_reused_across_lists() {
    let n = if cfg!(miri) { 60 } else { 3000 };
    let mut orders: Vec<Vec<u32>> = vec![(0..n).collect(), (0..n).rev().collect()];
    let mut x = 12345u32;
    orders.push(
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                x % (n * 2)
            })
            .collect(),
    );
    let mut hint = InsertHint::new();
    for keys in orders {
        // The same hint moves from list to list.
        let list = SkipList::with_options(small());
        let mut model = std::collections::BTreeSet::new();
        for k in keys {
            assert_eq!(
                list.insert_with_hint(&mut hint, &k.to_be_bytes(), b"v"),
                model.insert(k)
            );
        }
        list.check_invariants().unwrap();
        let got: Vec<u32> = list
            .iter()
            .map(|(k, _)| u32::from_be_bytes(k.try_into().unwrap()))
            .collect();
        assert_eq!(got, model.into_iter().collect::<Vec<_>>());
    }
}

#[test]
fn range_syntax_and_double_ended() {
    let list = SkipList::with_options(small());
    for i in 0..20u8 {
        list.insert(&[i], &[i]);
    }
    let a: &[u8] = &[5];
    let b: &[u8] = &[9];
    let keys = |it: slsm_skiplist::Iter<'_, _>| it.map(|(k, _)| k[0]).collect::<Vec<_>>();
    assert_eq!(keys(list.range(a..b)), vec![5, 6, 7, 8]);
    assert_eq!(keys(list.range(a..=b)), vec![5, 6, 7, 8, 9]);
    assert_eq!(keys(list.range(..a)), vec![0, 1, 2, 3, 4]);
    assert_eq!(keys(list.range(..=a)), vec![0, 1, 2, 3, 4, 5]);
    assert_eq!(list.range(a..).count(), 15);
    assert_eq!(list.range(..).count(), 20);
    assert_eq!(
        keys(list.range((Bound::Excluded(a), Bound::Excluded(b)))),
        vec![6, 7, 8]
    );
    assert_eq!(keys(list.range(b..a)), Vec::<u8>::new());
    let mut it = list.range(a..=b);
    assert_eq!(it.next().unwrap().0, &[5]);
    assert_eq!(it.next_back().unwrap().0, &[9]);
    assert_eq!(it.next_back().unwrap().0, &[8]);
    assert_eq!(it.next().unwrap().0, &[6]);
    assert_eq!(it.next().unwrap().0, &[7]);
    assert_eq!(it.next(), None);
    assert_eq!(it.next_back(), None);
    // Cursor moves inside the range.
    let mut c = list.range(a..b);
    c.seek_to_last();
    assert_eq!(c.key(), &[8]);
    c.move_next();
    assert!(!c.valid());
    c.seek(&[0]);
    assert_eq!(c.key(), &[5]);
    c.move_prev();
    assert!(!c.valid());
    c.seek_for_prev(&[200]);
    assert_eq!(c.key(), &[8]);
    assert_eq!(c.value(), &[8]);
    // Repositioning restarts iteration.
    c.seek(&[7]);
    assert_eq!(pairs(c).len(), 2);
}

#[test]
fn owned_iter_outlives_borrow() {
    let list = Arc::new(SkipList::with_options(small()));
    for i in 0..10u8 {
        list.insert(&[i], &[i * 2]);
    }
    let mut it = list.owned_iter();
    drop(list);
    let mut n = 0;
    while it.valid() {
        assert_eq!(it.value()[0], it.key()[0] * 2);
        it.move_next();
        n += 1;
    }
    assert_eq!(n, 10);
    it.seek_to_last();
    assert_eq!(it.key(), &[9]);
    it.move_prev();
    assert_eq!(it.key(), &[8]);
    it.seek_for_prev(&[3, 1]);
    assert_eq!(it.key(), &[3]);
    let l = Arc::clone(it.list());
    let mut r = l.owned_range(&[2u8][..]..&[4u8][..]);
    r.seek_to_first();
    assert_eq!(r.key(), &[2]);
    r.seek_to_last();
    assert_eq!(r.key(), &[3]);
}

#[test]
fn multi_get_duplicates_and_caller_order() {
    let list = SkipList::with_options(small());
    for i in (0..200u32).step_by(2) {
        list.insert(&i.to_be_bytes(), &i.to_le_bytes());
    }
    let ks: Vec<[u8; 4]> = [10u32, 3, 10, 10, 0, 198, 199, 500, 4, 4, 3]
        .iter()
        .map(|k| k.to_be_bytes())
        .collect();
    let refs: Vec<&[u8]> = ks.iter().map(|k| &k[..]).collect();
    let got = list.multi_get(&refs);
    let want: Vec<Option<[u8; 4]>> = [10u32, 3, 10, 10, 0, 198, 199, 500, 4, 4, 3]
        .iter()
        .map(|&k| (k % 2 == 0 && k < 200).then(|| k.to_le_bytes()))
        .collect();
    assert_eq!(
        got,
        want.iter()
            .map(|w| w.as_ref().map(|a| &a[..]))
            .collect::<Vec<_>>()
    );
    assert_eq!(list.multi_get_independent(&refs), got);
    assert_eq!(list.multi_get_finger(&refs), got);
    // More keys than interleaved lanes, with duplicates, absent keys and reverse order.
    let many: Vec<[u8; 4]> = (0..300u32).rev().map(|k| (k % 211).to_be_bytes()).collect();
    let many_refs: Vec<&[u8]> = many.iter().map(|k| &k[..]).collect();
    let many_got = list.multi_get(&many_refs);
    assert_eq!(many_got, list.multi_get_independent(&many_refs));
    assert_eq!(many_got, list.multi_get_finger(&many_refs));
    assert_eq!(list.multi_get(&[]), Vec::<Option<&[u8]>>::new());
    // Lower bounds in lockstep: present keys, keys between entries, past the end.
    let each: Vec<_> = many_refs.iter().map(|k| list.lower_bound(k)).collect();
    assert_eq!(list.lower_bounds(&many_refs), each);
    assert_eq!(
        list.lower_bounds(&refs[..1]),
        vec![list.lower_bound(refs[0])]
    );
    assert_eq!(list.lower_bounds(&[&500u32.to_be_bytes()[..]]), vec![None]);
    assert!(list.lower_bounds(&[]).is_empty());
    // Finger with equal keys and keys going backwards.
    let mut f = list.finger();
    for k in [5u32, 5, 5, 4, 100, 3, 199, 199, 0, 1000] {
        let kb = k.to_be_bytes();
        assert_eq!(f.seek_ge(&kb), list.lower_bound(&kb), "{k}");
    }
    f.reset();
    assert_eq!(f.seek_ge(&[0]).unwrap().0, &0u32.to_be_bytes());
}

#[test]
fn lower_bounds_across_lists_answer_as_each_list_does() {
    // Lists of different sizes (one empty), more searches than lanes when
    // not under Miri, keys present, between entries and past the end.
    let sizes: &[u32] = if cfg!(miri) {
        &[0, 3, 40]
    } else {
        &[0, 3, 40, 500]
    };
    let lists: Vec<SkipList> = sizes
        .iter()
        .map(|&n| {
            let list = SkipList::with_options(small());
            for i in 0..n {
                list.insert(&(i * 3).to_be_bytes(), &i.to_le_bytes());
            }
            list
        })
        .collect();
    let keys: Vec<[u8; 4]> = (0..if cfg!(miri) { 12u32 } else { 90 })
        .map(|k| (k * 7 % 130).to_be_bytes())
        .collect();
    let searches: Vec<(&SkipList, &[u8])> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| (&lists[i % lists.len()], &k[..]))
        .collect();
    let each: Vec<_> = searches.iter().map(|(l, k)| l.lower_bound(k)).collect();
    assert_eq!(SkipList::lower_bounds_across(&searches), each);
    assert_eq!(SkipList::lower_bounds_across(&searches[..1]), each[..1]);
    assert!(SkipList::<slsm_skiplist::Bytewise>::lower_bounds_across(&[]).is_empty());
    // The same searches stepped: a step never finishes more than every
    // search, and a search of a list of 500 takes more than one step.
    let mut stepped = slsm_skiplist::LowerBounds::new(searches.iter().copied());
    let mut steps = 0;
    while !stepped.step() {
        steps += 1;
    }
    assert!(steps > 1, "{steps} steps");
    assert!(stepped.step(), "finished searches stay finished");
    assert_eq!(stepped.finish(), each);
    assert!(
        slsm_skiplist::LowerBounds::<slsm_skiplist::Bytewise>::new([])
            .finish()
            .is_empty()
    );
}

#[test]
fn seek_all_positions_every_cursor_like_seek() {
    // Lists of different heights and sizes (one empty, one ranged), more
    // lists than one lockstep group when not under Miri.
    let count = if cfg!(miri) { 5 } else { 40 };
    let lists: Vec<Arc<SkipList>> = (0..count)
        .map(|i| {
            let list = Arc::new(SkipList::with_options(small()));
            for k in (0..(i * 7) % 50).map(|j| j * (i + 1)) {
                list.insert(&(k as u32).to_be_bytes(), b"v");
            }
            list
        })
        .collect();
    let lo = 20u32.to_be_bytes();
    let hi = 90u32.to_be_bytes();
    let cursor = |i: usize, list: &Arc<SkipList>| {
        if i == 3 {
            list.owned_range(&lo[..]..&hi[..])
        } else {
            list.owned_iter()
        }
    };
    for probe in [0u32, 1, 19, 20, 21, 77, 89, 90, 200, u32::MAX] {
        let probe = probe.to_be_bytes();
        let mut together: Vec<_> = lists
            .iter()
            .enumerate()
            .map(|(i, l)| cursor(i, l))
            .collect();
        let mut refs: Vec<_> = together.iter_mut().collect();
        slsm_skiplist::OwnedIter::seek_all(&mut refs, &probe);
        for (i, list) in lists.iter().enumerate() {
            let mut alone = cursor(i, list);
            alone.seek(&probe);
            assert_eq!(
                together[i].entry(),
                alone.entry(),
                "list {i}, probe {probe:?}"
            );
        }
    }
    // A ranged cursor seeked below its range lands on the range's start.
    let mut ranged = [cursor(3, &lists[3])];
    slsm_skiplist::OwnedIter::seek_all(&mut ranged.iter_mut().collect::<Vec<_>>(), &[0]);
    assert_eq!(ranged[0].key(), 20u32.to_be_bytes());
}

#[test]
fn send_sync() {
    fn is_send_sync<T: Send + Sync>() {}
    fn is_send<T: Send>() {}
    is_send_sync::<SkipList>();
    is_send_sync::<SkipList<InternalOrder>>();
    is_send_sync::<slsm_skiplist::Iter<'static, slsm_skiplist::Bytewise>>();
    is_send_sync::<slsm_skiplist::OwnedIter<slsm_skiplist::Bytewise>>();
    is_send::<InsertHint>();
    is_send::<slsm_skiplist::Finger<'static, slsm_skiplist::Bytewise>>();
}

#[test]
fn small_concurrent_miri_sized() {
    let list = SkipList::with_options(small());
    let per = if cfg!(miri) { 15u32 } else { 500 };
    std::thread::scope(|s| {
        for t in 0..3u32 {
            let list = &list;
            s.spawn(move || {
                let mut hint = InsertHint::new();
                for i in 0..per {
                    let k = (i * 3 + t).to_be_bytes();
                    assert!(list.insert_with_hint(&mut hint, &k, &k));
                    assert!(!list.insert(&(i * 3 + t).to_be_bytes(), b"dup"));
                }
            });
        }
        s.spawn(|| {
            for _ in 0..5 {
                let v: Vec<_> = list.iter().map(|(k, _)| k.to_vec()).collect();
                assert!(v.windows(2).all(|w| w[0] < w[1]));
            }
        });
    });
    list.check_invariants().unwrap();
    assert_eq!(list.len(), 3 * per as usize);
    for i in 0..3 * per {
        assert_eq!(list.get(&i.to_be_bytes()), Some(&i.to_be_bytes()[..]));
    }
}
