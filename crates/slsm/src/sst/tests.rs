//! Round-trip, model-based and corruption tests of the run file.

use std::cmp::Ordering;
use std::path::Path;
use std::sync::Arc;

use proptest::prelude::*;

use super::*;
use crate::bloom::hash_key;
use crate::cache::{BlockSource, Want, PAGE};
use crate::key::{self, Kind};
use crate::sst::iter::READAHEAD_AFTER;

type Model = Vec<(Vec<u8>, Vec<u8>)>;

fn sort_model(mut m: Model) -> Model {
    m.sort_by(|a, b| key::compare(&a.0, &b.0));
    m.dedup_by(|a, b| key::compare(&a.0, &b.0) == Ordering::Equal);
    m
}

fn build(path: &Path, model: &Model, rts: &[RangeTombstone], opts: RunOptions) -> RunProperties {
    let mut b = RunBuilder::create(path, opts).unwrap();
    for (k, v) in model {
        b.add(k, v).unwrap();
    }
    for t in rts {
        b.add_range_tombstone(&t.start, &t.end, t.seq);
    }
    assert_eq!(b.entries(), model.len() as u64);
    assert!(b.estimated_size() > 0);
    b.finish().unwrap()
}

fn lower_bound(model: &Model, lookup: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    let i = model.partition_point(|(k, _)| key::compare(k, lookup) == Ordering::Less);
    model.get(i).cloned()
}

fn last_le(model: &Model, lookup: &[u8]) -> Option<(Vec<u8>, Vec<u8>)> {
    let i = model.partition_point(|(k, _)| key::compare(k, lookup) != Ordering::Greater);
    i.checked_sub(1).map(|i| model[i].clone())
}

fn owned(kv: Option<(&[u8], &[u8])>) -> Option<(Vec<u8>, Vec<u8>)> {
    kv.map(|(k, v)| (k.to_vec(), v.to_vec()))
}

fn found(e: Option<Entry>) -> Option<(Vec<u8>, Vec<u8>)> {
    e.map(|e| (e.key().to_vec(), e.value().to_vec()))
}

fn scan_forward(it: &mut RunIter) -> Model {
    let mut out = Vec::new();
    it.seek_to_first();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    out
}

fn scan_backward(it: &mut RunIter) -> Model {
    let mut out = Vec::new();
    it.seek_to_last();
    while it.valid() {
        out.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    out.reverse();
    out
}

fn expected_props(model: &Model, rts: &[RangeTombstone]) -> (u64, Vec<u8>, Vec<u8>, u64, u64) {
    let tomb = model
        .iter()
        .filter(|(k, _)| key::parse(k).unwrap().kind == Kind::Delete)
        .count();
    let seqs = model
        .iter()
        .map(|(k, _)| key::parse(k).unwrap().seq)
        .chain(rts.iter().map(|t| t.seq));
    let (min_seq, max_seq) = (seqs.clone().min().unwrap_or(0), seqs.max().unwrap_or(0));
    let min = model
        .first()
        .map(|(k, _)| key::user_key(k).to_vec())
        .unwrap_or_default();
    let max = model
        .last()
        .map(|(k, _)| key::user_key(k).to_vec())
        .unwrap_or_default();
    (tomb as u64, min, max, min_seq, max_seq)
}

fn entry_strategy() -> impl Strategy<Value = (Vec<u8>, Vec<u8>)> {
    let user_key = proptest::collection::vec(0u8..4, 0..4);
    let value = prop_oneof![
        8 => proptest::collection::vec(any::<u8>(), 0..24),
        1 => proptest::collection::vec(any::<u8>(), 100..3000),
    ];
    (user_key, 0u64..50, any::<bool>(), value).prop_map(|(uk, seq, del, v)| {
        let kind = if del { Kind::Delete } else { Kind::Value };
        (key::encode(&uk, seq, kind), v)
    })
}

fn rt_strategy() -> impl Strategy<Value = Vec<RangeTombstone>> {
    let rt = (any::<Vec<u8>>(), any::<Vec<u8>>(), 0u64..1000)
        .prop_map(|(start, end, seq)| RangeTombstone { start, end, seq });
    proptest::collection::vec(rt, 0..3)
}

fn lookup_strategy() -> impl Strategy<Value = Vec<Vec<u8>>> {
    let lk = (proptest::collection::vec(0u8..5, 0..5), 0u64..60)
        .prop_map(|(uk, snap)| key::lookup_key(&uk, snap));
    proptest::collection::vec(lk, 0..40)
}

fn check_run(run: &Arc<RunFile>, model: &Model, lookups: &[Vec<u8>]) -> Result<(), TestCaseError> {
    for (k, v) in model {
        prop_assert_eq!(found(run.seek(k).unwrap()), Some((k.clone(), v.clone())));
        let uk = key::user_key(k);
        prop_assert!(run.may_contain_hash(hash_key(uk)) && run.overlaps_user_key(uk));
    }
    let mut sorted: Vec<Vec<u8>> = lookups
        .iter()
        .cloned()
        .chain(model.iter().map(|e| e.0.clone()))
        .collect();
    sorted.sort_by(|a, b| key::compare(a, b));
    let refs: Vec<&[u8]> = sorted.iter().map(|k| k.as_slice()).collect();
    let mut got = Vec::new();
    run.multi_seek(&refs, &mut |i, kv| got.push((i, owned(kv))))
        .unwrap();
    prop_assert_eq!(got.len(), refs.len());
    let mut it = RunIter::new(run.clone());
    for (i, kv) in got {
        prop_assert_eq!(&kv, &lower_bound(model, refs[i]));
        prop_assert_eq!(found(run.seek(refs[i]).unwrap()), kv.clone());
        it.seek(refs[i]);
        prop_assert_eq!(owned(it.valid().then(|| (it.key(), it.value()))), kv);
        it.seek_for_prev(refs[i]);
        let prev = owned(it.valid().then(|| (it.key(), it.value())));
        prop_assert_eq!(prev, last_le(model, refs[i]));
    }
    prop_assert_eq!(&scan_forward(&mut it), model);
    prop_assert_eq!(&scan_backward(&mut it), model);
    it.status().unwrap();
    prop_assert_eq!(run.verify().unwrap(), model.len() as u64);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn round_trip_matches_model(
        entries in proptest::collection::vec(entry_strategy(), 0..150),
        rts in rt_strategy(),
        lookups in lookup_strategy(),
        fence_entries in 1usize..64,
        max_block_bytes in 64usize..2048,
        codec in prop::sample::select(vec![Codec::None, Codec::Lz4, Codec::Zstd(3)]),
        block_align in prop::sample::select(vec![0u64, 512, 4096]),
    ) {
        let model = sort_model(entries);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run");
        let opts = RunOptions { fence_entries, max_block_bytes, bloom_fp_rate: 0.01, codec, block_align, file_number: 3, db_id: [7; 16], write_buffer: 1 << 20 };
        let built = build(&path, &model, &rts, opts);
        let run = Arc::new(RunFile::open(&path).unwrap());
        prop_assert_eq!(run.properties(), &built);
        prop_assert_eq!(run.range_tombstones(), &rts[..]);
        let (tomb, min, max, min_seq, max_seq) = expected_props(&model, &rts);
        let p = run.properties();
        prop_assert_eq!((p.entries, p.tombstones, p.range_tombstones), (model.len() as u64, tomb, rts.len() as u64));
        prop_assert_eq!((&p.min_user_key, &p.max_user_key), (&min, &max));
        prop_assert_eq!((p.min_seq, p.max_seq), (min_seq, max_seq));
        prop_assert_eq!(p.file_size, std::fs::metadata(&path).unwrap().len());
        prop_assert_eq!(run.file_size(), p.file_size);
        check_run(&run, &model, &lookups)?;
    }
}

/// A small model: a few hundred bytes on disk, several blocks.
fn small_model() -> Model {
    let mut m = Vec::new();
    for (i, uk) in [&b"a"[..], b"b", b"bb", b"c", b"d"].iter().enumerate() {
        for seq in [9u64, 4] {
            let kind = if seq == 4 && i % 2 == 0 {
                Kind::Delete
            } else {
                Kind::Value
            };
            m.push((key::encode(uk, seq + i as u64, kind), vec![b'v'; i * 3]));
        }
    }
    sort_model(m)
}

fn small_rts() -> Vec<RangeTombstone> {
    vec![RangeTombstone {
        start: b"b".to_vec(),
        end: b"c".to_vec(),
        seq: 7,
    }]
}

fn small_opts() -> RunOptions {
    RunOptions {
        fence_entries: 3,
        max_block_bytes: 64,
        ..RunOptions::default()
    }
}

fn ok_or_corrupt<T>(r: crate::error::Result<T>) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(e) => {
            assert!(e.is_corruption(), "expected corruption, got {e}");
            None
        }
    }
}

/// Every read of a damaged file either returns exactly the original data or
/// `Error::Corruption`.
fn check_damaged(path: &Path, model: &Model, props: &RunProperties) {
    let Some(run) = ok_or_corrupt(RunFile::open(path)) else {
        return;
    };
    let run = Arc::new(run);
    assert_eq!(run.properties(), props);
    assert_eq!(run.range_tombstones(), &small_rts()[..]);
    if let Some(n) = ok_or_corrupt(run.verify()) {
        assert_eq!(n, model.len() as u64);
    }
    let mut it = RunIter::new(run.clone());
    let fwd = scan_forward(&mut it);
    match ok_or_corrupt(it.status()) {
        Some(()) => assert_eq!(&fwd, model),
        None => assert_eq!(&fwd[..], &model[..fwd.len()]),
    }
    let back = scan_backward(&mut it);
    match ok_or_corrupt(it.status()) {
        Some(()) => assert_eq!(&back, model),
        None => assert_eq!(&back[..], &model[model.len() - back.len()..]),
    }
    for (k, v) in model {
        assert!(run.may_contain_hash(hash_key(key::user_key(k))));
        if let Some(e) = ok_or_corrupt(run.seek(k)) {
            assert_eq!(found(e), Some((k.clone(), v.clone())));
        }
    }
    let refs: Vec<&[u8]> = model.iter().map(|(k, _)| k.as_slice()).collect();
    let mut got = 0;
    let r = run.multi_seek(&refs, &mut |i, kv| {
        assert_eq!(i, got);
        assert_eq!(owned(kv), Some(model[i].clone()));
        got += 1;
    });
    ok_or_corrupt(r);
}

#[test]
fn every_flipped_byte_is_detected_or_harmless() {
    let dir = tempfile::tempdir().unwrap();
    let (model, path) = (small_model(), dir.path().join("run"));
    let props = build(&path, &model, &small_rts(), small_opts());
    let original = std::fs::read(&path).unwrap();
    assert!(
        original.len() < 1024,
        "keep this test small: {}",
        original.len()
    );
    let damaged = dir.path().join("damaged");
    for offset in 0..original.len() {
        for mask in [0x01u8, 0x80, 0xff] {
            let mut bytes = original.clone();
            bytes[offset] ^= mask;
            std::fs::write(&damaged, &bytes).unwrap();
            check_damaged(&damaged, &model, &props);
        }
    }
}

#[test]
fn every_truncation_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let (model, path) = (small_model(), dir.path().join("run"));
    build(&path, &model, &small_rts(), small_opts());
    let original = std::fs::read(&path).unwrap();
    let cut = dir.path().join("cut");
    for len in 0..original.len() {
        std::fs::write(&cut, &original[..len]).unwrap();
        let err = RunFile::open(&cut).unwrap_err();
        assert!(err.is_corruption(), "length {len}: {err}");
    }
    let mut zeroed = original.clone();
    let n = zeroed.len();
    zeroed[n - format::FOOTER_LEN..].fill(0);
    std::fs::write(&cut, &zeroed).unwrap();
    assert!(RunFile::open(&cut).unwrap_err().is_corruption());
}

#[test]
fn out_of_order_and_invalid_adds_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let mut b = RunBuilder::create(&dir.path().join("run"), RunOptions::default()).unwrap();
    b.add(&key::encode(b"b", 5, Kind::Value), b"x").unwrap();
    let bad =
        |r: crate::error::Result<()>| matches!(r, Err(crate::error::Error::InvalidArgument(_)));
    assert!(
        bad(b.add(&key::encode(b"b", 5, Kind::Value), b"x")),
        "duplicate"
    );
    assert!(
        bad(b.add(&key::encode(b"b", 6, Kind::Value), b"x")),
        "newer seq sorts first"
    );
    assert!(
        bad(b.add(&key::encode(b"a", 1, Kind::Value), b"x")),
        "smaller user key"
    );
    assert!(bad(b.add(b"short", b"x")), "not an internal key");
    b.add(&key::encode(b"b", 4, Kind::Delete), b"").unwrap();
    assert_eq!(b.finish().unwrap().entries, 2);
    let bad_opts = RunOptions {
        fence_entries: 0,
        ..Default::default()
    };
    assert!(RunBuilder::create(&dir.path().join("x"), bad_opts).is_err());
    assert!(!dir.path().join("x").exists());
    let again = RunBuilder::create(&dir.path().join("run"), RunOptions::default());
    assert!(
        matches!(again, Err(crate::error::Error::Io { .. })),
        "create_new"
    );
}

#[test]
fn empty_run_is_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run");
    let props = build(&path, &Vec::new(), &small_rts(), RunOptions::default());
    assert_eq!((props.entries, props.min_seq, props.max_seq), (0, 7, 7));
    let run = Arc::new(RunFile::open(&path).unwrap());
    assert_eq!(run.range_tombstones(), &small_rts()[..]);
    assert!(run.seek(&key::lookup_key(b"a", 9)).unwrap().is_none());
    assert!(!run.may_contain_hash(hash_key(b"a")) && !run.overlaps_user_key(b""));
    assert_eq!(run.verify().unwrap(), 0);
    let mut it = RunIter::new(run);
    for f in [RunIter::seek_to_first, RunIter::seek_to_last] {
        f(&mut it);
        assert!(!it.valid());
    }
    it.seek_for_prev(&key::lookup_key(b"z", 0));
    assert!(!it.valid() && it.status().is_ok());
}

#[test]
fn unfinished_builder_removes_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run");
    let mut b = RunBuilder::create(&path, small_opts()).unwrap();
    b.add(&key::encode(b"a", 1, Kind::Value), &[7; 500])
        .unwrap();
    assert!(path.exists());
    drop(b);
    assert!(!path.exists());
}

#[test]
fn obsolete_file_is_deleted_by_the_last_reference() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run");
    build(&path, &small_model(), &[], small_opts());
    let run = Arc::new(RunFile::open(&path).unwrap());
    let mut it = RunIter::new(run.clone());
    run.mark_obsolete();
    drop(run);
    assert!(path.exists());
    it.seek_to_first();
    assert!(it.valid());
    drop(it);
    // Deletion happens on the clean-up thread, finished by `drain`.
    crate::reaper::drain();
    assert!(!path.exists());
}

#[test]
fn an_obsolete_file_s_blocks_leave_the_cache_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let cache = BlockCache::new(8 << 20);
    let (run, model) = many_block_run(dir.path(), 2000, cache.clone());
    let other_dir = tempfile::tempdir().unwrap();
    let (other, _) = many_block_run(other_dir.path(), 2000, cache.clone());
    for (k, _) in model.iter().step_by(5) {
        run.seek(k).unwrap();
        other.seek(k).unwrap();
    }
    let both = cache.stats();
    assert!(both.entries > 40, "{both:?}");
    // Half the entries were the obsolete file's.
    run.mark_obsolete();
    drop(run);
    crate::reaper::drain();
    let left = cache.stats();
    assert_eq!(left.entries * 2, both.entries, "{left:?} of {both:?}");
    assert!(left.usage * 2 <= both.usage + 1024, "{left:?} of {both:?}");
    // The other file's blocks are still there and still answer.
    let hits = cache.stats().hits;
    other.seek(&model[5].0).unwrap();
    assert_eq!(cache.stats().hits, hits + 1);
}

#[test]
fn huge_values_get_their_own_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run");
    let model = sort_model(vec![
        (key::encode(b"a", 1, Kind::Value), vec![1; 10]),
        (key::encode(b"b", 1, Kind::Value), vec![2; 3 << 20]),
        (key::encode(b"c", 1, Kind::Value), vec![3; 10]),
    ]);
    let props = build(
        &path,
        &model,
        &[],
        RunOptions {
            max_block_bytes: 4096,
            ..Default::default()
        },
    );
    let run = RunFile::open(&path).unwrap();
    assert_eq!(run.num_blocks(), 3);
    assert!(props.data_bytes > 3 << 20);
    assert_eq!(
        found(run.seek(&model[1].0).unwrap()),
        Some(model[1].clone())
    );
    assert_eq!(run.verify().unwrap(), 3);
}

#[test]
fn uncompressed_blocks_of_a_page_never_straddle_two() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run");
    let model = sort_model(
        (0..20_000u32)
            .map(|i| {
                let value = vec![b'v'; 90 + (i % 23) as usize];
                (
                    key::encode(format!("key{i:08}").as_bytes(), 1, Kind::Value),
                    value,
                )
            })
            .collect(),
    );
    let props = build(&path, &model, &[], RunOptions::default());
    let run = RunFile::open(&path).unwrap();
    let mut padding = 0;
    let mut end = 0;
    for i in 0..run.num_blocks() {
        let h = run.index().handle(i);
        assert!(h.len <= 4096, "block {i}: {h:?}");
        assert_eq!(
            h.offset / 4096,
            (h.offset + h.len - 1) / 4096,
            "block {i} straddles: {h:?}"
        );
        padding += h.offset - end;
        end = h.offset + h.len;
    }
    assert!(run.num_blocks() > 500);
    // Full blocks: the padding is a small part of the data.
    assert!(
        padding * 20 < props.data_bytes,
        "{padding} of {}",
        props.data_bytes
    );
    assert_eq!(run.verify().unwrap(), model.len() as u64);
    for (k, v) in model.iter().step_by(97) {
        assert_eq!(found(run.seek(k).unwrap()), Some((k.clone(), v.clone())));
    }
}

/// Values like db_bench's: half of each random, half a repeated byte, so
/// that a block compresses to about half.
fn half_compressible_model(n: u32) -> Model {
    sort_model(
        (0..n)
            .map(|i| {
                let mut value: Vec<u8> = (0..50u64)
                    .map(|j| (hash_key(&(u64::from(i) * 64 + j).to_le_bytes()) >> 11) as u8)
                    .collect();
                value.resize(100, b'v');
                (
                    key::encode(format!("key{i:08}").as_bytes(), 1, Kind::Value),
                    value,
                )
            })
            .collect(),
    )
}

#[test]
fn compressed_blocks_are_cut_to_fit_their_page() {
    let dir = tempfile::tempdir().unwrap();
    let model = half_compressible_model(30_000);
    for codec in [Codec::Lz4, Codec::Zstd(3)] {
        let fitted = dir.path().join(format!("fitted-{codec:?}"));
        let loose = dir.path().join(format!("loose-{codec:?}"));
        let opts = RunOptions {
            codec,
            ..RunOptions::default()
        };
        let props = build(&fitted, &model, &[], opts.clone());
        let loose_props = build(
            &loose,
            &model,
            &[],
            RunOptions {
                block_align: 0,
                ..opts
            },
        );
        let run = RunFile::open(&fitted).unwrap();
        let (mut straddling, mut padding, mut end) = (0, 0, 0);
        for i in 0..run.num_blocks() {
            let h = run.index().handle(i);
            if h.offset / 4096 != (h.offset + h.len - 1) / 4096 {
                straddling += 1;
            }
            padding += h.offset - end;
            end = h.offset + h.len;
        }
        let blocks = run.num_blocks() as u64;
        assert!(blocks > 500, "{codec:?}: {blocks} blocks");
        // Cut at a fixed size about half of these blocks would straddle.
        assert!(
            straddling * 20 < blocks,
            "{codec:?}: {straddling} of {blocks} straddle"
        );
        // Most pages hold two blocks: little is padded, and the file is
        // hardly larger than one with no alignment at all.
        assert!(
            padding * 10 < props.data_bytes,
            "{codec:?}: {padding} of {}",
            props.data_bytes
        );
        assert!(
            props.file_size * 100 < loose_props.file_size * 112,
            "{codec:?}: {} against {}",
            props.file_size,
            loose_props.file_size
        );
        assert_eq!(run.verify().unwrap(), model.len() as u64);
        for (k, v) in model.iter().step_by(89) {
            assert_eq!(found(run.seek(k).unwrap()), Some((k.clone(), v.clone())));
        }
    }
}

/// A run of `n` entries with 100-byte values, in blocks of about 1 KiB.
fn many_block_run(dir: &Path, n: u64, cache: Arc<BlockCache>) -> (Arc<RunFile>, Model) {
    let path = dir.join("run");
    let model: Model = (0..n)
        .map(|i| {
            (
                key::encode(&i.to_be_bytes(), 1, Kind::Value),
                vec![b'v'; 100],
            )
        })
        .collect();
    let opts = RunOptions {
        max_block_bytes: 1024,
        ..RunOptions::default()
    };
    build(&path, &model, &[], opts);
    let run = RunFile::open_in(crate::fs::std_fs(), &path, cache).unwrap();
    (Arc::new(run), model)
}

#[test]
fn a_cached_block_gets_its_search_index_when_it_is_reused() {
    let dir = tempfile::tempdir().unwrap();
    let cache = BlockCache::new(8 << 20);
    let (run, model) = many_block_run(dir.path(), 2000, cache.clone());
    let charged = |cache: &BlockCache| cache.stats().usage;
    // Read once: cached, charged for the index it may get, not indexed.
    let first = run.block(3, Want::Lookup).unwrap().unwrap();
    assert!(!first.is_indexed(), "indexed on its first read");
    let usage = charged(&cache);
    // Asked for again: indexed, and the charge does not change.
    let again = run.block(3, Want::Lookup).unwrap().unwrap();
    assert!(again.is_indexed(), "not indexed when reused");
    assert_eq!(charged(&cache), usage);
    // Fetched ahead of a batch: its first search is not a reuse.
    run.block(7, Want::Ahead).unwrap();
    assert!(
        !run.block(7, Want::Lookup).unwrap().unwrap().is_indexed(),
        "a fetch counted as a use"
    );
    assert!(run.block(7, Want::Lookup).unwrap().unwrap().is_indexed());
    // Lookups answer the same either way.
    for (k, v) in model.iter().step_by(7) {
        assert_eq!(found(run.seek(k).unwrap()), Some((k.clone(), v.clone())));
    }
}

#[test]
fn a_warmed_block_is_searched_by_its_index_from_its_first_use() {
    let dir = tempfile::tempdir().unwrap();
    let cache = BlockCache::new(8 << 20);
    let (run, model) = many_block_run(dir.path(), 2000, cache.clone());
    // A flush's warming: the new file into the cache's free room.
    crate::cache::warm_after(&*run, Vec::new());
    assert!(cache.stats().entries > 3, "nothing warmed");
    let charged = cache.stats().usage;
    let warmed = run.block(3, Want::Lookup).unwrap().unwrap();
    assert!(
        warmed.is_indexed(),
        "a warmed block searched without its index"
    );
    assert_eq!(cache.stats().usage, charged, "the index charged twice");
    for (k, v) in model.iter().step_by(7) {
        assert_eq!(found(run.seek(k).unwrap()), Some((k.clone(), v.clone())));
    }
}

/// The room a cache gains is filled with the blocks it lacks, in key
/// order, up to the room: blocks already cached stay, nothing is evicted,
/// and lookups find what was warmed.
#[test]
fn new_room_in_the_cache_is_warmed_without_evicting() {
    let dir = tempfile::tempdir().unwrap();
    let cache = BlockCache::new(64 << 10);
    let (run, model) = many_block_run(dir.path(), 2000, cache.clone());
    let blocks = run.num_blocks();
    assert!(blocks > 60, "{blocks} blocks");
    let looked_up = &model[1500];
    assert_eq!(
        found(run.seek(&looked_up.0).unwrap()),
        Some(looked_up.clone())
    );
    let before = run.cached_blocks();
    assert_eq!(before.len(), 1);
    // No room: nothing happens.
    crate::cache::warm_room(std::slice::from_ref(&run));
    assert_eq!(run.cached_blocks(), before);
    // Room for about half of the blocks.
    cache.set_capacity((blocks / 2) * (PAGE + 128));
    crate::cache::warm_room(std::slice::from_ref(&run));
    let warmed = run.cached_blocks();
    assert!(warmed.contains(&before[0]), "a cached block was evicted");
    assert!(
        warmed.len() > blocks / 2 - 40 && warmed.len() <= blocks / 2 + 1,
        "{} of {blocks} blocks warmed",
        warmed.len()
    );
    assert!(
        warmed.contains(&0),
        "key order: the first block comes first"
    );
    let stats = cache.stats();
    assert!(stats.usage <= stats.capacity, "{stats:?}");
    let misses = stats.misses;
    for (k, v) in model.iter().take(200) {
        assert_eq!(found(run.seek(k).unwrap()), Some((k.clone(), v.clone())));
    }
    assert_eq!(
        cache.stats().misses,
        misses,
        "the first keys' blocks were warmed"
    );
}

#[test]
fn a_scan_reads_ahead_and_leaves_the_cache_to_lookups() {
    let dir = tempfile::tempdir().unwrap();
    let cache = BlockCache::new(8 << 20);
    let (run, model) = many_block_run(dir.path(), 2000, cache.clone());
    assert!(run.num_blocks() > 100, "{} blocks", run.num_blocks());
    // A lookup caches the block it reads; the scan then takes that block
    // from the cache instead of reading it again.
    let looked_up = &model[1000].0;
    assert_eq!(
        found(run.seek(looked_up).unwrap()),
        Some(model[1000].clone())
    );
    let hits_before = cache.stats().hits;
    let mut it = RunIter::new(run.clone());
    assert_eq!(scan_forward(&mut it), model);
    it.status().unwrap();
    let stats = cache.stats();
    // Cached: the looked-up block and the blocks the scan entered before it
    // was seen scanning; not the other hundreds.
    assert_eq!(stats.entries, 1 + READAHEAD_AFTER as u64);
    assert!(stats.hits > hits_before, "the cached block was not used");
    // A seek and a few steps (into the next block, perhaps) stay in the
    // cache's hands: no readahead.
    it.seek(&model[1500].0);
    for _ in 0..5 {
        assert!(it.valid());
        it.next();
    }
    let entries = cache.stats().entries - stats.entries;
    assert!(
        (1..=2).contains(&entries),
        "{entries} blocks cached by a short scan"
    );
    // Backward over the whole run, then forward again from the middle:
    // every entry in order, whatever mixture of cache and readahead.
    assert!(scan_backward(&mut it) == model, "backward scan differs");
    it.seek(&model[700].0);
    let mut rest = Vec::new();
    while it.valid() {
        rest.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    assert_eq!(rest, model[700..]);
}

#[test]
fn readahead_stays_within_the_cache_s_allowance() {
    let dir = tempfile::tempdir().unwrap();
    let cache = BlockCache::new(8 << 20);
    let limit = 64 << 10;
    cache.readahead().set_limit(limit);
    let (run, model) = many_block_run(dir.path(), 4000, cache.clone());
    // Four scans in step: their windows grow until the allowance is spent,
    // then the latecomers read block by block.
    let mut scans: Vec<RunIter> = (0..4).map(|_| RunIter::new(run.clone())).collect();
    let mut got = vec![Model::new(); scans.len()];
    scans.iter_mut().for_each(RunIter::seek_to_first);
    let mut most_held = 0;
    while scans.iter().any(RunIter::valid) {
        for (it, out) in scans.iter_mut().zip(&mut got) {
            if it.valid() {
                out.push((it.key().to_vec(), it.value().to_vec()));
                it.next();
            }
        }
        let held = cache.stats().readahead;
        assert!(held <= limit as u64, "{held} bytes of readahead");
        most_held = most_held.max(held);
    }
    assert!(
        most_held > (limit / 2) as u64,
        "readahead never used the allowance"
    );
    for (it, out) in scans.iter().zip(&got) {
        it.status().unwrap();
        assert!(*out == model, "a scan differs from the run");
    }
    assert_eq!(
        cache.stats().readahead,
        0,
        "finished scans keep their allowance"
    );
}

#[test]
fn a_merge_input_leaves_the_page_cache_alone_unless_it_cannot_hold_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let (_, model) = many_block_run(dir.path(), 20_000, BlockCache::new(1 << 20));
    let fs = crate::fs::FaultFs::wrap(crate::fs::std_fs(), 1);
    let path = dir.path().join("run");
    for bypass in [false, true] {
        let cache = BlockCache::new(1 << 20);
        cache.set_bypass_os_cache(bypass);
        let run = Arc::new(RunFile::open_in(fs.as_dyn(), &path, cache).unwrap());
        let before = fs.dropped_ranges();
        let mut it = RunIter::sequential(run);
        assert!(scan_forward(&mut it) == model, "the merge input differs");
        let dropped = fs.dropped_ranges() - before;
        // Lookups still read the input until the merge is done: its pages
        // go only where the page cache cannot keep the files anyway.
        assert_eq!(
            dropped > 0,
            bypass,
            "{dropped} ranges dropped, bypass {bypass}"
        );
    }
}

#[test]
fn a_block_damaged_past_the_readahead_point_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let (run, model) = many_block_run(dir.path(), 2000, BlockCache::new(8 << 20));
    let victim = run.index().handle(60);
    drop(run);
    let path = dir.path().join("run");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[(victim.offset + victim.len / 2) as usize] ^= 0x40;
    std::fs::write(&path, &bytes).unwrap();
    let run = Arc::new(RunFile::open(&path).unwrap());
    let mut it = RunIter::new(run);
    let got = scan_forward(&mut it);
    assert!(it.status().unwrap_err().is_corruption());
    assert!(got.len() < model.len() && got[..] == model[..got.len()]);
}

#[test]
fn multi_seek_tolerates_unsorted_lookups() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run");
    let model = small_model();
    build(&path, &model, &[], small_opts());
    let run = RunFile::open(&path).unwrap();
    let refs: Vec<&[u8]> = model.iter().rev().map(|(k, _)| k.as_slice()).collect();
    let mut got = Vec::new();
    run.multi_seek(&refs, &mut |i, kv| got.push((i, owned(kv))))
        .unwrap();
    for (i, kv) in got {
        assert_eq!(kv, Some(model[model.len() - 1 - i].clone()));
    }
}

#[test]
fn short_file_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run");
    std::fs::write(&path, b"tiny").unwrap();
    assert!(RunFile::open(&path).unwrap_err().is_corruption());
    assert!(matches!(
        RunFile::open(&dir.path().join("missing")),
        Err(crate::error::Error::Io { .. })
    ));
}

#[test]
fn run_types_are_thread_safe() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<RunFile>();
    assert_send_sync::<RunIter>();
    assert_send_sync::<crate::bloom::AtomicBloom>();
}

#[test]
fn builder_asks_for_what_its_buffers_hold_before_they_grow() {
    use std::sync::atomic::{AtomicUsize, Ordering as AtOrd};
    let dir = tempfile::tempdir().unwrap();
    let held = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let mut b = RunBuilder::create(&dir.path().join("run"), RunOptions::default()).unwrap();
    let (h, p) = (Arc::clone(&held), Arc::clone(&peak));
    b.charge_memory_to(Box::new(move |bytes, _must| {
        h.store(bytes, AtOrd::Relaxed);
        p.fetch_max(bytes, AtOrd::Relaxed);
        true
    }));
    let n = 20_000u64;
    for i in 0..n {
        b.add(&key::encode(&i.to_be_bytes(), 1, Kind::Value), b"v")
            .unwrap();
    }
    // Eight bytes of filter hash per key at least, and the index.
    assert!(held.load(AtOrd::Relaxed) as u64 >= 8 * n);
    b.finish().unwrap();
    assert!(peak.load(AtOrd::Relaxed) as u64 >= 8 * n);
}

#[test]
fn a_builder_refused_memory_adds_nothing_and_finishes_what_it_has() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run");
    let limit = 128 << 10;
    let opts = RunOptions {
        write_buffer: 16 << 10,
        ..RunOptions::default()
    };
    let mut b = RunBuilder::create(&path, opts).unwrap();
    b.charge_memory_to(Box::new(move |bytes, must| must || bytes <= limit));
    let mut added = 0u64;
    loop {
        let k = key::encode(&added.to_be_bytes(), 1, Kind::Value);
        if !b.try_add(&k, b"value").unwrap() {
            break;
        }
        added += 1;
        assert!(added < 1_000_000, "never refused");
    }
    assert!(added > 1_000, "refused early: {added}");
    assert!(b.refused_bytes() > limit);
    assert_eq!(b.entries(), added);
    b.finish().unwrap();
    let run = RunFile::open(&path).unwrap();
    assert_eq!(run.properties().entries, added);
    let last = (added - 1).to_be_bytes();
    assert!(run.seek(&key::lookup_key(&last, 9)).unwrap().is_some());
}

#[test]
fn a_batch_s_direct_reads_are_submitted_together_and_cached() {
    let dir = tempfile::tempdir().unwrap();
    let cache = BlockCache::new(8 << 20);
    let (run, model) = many_block_run(dir.path(), 20_000, cache.clone());
    assert!(
        run.direct_read(0).is_none(),
        "direct while the page cache is kept"
    );
    cache.set_bypass_os_cache(true);
    if run.direct_read(0).is_none() {
        eprintln!("this file system refuses O_DIRECT: nothing to check");
        return;
    }
    assert!(
        run.direct_read(run.num_blocks()).is_none(),
        "a block past the end"
    );
    let wanted: Vec<(Arc<RunFile>, usize)> = (0..run.num_blocks())
        .step_by(7)
        .map(|i| (Arc::clone(&run), i))
        .collect();
    let slow: Vec<&(Arc<RunFile>, usize)> = wanted.iter().collect();
    let submitted = crate::cache::read_directly(&slow);
    // Where the kernel gives us a ring, the batch must have used it.
    let rings = io_uring::IoUring::new(2).is_ok();
    assert!(submitted || !rings, "io_uring is there but was not used");
    if submitted {
        let cached = run.cached_blocks();
        for (_, i) in &wanted {
            assert!(cached.contains(i), "block {i} was not admitted");
        }
    }
    // Whatever read them, lookups answer from the right blocks.
    for (k, v) in model.iter().step_by(13) {
        assert_eq!(found(run.seek(k).unwrap()), Some((k.clone(), v.clone())));
    }
}
