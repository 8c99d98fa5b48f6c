//! Property tests against a sorted-vector model, for bytewise and internal-key orders.
#![cfg(not(miri))]

mod common;

use common::{check_all, ikey, InternalOrder, Model, SharedPrefixOrder};
use proptest::prelude::*;
use std::collections::BTreeSet;
use std::sync::Arc;

use slsm_skiplist::{Bytewise, InsertHint, KeyOrder, Options, OwnedIter, SkipList};

/// Keys that stress the 8-byte prefix.
fn key_strategy() -> impl Strategy<Value = Vec<u8>> {
    let special = prop::sample::select(vec![0x00u8, 0x01, 0x7F, 0x80, 0xFE, 0xFF, b'a']);
    prop_oneof![
        Just(Vec::new()),
        prop::collection::vec(special.clone(), 0..8),
        prop::collection::vec(special.clone(), 0..12).prop_map(|t| {
            let mut k = b"abcdefgh".to_vec();
            k.extend(t);
            k
        }),
        prop::collection::vec(special.clone(), 8..12).prop_map(|mut k| {
            k[..7].copy_from_slice(&[0xFF; 7]);
            k
        }),
        prop::collection::vec(special, 0..4).prop_map(|t| {
            let mut k = vec![0x42u8; 100];
            k.extend(t);
            k
        }),
        prop::collection::vec(any::<u8>(), 0..20),
    ]
}

fn small_opts() -> impl Strategy<Value = Options> {
    (
        prop::sample::select(vec![256usize, 1024, 1 << 16]),
        1usize..14,
        prop::sample::select(vec![2u32, 4]),
    )
        .prop_map(|(c, h, b)| Options {
            arena_chunk_size: c,
            max_height: h,
            branching: b,
        })
}

fn run<O: KeyOrder>(
    list: SkipList<O>,
    entries: Vec<(Vec<u8>, Vec<u8>, u8)>,
    probes: Vec<Vec<u8>>,
    pattern: Vec<bool>,
) {
    let order = list.order();
    let mut model = Model::new(order);
    let mut hint = InsertHint::new();
    let half = entries.len() / 2;
    for (i, (k, v, mode)) in entries.iter().enumerate() {
        let got = match mode % 3 {
            0 => list.insert(k, v),
            1 => list.insert_with_hint(&mut hint, k, v),
            _ => list.try_insert(k, v).unwrap(),
        };
        assert_eq!(got, model.insert(k, v), "insert {k:?}");
        if i == half {
            check_all(&list, &model, &probes, &pattern);
        }
    }
    // Probes also include every stored key.
    let mut all = probes;
    all.extend(entries.iter().step_by(3).map(|e| e.0.clone()));
    check_all(&list, &model, &all, &pattern);
}

/// A list, its keys, and the range its cursors are created with.
type ModelList = (
    Arc<SkipList<Bytewise>>,
    BTreeSet<Vec<u8>>,
    Option<(Vec<u8>, Vec<u8>)>,
);

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn bytewise_matches_model(
        opts in small_opts(),
        entries in prop::collection::vec((key_strategy(), prop::collection::vec(any::<u8>(), 0..40), any::<u8>()), 0..160),
        probes in prop::collection::vec(key_strategy(), 1..24),
        pattern in prop::collection::vec(any::<bool>(), 1..6),
    ) {
        run(SkipList::with_order(Bytewise, opts), entries, probes, pattern);
    }

    #[test]
    fn internal_order_matches_model(
        opts in small_opts(),
        entries in prop::collection::vec(
            (key_strategy(), prop::sample::select(vec![0u64, 1, 2, 7, 100, 255, 256, u64::MAX]), prop::collection::vec(any::<u8>(), 0..12), any::<u8>()),
            0..160),
        probes in prop::collection::vec((key_strategy(), prop::sample::select(vec![0u64, 1, 3, 7, 99, 100, 300, u64::MAX])), 1..24),
        pattern in prop::collection::vec(any::<bool>(), 1..6),
    ) {
        let entries = entries.into_iter().map(|(u, s, v, m)| (ikey(&u, s), v, m)).collect();
        let probes = probes.into_iter().map(|(u, s)| ikey(&u, s)).collect();
        run(SkipList::with_order(InternalOrder, opts), entries, probes, pattern);
    }

    /// A node prefix taken past a shared prefix answers as the default one:
    /// keys with the shared prefix, without it, and ties on 0 and `u64::MAX`.
    #[test]
    fn shared_prefix_order_matches_model(
        opts in small_opts(),
        shared in prop::sample::select(vec![Vec::new(), b"abcdefgh".to_vec(), vec![0x42u8; 100], vec![0xFF; 3], vec![0x00]]),
        entries in prop::collection::vec(
            (key_strategy(), prop::sample::select(vec![0u64, 1, 7, 255, u64::MAX]), prop::collection::vec(any::<u8>(), 0..12), any::<u8>()),
            0..160),
        probes in prop::collection::vec((key_strategy(), prop::sample::select(vec![0u64, 1, 3, 300, u64::MAX])), 1..24),
        pattern in prop::collection::vec(any::<bool>(), 1..6),
    ) {
        let entries = entries.into_iter().map(|(u, s, v, m)| (ikey(&u, s), v, m)).collect();
        let probes = probes.into_iter().map(|(u, s)| ikey(&u, s)).collect();
        run(SkipList::with_order(SharedPrefixOrder { shared }, opts), entries, probes, pattern);
    }

    /// `OwnedIter::seek_all` over many lists (some ranged) lands every
    /// cursor where its own `seek` would, and that is the model's answer.
    #[test]
    fn seek_all_matches_each_seek(
        lists in prop::collection::vec(
            (prop::collection::vec(key_strategy(), 0..60), small_opts(), prop::option::of((key_strategy(), key_strategy()))),
            0..40),
        probes in prop::collection::vec(key_strategy(), 1..12),
    ) {
        let built: Vec<ModelList> = lists
            .into_iter()
            .map(|(keys, opts, range)| {
                let list = Arc::new(SkipList::with_order(Bytewise, opts));
                for k in &keys {
                    list.insert(k, b"v");
                }
                (list, keys.into_iter().collect(), range)
            })
            .collect();
        let cursor = |(list, _, range): &ModelList| match range {
            Some((lo, hi)) => list.owned_range(lo.as_slice()..hi.as_slice()),
            None => list.owned_iter(),
        };
        for probe in &probes {
            let mut together: Vec<_> = built.iter().map(cursor).collect();
            let mut refs: Vec<_> = together.iter_mut().collect();
            OwnedIter::seek_all(&mut refs, probe);
            for (i, b) in built.iter().enumerate() {
                let mut alone = cursor(b);
                alone.seek(probe);
                let (_, model, range) = b;
                let want = model
                    .range(probe.clone()..)
                    .find(|k| range.as_ref().is_none_or(|(lo, _)| *k >= lo))
                    .filter(|k| range.as_ref().is_none_or(|(_, hi)| *k < hi));
                prop_assert_eq!(together[i].entry().map(|e| e.0), alone.entry().map(|e| e.0));
                prop_assert_eq!(together[i].entry().map(|e| e.0.to_vec()), want.cloned());
            }
        }
    }

    #[test]
    fn hint_any_order(keys in prop::collection::vec(any::<u32>(), 0..300), mode in 0u8..3) {
        let mut keys = keys;
        match mode {
            0 => keys.sort(),
            1 => { keys.sort(); keys.reverse(); }
            _ => {}
        }
        let list = SkipList::with_options(Options { arena_chunk_size: 512, ..Options::default() });
        let mut model = std::collections::BTreeMap::new();
        let mut hint = InsertHint::new();
        for k in &keys {
            let kb = k.to_be_bytes();
            let v = k.to_le_bytes();
            prop_assert_eq!(list.insert_with_hint(&mut hint, &kb, &v), model.insert(kb, v).is_none());
        }
        list.check_invariants().unwrap();
        let got: Vec<_> = list.iter().map(|(k, v)| (k.to_vec(), v.to_vec())).collect();
        let want: Vec<_> = model.iter().map(|(k, v)| (k.to_vec(), v.to_vec())).collect();
        prop_assert_eq!(got, want);
    }
}
